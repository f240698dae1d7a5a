"""Tables of an AWR or Statspack report, text or HTML, as titled rows of cells.

Text reports are cut by their own ruler lines (`------ ----- ---`, Statspack also `~~~~`): each dash
group is a column, the words above it (on the header lines over the ruler) name it, and each word of
a row goes to the column it overlaps (a right-aligned number that spills over its group goes to the
nearest one). No column position is fixed in advance, so the layouts of 10g to 23ai read alike.
HTML reports give the same tables from their `<th>`/`<td>` cells (colspan and rowspan expanded).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from html.parser import HTMLParser

__all__ = ["Column", "Row", "Table", "html_tables", "text_tables"]

#: a ruler: two or more groups of dashes (or tildes, Statspack's first group) and nothing else
_RULER = re.compile(r"^ *[-~]{2,}( +[-~]{2,})+ *$")
#: the line that closes a section: one group of dashes
_END_RULE = re.compile(r"^ *-{10,} *$")
_TITLE_NAMES = ("foreground wait events", "background wait events", "wait events", "wait event histogram")


@dataclass(frozen=True, slots=True)
class Column:
    """A column: its header words top to bottom (`name`), the bottom line's words, its width."""

    name: str
    last: str
    width: int | None = None


@dataclass(frozen=True, slots=True)
class Row:
    """A data row: the line it starts on and one cell per column (empty when blank).

    A text row is cut into cells only when asked (`cells`): most rows of a report are of no
    interest, and their first cell (`first`, the event name) is enough to tell.
    """

    line: int
    given: tuple[str, ...] | None = None
    text: str = ""
    spans: tuple[tuple[int, int], ...] = ()

    @property
    def first(self) -> str:
        """The first cell."""
        if self.given is not None:
            return self.given[0] if self.given else ""
        return self.text[: self.spans[0][1]].strip()

    @property
    def cells(self) -> tuple[str, ...]:
        """Every cell."""
        return self.given if self.given is not None else _cells(self.text, list(self.spans))


@dataclass(frozen=True)
class Table:
    """A table under a section title ("" before the first title: the report's head)."""

    title: str
    line: int
    columns: tuple[Column, ...]
    rows: tuple[Row, ...] = field(default=())
    #: an HTML table's `summary` attribute ("This table displays Foreground Wait Events and ...")
    summary: str = ""
    #: what stood between the title and the next one when no table was found ("No data exists ...")
    note: str | None = None


# ---------------------------------------------------------------------------- text
def section_title(line: str) -> str | None:
    """The section title a line starts, if it is a title line (flush left, with `DB/Inst:` or known)."""
    if not line or line[0].isspace():
        return None
    head, sep, _ = line.partition("DB/Inst:")
    if sep:
        return head.strip()
    match = re.match(r"^(.*?\S)\s+for DB:.*\bSnaps?:", line)  # older Statspack titles
    if match:
        return match.group(1)
    text = line.strip()
    lowered = text.lower()
    if lowered.startswith(_TITLE_NAMES) and len(text) < 60 and not re.search(r"\d\s+\d", text):
        return text
    return None


def _spans(ruler: str) -> list[tuple[int, int]]:
    return [(m.start(), m.end()) for m in re.finditer(r"[-~]+", ruler)]


def _assign(start: int, end: int, spans: list[tuple[int, int]], first: int = 0) -> int:
    """The column a word at [start, end) belongs to: the most overlap, else the nearest."""
    best, best_key = first, (-1, 0)
    for i in range(first, len(spans)):
        lo, hi = spans[i]
        overlap = min(end, hi) - max(start, lo)
        distance = 0 if overlap > 0 else min(abs(start - hi), abs(lo - end))
        key = (overlap, -distance)
        if key > best_key:
            best, best_key = i, key
    return best


def _words(line: str, offset: int = 0) -> Iterator[tuple[int, int, str]]:
    for m in re.finditer(r"\S+", line[offset:]):
        yield m.start() + offset, m.end() + offset, m.group()


def _columns(header: list[str], spans: list[tuple[int, int]]) -> tuple[Column, ...]:
    parts: list[list[str]] = [[] for _ in spans]
    last: list[str] = ["" for _ in spans]
    for line in header:
        here: list[list[str]] = [[] for _ in spans]
        for start, end, word in _words(line):
            if not re.fullmatch(r"[-~]+", word):
                here[_assign(start, end, spans)].append(word)
        for i, words in enumerate(here):
            if words:
                parts[i] += words
                last[i] = " ".join(words)
    return tuple(
        Column(" ".join(p), last[i], hi - lo) for i, ((lo, hi), p) in enumerate(zip(spans, parts, strict=True))
    )


def _cells(line: str, spans: list[tuple[int, int]]) -> tuple[str, ...]:
    """Cut a row: the first column by its span (names have spaces), the rest word by word."""
    split = spans[0][1]
    cells: list[list[str]] = [[line[:split].strip()]] + [[] for _ in spans[1:]]
    for start, end, word in _words(line, split):
        cells[_assign(start, end, spans, first=1)].append(word)
    return tuple(" ".join(c).strip() for c in cells)


def _header(lines: list[str], ruler: int) -> list[str]:
    out: list[str] = []
    for i in range(ruler - 1, max(ruler - 7, -1), -1):
        text = lines[i]
        if not text.strip() or text.lstrip().startswith("->") or section_title(text) is not None:
            break
        if _END_RULE.match(text) and not _RULER.match(text):
            break
        out.insert(0, text)
    return out


