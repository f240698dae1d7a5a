"""Terminal report (rich): the outline of every report (`report.outline`: the answer first, then the facts
and the tables), each section under its title, laid out for the width at hand; a plot is said in words.

The tables are those of `report.sections`, shared with Markdown and HTML. A number is never cut:
when a table is too wide, headers wrap, file labels shorten to their shortest unique tail (the
common directory is said once, in the facts), secondary columns are left out (said under the
table), the `file:line` evidence moves under the table, and text columns fold; on a very narrow
terminal each row becomes a list of `name: value` lines. On a terminal the width is the
terminal's; into a pipe or a file it is COLUMNS when set, else PIPE_WIDTH.
"""

from __future__ import annotations

import errno
import os
import re
import textwrap
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache, lru_cache
from typing import Any, TextIO

from rich import box
from rich.cells import cell_len
from rich.console import Console
from rich.measure import Measurement
from rich.table import Table as RichTable
from rich.text import Text

from analyzer.base.vocab import Component
from analyzer.match.analysis import Analysis
from analyzer.report.context import Context, Table
from analyzer.report.fmt import printable, short_label, terminal_width
from analyzer.report.outline import (
    Bullets,
    Facts,
    Listing,
    Paragraph,
    Part,
    Recommendations,
    outline,
    without_plots,
)

#: the width of the report in a pipe or a file when COLUMNS is not set
PIPE_WIDTH = 120
#: a text column folds to no fewer characters than this
FOLD_MIN = 10
#: the facts' values need this many columns beside their names, else they go under them
FACTS_MIN = 24
_VERDICT_STYLE: dict[str, str] = {Component.NETWORK: "yellow", Component.RFS_IO: "red", Component.RFS_OTHER: "magenta"}
_DATE = re.compile(r"^(\d{4}-\d{2}-\d{2}) ")
#: the space between a number and its unit (`2 ms`, `1.5 min`, `283 KiB`): never a line break
_UNIT = re.compile(r"(?<=\d) (?=(?:ms|s|min|h|KiB|MiB|GiB|bytes|km)(?!\w))")
_NBSP = "\u00a0"


class _Console(Console):
    """A console that reports a closed pipe as the OS error it is (rich would exit 1 by itself)."""

    def on_broken_pipe(self) -> None:
        self.quiet = True
        raise BrokenPipeError(errno.EPIPE, os.strerror(errno.EPIPE))


def report_width(out: TextIO) -> int:
    """COLUMNS when set; else the terminal's width; else (a pipe, a file) PIPE_WIDTH."""
    return terminal_width(out) or PIPE_WIDTH


class _Trimmed:
    """A text stream that drops the spaces at the end of each line (rich pads cells to the width)."""

    def __init__(self, out: TextIO) -> None:
        self.out = out
        self.pending = ""

    def write(self, text: str) -> int:
        lines = (self.pending + text).split("\n")
        self.pending = lines.pop()
        if lines:
            self.out.write("".join(line.rstrip(" ") + "\n" for line in lines))
        return len(text)

    def flush(self) -> None:
        if self.pending.strip(" "):
            self.out.write(self.pending.rstrip(" "))
        self.pending = ""
        self.out.flush()

    def isatty(self) -> bool:
        return False


def console_for(out: TextIO) -> Console:
    """The console of a report: colour and box drawing on a terminal, plain text (no trailing
    spaces) elsewhere."""
    width = report_width(out)
    file: Any = out if out.isatty() else _Trimmed(out)
    return _Console(file=file, width=width, highlight=False, soft_wrap=False, emoji=False)


@dataclass
class _Column:
    #: the table's header (what `optional`, `paths` and `key` name); `header` is the one shown
    name: str
    header: str
    cells: list[str]
    numeric: bool
    path: bool
    width: int = 0

    def need(self) -> int:
        """The width that shows every cell whole, the header wrapped at its spaces."""
        return max(_longest(self.cells), max((cell_len(w) for w in self.header.split()), default=0))

    def full(self) -> int:
        return max(_longest(self.cells), cell_len(self.header))


def _longest(cells: Sequence[str]) -> int:
    return max((cell_len(line) for cell in cells for line in cell.split("\n")), default=0)


@cache
def _overhead(columns: int, plain: bool) -> int:
    """What borders and padding add to the columns' widths."""
    probe = _rich_table(plain)
    for _ in range(columns):
        probe.add_column("", width=1)
    console = Console(width=1000)
    return Measurement.get(console, console.options, probe).maximum - columns


def _rich_table(plain: bool) -> RichTable:
    return RichTable(box=box.ASCII2 if plain else box.SIMPLE_HEAVY, show_edge=False)


@dataclass
class _Layout:
    columns: list[_Column]
    notes: list[str]
    #: (row key, path cells) to list under the table
    detached: list[tuple[str, str]]


