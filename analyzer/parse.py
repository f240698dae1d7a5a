"""Parse stage: numbered lines -> typed tables, with every line accounted for.

Each line is put in one family by literal tests (see `split_families`). The hot families
(16410 messages, `***` stamps, WAIT lines) go through a vectorised fast path that only accepts
the canonical spelling of a line, a strict subset of the grammar; it takes the fields by
position, and checks and parses the parts that repeat from line to line (a message less its
msgid; a krs source; a WAIT line less its tim) once per distinct value, the rest of a line by
anchored regexes and digit checks. Everything else of a known family is parsed by that family's lark grammar
(`analyzer.grammar`), which is the specification; a line the grammar rejects becomes an
`unparsed` row with the reason. Lines of no family are `ignored`, counted by category.
"""

from __future__ import annotations

import functools
import re
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

import polars as pl

from analyzer import grammar as g
from analyzer.schemas import (
    ADR,
    HEADER,
    KRS,
    LGWR,
    MARKERS,
    MESSAGES,
    UNPARSED,
    WAITS,
    empty,
    frame,
)

#: the four event-16410 message texts, by kind (grammars/transport.lark)
MESSAGE_PREFIXES = {
    "client_send": "Client sending SQLNET request data",
    "client_recv": "Client received SQLNET call",
    "server_recv": "Server received SQLNET data",
    "server_done": "Server finished processing SQLNET data",
}
#: literal starts of log writer lines (grammars/lgwr.lark)
LGWR_PREFIXES = ("Warning: log write ", "kcrfw_alfs_update_mode:", "Log file sync switching to ")
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
)
TABLES = ("messages", "krs", "adr", "waits", "lgwr", "header", "markers", "unparsed")
SCHEMAS = {
    "messages": MESSAGES,
    "krs": KRS,
    "adr": ADR,
    "waits": WAITS,
    "lgwr": LGWR,
    "header": HEADER,
    "markers": MARKERS,
    "unparsed": UNPARSED,
}


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
)
_CODE = {name: code for code, name in enumerate(FAMILIES)}
#: code of the rows the literal tests leave to the full order of tests
_UNSORTED = len(FAMILIES)


def _prefix_regex(prefixes: tuple[str, ...]) -> str:
    """One anchored alternation: a single pass instead of one `starts_with` per prefix."""
    return "^(?:" + "|".join(re.escape(p) for p in prefixes) + ")"


def _code(name: str) -> pl.Expr:
    return pl.lit(_CODE[name], pl.UInt8)


#: a line that starts a trace header (a new file, or a repeated header after a pid reuse):
#: `Trace file `, or `Oracle ` with ` Release ` further on; one anchored pass, failing at the first byte
_HEADER_START = pl.col("text").str.contains(r"^(?:Trace file |Oracle(?: .*)? Release )")
#: the family of a line that is neither `***`, `WAIT #` nor holds `msgid=`, given `in_header`
_FULL_ORDER = (
    pl.when(pl.col("text").str.contains(r"^[ \t]*$"))
    .then(_code("ignored:blank"))
    .when(pl.col("text").str.contains(r"^(?:\.\.\. )?(?:Client|Server) "))
    .then(_code(g.Family.TRANSPORT.value))
    .when(pl.col("text").str.contains(_prefix_regex(LGWR_PREFIXES)))
    .then(_code(g.Family.LGWR.value))
    .when(pl.col("in_header"))
    .then(_code(g.Family.HEADER.value))
    .when(pl.col("text").str.contains(_prefix_regex(OTHER_10046_PREFIXES)))
    .then(_code("ignored:10046"))
    .otherwise(_code("ignored:other"))
)


def classify(lines: pl.DataFrame, in_header: bool) -> pl.DataFrame:
    """Numbered lines with `family` (a code into FAMILIES), in line order (see `split_families`)."""
    groups, _ = split_families(lines, in_header)
    return pl.concat([rows.with_columns(family=_code(name)) for name, rows in groups.items()]).sort("line")


