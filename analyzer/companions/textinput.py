"""Small text inputs read whole (an oratcptest log, an AWR or Statspack report), and their grammars.

Trace files stream through `analyzer.inputs.sources`; these companions are a few megabytes at most, so
they are read into memory, decompressed by their suffix (`.gz`, `.bz2`, `.xz`) and decoded leniently.
"""

from __future__ import annotations

import bz2
import functools
import io
import lzma
import zlib
from pathlib import Path
from typing import Any

from lark import Lark, Transformer, UnexpectedInput

from analyzer.base.errors import LimitExceeded, UsageError
from analyzer.parse.grammar import LineError, describe, grammar_dir

#: decompressed size above which an input is refused (reports are a few MB; this stops a bomb)
MAX_BYTES = 256 << 20
_BROKEN = (OSError, EOFError, zlib.error, lzma.LZMAError, ValueError)


def read_text(path: str | Path, what: str, limit: int = MAX_BYTES) -> tuple[str, str | None]:
    """The decoded text of `path` and, when its compressed stream is damaged, what happened.

    Everything decompressed before the damage is kept. Undecodable bytes become U+FFFD; a UTF-16
    byte-order mark is honoured (reports saved by Windows editors).

    Raises:
        UsageError: the path does not exist, is not a file, or nothing of it can be read.
        LimitExceeded: more than `limit` bytes once decompressed.
    """
    file = Path(path)
    if not file.is_file():
        kind = "a directory, not a file" if file.is_dir() else "not a regular file" if file.exists() else "no such file"
        raise UsageError(f"{what} {file}: {kind}")
    suffix = file.suffix.lower()
    chunks: list[bytes] = []
    damage: str | None = None
    try:
        with file.open("rb") as raw:
            damage = _inflate(raw, suffix, chunks, limit, f"{what} {file}")
    except PermissionError as err:
        raise UsageError(f"{what} {file}: cannot be read ({err.strerror})") from None
    except _BROKEN as err:
        damage = f"the {suffix[1:]} stream is damaged after {sum(map(len, chunks))} bytes ({err})"
    if damage is not None and not any(chunks):
        raise UsageError(f"{what} {file}: cannot be read ({damage})")
    return decode(b"".join(chunks)), damage


def _decompressor(suffix: str) -> Any:
    if suffix == ".gz":
        return zlib.decompressobj(31)
    if suffix == ".bz2":
        return bz2.BZ2Decompressor()
    return lzma.LZMADecompressor() if suffix == ".xz" else None


def _inflate(raw: io.BufferedReader, suffix: str, chunks: list[bytes], limit: int, name: str) -> str | None:
    """Decompress `raw` into `chunks` block by block (so a damaged tail keeps what came before)."""
    inflater = _decompressor(suffix)
    size = 0
    while block := raw.read(1 << 16):
        while block:
            if inflater is None:
                out, block = block, b""
            else:
                out = inflater.decompress(block)
                block = inflater.unused_data if inflater.eof else b""
                if inflater.eof and block:  # concatenated members (gzip -c a b > c)
                    inflater = _decompressor(suffix)
            size += len(out)
            if size > limit:
                raise LimitExceeded(f"{name}: larger than {limit >> 20} MiB once decompressed")
            chunks.append(out)
    if inflater is not None and not inflater.eof:
        return f"the {suffix[1:]} stream ends early, after {size} bytes: the text before is read"
    return None


def decode(data: bytes) -> str:
    """Bytes to text: UTF-16 when a byte-order mark says so, else UTF-8 with replacement."""
    if data[:2] in (b"\xff\xfe", b"\xfe\xff"):
        return data.decode("utf-16", errors="replace")
    return data.decode("utf-8-sig", errors="replace")


#: no-break and other fixed-width spaces (pasted from web pages and mail) read as spaces
_SPACES = str.maketrans({"\xa0": " ", "\u2007": " ", "\u202f": " ", "\x00": None, "\f": "\n"})


def text_lines(text: str) -> list[str]:
    """Lines without their end (LF, CRLF or a lone CR); NULs dropped, no-break spaces made spaces."""
    return text.translate(_SPACES).splitlines()


def grammar_file(name: str) -> Path:
    """`<name>.lark` beside the trace grammars (inside the installed wheel, or grammars/ in a checkout)."""
    return grammar_dir() / f"{name}.lark"


@functools.cache
def line_parser(name: str, transformer: type[Transformer[Any, Any]], *, strict: bool = False) -> Lark:
    """The cached LALR parser of one grammar, transforming inline (no tree is built)."""
    return Lark(
        grammar_file(name).read_text(encoding="utf-8"),
        parser="lalr",
        transformer=transformer(),
        strict=strict,
    )


def parse_with(parser: Lark, text: str) -> Any:
    """Parse one line (right-stripped); lark's complaint becomes a `LineError` saying where and why."""
    line = text.rstrip()
    try:
        return parser.parse(line)
    except UnexpectedInput as err:
        raise LineError(describe(err, line)) from None
    except ValueError as err:  # a transformer rejected a grammatical line (a unit it does not know)
        raise LineError(str(err)) from None
