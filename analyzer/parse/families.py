"""Parse stage: numbered lines -> typed tables, with every line accounted for.

Each line is put in one family by literal tests (see `split_families`). Each family is described
once, in `REGISTRY`: its grammar (the specification), the records it yields and their tables, and
its fast path. The hot families (16410 messages, `***` stamps, WAIT lines, long-write warnings)
go through a vectorised fast path (`analyzer.parse.fastpath`) that only accepts the canonical spelling
of a line, a strict subset of the grammar; everything else of a known family is parsed by that
family's lark grammar (`analyzer.parse.grammar`); a line the grammar rejects becomes an `unparsed` row
with the reason. Lines of no family are `ignored`, counted by category.
"""

from __future__ import annotations

import itertools
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

import polars as pl

from analyzer.base.schemas import PARSE_TABLES, empty, frame, per_row
from analyzer.parse import alertpath, fastpath
from analyzer.parse import grammar as g
from analyzer.parse.grammar import LGWR_PREFIXES

#: other 10046 / trace lines we know and do not need (counted as ignored, category "10046")
OTHER_10046_PREFIXES = (
    "PARSING IN CURSOR",
    "END OF STMT",
    "PARSE #",
    "EXEC #",
    "FETCH #",
    "CLOSE #",
    "STAT #",
    "BINDS #",
    "ERROR #",
    "XCTEND ",
    "=====",
    " Bind#",
    "  oacdty",
    "  oacflg",
    "  kxsbbbfp",
    "  value=",
    "  No oacdef",
    "PARSE ERROR #",
    "UNMAP #",
    "RPC ",
    # LOB calls (12.2 and later)
    "LOBREAD:",
    "LOBWRITE:",
    "LOBAPPEND:",
    "LOBGETLEN:",
    "LOBPGSIZE:",
    "LOBTMPCREATE:",
    "LOBTMPFREE:",
    "LOBARRREAD:",
    "LOBARRWRITE:",
    "LOBARRTMPFRE:",
)
#: the parse tables, in a fixed order, and their schemas
TABLES = tuple(PARSE_TABLES)
SCHEMAS = PARSE_TABLES


@dataclass(frozen=True)
class FamilySpec:
    """One line family: its grammar (`grammars/<family>.lark`, the specification), the records that
    grammar yields with the parse table each goes to, and its vectorised fast path (if any)."""

    family: g.Family
    #: record type -> parse table
    tables: Mapping[type, str]
    fast: fastpath.FastPath | None = None


#: every line family, in the order the driver parses them
REGISTRY: dict[g.Family, FamilySpec] = {
    spec.family: spec
    for spec in (
        FamilySpec(g.Family.TRANSPORT, {g.Message: "messages"}, fastpath.messages),
        FamilySpec(
            g.Family.STAMPS,
            {g.KrsStamp: "krs", g.AdrStamp: "adr", g.SessionLine: "adr", g.FileMarker: "markers"},
            fastpath.stamps,
        ),
        FamilySpec(g.Family.WAIT, {g.Wait: "waits"}, fastpath.waits),
        FamilySpec(g.Family.LGWR, {g.LgwrLine: "lgwr"}, fastpath.log_writes),
        FamilySpec(g.Family.HEADER, {g.HeaderLine: "header"}, fastpath.header_fields),
        # alert logs only (`parse_chunk(..., alert=True)`): time lines, entries, banner and version
        FamilySpec(
            g.Family.ALERT, {g.AdrStamp: "adr", g.AlertEvent: "alert", g.HeaderLine: "header"}, alertpath.alert_lines
        ),
    )
}
#: the parse table of each grammar record type
RECORD_TABLE: dict[type, str] = {kind: table for spec in REGISTRY.values() for kind, table in spec.tables.items()}


@dataclass
class Parsed:
    """Parse results of one file (or one chunk of it) and the line accounting."""

    tables: dict[str, pl.DataFrame]
    #: parsed line counts per family, ignored line counts per category
    parsed: Counter[str] = field(default_factory=Counter)
    ignored: Counter[str] = field(default_factory=Counter)

    @property
    def unparsed(self) -> int:
        """Number of lines of a known family that could not be parsed."""
        return self.tables["unparsed"].height

    @property
    def lines(self) -> int:
        """Lines accounted for: parsed + ignored + unparsed."""
        return sum(self.parsed.values()) + sum(self.ignored.values()) + self.unparsed


