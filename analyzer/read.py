"""Read stage: a source's bytes -> numbered lines, in bounded chunks, never failing on bad bytes.

Lines are decoded as UTF-8 with undecodable bytes replaced (Oracle traces carry Latin-1 SQL
text); CR before LF is dropped; a line longer than `MAX_LINE_CHARS` is cut. Problems found on
the way are counted in `ReadStats` so the coverage report can show them.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import BinaryIO

import polars as pl

from analyzer.errors import AnalyzerError

CHUNK_BYTES = 16 * 1024 * 1024
#: bytes asked of the stream at a time (what a broken stream can lose)
READ_BYTES = 64 * 1024
#: longer lines are cut here (a trace line is < 1 KB; megabyte lines are binary junk)
MAX_LINE_CHARS = 64 * 1024
MAX_LINE_BYTES = 4 * MAX_LINE_CHARS
REPLACEMENT = "\ufffd"


@dataclass
class ReadStats:
    """What the reader saw in one source (mutable: filled while streaming)."""

    bytes: int = 0
    lines: int = 0
    crlf_lines: int = 0
    nul_bytes: int = 0
    lines_with_bad_bytes: int = 0
    cut_lines: int = 0
    #: the last line had no newline (a file cut in the middle of a write, or just no final LF)
    unterminated_last_line: bool = False
    #: set when reading stopped early (limit, corrupt member); the lines before it are kept
    error: str | None = None
    bad_lines: list[int] = field(default_factory=list)


def read_lines(stream: BinaryIO, stats: ReadStats, chunk_bytes: int = CHUNK_BYTES) -> Iterator[pl.DataFrame]:
    """Yield frames of (line, text) with 1-based line numbers, each about `chunk_bytes` long.

    The stream is read in blocks of at most `READ_BYTES`, so when it breaks (a limit, a
    truncated archive, an I/O error) only the block being read is lost: the error goes to
    `stats.error` and every complete line read before it is still yielded.
    """
    pending: list[bytes] = []
    size = 0
    skipping = False  # inside the cut-off tail of an over-long line
    while True:
        try:
            block = stream.read(min(READ_BYTES, chunk_bytes))
        except (AnalyzerError, OSError, EOFError) as err:
            stats.error = str(err) if isinstance(err, AnalyzerError) else f"{type(err).__name__}: {err}"
            break
        if not block:
            break
        stats.bytes += len(block)
        if skipping:
            end = block.find(b"\n")
            if end < 0:
                continue
            block, skipping = block[end + 1 :], False
        pending.append(block)
        size += len(block)
        if size < chunk_bytes:
            continue
        lines, rest = _complete_lines(pending)
        if lines:
            yield _to_frame(lines, stats)
        elif len(rest) > MAX_LINE_BYTES:  # no newline for megabytes: binary junk
            yield _to_frame(rest[:MAX_LINE_BYTES] + b"\n", stats)
            rest, skipping = b"", True
        pending, size = ([rest], len(rest)) if rest else ([], 0)
    if pending:
        data = b"".join(pending)
        if not data.endswith(b"\n"):
            stats.unterminated_last_line = True
            data += b"\n"
        yield _to_frame(data, stats)


#: starts of the lines that open a write (16410 `Client sending`, `Server received`)
OPENING_LINES = tuple(
    f"\n{dots}{text} ".encode() for dots in ("", "... ") for text in ("Client sending", "Server received")
)
#: how far back from a chunk's end an opening line is looked for (else the chunk ends at a newline)
CUT_WINDOW = 1024 * 1024


def _complete_lines(blocks: list[bytes]) -> tuple[bytes, bytes]:
    """The blocks joined and cut: (complete lines, start of the next chunk).

    The cut is just before the last line that opens a write within CUT_WINDOW of the end, so
    that the messages of a write, their stamps and the waits between them stay in one chunk
    (the tables stage pairs and sums them chunk by chunk); without one, after the last newline.
    The block holding the cut is split before the join, so the bulk is copied once, not twice
    (a fresh 16 MB copy costs about as much as reading the lines into polars).
    """
    searched = 0
    for i in range(len(blocks) - 1, -1, -1):
        if searched >= CUT_WINDOW:
            break
        searched += len(blocks[i])
        at = max((blocks[i].rfind(opening) for opening in OPENING_LINES), default=-1)
        if at > 0 or (at == 0 and i > 0):
            return _split(blocks, i, at + 1)
    for i in range(len(blocks) - 1, -1, -1):
        end = blocks[i].rfind(b"\n") + 1
        if end:
            return _split(blocks, i, end)
    return b"", b"".join(blocks)


def _split(blocks: list[bytes], i: int, at: int) -> tuple[bytes, bytes]:
    """The blocks cut at offset `at` of block i."""
    return b"".join([*blocks[:i], blocks[i][:at]]), b"".join([blocks[i][at:], *blocks[i + 1 :]])


def _to_frame(data: bytes, stats: ReadStats) -> pl.DataFrame:
    """Numbered lines of a block that ends with a newline."""
    if b"\r" in data:  # `in` is a memchr; counting only when needed keeps clean files fast
        stats.crlf_lines += data.count(b"\r\n")
    if b"\x00" in data:
        stats.nul_bytes += data.count(b"\x00")
    all_ascii = data.isascii()  # no bad bytes then, and the strict UTF-8 reader is faster than the lossy one
    text = _decode(data, all_ascii=all_ascii)
    first = stats.lines + 1
    stats.lines += text.height
    frame = text.select(line=pl.int_range(first, first + text.height, dtype=pl.Int64), text=pl.col("text"))
    long = frame["text"].str.len_bytes() > MAX_LINE_CHARS
    if long.any():
        stats.cut_lines += int(long.sum())
        frame = frame.with_columns(pl.col("text").str.slice(0, MAX_LINE_CHARS))
    if all_ascii:
        return frame
    bad = frame.filter(pl.col("text").str.contains(REPLACEMENT, literal=True))
    if bad.height:
        stats.lines_with_bad_bytes += bad.height
        stats.bad_lines.extend(bad["line"].head(100 - len(stats.bad_lines)).to_list())
    return frame


def _decode(data: bytes, *, all_ascii: bool = False) -> pl.DataFrame:
    """Split a newline-terminated block into lines (lossy UTF-8), keeping empty lines.

    `all_ascii` says the block is all ASCII: valid UTF-8, read without the lossy decoder.
    """
    if b"\x1f" not in data:
        try:
            return pl.read_csv(
                data,  # bytes as they are: a BytesIO wrapper costs a copy
                separator="\x1f",
                quote_char=None,
                has_header=False,
                schema={"text": pl.String},
                encoding="utf8" if all_ascii else "utf8-lossy",
                empty_string_is_null=False,  # an empty line is "", without a fill_null pass
            )
        except pl.exceptions.PolarsError:  # pragma: no cover - the slow path below is exact
            pass
    lines = data.decode("utf-8", errors="replace").split("\n")[:-1]
    return pl.DataFrame({"text": lines}, schema={"text": pl.String}).with_columns(pl.col("text").str.strip_suffix("\r"))
