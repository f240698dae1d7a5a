"""Parse stage: numbered lines -> typed tables, with every line accounted for.

Each line is put in one family by a literal prefix (see `classify`). The hot families
(16410 messages, `***` stamps, WAIT lines) go through a vectorised fast path that only accepts
the canonical spelling of a line: it re-assembles the line from the fields it took and keeps
the row only if that gives back the input exactly. Everything else of a known family is parsed
by that family's lark grammar (`analyzer.grammar`), which is the specification; a line the
grammar rejects becomes an `unparsed` row with the reason. Lines of no family are `ignored`,
counted by category.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
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


def _prefix_regex(prefixes: tuple[str, ...]) -> str:
    """One anchored alternation: a single pass instead of one `starts_with` per prefix."""
    return "^(?:" + "|".join(re.escape(p) for p in prefixes) + ")"


def _code(name: str) -> pl.Expr:
    return pl.lit(_CODE[name], pl.UInt8)


def classify(lines: pl.DataFrame, in_header: bool) -> pl.DataFrame:
    """Add `family` (a code into FAMILIES) and `in_header` to numbered lines.

    Only literal tests run over every line (starts_with, one substring search); the order of
    the tests is the priority. `in_header` says whether the previous chunk ended in a header.
    """
    text = pl.col("text")
    header_start = text.str.starts_with("Trace file ") | (
        text.str.starts_with("Oracle ") & text.str.contains(" Release ", literal=True)
    )
    region = (
        pl.when(text.str.starts_with("***"))
        .then(False)
        .when(header_start)
        .then(True)
        .otherwise(None)
        .forward_fill()
        .fill_null(in_header)
    )
    is_message = text.str.contains("msgid=", literal=True) | text.str.contains(r"^(?:\.\.\. )?(?:Client|Server) ")
    family = (
        pl.when(text.str.contains(r"^[ \t]*$"))
        .then(_code("ignored:blank"))
        .when(text.str.starts_with("***"))
        .then(_code(g.Family.STAMPS.value))
        .when(text.str.starts_with("WAIT #"))
        .then(_code(g.Family.WAIT.value))
        .when(is_message)
        .then(_code(g.Family.TRANSPORT.value))
        .when(text.str.contains(_prefix_regex(LGWR_PREFIXES)))
        .then(_code(g.Family.LGWR.value))
        .when(pl.col("in_header"))
        .then(_code(g.Family.HEADER.value))
        .when(text.str.contains(_prefix_regex(OTHER_10046_PREFIXES)))
        .then(_code("ignored:10046"))
        .otherwise(_code("ignored:other"))
    )
    return lines.with_columns(in_header=region).with_columns(family=family)


# ---------------------------------------------------------------------------- fast paths
# Each fast path first checks a line against an anchored regex without capture groups (the
# canonical spelling of that shape, a strict subset of what the grammar accepts), then takes
# the fields with splits. Rows that fail the check, or whose numbers do not fit, go to lark.
MESSAGE_SHAPE = (
    r"^(?:\.\.\. )?(?:Client sending SQLNET request data|Client received SQLNET call"
    r"|Server received SQLNET data|Server finished processing SQLNET data) \[[A-Za-z0-9_]+\](?: response)?"
    r" oper='[^']*' flag=(?:0x[0-9a-fA-F]+|-?[0-9]+) thrd=[0-9]+ seq=[0-9]+ msgid=[0-9]+$"
)
KRS_SHAPE = (
    r"^\*\*\* [0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{1,9}"
    r" (?:[0-9]+ [A-Za-z_][A-Za-z0-9_]*\.c|\[[A-Za-z_][A-Za-z0-9_]*\.c:[0-9]+\])$"
)
ADR_LOCAL_SHAPE = r"^\*\*\* [0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{1,9}$"
ADR_ISO_SHAPE = (
    r"^\*\*\* [0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{1,9}[+-][0-9]{2}:[0-9]{2}"
    r"(?: \((?:[^()]|\([^()]*\))*\))?$"
)
WAIT_SHAPE = r"^WAIT #[0-9]+: nam='[^']*' ela= ?[0-9]+(?: [A-Za-z#_][^=']*=[^ \t]+)* tim=[0-9]+$"
_TS_FORMAT = "%Y-%m-%d %H:%M:%S%.f"
#: where `[` stands in each message text (without the leading dots): tells the kinds apart
_BRACKET = {kind: len(text) + 1 for kind, text in MESSAGE_PREFIXES.items()}


def _digits(length: pl.Expr, overhead: int) -> pl.Expr:
    """Fraction digits of a timestamp from its length, capped at 6 (we keep microseconds)."""
    return (length.cast(pl.Int32) - overhead).clip(0, 6).cast(pl.Int8)


def _int(expr: pl.Expr) -> pl.Expr:
    return expr.cast(pl.Int64, strict=False)


def _accept(rows: pl.DataFrame, shape: str) -> tuple[pl.DataFrame, pl.DataFrame]:
    """(rows of the canonical shape, the others)."""
    ok = rows.select(pl.col("text").str.contains(shape)).to_series()
    return rows.filter(ok), rows.filter(~ok)


def _keep(
    out: pl.DataFrame, required: list[str], schema: pl.Schema, rest: pl.DataFrame
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Rows whose required fields converted go to `schema`; the others join `rest` for lark."""
    ok = pl.all_horizontal([pl.col(c).is_not_null() for c in required])
    bad = out.filter(~ok).select(rest.columns)
    return out.filter(ok).select(schema.names()), pl.concat([rest, bad])