def tails(labels: Sequence[str]) -> dict[str, str]:
    """Each label's shortest tail of path components that no other label ends with (one pass: every
    tail of every label counted once per label, so that thousands of labels cost thousands of steps)."""
    split = {label: re.split(r"(?<=[/\\!])", label) for label in set(labels)}
    suffixes = {label: ["".join(parts[-n:]) for n in range(1, len(parts) + 1)] for label, parts in split.items()}
    shared = Counter(tail for tails_of in suffixes.values() for tail in set(tails_of))
    return {label: next((t for t in tails_of if shared[t] == 1), label) for label, tails_of in suffixes.items()}


@lru_cache(maxsize=4)
def _tails(labels: tuple[str, ...]) -> dict[str, str]:
    """`tails`, once for all the tables of a report (an upload may hold tens of thousands of files)."""
    return tails(labels)


def _shorten(cell: str, short: dict[str, str]) -> str:
    lines = []
    for line in cell.split("\n"):
        path, sep, number = line.rpartition(":")
        lines.append(short.get(path, line) + sep + number if sep and number.isdigit() else short.get(line, line))
    return "\n".join(lines)


def _strip_date(column: _Column) -> None:
    """A time column whose cells share one date: the date goes to the header."""
    dates = {m.group(1) if (m := _DATE.match(c)) else None for c in column.cells if c}
    if len(dates) == 1 and None not in dates:
        date = dates.pop()
        column.cells = [c.removeprefix(f"{date} ") for c in column.cells]
        column.header = f"{column.header} {date}"


def layout(table: Table, width: int, plain: bool, short: dict[str, str]) -> _Layout | None:
    """Columns and their widths for `width`, or None when only a list of `name: value` lines fits."""
    table = table.trimmed()
    numeric = table.numeric()
    cols = [
        _Column(h, h, [printable(r[i]) for r in table.rows], numeric[i], h in table.paths)
        for i, h in enumerate(table.headers)
    ]
    for col in cols:
        if col.name.endswith("(UTC)"):
            _strip_date(col)
    out = _Layout(cols, [], [])

    def fits(needs: list[int]) -> bool:
        return sum(needs) + _overhead(len(out.columns), plain) <= width

    if fits([c.full() for c in out.columns]):
        for c in out.columns:
            c.width = c.full()
        return out
    if any(c.path for c in out.columns) and not fits([c.need() for c in out.columns]):
        for c in out.columns:
            c.cells = [_shorten(x, short) for x in c.cells] if c.path else c.cells
        out.notes.append("File names without their folders at this width.")
    dropped = []
    for name in table.optional:
        if fits([c.need() for c in out.columns]):
            break
        if any(c.name == name for c in out.columns):
            out.columns = [c for c in out.columns if c.name != name]
            dropped.append(name)
    if dropped:
        out.notes.append(
            f"Left out at this width: {', '.join(dropped)} (a wider terminal or --format markdown shows them)."
        )
    if table.key and not fits([c.need() for c in out.columns]):
        key = next((i for i, c in enumerate(out.columns) if c.name == table.key), None)
        paths = [c for c in out.columns if c.path]
        if key is not None and paths:
            keys = out.columns[key].cells
            for n, k in enumerate(keys):
                out.detached.append((k, "  ".join(x for c in paths for x in c.cells[n].split("\n") if x)))
            out.columns = [c for c in out.columns if not c.path]
    for c in out.columns:
        c.width = c.need()
    spare = width - _overhead(len(out.columns), plain) - sum(c.width for c in out.columns)
    if spare >= 0:
        return out
    text = [c for c in out.columns if not c.numeric]
    for c in sorted(text, key=lambda c: -c.width):
        floor = max(FOLD_MIN, max((cell_len(w) for w in c.header.split()), default=0))
        give = min(c.width - floor, -spare)
        if give > 0:
            c.width -= give
            spare += give
        if spare >= 0:
            return out
    return None


def _header(col: _Column) -> str:
    return "\n".join(textwrap.wrap(col.header, col.width, break_long_words=False)) or col.header


def print_table(console: Console, title: str, table: Table, labels: Sequence[str] = ()) -> None:
    """A table laid out for the console's width (see the module's docstring), its note first;
    `labels`: every file label as the table's path cells write them (their tails must be unique)."""
    if not table.rows:
        return
    plain = not console.is_terminal
    fitted = layout(table, console.width, plain, _tails(tuple(labels)))
    if title:
        console.print(Text(title, style="bold"), overflow="fold")
    if table.note:
        _paragraph(console, table.note, style="dim")
    if fitted is None:
        _records(console, table)
        return
    rich = _rich_table(plain)
    for col in fitted.columns:
        col.cells = col.cells if col.numeric else [_fold(cell, col.width) for cell in col.cells]
        rich.add_column(
            _header(col),
            width=col.width,
            justify="right" if col.numeric else "left",
            no_wrap=col.numeric,
            overflow="fold",
        )
    for row in zip(*(c.cells for c in fitted.columns), strict=True):
        rich.add_row(*(_styled(c.name, cell) for c, cell in zip(fitted.columns, row, strict=True)))
    console.print(rich)
    for key, paths in fitted.detached:
        console.print(Text(f"  {key}: {paths}"), overflow="fold")
    for note in fitted.notes:
        _paragraph(console, note, style="dim")