def split_families(lines: pl.DataFrame, in_header: bool) -> tuple[dict[str, pl.DataFrame], bool]:
    """The rows of each family (keys: FAMILIES) in line order, and whether the chunk ends inside a header.

    The tests, by priority: blank, `***`, `WAIT #`, 16410 message (`msgid=` anywhere, or the start
    of a message text), log writer prefix, header region, other 10046 prefix. No blank line starts
    with `***` or `WAIT #` or holds `msgid=`, so these three literal tests alone sort the hot
    lines; the full order of tests only runs on the few rows they leave. `in_header` says whether
    the previous chunk ended inside a header.
    """
    text = pl.col("text")
    hot = (
        pl.when(text.str.starts_with("***"))
        .then(_code(g.Family.STAMPS.value))
        .when(text.str.starts_with("WAIT #"))
        .then(_code(g.Family.WAIT.value))
        .when(text.str.contains("msgid=", literal=True))
        .then(_code(g.Family.TRANSPORT.value))
        .otherwise(pl.lit(_UNSORTED, pl.UInt8))
    )
    coded, f = lines.select("line", "text", _f=hot), pl.col("_f")
    empty_rows = lines.select("line", "text").clear()
    groups = dict.fromkeys(_CODE, empty_rows)
    for name in (g.Family.TRANSPORT.value, g.Family.STAMPS.value, g.Family.WAIT.value):
        groups[name] = coded.filter(f == _CODE[name]).drop("_f")  # a filter per group: half a partition_by
    rest = coded.filter(f == _UNSORTED).drop("_f")
    stars = groups[g.Family.STAMPS.value]["line"]
    starts = pl.concat([rows.filter(_HEADER_START)["line"] for rows in (groups[g.Family.TRANSPORT.value], rest)]).sort()
    rest = _with_header_region(rest, stars, starts, in_header).with_columns(family=_FULL_ORDER)
    for (code,), rows in rest.partition_by("family", as_dict=True, include_key=False).items():
        name = FAMILIES[code]
        groups[name] = pl.concat([groups[name], rows.select("line", "text")]).sort("line")
    # the region at the last line: after the last header start if that comes after the last `***`
    if stars.is_empty() and starts.is_empty():
        return groups, in_header
    return groups, bool((starts[-1] if len(starts) else 0) > (stars[-1] if len(stars) else 0))


def _with_header_region(rows: pl.DataFrame, stars: pl.Series, starts: pl.Series, carry: bool) -> pl.DataFrame:
    """Add `in_header`: a header start comes after the last `***` line before (or at) each row.

    `stars` and `starts` are the sorted line numbers of `***` lines and header starts; with
    neither before a row, the region carries over from the previous chunk (`carry`).
    """
    star = pl.DataFrame({"_star": stars}, schema={"_star": pl.Int64})
    start = pl.DataFrame({"_start": starts}, schema={"_start": pl.Int64})
    marked = rows.join_asof(star, left_on="line", right_on="_star", strategy="backward").join_asof(
        start, left_on="line", right_on="_start", strategy="backward"
    )
    none = pl.col("_star").is_null() & pl.col("_start").is_null()
    later_start = pl.col("_start").fill_null(0) > pl.col("_star").fill_null(0)  # line numbers start at 1
    return marked.with_columns(in_header=pl.when(none).then(carry).otherwise(later_start)).drop("_star", "_start")