def _ends_rows(text: str) -> bool:
    """A table's rows run to its section's closing rule, the next title or the next table's ruler."""
    return bool(_END_RULE.match(text) or _RULER.match(text)) or section_title(text) is not None


def text_tables(lines: list[str]) -> Iterator[Table]:
    """Every ruled table of a text report with the title of its section (line numbers from 1)."""
    title, title_line, found = "", 0, False
    i = 0
    while i < len(lines):
        text = lines[i]
        name = section_title(text)
        if name is not None:
            if title and not found:
                yield Table(title, title_line, (), note=_note(lines, title_line, i))
            title, title_line, found = name, i + 1, False
        elif _END_RULE.match(text) and not _RULER.match(text) and found:
            title = ""  # a section's closing rule (before its table, such a line underlines a heading)
        elif _RULER.match(text) and text.strip():
            spans = _spans(text)
            ruled = tuple(spans)
            columns = _columns(_header(lines, i), spans)
            rows: list[Row] = []
            j = i + 1
            while j < len(lines) and not _ends_rows(lines[j]):
                if lines[j].strip():  # a stray blank line does not end a table
                    rows.append(Row(j + 1, text=lines[j], spans=ruled))
                j += 1
            yield Table(title, i + 1, columns, tuple(rows))
            found, i = True, j
            continue
        i += 1
    if title and not found:
        yield Table(title, title_line, (), note=_note(lines, title_line, len(lines)))


def _note(lines: list[str], start: int, end: int) -> str:
    body = [t.strip() for t in lines[start:end] if t.strip() and not t.lstrip().startswith("->")]
    return body[0] if body else "nothing under the title"


# ---------------------------------------------------------------------------- HTML
@dataclass
class _Cell:
    header: bool
    span: int
    rows: int
    text: list[str] = field(default_factory=list)


@dataclass
class _Table:
    title: str
    summary: str
    line: int
    rows: list[tuple[int, list[_Cell]]] = field(default_factory=list)


class _Collector(HTMLParser):
    """Headings (h1-h4) and tables with their cells; nothing else of the page is kept."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.heading, self.in_heading = "", False
        self.heading_text: list[str] = []
        self.headings: list[str] = []
        self.tables: list[_Table] = []
        self.open: list[_Table] = []
        self.cell: _Cell | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = {k: v or "" for k, v in attrs}
        if tag in ("h1", "h2", "h3", "h4"):
            self.in_heading, self.heading_text = True, []
        elif tag == "table":
            table = _Table(self.heading, values.get("summary", ""), self.getpos()[0])
            self.tables.append(table)
            self.open.append(table)
        elif tag == "tr" and self.open:
            self.open[-1].rows.append((self.getpos()[0], []))
        elif tag in ("th", "td") and self.open and self.open[-1].rows:
            self.cell = _Cell(tag == "th", _int(values.get("colspan")), _int(values.get("rowspan")))
            self.open[-1].rows[-1][1].append(self.cell)
        elif tag == "br" and self.cell is not None:
            self.cell.text.append(" ")

    def handle_endtag(self, tag: str) -> None:
        if tag in ("h1", "h2", "h3", "h4") and self.in_heading:
            self.in_heading = False
            self.heading = " ".join("".join(self.heading_text).split())
            self.headings.append(self.heading)
        elif tag == "table" and self.open:
            self.open.pop()
        elif tag in ("th", "td"):
            self.cell = None

    def handle_data(self, data: str) -> None:
        if self.in_heading:
            self.heading_text.append(data)
        if self.cell is not None:
            self.cell.text.append(data)


def _int(value: str | None) -> int:
    """A colspan/rowspan: 1 unless a positive number, at most 100 (a hostile page cannot blow up)."""
    return min(int(value), 100) if value and value.strip().isdigit() and int(value) > 0 else 1


def _text(cell: _Cell) -> str:
    return " ".join("".join(cell.text).replace("\xa0", " ").split())


def _grid(rows: list[list[_Cell]]) -> list[list[str]]:
    """Header rows expanded into a grid: a cell with colspan/rowspan fills every slot it covers."""
    grid: list[list[str]] = []
    pending: dict[tuple[int, int], str] = {}
    for r, cells in enumerate(rows):
        out: list[str] = []
        queue = list(cells)
        col = 0
        while queue or (r, col) in pending:
            if (r, col) in pending:
                out.append(pending.pop((r, col)))
            else:
                cell = queue.pop(0)
                for k in range(cell.span):
                    out.append(_text(cell))
                    for down in range(1, cell.rows):
                        pending[(r + down, col + k)] = _text(cell)
                col += cell.span - 1
            col += 1
        grid.append(out)
    return grid


def html_tables(text: str) -> tuple[list[str], list[Table]]:
    """The headings and the tables of an HTML report (each table titled by the heading above it)."""
    collector = _Collector()
    collector.feed(text)
    collector.close()
    out: list[Table] = []
    for raw in collector.tables:
        head = [cells for _, cells in raw.rows if cells and all(c.header for c in cells)]
        body = [(line, cells) for line, cells in raw.rows if cells and not all(c.header for c in cells)]
        grid = _grid(head)
        width = max([len(g) for g in grid] + [len(c) for _, c in body] + [0])
        columns = []
        for k in range(width):
            parts = [g[k] for g in grid if k < len(g) and g[k]]
            unique = [p for i, p in enumerate(parts) if p not in parts[:i]]
            columns.append(Column(" ".join(unique), unique[-1] if unique else ""))
        rows = tuple(Row(line, given=tuple(_text(c) for c in cells)) for line, cells in body)
        out.append(Table(raw.title, raw.line, tuple(columns), rows, summary=raw.summary))
    return collector.headings, out
