"""Read stage: a source's bytes -> numbered lines, in bounded chunks, never failing on bad bytes.

Lines are decoded as UTF-8 with undecodable bytes replaced (Oracle traces carry Latin-1 SQL
text); CR before LF is dropped; a line longer than `MAX_LINE_CHARS` is cut. What the first
64 KiB of text say is applied to the whole stream: a byte-order mark (UTF-8, UTF-16, UTF-32) or
the zero bytes of BOM-less UTF-16 choose the decoding, and CR without any LF means classic Mac
OS line ends. NUL bytes (the zero-filled blocks a crash leaves in a file) are removed, so that
the lines around them are kept with their numbers. Everything done on the way is counted in
`ReadStats`, which the coverage report shows.

A chunk holds at most `CHUNK_BYTES` bytes and `CHUNK_LINES` lines, so memory follows the chunk
size whatever the line structure (a file of empty lines, one endless line).
"""

from __future__ import annotations

import codecs
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import BinaryIO

import polars as pl

from analyzer.base.errors import AnalyzerError
from analyzer.base.spill import check_stop
from analyzer.inputs.sniff import ENCODING_SAMPLE, SNIFF_BYTES, encoding_of

CHUNK_BYTES = 16 * 1024 * 1024
#: lines per chunk at most (a 16 MB chunk of trace text has ~240k): an empty line costs the
#: read and parse stages ~80 bytes, so a chunk of them stays near 40 MB
CHUNK_LINES = 512 * 1024
#: bytes asked of the stream at a time (what a broken stream can lose)
READ_BYTES = 64 * 1024
#: longer lines are cut here (a trace line is < 1 KB; megabyte lines are binary junk)
MAX_LINE_CHARS = 64 * 1024
MAX_LINE_BYTES = 4 * MAX_LINE_CHARS
REPLACEMENT = "\ufffd"
_NULS = re.compile(b"\x00+")


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
    #: the encoding the bytes were decoded from: utf-8, utf-16-le/-be or utf-32-le/-be
    encoding: str = "utf-8"
    #: a byte-order mark opened the stream (removed before the first line)
    bom: bool = False
    #: lines ended by a CR alone (classic Mac OS line ends), read as line ends
    cr_lines: int = 0
    #: runs of NUL bytes removed (their bytes are in `nul_bytes`)
    nul_runs: int = 0

    def repairs(self) -> list[str]:
        """What was done to read this source, in words (empty for a clean UTF-8 file)."""
        out = []
        if self.encoding != "utf-8":
            how = "its byte-order mark" if self.bom else "the zero bytes of every other position"
            out.append(f"decoded from {self.encoding.upper()} ({how})")
        elif self.bom:
            out.append("UTF-8 byte-order mark removed")
        if self.cr_lines:
            out.append(f"{self.cr_lines:,} line(s) ended by CR alone (classic Mac OS) read as line ends")
        if self.nul_bytes:
            out.append(f"{self.nul_bytes:,} NUL byte(s) in {self.nul_runs:,} run(s) removed")
        return out

    def details(self) -> dict[str, object]:
        """The reader's repairs as coverage fields (docs/output.md)."""
        return {
            "encoding": self.encoding,
            "bom": self.bom,
            "cr_lines": self.cr_lines,
            "nul_bytes": self.nul_bytes,
            "nul_runs": self.nul_runs,
            "repairs": self.repairs(),
        }


class _Text:
    """Turns the stream's bytes into UTF-8 lines ending in LF (or CRLF), counting what it did.

    The encoding is chosen from the first `ENCODING_SAMPLE` raw bytes and the line ends from
    the first `SNIFF_BYTES` of text, whatever sizes the stream is read in, so the same bytes
    always give the same lines.
    """

    def __init__(self, stats: ReadStats) -> None:
        self.stats = stats
        self._raw: list[bytes] | None = []  # raw bytes held until the encoding is chosen (then None)
        self._raw_size = 0
        self._decoder: codecs.IncrementalDecoder | None = None
        self._text: list[bytes] | None = []  # text held until the line ends are chosen (then None)
        self._text_size = 0
        self._cr_mode = False
        self._held_cr = False  # the text so far ends with a CR whose LF may come next
        self._in_nul = False  # the text so far ends inside a run of NUL bytes

    def feed(self, raw: bytes, *, final: bool = False) -> bytes:
        """The text of the next raw bytes (possibly empty while the first bytes are held)."""
        if self._raw is not None:
            self._raw.append(raw)
            self._raw_size += len(raw)
            if self._raw_size < ENCODING_SAMPLE and not final:
                return b""
            head, self._raw = b"".join(self._raw), None
            raw = self._start(head, *encoding_of(head))
        text = self._decode(raw, final)
        if b"\x00" in text:
            text = self._drop_nuls(text)
        elif text:
            self._in_nul = False
        if self._text is not None:
            self._text.append(text)
            self._text_size += len(text)
            if self._text_size < SNIFF_BYTES and not final:
                return b""
            text, self._text = b"".join(self._text), None
            self._cr_mode = b"\r" in text and b"\n" not in text
        return self._line_ends(text, final) if self._cr_mode else text

    def _start(self, head: bytes, encoding: str, bom: int) -> bytes:
        self.stats.encoding, self.stats.bom = encoding, bom > 0
        if encoding != "utf-8":
            self._decoder = codecs.getincrementaldecoder(encoding)(errors="replace")
        return head[bom:]

    def _decode(self, raw: bytes, final: bool) -> bytes:
        if self._decoder is None:
            return raw
        return self._decoder.decode(raw, final).encode("utf-8", errors="replace")

    def _drop_nuls(self, text: bytes) -> bytes:
        runs = len(_NULS.findall(text)) - int(self._in_nul and text.startswith(b"\x00"))
        self.stats.nul_runs += runs
        self.stats.nul_bytes += text.count(b"\x00")
        self._in_nul = text.endswith(b"\x00")
        return text.replace(b"\x00", b"")

    def _line_ends(self, text: bytes, final: bool) -> bytes:
        """Classic Mac OS line ends: a CR alone ends a line (a CRLF stays one line end)."""
        if self._held_cr:
            text, self._held_cr = b"\r" + text, False
        if text.endswith(b"\r") and not final:
            text, self._held_cr = text[:-1], True
        crlf = text.count(b"\r\n")
        self.stats.crlf_lines += crlf
        self.stats.cr_lines += text.count(b"\r") - crlf
        return text.replace(b"\r\n", b"\n").replace(b"\r", b"\n")