def empty_parsed() -> Parsed:
    """A result with no lines and empty tables of the right schemas."""
    return Parsed({name: empty(SCHEMAS[name]) for name in TABLES})


def merge(parts: Iterable[Parsed]) -> Parsed:
    """Concatenate chunk results of one file in order."""
    parts = list(parts)
    if not parts:
        return empty_parsed()
    tables = {name: pl.concat([p.tables[name] for p in parts]) for name in TABLES}
    return Parsed(
        tables,
        sum((p.parsed for p in parts), Counter()),
        sum((p.ignored for p in parts), Counter()),
    )


# ---------------------------------------------------------------------------- classification
#: family codes of the `family` column (UInt8: cheap to build and to filter on)
FAMILIES = (
    g.Family.TRANSPORT.value,
    g.Family.STAMPS.value,
    g.Family.WAIT.value,
    g.Family.LGWR.value,
    g.Family.HEADER.value,
    "ignored:blank",
    "ignored:10046",
    "ignored:other",
    "ignored:separator",
    g.Family.ALERT.value,
    "ignored:alert",
)
_CODE = {name: code for code, name in enumerate(FAMILIES)}
#: code of the rows the literal tests leave to the full order of tests
_UNSORTED = len(FAMILIES)
#: a line of four or more stars starts no stamp: a separator or banner of a dump (the 10053
#: optimizer trace prints `*****************************` and `***** WARNING: ... *****` lines)
SEPARATOR_START = "****"
#: the start of an event-16410 message that lacks `msgid=` (it goes to the transport grammar, which
#: says what is missing): optional dots, then the first two words of one of the four texts
MESSAGE_START = r"^[ \t.]*(?:Client (?:sending|received)|Server (?:received|finished)) "
#: a WAIT record after other text on its line (the record before it was cut short): the line goes
#: to the WAIT grammar, which rejects it, so that the lost wait is reported
GLUED_WAIT = r".WAIT #[0-9]+: nam='"


def _prefix_regex(prefixes: tuple[str, ...]) -> str:
    """One anchored alternation: a single pass instead of one `starts_with` per prefix."""
    return "^(?:" + "|".join(re.escape(p) for p in prefixes) + ")"


def _code(name: str) -> pl.Expr:
    return pl.lit(_CODE[name], pl.UInt8)


#: a line that starts a trace header (a new file, or a repeated header after a pid reuse):
#: `Trace file `, or `Oracle ` with ` Release ` further on; one anchored pass, failing at the first byte
_HEADER_START = pl.col("text").str.contains(r"^(?:Trace file |Oracle(?: .*)? Release )")
_BLANK = pl.col("text").str.contains(r"^[ \t]*$")
#: the family of a line the literal tests leave (no `***`, `WAIT #`, 10046 prefix or `msgid=`), given `in_header`
_FULL_ORDER = (
    pl.when(pl.col("_blank"))
    .then(_code("ignored:blank"))
    .when(pl.col("text").str.contains(GLUED_WAIT))
    .then(_code(g.Family.WAIT.value))
    .when(pl.col("text").str.contains(MESSAGE_START))
    .then(_code(g.Family.TRANSPORT.value))
    .when(pl.col("text").str.contains(_prefix_regex(LGWR_PREFIXES)))
    .then(_code(g.Family.LGWR.value))
    .when(pl.col("in_header"))
    .then(_code(g.Family.HEADER.value))
    .otherwise(_code("ignored:other"))
)


def line_families(lines: pl.DataFrame, in_header: bool) -> pl.DataFrame:
    """Numbered lines with `family` (a code into FAMILIES), in line order (see `split_families`)."""
    groups, _ = split_families(lines, in_header)
    return pl.concat([rows.with_columns(family=_code(name)) for name, rows in groups.items()]).sort("line")


#: the families the literal tests sort, in the order of the tests
_LITERAL = ("ignored:separator", g.Family.STAMPS.value, g.Family.WAIT.value, "ignored:10046", g.Family.TRANSPORT.value)