# ---------------------------------------------------------------------------- fast paths
# Each fast path checks the canonical spelling of its shape (a strict subset of what the grammar
# accepts) with anchored regexes without capture groups, then takes the fields by position.
# Rows that fail the check, or whose numbers do not fit, go to lark. Trace lines repeat all but
# a few numbers, so the text parts are checked and parsed once per distinct value and joined
# back; per row remain the numbers (digits only: `_digits`) and, for stamps, a regex on the first
# 31 characters or so. Offsets from `str.find` count bytes and `str.slice` counts characters, so
# a key that is sliced at found offsets must be ASCII (`_ascii`).
#
# Dates: years 1000-9999 and seconds 00-59 only; year 0 and second 60 are no `datetime` for the
# grammar, while polars would take them (chrono reads 60 as a leap second).
_DATE_TIME = r"[1-9][0-9]{3}-[0-9]{2}-[0-9]{2}[ T][0-9]{2}:[0-9]{2}:[0-5][0-9]"
_MESSAGE_TEXTS = "|".join(re.escape(text) for text in MESSAGE_PREFIXES.values())
#: a message line less its ` msgid=<n>`: one of a few hundred values per chunk (kinds x log sequences)
MESSAGE_KEY_SHAPE = (
    rf"^(?:\.\.\. )?(?:{_MESSAGE_TEXTS}) \[[A-Za-z0-9_]+\](?: response)? oper='[^']*'"
    r" flag=(?:0x[0-9a-fA-F]+|-?[0-9]+) thrd=[0-9]+ seq=[0-9]+$"
)
_KRS_SOURCE = r"(?:[0-9]+ [A-Za-z_][A-Za-z0-9_]*\.c|\[[A-Za-z_][A-Za-z0-9_]*\.c:[0-9]+\])"
KRS_SHAPE = rf"^\*\*\* {_DATE_TIME}\.[0-9]{{1,9}} {_KRS_SOURCE}$"
KRS_SOURCE_SHAPE = rf"^{_KRS_SOURCE}$"
ADR_LOCAL_SHAPE = rf"^\*\*\* {_DATE_TIME}\.[0-9]{{1,9}}$"
ADR_ISO_SHAPE = rf"^\*\*\* {_DATE_TIME}\.[0-9]{{1,9}}[+-][0-9]{{2}}:[0-9]{{2}}(?: \((?:[^()]|\([^()]*\))*\))?$"
#: a WAIT line less its ` tim=<n>`; parameter values are printable ASCII (the grammar ends a value
#: at any white space, a form feed too)
WAIT_KEY_SHAPE = r"^WAIT #[0-9]+: nam='[^']*' ela= ?[0-9]+(?: [A-Za-z#_][^=']*=[!-~]+)*$"
_LOG_WRITE = "Warning: log write elapsed time "
LOG_WRITE_SHAPE = rf"^{_LOG_WRITE}[0-9]+ms, size [0-9]+KB$"
#: a message kind by the first 8 characters of its text ("Client s", "Server f", ...)
_KIND_BY_START = {text[:8]: kind for kind, text in MESSAGE_PREFIXES.items()}
#: where the fraction of a `*** YYYY-MM-DD HH:MM:SS.f` stamp starts
_FRACTION_AT = 24


def _int(expr: pl.Expr) -> pl.Expr:
    return expr.cast(pl.Int64, strict=False)


def _ascii(expr: pl.Expr) -> pl.Expr:
    """No character beyond ASCII, so byte offsets (`str.find`) are character offsets (`str.slice`)."""
    return expr.str.len_bytes() == expr.str.len_chars()


def _keep(out: pl.DataFrame, required: list[str], schema: pl.Schema) -> tuple[pl.DataFrame, pl.DataFrame]:
    """(rows whose required fields converted, as `schema`; the others as line + text, for lark)."""
    ok = pl.all_horizontal([pl.col(c).is_not_null() for c in required])
    return out.filter(ok).select(schema.names()), out.filter(~ok).select("line", "text")


def _per_distinct(rows: pl.DataFrame, key: str, parse: Callable[[pl.DataFrame], pl.DataFrame]) -> pl.DataFrame:
    """Rows with the columns `parse` derives from their `key`, computed once per distinct key.

    `parse` gets a frame of the distinct keys and returns those it accepts with their fields;
    the rows of the others get nulls (and go to lark). Row order is kept. Only the key column goes
    through the join (one row per row: the distinct keys are unique), not the text.
    """
    fields = parse(rows.select(pl.col(key).unique()))
    found = rows.select(key).join(fields, on=key, how="left", maintain_order="left").drop(key)
    return rows.drop(key).hstack(found)