def _styled(header: str, cell: str) -> Text | str:
    return Text(cell, style=_VERDICT_STYLE.get(cell, "")) if header == "verdict" else cell


def _records(console: Console, table: Table) -> None:
    """Each row as `name: value` lines (a terminal too narrow for any table)."""
    for row in table.rows:
        for header, cell in zip(table.headers, row, strict=True):
            if cell:
                _paragraph(console, f"  {header}: {printable(cell).replace(chr(10), ', ')}", hanging="    ")
        console.print()


def wrap(text: str, width: int, indent: str = "", hanging: str | None = None) -> str:
    """Text wrapped at spaces to `width` (a word is never cut, a number never parted from its unit), later
    lines indented by `hanging` (else `indent`)."""
    wrapped = textwrap.fill(
        _UNIT.sub(_NBSP, text),
        width=width,
        initial_indent=indent,
        subsequent_indent=indent if hanging is None else hanging,
        break_long_words=False,
        break_on_hyphens=False,
    )
    return wrapped.replace(_NBSP, " ")


def _fold(cell: str, width: int) -> str:
    """A table cell whose lines are wrapped to the column's width (rich would part `2 ms` at its space)."""
    return "\n".join(wrap(line, width) if cell_len(line) > width else line for line in cell.split("\n"))


def _paragraph(console: Console, text: str, indent: str = "", hanging: str | None = None, style: str = "") -> None:
    """Text wrapped at spaces to the console's width (see `wrap`), later lines indented."""
    console.print(Text(wrap(printable(text), console.width, indent, hanging), style=style), overflow="fold")


def _recommendations(console: Console, part: Recommendations) -> None:
    """The recommendations, numbered, each with its evidence and advice; under each configuration's name when
    there are several."""
    for group in part.groups:
        indent = "  "
        if group.name:
            _paragraph(console, group.name + (f": {group.none}" if group.none else ""), indent, "    ", "bold")
            indent = "    "
        elif group.none:
            _paragraph(console, group.none, indent)
        deeper = indent + "   "
        for n, r in enumerate(group.recommendations, 1):
            _paragraph(console, f"{n}. {r.title}", indent, deeper, "bold")
            _paragraph(console, f"Evidence: {r.evidence}", deeper)
            _paragraph(console, f"Advice: {r.advice}", deeper)


def _facts(console: Console, table: Table) -> None:
    """The facts beside their names, or under them when the terminal leaves too little room beside."""
    rows = table.rows
    room = console.width - max((cell_len(key) for key, _ in rows), default=0) - 2
    if room < FACTS_MIN:
        for key, value in rows:
            console.print(Text(key, style="bold"), overflow="fold")
            _paragraph(console, value, "  ")
        return
    grid = RichTable.grid(padding=(0, 2))
    grid.add_column(no_wrap=True, style="bold")
    grid.add_column(overflow="fold")
    for key, value in rows:
        grid.add_row(key, _fold(printable(value), room))
    console.print(grid)


def _part(console: Console, part: Part, labels: Sequence[str]) -> None:
    """One part of a section, laid out for the terminal (a plot is never one: `without_plots`)."""
    if isinstance(part, Paragraph):
        _paragraph(console, part.text)
    elif isinstance(part, Bullets):
        for item in part.items:
            _paragraph(console, f"- {item}", "  ", "    ")
    elif isinstance(part, Table):
        print_table(console, "", part, labels)
    elif isinstance(part, Listing):
        print_table(console, "", part.table, labels)
    elif isinstance(part, Facts):
        _facts(console, part.table)
    elif isinstance(part, Recommendations):
        _recommendations(console, part)


def render_text(a: Analysis, out: TextIO, top: int) -> None:
    """Write the human-readable report: the outline (`report.outline`), each section under its title."""
    console = console_for(out)
    c = Context.of(a)
    report = outline(c, top)
    console.print(Text(report.title, style="bold"))
    console.print()
    for name, verdict in report.verdicts:
        _paragraph(console, f"{name}: {verdict}" if name else verdict, hanging="  " if name else None, style="bold")
    labels = [c.file(label) for label in c.labels] + [c.file(s.label) for s in a.skipped]
    for section in report.sections:
        console.print()
        console.print(Text(section.title, style="bold"), overflow="fold")
        for part in without_plots(section.parts):
            _part(console, part, labels)
    console.file.flush()


#: the columns that say what a file is (`dgtrace inventory`)
IDENTITY = ("file", "role", "process", "instance", "host", "thread", "version", "first (UTC)")


def identity_cells(row: dict[str, Any], common: str) -> list[str]:
    """The IDENTITY cells of one row of `inventory.table` (`common`: the files' common directory)."""
    first = row["first_at"].strftime("%Y-%m-%d %H:%M:%S") if row["first_at"] else ""
    values = [short_label(row["file"], common), *(row[k] for k in IDENTITY[1:-1]), first]
    return ["" if v is None else str(v) for v in values]