def split_families(
    lines: pl.DataFrame, in_header: bool, boundaries: pl.Series | None = None
) -> tuple[dict[str, pl.DataFrame], bool]:
    """The rows of each family (keys: FAMILIES) in line order, and whether the chunk ends inside a header.

    The tests, by priority: a separator (four stars), `***`, `WAIT #`, other 10046 prefix (a WAIT
    record further on the line makes it a WAIT line, which the grammar rejects), 16410 message
    (`msgid=` anywhere), blank, a WAIT record further on the line, the start of a message text, log
    writer prefix, header region. These literal tests sort the hot lines (stamps, WAIT and 10046
    lines, messages); the full order of tests only runs on the few rows they leave. A header region runs from a header
    start (`Trace file `, an `Oracle ... Release` banner) to the first blank or `***` line;
    `in_header` says whether the previous chunk ended inside one. `boundaries`: line numbers that no
    line has, one before each file of several parsed together (`parse_files`): each ends a region.
    """
    text, f = pl.col("text"), pl.col("_f")
    # two passes: a WAIT-heavy chunk pays the regex of the 10046 prefixes only on the lines that are not WAIT lines
    first = (
        pl.when(text.str.starts_with(SEPARATOR_START))
        .then(_code("ignored:separator"))
        .when(text.str.starts_with("***"))
        .then(_code(g.Family.STAMPS.value))
        .when(text.str.starts_with("WAIT #"))
        .then(_code(g.Family.WAIT.value))
        .otherwise(pl.lit(_UNSORTED, pl.UInt8))
    )
    second = (
        pl.when(text.str.contains(_prefix_regex(OTHER_10046_PREFIXES)))
        .then(_code("ignored:10046"))
        .when(text.str.contains("msgid=", literal=True))
        .then(_code(g.Family.TRANSPORT.value))
        .otherwise(pl.lit(_UNSORTED, pl.UInt8))
    )
    coded = lines.select("line", "text", _f=first)
    others = coded.filter(f == _UNSORTED).with_columns(_f=second)
    empty_rows = lines.select("line", "text").clear()
    groups = dict.fromkeys(_CODE, empty_rows)
    for name in _LITERAL:  # a filter per group: half a partition_by
        groups[name] = (
            (others if name in ("ignored:10046", g.Family.TRANSPORT.value) else coded)
            .filter(f == _CODE[name])
            .drop("_f")
        )
    coded = others
    glued = groups["ignored:10046"].select(pl.col("text").str.contains(GLUED_WAIT)).to_series()
    if glued.any():
        wait = g.Family.WAIT.value
        groups[wait] = pl.concat([groups[wait], groups["ignored:10046"].filter(glued)]).sort("line")
        groups["ignored:10046"] = groups["ignored:10046"].filter(~glued)
    rest = coded.filter(f == _UNSORTED).drop("_f").with_columns(_blank=_BLANK)
    ends = pl.concat(
        [
            groups["ignored:separator"]["line"],
            groups[g.Family.STAMPS.value]["line"],
            rest.filter("_blank")["line"],
            *([] if boundaries is None else [boundaries.rename("line")]),
        ]
    ).sort()
    starts = pl.concat([rows.filter(_HEADER_START)["line"] for rows in (groups[g.Family.TRANSPORT.value], rest)]).sort()
    rest = _with_header_region(rest, ends, starts, in_header).with_columns(family=_FULL_ORDER)
    for (code,), rows in rest.partition_by("family", as_dict=True, include_key=False).items():
        name = FAMILIES[code]
        rows = rows.select("line", "text")  # in line order, as `rest` is: merged only with a group of rows
        groups[name] = pl.concat([groups[name], rows]).sort("line") if groups[name].height else rows
    # the region at the last line: after the last header start if that comes after the last end
    if ends.is_empty() and starts.is_empty():
        return groups, in_header
    return groups, bool((starts[-1] if len(starts) else 0) > (ends[-1] if len(ends) else 0))


def _with_header_region(rows: pl.DataFrame, ends: pl.Series, starts: pl.Series, carry: bool) -> pl.DataFrame:
    """Add `in_header`: a header start comes after the last end (a `***` or blank line) before (or at) each row.

    `ends` and `starts` are the sorted line numbers of region ends and header starts; with
    neither before a row, the region carries over from the previous chunk (`carry`).
    """
    end = pl.DataFrame({"_end": ends}, schema={"_end": pl.Int64})
    start = pl.DataFrame({"_start": starts}, schema={"_start": pl.Int64})
    marked = rows.join_asof(end, left_on="line", right_on="_end", strategy="backward").join_asof(
        start, left_on="line", right_on="_start", strategy="backward"
    )
    none = pl.col("_end").is_null() & pl.col("_start").is_null()
    later_start = pl.col("_start").fill_null(0) > pl.col("_end").fill_null(0)  # line numbers start at 1
    return marked.with_columns(in_header=pl.when(none).then(carry).otherwise(later_start)).drop("_end", "_start")