def _after(text: pl.Expr, marker: str) -> pl.Expr:
    """The text after the first `marker` (canonical lines hold each marker once)."""
    return text.str.slice(text.str.find(marker, literal=True) + len(marker))


def _fast_messages(rows: pl.DataFrame) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Canonical 16410 messages -> MESSAGES rows; the rest is returned for the grammar.

    The shape check guarantees the layout, so fields are found by position: the kind by the
    first letter and the length of the text before `[`, the numbers after their `name=`.
    """
    good, rest = _accept(rows, MESSAGE_SHAPE)
    text = pl.col("text")
    dots = text.str.starts_with("... ").cast(pl.Int32) * 4
    bracket = text.str.find("[", literal=True) - dots
    client = text.str.starts_with("C") | text.str.starts_with("... C")
    oper_start = text.str.find(" oper='", literal=True) + 7
    out = good.with_columns(
        kind=pl.when(client & (bracket == _BRACKET["client_send"]))
        .then(pl.lit("client_send"))
        .when(client)
        .then(pl.lit("client_recv"))
        .when(bracket == _BRACKET["server_recv"])
        .then(pl.lit("server_recv"))
        .otherwise(pl.lit("server_done")),
        oper=text.str.slice(oper_start, text.str.find("' flag=", literal=True) - oper_start),
        thread=_int(_after(text, " thrd=").str.split(" ").list.first()),
        seq=_int(_after(text, " seq=").str.split(" ").list.first()),
        msgid=_int(_after(text, " msgid=")),
    )
    return _keep(out, ["thread", "seq", "msgid"], MESSAGES, rest)


def _fast_stamps(rows: pl.DataFrame) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame]:
    """krs stamps and bare ADR lines of both generations; session lines go to the grammar."""
    krs_rows, rest = _accept(rows, KRS_SHAPE)
    words = pl.col("text").str.split(" ")
    src = pl.col("_w").list.get(3)
    bracket = src.str.starts_with("[")
    inner = src.str.strip_prefix("[").str.strip_suffix("]").str.split(":")
    krs = krs_rows.with_columns(_w=words).with_columns(
        local=pl.concat_str([pl.col("_w").list.get(1), pl.col("_w").list.get(2)], separator=" ").str.to_datetime(
            _TS_FORMAT, strict=False, time_unit="us"
        ),
        digits=_digits(pl.col("_w").list.get(2).str.len_bytes(), 9),
        src_file=pl.when(bracket).then(inner.list.get(0)).otherwise(pl.col("_w").list.get(4, null_on_oob=True)),
        src_line=_int(pl.when(bracket).then(inner.list.get(-1)).otherwise(src)),
    )
    krs, rest = _keep(krs, ["local", "src_line"], KRS, rest)
    local_rows, rest = _accept(rest, ADR_LOCAL_SHAPE)
    adr_local = local_rows.with_columns(
        local=pl.col("text").str.slice(4).str.to_datetime(_TS_FORMAT, strict=False, time_unit="us"),
        digits=_digits(pl.col("text").str.len_bytes(), 24),
        utc_offset_min=pl.lit(None, pl.Int32),
    )
    adr_local, rest = _keep(adr_local, ["local"], ADR, rest)
    iso_rows, rest = _accept(rest, ADR_ISO_SHAPE)
    stamp = pl.col("text").str.slice(4).str.split(" ").list.first()
    zone = stamp.str.tail(6)
    sign = pl.when(zone.str.starts_with("-")).then(-1).otherwise(1)
    adr_iso = iso_rows.with_columns(
        local=stamp.str.head(-6)
        .str.replace("T", " ", literal=True)
        .str.to_datetime(_TS_FORMAT, strict=False, time_unit="us"),
        digits=_digits(stamp.str.len_bytes(), 26),
        utc_offset_min=(sign * (_int(zone.str.slice(1, 2)) * 60 + _int(zone.str.slice(4, 2)))).cast(pl.Int32),
    )
    adr_iso, rest = _keep(adr_iso, ["local"], ADR, rest)
    return krs, pl.concat([adr_local, adr_iso]), rest


def _fast_waits(rows: pl.DataFrame) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Canonical 10046 WAIT lines (either `ela=` spacing)."""
    good, rest = _accept(rows, WAIT_SHAPE)
    text = pl.col("text")
    name_start = text.str.find(": nam='", literal=True)
    ela_at = text.str.find("' ela=", literal=True)
    out = good.with_columns(
        cursor=_int(text.str.slice(6, name_start - 6)),
        event=text.str.slice(name_start + 7, ela_at - name_start - 7),
        ela_us=_int(text.str.slice(ela_at + 6).str.strip_prefix(" ").str.split(" ").list.first()),
        tim=_int(_after(text, " tim=")),
    )
    return _keep(out, ["cursor", "ela_us", "tim"], WAITS, rest)


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
def parse_chunk(lines: pl.DataFrame, in_header: bool) -> tuple[Parsed, bool]:
    """Parse one chunk of numbered lines; returns the result and the header state at its end."""
    rows = classify(lines, in_header)
    end_in_header = bool(rows["in_header"][-1]) if rows.height else in_header
    rows = rows.select("line", "text", "family")
    counts = dict(rows["family"].value_counts().iter_rows())
    ignored = Counter(
        {FAMILIES[c].removeprefix("ignored:"): n for c, n in counts.items() if FAMILIES[c].startswith("ignored:")}
    )
    parts = rows.partition_by("family", as_dict=True, include_key=True)
    empty_rows = rows.clear()

    def family(name: str) -> pl.DataFrame:
        return parts.get((_CODE[name],), empty_rows)

    messages, rest_m = _fast_messages(family(g.Family.TRANSPORT.value))
    krs, adr, rest_s = _fast_stamps(family(g.Family.STAMPS.value))
    waits, rest_w = _fast_waits(family(g.Family.WAIT.value))
    slow = pl.concat([rest_m, rest_s, rest_w, family(g.Family.LGWR.value), family(g.Family.HEADER.value)])
    grammar_rows, parsed = _grammar_path(slow.sort("line"))
    parsed[g.Family.TRANSPORT.value] += messages.height
    parsed[g.Family.STAMPS.value] += krs.height + adr.height
    parsed[g.Family.WAIT.value] += waits.height
    fast = {"messages": messages, "krs": krs, "adr": adr, "waits": waits}
    tables = {}
    for name in TABLES:
        slow_frame = frame(grammar_rows[name], SCHEMAS[name])
        tables[name] = pl.concat([fast[name], slow_frame]).sort("line") if name in fast else slow_frame
    return Parsed(tables, +parsed, ignored), end_in_header