@dataclass(frozen=True)
class Chunk:
    """Numbered lines of a source as bytes: newline-terminated text (UTF-8, or lossy when undecodable bytes
    remain) of `count` lines, the first numbered `first`. The parse stage reads the bytes (the compiled
    scanner) or the lines as a frame (`frame`)."""

    data: bytes
    first: int
    count: int

    def frame(self, stats: ReadStats) -> pl.DataFrame:
        """The numbered lines (line, text), over-long lines cut; the cuts and undecodable bytes counted in `stats`."""
        all_ascii = self.data.isascii()  # no bad bytes then, and the strict UTF-8 reader is faster than the lossy one
        if all_ascii and len(self.data) <= SMALL_BLOCK:  # a small file's lines: one frame, no polars query
            lines = ascii_lines(self.data)
            rows = pl.int_range(self.first, self.first + len(lines), dtype=pl.Int64, eager=True)
            return repaired(
                pl.DataFrame({"line": rows, "text": pl.Series(lines, dtype=pl.String)}), stats, all_ascii=True
            )
        text = _decode(self.data, all_ascii=all_ascii)
        frame = text.select(
            line=pl.int_range(self.first, self.first + text.height, dtype=pl.Int64), text=pl.col("text")
        )
        return repaired(frame, stats, all_ascii=all_ascii)

    def head(self, lines: int) -> list[str]:
        """The text of the first `lines` lines, as `frame` gives it (nothing counted): ASCII lines split
        in Python (a small file pays no polars query for its head), others read as `frame` reads them."""
        end = 0
        for _ in range(lines):
            end = self.data.find(b"\n", end) + 1
            if not end:
                end = len(self.data)
                break
        data = self.data[:end]
        if data.isascii():
            return [line[:MAX_LINE_CHARS] for line in ascii_lines(data)]
        return decode_lines(data).str.slice(0, MAX_LINE_CHARS).to_list()


def ascii_lines(data: bytes) -> list[str]:
    """The lines of an ASCII block as `_decode` reads them: a newline ends each (a last line without one
    is kept), a CR before a line's end is no part of the line."""
    lines = data.decode("ascii").split("\n")
    if lines[-1] == "":
        lines.pop()
    if b"\r" in data:
        lines = [line.removesuffix("\r") for line in lines]
    return lines


def repaired(frame: pl.DataFrame, stats: ReadStats, *, all_ascii: bool) -> pl.DataFrame:
    """Lines (a `text` column, and `line`) with those over MAX_LINE_CHARS cut; the cuts and the lines with
    undecodable bytes counted in `stats`. `all_ascii`: the lines' bytes were all ASCII (nothing to count)."""
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


def decode_lines(data: bytes) -> pl.Series:
    """The text of each line of a newline-terminated block, as `Chunk.frame` reads it (before any cut)."""
    return _decode(data, all_ascii=data.isascii())["text"]


def read_lines(
    stream: BinaryIO, stats: ReadStats, chunk_bytes: int = CHUNK_BYTES, chunk_lines: int = CHUNK_LINES
) -> Iterator[pl.DataFrame]:
    """Yield frames of (line, text) with 1-based line numbers, each about `chunk_bytes` long
    and at most about `chunk_lines` lines (`read_chunks`, each chunk as a frame)."""
    for chunk in read_chunks(stream, stats, chunk_bytes, chunk_lines):
        yield chunk.frame(stats)