def split_alert(lines: pl.DataFrame) -> dict[str, pl.DataFrame]:
    """The rows of each family of an alert log: the lines of the shapes the alert grammar reads
    (`grammar.ALERT_LINE`), blank lines, and the others (ignored, category "alert")."""
    coded = lines.select(
        "line",
        "text",
        _f=pl.when(_BLANK)
        .then(_code("ignored:blank"))
        .when(pl.col("text").str.contains(g.ALERT_LINE))
        .then(_code(g.Family.ALERT.value))
        .otherwise(_code("ignored:alert")),
    )
    groups = dict.fromkeys(_CODE, coded.clear().drop("_f"))
    for name in ("ignored:blank", g.Family.ALERT.value, "ignored:alert"):
        groups[name] = coded.filter(pl.col("_f") == _CODE[name]).drop("_f")
    return groups


# ---------------------------------------------------------------------------- grammar path
def record_row(record: g.Record) -> dict[str, object]:
    """A grammar record as a row of its table (see `RECORD_TABLE`)."""
    if isinstance(record, g.SessionLine):
        return {
            "local": record.local,
            "digits": record.digits,
            "utc_offset_min": record.utc_offset_min,
        }
    row: dict[str, object] = {name: getattr(record, name) for name in record.__slots__}
    return row


def _grammar_path(rows: pl.DataFrame) -> tuple[dict[str, list[dict[str, object]]], Counter[str]]:
    out: dict[str, list[dict[str, object]]] = {name: [] for name in TABLES}
    parsed: Counter[str] = Counter()
    for line, text, code in rows.select("line", "text", "family").iter_rows():
        family = FAMILIES[code]
        try:
            record = g.parse_line(g.Family(family), text)
        except g.LineError as err:
            reason = str(err)
            if family == g.Family.WAIT and not text.startswith("WAIT #"):
                reason = f"a WAIT record at column {text.find('WAIT #') + 1}, after a record cut short"
            out["unparsed"].append({"line": line, "family": family, "reason": reason, "text": text[:500]})
            continue
        out[RECORD_TABLE[type(record)]].append({"line": line, **record_row(record)})
        parsed[family] += 1
    return out, parsed


# ---------------------------------------------------------------------------- driver
def parse_chunk(lines: pl.DataFrame, in_header: bool, *, fast: bool = True, alert: bool = False) -> tuple[Parsed, bool]:
    """Parse one chunk of numbered lines; returns the result and the header state at its end.

    `fast=False` sends every line of a known family to its grammar: the specification path,
    which the tests compare with the fast path on whole trace sets. `alert`: the lines are an
    alert log's (`split_alert`), not a trace's.
    """
    groups, end_in_header = split_chunk(lines, in_header, alert=alert)
    return parse_groups(groups, fast=fast), end_in_header


def split_chunk(lines: pl.DataFrame, in_header: bool, *, alert: bool = False) -> tuple[dict[str, pl.DataFrame], bool]:
    """The first half of `parse_chunk`: the chunk's lines sorted into families (`split_families`, or
    `split_alert` for an alert log's), and the header state at its end. The chunks of a file are split
    in turn, each with the state the one before it ended in."""
    return (split_alert(lines), False) if alert else split_families(lines, in_header)


def parse_groups(groups: dict[str, pl.DataFrame], *, fast: bool = True) -> Parsed:
    """The second half of `parse_chunk`: the tables and line accounting of a chunk split into families
    (`split_chunk`). It needs nothing of the chunks before it, so it may run on another thread."""
    ignored = Counter(
        {name.removeprefix("ignored:"): rows.height for name, rows in groups.items() if name.startswith("ignored:")}
    )
    tables, parsed = _parse_groups(groups, fast)
    return Parsed(tables, +parsed, +ignored)