def _fast_messages(rows: pl.DataFrame) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Canonical 16410 messages -> MESSAGES rows; the rest is returned for the grammar.

    A message line is `<key> msgid=<n>`, where the key (kind, function, oper, flag, thread,
    sequence) repeats from line to line: it is checked and parsed once per distinct value, and
    only the msgid is taken per row (see `_by_number_end`).
    """
    if rows.is_empty():
        return empty(MESSAGES), rows.select("line", "text")
    return _by_number_end(rows, " msgid=", _messages)


def _messages(cut: pl.DataFrame, suffix: str) -> tuple[pl.DataFrame, pl.DataFrame]:
    out = _per_distinct(cut, "_key", functools.partial(_message_keys, suffix=suffix))
    return _keep(out.with_columns(msgid=_digits(pl.col("_number"))), ["kind", "thread", "seq", "msgid"], MESSAGES)


def _by_number_end(
    rows: pl.DataFrame, marker: str, parse: Callable[[pl.DataFrame, str], tuple[pl.DataFrame, pl.DataFrame]]
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Lines `<key><marker><n>` cut into `_key` and `_number`, parsed by `parse(cut, suffix)`; in line order.

    On most lines of a chunk the number has as many digits as on its first lines (a guess, which
    the key's shape checks): those lines are cut that many characters before their end, at a
    fixed offset (cheaper than a search), and their key ends with the marker (`suffix`). Numbers
    grow a digit now and then: the lines `parse` rejects get another guess, and those left are
    cut at their first marker (a key that holds the marker is cut short there, fails its shape
    and goes to the grammar).
    """
    text, parts, tried = pl.col("text"), list[pl.DataFrame](), set[int]()
    while rows.height and (digits := _usual_digits(rows, marker)) and digits not in tried:
        tried.add(digits)
        quick, rows = parse(rows.with_columns(_key=text.str.head(-digits), _number=text.str.tail(digits)), marker)
        parts.append(quick)
    if rows.height or not parts:
        cut = text.str.splitn(marker, 2).struct.rename_fields(["_key", "_number"])  # one pass, no offsets
        more, rows = parse(rows.with_columns(cut.alias("_cut")).unnest("_cut"), "")
        parts.append(more)
    found = [part for part in parts if part.height] or parts[:1]
    return (pl.concat(found).sort("line") if len(found) > 1 else found[0]), rows


@functools.cache
def _number_end(marker: str) -> re.Pattern[str]:
    return re.compile(re.escape(marker) + r"([0-9]{1,18})\Z")


def _usual_digits(rows: pl.DataFrame, marker: str) -> int | None:
    """The most common number of digits after `marker` at the end of the first rows."""
    end = _number_end(marker)
    lengths = Counter(len(m[1]) for text in rows["text"].head(64).to_list() if (m := end.search(text)))
    return lengths.most_common(1)[0][0] if lengths else None


def _digits(text: pl.Expr) -> pl.Expr:
    """Decimal digits (no sign, no blank) as an Int64; null for anything else, or beyond an Int64."""
    return pl.when(~text.str.starts_with("+")).then(text.cast(pl.UInt64, strict=False).cast(pl.Int64, strict=False))


def _message_keys(keys: pl.DataFrame, suffix: str = "") -> pl.DataFrame:
    """Canonical message keys (each followed by `suffix`) with their fields.

    The shape fixes the layout: the oper runs from the first ` oper='` to the next quote, and
    `' flag=` is followed by exactly `<flag> thrd=<n> seq=<n>` (an oper may hold ` thrd=` itself).
    ASCII only: the offsets of `str.find` are in bytes, those of `str.slice` in characters.
    """
    key = pl.col("_bare")
    oper_at = key.str.find(" oper='", literal=True) + 7
    flag_at = key.str.find("' flag=", literal=True)
    numbers = key.str.slice(flag_at + 7).str.split(" ")
    return (
        keys.filter(pl.col("_key").str.ends_with(suffix))
        .with_columns(_bare=pl.col("_key").str.strip_suffix(suffix))
        .filter(key.str.contains(MESSAGE_KEY_SHAPE) & _ascii(key))
        .with_columns(
            kind=key.str.strip_prefix("... ").str.slice(0, 8).replace_strict(_KIND_BY_START, return_dtype=pl.String),
            oper=key.str.slice(oper_at, flag_at - oper_at),
            thread=_int(numbers.list.get(1).str.strip_prefix("thrd=")),
            seq=_int(numbers.list.get(2).str.strip_prefix("seq=")),
        )
        .drop("_bare")
    )


def _local(digits: int, form: str) -> pl.Expr:
    """Naive time of a `*** YYYY-MM-DD<form>HH:MM:SS.f` stamp from its first `digits` fraction digits.

    Whole seconds repeat from line to line, so polars' conversion cache parses each once; the
    fraction is an integer scaled to microseconds.
    """
    text = pl.col("text")
    seconds = text.str.slice(4, 19).str.to_datetime(f"%Y-%m-%d{form}%H:%M:%S", strict=False, time_unit="us")
    micros = _int(text.str.slice(_FRACTION_AT, digits)) * 10 ** (6 - digits)
    return seconds + pl.duration(microseconds=micros)