def read_chunks(
    stream: BinaryIO, stats: ReadStats, chunk_bytes: int = CHUNK_BYTES, chunk_lines: int = CHUNK_LINES
) -> Iterator[Chunk]:
    """Yield chunks of lines numbered from 1, each about `chunk_bytes` long and at most about `chunk_lines` lines.

    The stream is read in blocks of at most `READ_BYTES`, so when it breaks (a limit, a
    truncated archive, an I/O error) only the block being read is lost: the error goes to
    `stats.error` and every complete line read before it is still yielded. The lines and CRLF line
    ends are counted in `stats` as each chunk is cut; the cuts of over-long lines and the undecodable
    bytes when its lines are read (`Chunk.frame`, or the compiled scanner).
    """
    text = _Text(stats)
    step = min(READ_BYTES, chunk_bytes)
    pending: list[bytes] = []
    size = lines = 0
    skipping = False  # inside the cut-off tail of an over-long line
    done = False
    while not done:
        check_stop()
        try:
            raw = stream.read(step)
        except (AnalyzerError, OSError, EOFError) as err:
            stats.error = str(err) if isinstance(err, AnalyzerError) else f"{type(err).__name__}: {err}"
            raw = b""
        done = not raw
        stats.bytes += len(raw)
        released = text.feed(raw, final=done)
        # the first bytes are held back until the encoding and line ends are known: cut them as
        # if they had come in blocks of the usual size
        for start in range(0, len(released), step):
            block = released[start : start + step]
            if skipping:
                end = block.find(b"\n")
                if end < 0:
                    continue
                block, skipping = block[end + 1 :], False
            pending.append(block)
            size += len(block)
            lines += _newlines(block)
            if size < chunk_bytes and lines < chunk_lines:
                continue
            complete, rest = _complete_lines(pending)
            left = _newlines(rest) if rest else 0
            if complete:
                yield _chunk(complete, lines - left, stats)
            elif len(rest) > MAX_LINE_BYTES:  # no newline for megabytes: binary junk
                yield _chunk(rest[:MAX_LINE_BYTES] + b"\n", 1, stats)
                rest, skipping, left = b"", True, 0
            pending, size, lines = ([rest], len(rest), left) if rest else ([], 0, 0)
    if pending:
        data = b"".join(pending)
        if not data.endswith(b"\n"):
            stats.unterminated_last_line = True
            data += b"\n"
            lines += 1
        yield _chunk(data, lines, stats)


def _chunk(data: bytes, count: int, stats: ReadStats) -> Chunk:
    """The next chunk of a source: `count` newline-terminated lines, numbered on from the lines before it."""
    if b"\r" in data:  # `in` is a memchr; counting only when needed keeps clean files fast
        stats.crlf_lines += data.count(b"\r\n")
    chunk = Chunk(data, stats.lines + 1, count)
    stats.lines += count
    return chunk


#: newlines in a block's first KiB beyond which its lines are short (under 32 bytes on average): counted
#: by `bytes.count`, whose cost is per byte, not by `bytes.replace`, whose cost is per newline
DENSE_NEWLINES = 32


def _newlines(block: bytes) -> int:
    """The newlines of a block: what its length loses when they are removed, or, for short lines, their count.

    `bytes.replace` finds them with memchr, about twice as fast as `bytes.count` on trace lines (80 to 150
    bytes), but each one it removes costs it more than a byte costs `bytes.count`: on a block of bare
    newlines (a hostile or broken file) it is more than ten times slower. Both give the same number.
    """
    if block.count(b"\n", 0, 1024) > DENSE_NEWLINES:
        return block.count(b"\n")
    return len(block) - len(block.replace(b"\n", b""))


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


#: first bytes that polars takes for zlib or zstd data, and decompresses (gzip's start with \x1f): a
#: block that starts with them (`x^2 ...` is one) is split by the exact path
_LIKE_COMPRESSED = (b"x\x01", b"x^", b"x\x9c", b"x\xda", b"\x28\xb5\x2f\xfd")


#: an all-ASCII block up to this size is split in Python: polars' CSV reader costs a millisecond or
#: two to start, more than splitting a small file's lines
SMALL_BLOCK = 256 * 1024


def _decode(data: bytes, *, all_ascii: bool = False) -> pl.DataFrame:
    """Split a newline-terminated block into lines (lossy UTF-8), keeping empty lines; a CR
    before a line's end is no part of the line.

    `all_ascii` says the block is all ASCII: valid UTF-8, read without the lossy decoder (a
    small one split in Python, `SMALL_BLOCK`).
    """
    if all_ascii and len(data) <= SMALL_BLOCK:
        return _split_lines(data)
    if b"\x1f" not in data and not data.startswith(_LIKE_COMPRESSED):
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
        except pl.exceptions.PolarsError:  # pragma: no cover - the exact split below
            pass
    return _split_lines(data)


def _split_lines(data: bytes) -> pl.DataFrame:
    """The exact split, in Python: lines of a newline-terminated block (lossy UTF-8), each less a CR at its end."""
    lines = data.decode("utf-8", errors="replace").split("\n")[:-1]
    if b"\r" in data:
        lines = [line.removesuffix("\r") for line in lines]
    return pl.DataFrame({"text": lines}, schema={"text": pl.String})