def parse_files(chunks: Sequence[pl.DataFrame], *, fast: bool = True, alert: bool = False) -> list[Parsed]:
    """Several trace files (`alert`: alert logs), each whole in one chunk of numbered lines, parsed
    together: for each, what `parse_chunk(chunk, False, alert=alert)` gives it, for about the fixed
    cost of one chunk.

    A chunk costs a few hundred polars queries however few its lines, so an upload of thousands of
    small traces pays them once per batch instead of once per file. The files' lines are numbered
    on, a free number before each file (a header region ends there), and the tables are cut back
    into files by line number; each file's line accounting is counted from the rows of its families.
    """
    if len(chunks) < 2:
        return [parse_chunk(chunk, False, fast=fast, alert=alert)[0] for chunk in chunks]
    offsets = itertools.accumulate((_last_line(c) + 1 for c in chunks[:-1]), initial=0)
    bounds = pl.Series("_off", list(offsets), dtype=pl.Int64)
    shift = per_row(bounds.to_frame(), [c.height for c in chunks]).to_series()
    lines = pl.concat(chunks).with_columns(pl.col("line") + shift)
    groups = split_alert(lines) if alert else split_families(lines, False, bounds)[0]
    return parse_grouped(groups, bounds, fast=fast)


def parse_grouped(groups: dict[str, pl.DataFrame], bounds: pl.Series, *, fast: bool = True) -> list[Parsed]:
    """The second half of `parse_files`: the lines of several files sorted into families (`split_chunk`'s
    groups), each file's numbers shifted by its value of `bounds` (0 for the first; sorted), parsed together
    and cut back into one result per file, with its own line numbers."""
    tables, _ = _parse_groups(groups, fast)
    by_file = {name: _per_file(rows, bounds) for name, rows in tables.items()}
    counts = _per_file(pl.concat([rows.select("line", group=pl.lit(name)) for name, rows in groups.items()]), bounds)
    out = []
    blank = {name: empty(SCHEMAS[name]) for name in by_file}  # shared by the files without rows (frames are immutable)
    for k in range(len(bounds)):
        own = {name: parts.get(k, blank[name]) for name, parts in by_file.items()}
        group_rows = counts.get(k)
        seen = Counter(dict(group_rows["group"].value_counts().iter_rows())) if group_rows is not None else Counter()
        rejected = Counter(own["unparsed"]["family"].to_list())
        parsed = Counter({name: n - rejected[name] for name, n in seen.items() if not name.startswith("ignored:")})
        ignored = Counter({name.removeprefix("ignored:"): n for name, n in seen.items() if name.startswith("ignored:")})
        out.append(Parsed(own, +parsed, +ignored))
    return out


def _last_line(chunk: pl.DataFrame) -> int:
    last = chunk["line"].max()
    return int(last) if isinstance(last, int) else 0


def _per_file(rows: pl.DataFrame, bounds: pl.Series) -> dict[int, pl.DataFrame]:
    """Rows of files parsed together, by file (its index), with their own line numbers again."""
    if not rows.height:
        return {}
    at = bounds.search_sorted(rows["line"], side="left") - 1
    cut = rows.with_columns(line=pl.col("line") - bounds.gather(at), _file=at)
    return {k: part for (k,), part in cut.partition_by("_file", as_dict=True, include_key=False).items()}


def _parse_groups(groups: dict[str, pl.DataFrame], fast: bool) -> tuple[dict[str, pl.DataFrame], Counter[str]]:
    """The parse tables of a chunk's lines sorted into families, and the parsed lines per family."""
    quick: dict[str, list[pl.DataFrame]] = {name: [] for name in TABLES}
    parsed: Counter[str] = Counter()
    slow = []
    for family, spec in REGISTRY.items():
        rows = groups[family.value]
        if fast and spec.fast is not None:
            found, rows = spec.fast(rows)
            for name, part in found.items():
                quick[name].append(part)
                parsed[family.value] += part.height
        if rows.height:  # most families leave nothing to the grammar: no frame to build for them
            slow.append(rows.with_columns(family=_code(family.value)))
    if not slow:
        slow.append(groups[g.Family.TRANSPORT.value].clear().with_columns(family=_code(g.Family.TRANSPORT.value)))
    grammar_rows, by_grammar = _grammar_path(pl.concat(slow).sort("line"))  # a fast path's rest is not in order
    parsed.update(by_grammar)
    tables = {name: frame(grammar_rows[name], SCHEMAS[name]) for name in TABLES}
    for name, parts in quick.items():  # both parts are in line order: merge only when the grammar took some
        if not parts:
            continue
        rows = pl.concat(parts).sort("line") if len(parts) > 1 else parts[0]
        tables[name] = pl.concat([rows, tables[name]]).sort("line") if tables[name].height else rows
    return tables, parsed