def _fast_stamps(rows: pl.DataFrame) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame]:
    """krs stamps and bare ADR lines of both generations; session lines go to the grammar.

    A file prints one precision: the krs stamps with that of the first ones of the chunk are
    taken by a shape with exactly that many fraction digits, at fixed offsets; the others (another
    precision) by a shape that lets the fraction run to the blank after it.
    """
    text = pl.col("text")
    fraction = text.str.slice(_FRACTION_AT, 10).str.find(" ", literal=True)  # the shape puts a blank after it
    usual = _krs_precision(rows)
    krs, rest = _take(rows, _krs_shape(usual), usual, _krs) if usual else (_krs(rows.clear(), 0), rows)
    other, rest = _take(rest, KRS_SHAPE, fraction, _krs)
    krs = pl.concat([krs, other]).sort("line") if other.height else krs
    krs, bad_krs = _keep(_per_distinct(krs, "_src", _sources), ["local", "src_line"], KRS)
    adr_local, rest = _take(rest, ADR_LOCAL_SHAPE, text.str.len_bytes() - _FRACTION_AT, _adr_local)
    adr_iso, rest = _take(rest, ADR_ISO_SHAPE, text.str.slice(_FRACTION_AT, 10).str.find("[+-]"), _adr_iso)
    adr, bad_adr = _keep(pl.concat([adr_local, adr_iso]).sort("line"), ["local"], ADR)
    return krs, adr, pl.concat([rest, bad_krs, bad_adr])


def _krs_shape(digits: int) -> str:
    """The start of KRS_SHAPE up to the blank after exactly `digits` fraction digits.

    The source after it repeats from line to line: `_sources` checks it once per distinct value
    (a line whose source fails goes to the grammar), so the regex stops after 31 characters or so.
    """
    return rf"^\*\*\* {_DATE_TIME}\.[0-9]{{{digits}}} "


#: what a krs stamp looks like up to its fraction, to guess the precision of a chunk's stamps
_KRS_START = re.compile(r"\*\*\* [0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2}\.([0-9]{1,9}) ")


def _krs_precision(rows: pl.DataFrame) -> int | None:
    """The most common fraction length of the krs stamps among the first rows (a guess: the shape checks it)."""
    lengths = Counter(len(m[1]) for text in rows["text"].head(64).to_list() if (m := _KRS_START.match(text)))
    return lengths.most_common(1)[0][0] if lengths else None


