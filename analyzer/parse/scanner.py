"""The compiled line scanner (`_scanner.c`), when the install built it: a chunk's bytes -> its parse tables.

One pass in C over a chunk's bytes splits the lines, puts each in its family by the tests of
`families.split_families` in their order (the header region carried from line to line), parses the
canonical spellings of the hot shapes (krs stamps, bare and ISO ADR stamps, 16410 messages, WAIT lines)
into Arrow arrays that polars takes without a copy, and counts the blank, 10046, separator and other
lines. Every other line comes back with its number and family, and goes to the fast paths and the
grammars as before (`families.parse_groups`): header and log writer lines, shapes the scanner does not
take (session lines, file markers, anything off the canonical spelling) and every line with a byte
>= 0x80. A chunk with a line over `lines.MAX_LINE_CHARS` bytes is not scanned (`scan` gives None): the
pure path reads it. The scanner accepts a strict subset of what the fast paths accept, with the same
fields, so the tables are the same either way (tests/parse/test_scanner.py holds the two paths equal).

Without the compiled module (an install without a C compiler), or with `DGTRACE_SCANNER=python` in the
environment, `enabled()` is False and the parse stage reads every chunk through the pure path.
"""

from __future__ import annotations

import ctypes
import os
from collections import Counter
from dataclasses import dataclass

import polars as pl

from analyzer.base.schemas import empty
from analyzer.parse import families as fam
from analyzer.parse.grammar import Family
from analyzer.parse.lines import MAX_LINE_CHARS, SMALL_BLOCK, Chunk, ReadStats, ascii_lines, decode_lines, repaired

try:  # built by setup.py; absent from an install without a C compiler
    from analyzer.parse import _scanner
except ImportError:  # pragma: no cover - the pure install (tests/parse/test_scanner.py runs it in a subprocess)
    _scanner = None  # type: ignore[assignment]

#: the environment variable that turns the compiled scanner off (`python`), for a comparison or a doubt
SWITCH = "DGTRACE_SCANNER"
#: the tables the scanner fills (the others come from the lines it hands back)
SCANNED_TABLES = ("messages", "krs", "adr", "waits")
#: the ignored categories the scanner counts, in the order of its counts
COUNTED = ("blank", "10046", "separator", "other")


def compiled() -> bool:
    """The compiled scanner was built with this install."""
    return _scanner is not None


def enabled() -> bool:
    """Chunks are read by the compiled scanner: it was built, and `DGTRACE_SCANNER=python` does not turn it off."""
    return compiled() and os.environ.get(SWITCH, "").strip().lower() != "python"


def name() -> str:
    """`compiled` or `python`: how this process reads chunks (`dgtrace --version` prints it)."""
    return "compiled" if enabled() else "python"


#: `PyCapsule_GetPointer`, a function object of this module's own (not `ctypes.pythonapi`'s shared one)
_capsule_pointer = ctypes.PYFUNCTYPE(ctypes.c_void_p, ctypes.py_object, ctypes.c_char_p)(
    ("PyCapsule_GetPointer", ctypes.pythonapi)
)


def _length(pair: tuple[object, object]) -> int:
    """The rows of an exported Arrow array, read without importing it: `length`, the first field of the
    C data interface's ArrowArray. An empty table then costs no import (a small file has three of four)."""
    address = _capsule_pointer(pair[1], b"arrow_array")
    return int(ctypes.c_int64.from_address(address).value) if address else 0


class _Arrow:
    """One Arrow array as a pair of PyCapsules (schema, array): what polars reads through `__arrow_c_array__`."""

    __slots__ = ("_pair",)

    def __init__(self, pair: tuple[object, object]) -> None:
        self._pair = pair

    def __arrow_c_array__(self, requested_schema: object | None = None) -> tuple[object, object]:
        return self._pair


@dataclass
class Scanned:
    """What the scanner made of one chunk."""

    #: the tables it parsed (SCANNED_TABLES), in line order
    tables: dict[str, pl.DataFrame]
    #: the lines it handed back: line, text, family (a code of `families.FAMILIES`), in line order
    rest: pl.DataFrame
    #: the ignored lines it counted, by category
    ignored: Counter[str]
    #: the chunk ends inside a header region
    in_header: bool


def scan(chunk: Chunk, in_header: bool, stats: ReadStats) -> Scanned | None:
    """The chunk scanned (the undecodable bytes of the lines handed back counted in `stats`); None when a
    line is too long for the scanner, and for a chunk too big for it (the pure path reads those)."""
    if _scanner is None:
        raise RuntimeError("the compiled scanner is not built")  # callers ask `enabled()` first
    out = _scanner.scan(chunk.data, chunk.first, in_header, chunk.data.isascii())
    if out is None:
        return None
    end, counts, *pairs, rest_text = out
    tables = {
        table: pl.DataFrame(_Arrow(pair)) if _length(pair) else empty(fam.SCHEMAS[table])
        for table, pair in zip(SCANNED_TABLES, pairs[:-1], strict=True)
    }
    handed = pl.DataFrame(_Arrow(pairs[-1]))
    if rest_text.isascii() and len(rest_text) <= SMALL_BLOCK:  # a few lines (a small file's): split in
        # Python, the frame built without a query (a query's fixed cost is ten times the construction's)
        lines = ascii_lines(rest_text)
        rest = pl.DataFrame([handed["line"], pl.Series("text", lines, pl.String), handed["family"]])
        if max(map(len, lines), default=0) > MAX_LINE_CHARS:
            rest = repaired(rest, stats, all_ascii=True)
    else:
        rest = handed.select("line", text=decode_lines(rest_text), family="family")
        rest = repaired(rest, stats, all_ascii=rest_text.isascii())
    ignored = Counter({category: n for category, n in zip(COUNTED, counts, strict=True) if n})
    return Scanned(tables, rest, ignored, end)


def groups_of(rest: pl.DataFrame) -> dict[str, pl.DataFrame]:
    """Lines handed back (line, text, family), as `families.split_families` gives its groups."""
    empty = rest.select("line", "text").clear()
    groups = dict.fromkeys(fam.FAMILIES, empty)
    if rest.height:
        for (code,), rows in rest.partition_by("family", as_dict=True, include_key=False).items():
            groups[fam.FAMILIES[code]] = rows
    return groups


def combined(scanned: Scanned, rest: fam.Parsed) -> fam.Parsed:
    """The chunk's result: the scanner's tables and counts with those of the lines it handed back."""
    tables = dict(rest.tables)
    for table, quick in scanned.tables.items():
        if quick.height:
            slow = tables[table]
            tables[table] = pl.concat([quick, slow]).sort("line") if slow.height else quick
    parsed = rest.parsed + Counter(
        {
            Family.TRANSPORT.value: scanned.tables["messages"].height,
            Family.STAMPS.value: scanned.tables["krs"].height + scanned.tables["adr"].height,
            Family.WAIT.value: scanned.tables["waits"].height,
        }
    )
    return fam.Parsed(tables, +parsed, +(rest.ignored + scanned.ignored))


def parse_scanned(scanned: Scanned) -> fam.Parsed:
    """One scanned chunk's result: the lines handed back parsed (fast paths, grammars) and joined to its tables."""
    rest = fam.parse_groups(groups_of(scanned.rest)) if scanned.rest.height else fam.empty_parsed()
    return combined(scanned, rest)