def _take(
    rows: pl.DataFrame, shape: str, fraction: pl.Expr | int, build: Callable[[pl.DataFrame, int], pl.DataFrame]
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """(the rows of a stamp shape, built per fraction length; the other rows)."""
    if rows.is_empty():  # small files have few stamps of each kind: skip the polars calls
        return build(rows, 0), rows
    ok = rows.select(pl.col("text").str.contains(shape)).to_series()  # once: a filter on an expression runs it
    if not ok.any():  # the rarer shapes, on the few rows the usual one leaves
        return build(rows.clear(), 0), rows
    return _per_fraction(rows.filter(ok), fraction, build), rows.filter(~ok)


def _per_fraction(
    rows: pl.DataFrame, length: pl.Expr | int, build: Callable[[pl.DataFrame, int], pl.DataFrame]
) -> pl.DataFrame:
    """`build(part, n)` for the rows of each fraction length n (or of the one given), in line order.

    A file prints one stamp precision, so there is one part in practice; with the length a
    constant, polars slices at fixed offsets, several times cheaper than at per-row offsets.
    """
    if isinstance(length, int):
        return build(rows, length)
    lengths = rows.select(length).to_series()
    if lengths.n_unique() == 1:  # one precision: no partition (a copy)
        return build(rows, int(lengths[0]))
    parts = rows.with_columns(_n=lengths).partition_by("_n", as_dict=True, include_key=False)
    built = [build(part, n) for (n,), part in parts.items()]
    if len(built) == 1:
        return built[0]
    return pl.concat(built).sort("line") if built else build(rows, 0)


def _krs(rows: pl.DataFrame, fraction: int) -> pl.DataFrame:
    digits = min(fraction, 6)
    return rows.with_columns(
        local=_local(digits, " "),
        digits=pl.lit(digits, pl.Int8),
        _src=pl.col("text").str.slice(_FRACTION_AT + fraction + 1),
    )


def _adr_local(rows: pl.DataFrame, fraction: int) -> pl.DataFrame:
    digits = min(fraction, 6)
    return rows.with_columns(
        local=_local(digits, " "), digits=pl.lit(digits, pl.Int8), utc_offset_min=pl.lit(None, pl.Int32)
    )


def _adr_iso(rows: pl.DataFrame, fraction: int) -> pl.DataFrame:
    """ISO ADR lines: the zone `+HH:MM` follows the fraction."""
    digits = min(fraction, 6)
    zone = pl.col("text").str.slice(_FRACTION_AT + fraction, 6)
    sign = pl.when(zone.str.starts_with("-")).then(-1).otherwise(1)
    minutes = _int(zone.str.slice(1, 2)) * 60 + _int(zone.str.slice(4, 2))
    return rows.with_columns(
        local=_local(digits, "T"), digits=pl.lit(digits, pl.Int8), utc_offset_min=(sign * minutes).cast(pl.Int32)
    )


def _sources(sources: pl.DataFrame) -> pl.DataFrame:
    """krs source locations, `[file.c:line]` (19c+) or `line file.c` (<= 12.1), as file and line.

    Only sources of the canonical shape: the others get no line, and their rows go to the grammar.
    """
    src = pl.col("_src")
    bracket = src.str.starts_with("[")
    parts = (
        pl.when(bracket)
        .then(src.str.strip_prefix("[").str.strip_suffix("]").str.split(":"))
        .otherwise(src.str.split(" "))
    )
    return sources.filter(src.str.contains(KRS_SOURCE_SHAPE)).with_columns(
        src_file=pl.when(bracket).then(parts.list.first()).otherwise(parts.list.last()),
        src_line=_int(pl.when(bracket).then(parts.list.last()).otherwise(parts.list.first())),
    )


def _fast_waits(rows: pl.DataFrame) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Canonical 10046 WAIT lines (either `ela=` spacing).

    A WAIT line is `<key> tim=<n>`: the key (cursor, event, elapsed time, parameters) repeats
    far more than the line does, so it is checked and parsed once per distinct value; only
    `tim` is taken per row, from the end of the line (see `_by_number_end`).
    """
    if rows.is_empty():
        return empty(WAITS), rows
    return _by_number_end(rows, " tim=", _waits)


def _waits(cut: pl.DataFrame, suffix: str) -> tuple[pl.DataFrame, pl.DataFrame]:
    out = _per_distinct(cut, "_key", functools.partial(_wait_keys, suffix=suffix))
    return _keep(out.with_columns(tim=_digits(pl.col("_number"))), ["cursor", "ela_us", "tim"], WAITS)


def _wait_keys(keys: pl.DataFrame, suffix: str = "") -> pl.DataFrame:
    """Canonical WAIT keys (a line less its ` tim=<n>`, followed by `suffix`) with cursor, event and elapsed time.

    No parameter may be named `tim` (the grammar ends the parameters there): a key holding
    ` tim=` goes to the grammar.
    """
    key = pl.col("_bare")
    name_at = key.str.find(": nam='", literal=True)
    ela_at = key.str.find("' ela=", literal=True)  # the event holds no quote: this is its end
    ok = key.str.contains(WAIT_KEY_SHAPE) & ~key.str.contains(" tim=", literal=True) & _ascii(key)
    return (
        keys.filter(pl.col("_key").str.ends_with(suffix))
        .with_columns(_bare=pl.col("_key").str.strip_suffix(suffix))
        .filter(ok)
        .with_columns(
            cursor=_int(key.str.slice(6, name_at - 6)),
            event=key.str.slice(name_at + 7, ela_at - name_at - 7),
            ela_us=_int(key.str.slice(ela_at + 6).str.strip_prefix(" ").str.splitn(" ", 2).struct.field("field_0")),
        )
        .drop("_bare")
    )


def _fast_log_writes(rows: pl.DataFrame) -> tuple[pl.DataFrame, pl.DataFrame]:
    """LGWR long-write warnings (one per slow write: thousands in a bad hour); other LGWR lines go to lark."""
    if rows.is_empty():
        return empty(LGWR), rows
    text, ok = pl.col("text"), pl.col("_ok")
    rows = rows.with_columns(_ok=text.str.contains(LOG_WRITE_SHAPE))
    size_at = text.str.find("ms, size ", literal=True)
    out = rows.filter(ok).with_columns(
        kind=pl.lit("log_write"),
        elapsed_ms=_int(text.str.slice(len(_LOG_WRITE), size_at - len(_LOG_WRITE))),
        size_kb=_int(text.str.slice(size_at + 9).str.strip_suffix("KB")),
        detail=pl.lit(None, pl.String),
    )
    out, bad = _keep(out, ["elapsed_ms", "size_kb"], LGWR)
    return out, pl.concat([rows.filter(~ok).select("line", "text"), bad])


# ---------------------------------------------------------------------------- grammar path
_RECORD_TABLE: dict[type, str] = {
    g.Message: "messages",
    g.KrsStamp: "krs",
    g.AdrStamp: "adr",
    g.SessionLine: "adr",
    g.Wait: "waits",
    g.LgwrLine: "lgwr",
    g.HeaderLine: "header",
    g.FileMarker: "markers",
}


def record_row(record: g.Record) -> dict[str, object]:
    """A grammar record as a row of its table (see `_RECORD_TABLE`)."""
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
            out["unparsed"].append({"line": line, "family": family, "reason": str(err), "text": text[:500]})
            continue
        row = record_row(record)
        if any(isinstance(v, int) and not -(2**63) <= v < 2**63 for v in row.values()):
            out["unparsed"].append(
                {
                    "line": line,
                    "family": family,
                    "reason": "number out of range",
                    "text": text[:500],
                }
            )
            continue
        out[_RECORD_TABLE[type(record)]].append({"line": line, **row})
        parsed[family] += 1
    return out, parsed


# ---------------------------------------------------------------------------- driver
def parse_chunk(lines: pl.DataFrame, in_header: bool, *, fast: bool = True) -> tuple[Parsed, bool]:
    """Parse one chunk of numbered lines; returns the result and the header state at its end.

    `fast=False` sends every line of a known family to its grammar: the specification path,
    which the tests compare with the fast path on whole trace sets.
    """
    groups, end_in_header = split_families(lines, in_header)
    ignored = Counter(
        {name.removeprefix("ignored:"): rows.height for name, rows in groups.items() if name.startswith("ignored:")}
    )
    if fast:
        messages, rest_m = _fast_messages(groups[g.Family.TRANSPORT.value])
        krs, adr, rest_s = _fast_stamps(groups[g.Family.STAMPS.value])
        waits, rest_w = _fast_waits(groups[g.Family.WAIT.value])
        lgwr, rest_l = _fast_log_writes(groups[g.Family.LGWR.value])
    else:
        messages, krs, adr, waits, lgwr = (empty(s) for s in (MESSAGES, KRS, ADR, WAITS, LGWR))
        rest_m, rest_s, rest_w, rest_l = (
            groups[f.value] for f in (g.Family.TRANSPORT, g.Family.STAMPS, g.Family.WAIT, g.Family.LGWR)
        )
    slow = {
        g.Family.TRANSPORT.value: rest_m,
        g.Family.STAMPS.value: rest_s,
        g.Family.WAIT.value: rest_w,
        g.Family.LGWR.value: rest_l,
        g.Family.HEADER.value: groups[g.Family.HEADER.value],
    }
    grammar_rows, parsed = _grammar_path(
        pl.concat([rows.with_columns(family=_code(name)) for name, rows in slow.items()]).sort("line")
    )
    parsed[g.Family.TRANSPORT.value] += messages.height
    parsed[g.Family.STAMPS.value] += krs.height + adr.height
    parsed[g.Family.WAIT.value] += waits.height
    parsed[g.Family.LGWR.value] += lgwr.height
    tables = {name: frame(grammar_rows[name], SCHEMAS[name]) for name in TABLES}
    quick = {"messages": messages, "krs": krs, "adr": adr, "waits": waits, "lgwr": lgwr}
    for name, rows in quick.items():  # both parts are in line order: merge only when the grammar took some
        tables[name] = pl.concat([rows, tables[name]]).sort("line") if tables[name].height else rows
    return Parsed(tables, +parsed, +ignored), end_in_header
