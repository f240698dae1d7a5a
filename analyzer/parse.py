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
_TS_FORMAT = "%Y-%m-%d %H:%M:%S%.f"


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
def classify(lines: pl.DataFrame, in_header: bool) -> pl.DataFrame:
    """Add `family` (a grammar family or `ignored:<category>`) and the stripped `t` to lines.

    `in_header` says whether the previous chunk ended inside a trace header.
    """
    text = pl.col("text").str.strip_chars_end()
    body = text.str.strip_chars_start(" \t.")
    header_start = pl.col("text").str.starts_with("Trace file ") | (
        pl.col("text").str.starts_with("Oracle ") & pl.col("text").str.contains(" Release ")
    )
    region = (
        pl.when(pl.col("text").str.starts_with("***"))
        .then(False)
        .when(header_start)
        .then(True)
        .otherwise(None)
        .forward_fill()
        .fill_null(in_header)
    )
    is_message = pl.any_horizontal([body.str.starts_with(p) for p in MESSAGE_PREFIXES.values()]) | text.str.contains(
        "msgid=", literal=True
    )
    family = (
        pl.when(text == "")
        .then(pl.lit("ignored:blank"))
        .when(text.str.starts_with("***"))
        .then(pl.lit(g.Family.STAMPS.value))
        .when(text.str.starts_with("WAIT #"))
        .then(pl.lit(g.Family.WAIT.value))
        .when(is_message)
        .then(pl.lit(g.Family.TRANSPORT.value))
        .when(pl.any_horizontal([text.str.starts_with(p) for p in LGWR_PREFIXES]))
        .then(pl.lit(g.Family.LGWR.value))
        .when(pl.col("in_header"))
        .then(pl.lit(g.Family.HEADER.value))
        .when(pl.any_horizontal([pl.col("text").str.starts_with(p) for p in OTHER_10046_PREFIXES]))
        .then(pl.lit("ignored:10046"))
        .otherwise(pl.lit("ignored:other"))
    )
    return lines.with_columns(in_header=region, t=text).with_columns(family=family)


# ---------------------------------------------------------------------------- fast paths
def _split(expr: pl.Expr, sep: str) -> tuple[pl.Expr, pl.Expr]:
    parts = expr.str.splitn(sep, 2)
    return parts.struct.field("field_0"), parts.struct.field("field_1")


def _int(expr: pl.Expr, dtype: type[pl.DataType] = pl.Int64) -> pl.Expr:
    return expr.cast(dtype, strict=False)


def _digits(length: pl.Expr, overhead: int) -> pl.Expr:
    """Fraction digits of a timestamp from its length, capped at 6 (we keep microseconds)."""
    return (length.cast(pl.Int32) - overhead).clip(0, 6).cast(pl.Int8)


def _fast_messages(rows: pl.DataFrame) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Canonical 16410 messages -> MESSAGES rows; the rest is returned for the grammar."""
    body = pl.col("t").str.strip_chars_start(" \t.")
    lead = pl.col("t").str.head(pl.col("t").str.len_chars() - body.str.len_chars())
    kind = pl.coalesce([pl.when(body.str.starts_with(p)).then(pl.lit(k)) for k, p in MESSAGE_PREFIXES.items()])
    prefix = kind.replace_strict(MESSAGE_PREFIXES, default=None, return_dtype=pl.String)
    head, tail = _split(body, " oper='")
    response = head.str.ends_with("] response")
    func = head.str.strip_suffix(" response").str.strip_suffix("]").str.split("[").list.last()
    oper, tail = _split(tail, "' flag=")
    flag, tail = _split(tail, " thrd=")
    thrd, tail = _split(tail, " seq=")
    seq, msgid = _split(tail, " msgid=")
    out = rows.with_columns(
        kind=kind,
        func=func,
        oper=oper,
        flag=flag,
        thread=_int(thrd),
        seq=_int(seq),
        msgid=_int(msgid),
        _prefix=prefix,
        _resp=response,
        _body=body,
        _lead=lead,
    )
    canonical = pl.concat_str(
        [
            pl.col("_prefix"),
            pl.lit(" ["),
            pl.col("func"),
            pl.when(pl.col("_resp")).then(pl.lit("] response")).otherwise(pl.lit("]")),
            pl.lit(" oper='"),
            pl.col("oper"),
            pl.lit("' flag="),
            pl.col("flag"),
            pl.lit(" thrd="),
            pl.col("thread").cast(pl.String),
            pl.lit(" seq="),
            pl.col("seq").cast(pl.String),
            pl.lit(" msgid="),
            pl.col("msgid").cast(pl.String),
        ]
    )
    ok = (
        (canonical == pl.col("_body"))
        & pl.col("func").str.contains(r"^[A-Za-z0-9_]+$")
        & ~pl.col("oper").str.contains("'", literal=True)
        & pl.col("flag").str.contains(r"^(?:0x[0-9a-fA-F]+|-?[0-9]+)$")
        & pl.col("_lead").str.contains(r"^(?:[ \t]*\.*[ \t]*)$")
    ).fill_null(False)
    out = out.with_columns(_ok=ok)
    good = out.filter("_ok").select(MESSAGES.names())
    return good, out.filter(~pl.col("_ok")).select("line", "text", "t", "family")


def _fast_stamps(rows: pl.DataFrame) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame]:
    """krs stamps and bare ADR lines of both generations; session lines go to the grammar."""
    t = pl.col("t")
    date, clock = t.str.slice(4, 10), t.str.slice(15, 8)
    frac, src = _split(t.str.slice(23), " ")
    bracket = src.str.starts_with("[")
    inner = src.str.strip_prefix("[").str.strip_suffix("]")
    b_file, b_line = _split(inner, ":")
    p_line, p_file = _split(src, " ")
    base = rows.with_columns(
        _date=date,
        _clock=clock,
        _frac=frac,
        _src=src,
        _sep=t.str.slice(14, 1),
        src_file=pl.when(bracket).then(b_file).otherwise(p_file),
        src_line=_int(pl.when(bracket).then(b_line).otherwise(p_line)),
        _bracket=bracket,
    ).with_columns(
        local=pl.concat_str(["_date", pl.lit(" "), "_clock", "_frac"]).str.to_datetime(
            _TS_FORMAT, strict=False, time_unit="us"
        ),
        digits=_digits(pl.col("_frac").str.len_chars(), 1),
    )
    krs_text = pl.concat_str(
        [
            pl.lit("*** "),
            "_date",
            pl.lit(" "),
            "_clock",
            "_frac",
            pl.lit(" "),
            pl.when("_bracket")
            .then(
                pl.concat_str(
                    [
                        pl.lit("["),
                        "src_file",
                        pl.lit(":"),
                        pl.col("src_line").cast(pl.String),
                        pl.lit("]"),
                    ]
                )
            )
            .otherwise(pl.concat_str([pl.col("src_line").cast(pl.String), pl.lit(" "), "src_file"])),
        ]
    )
    is_krs = (
        (krs_text == t)
        & pl.col("local").is_not_null()
        & pl.col("_frac").str.contains(r"^\.[0-9]{1,9}$")
        & pl.col("src_file").str.contains(r"^[A-Za-z_][A-Za-z0-9_]*\.c$")
    ).fill_null(False)
    is_adr_local = (
        pl.col("_src").is_null()
        & (pl.col("_sep") == " ")
        & t.str.contains(r"^\*\*\* [0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{1,9}$")
        & pl.col("local").is_not_null()
    ).fill_null(False)
    base = base.with_columns(_krs=is_krs, _adr=is_adr_local)
    krs = base.filter("_krs").select(KRS.names())
    adr_local = base.filter("_adr").with_columns(utc_offset_min=pl.lit(None, pl.Int32)).select(ADR.names())
    rest = base.filter(~pl.col("_krs") & ~pl.col("_adr")).select("line", "text", "t", "family")
    adr_iso, rest = _fast_adr_iso(rest)
    return krs, pl.concat([adr_local, adr_iso]), rest


def _fast_adr_iso(rows: pl.DataFrame) -> tuple[pl.DataFrame, pl.DataFrame]:
    """`*** 2019-07-09T09:57:07.703476-07:00 (PDB1(3))` lines."""
    stamp, _container = _split(pl.col("t").str.slice(4), " ")
    ok_shape = stamp.str.contains(
        r"^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{1,9}[+-][0-9]{2}:[0-9]{2}$"
    ) & (_container.is_null() | _container.str.contains(r"^\((?:[^()]|\([^()]*\))*\)$"))
    body = stamp.str.head(-6)
    zone = stamp.str.tail(6)
    sign = pl.when(zone.str.starts_with("-")).then(-1).otherwise(1)
    offset = sign * (_int(zone.str.slice(1, 2), pl.Int32) * 60 + _int(zone.str.slice(4, 2), pl.Int32))
    out = rows.with_columns(
        _ok=ok_shape.fill_null(False),
        local=body.str.replace("T", " ", literal=True).str.to_datetime(_TS_FORMAT, strict=False, time_unit="us"),
        digits=_digits(body.str.len_chars(), 20),
        utc_offset_min=offset.cast(pl.Int32),
    ).with_columns(_ok=pl.col("_ok") & pl.col("local").is_not_null())
    return out.filter("_ok").select(ADR.names()), out.filter(~pl.col("_ok")).select("line", "text", "t", "family")


def _fast_waits(rows: pl.DataFrame) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Canonical 10046 WAIT lines (either `ela=` spacing)."""
    cursor, rest = _split(pl.col("t").str.slice(6), ": nam='")
    event, rest = _split(rest, "' ela=")
    spaced = rest.str.starts_with(" ")
    ela, rest = _split(rest.str.strip_prefix(" "), " ")
    params, tim = _split(pl.concat_str([pl.lit(" "), rest]), " tim=")
    out = rows.with_columns(
        cursor=_int(cursor),
        event=event,
        ela_us=_int(ela),
        params=params.str.strip_prefix(" "),
        tim=_int(tim),
        _spaced=spaced,
    )
    canonical = pl.concat_str(
        [
            pl.lit("WAIT #"),
            pl.col("cursor").cast(pl.String),
            pl.lit(": nam='"),
            "event",
            pl.when("_spaced").then(pl.lit("' ela= ")).otherwise(pl.lit("' ela=")),
            pl.col("ela_us").cast(pl.String),
            pl.when(pl.col("params") == "").then(pl.lit("")).otherwise(pl.concat_str([pl.lit(" "), "params"])),
            pl.lit(" tim="),
            pl.col("tim").cast(pl.String),
        ]
    )
    ok = (
        (canonical == pl.col("t"))
        & ~pl.col("event").str.contains("'", literal=True)
        & pl.col("params").str.contains(r"^(?:[A-Za-z#_][^=']*=[^ \t]+(?: |$))*$")
    ).fill_null(False)
    out = out.with_columns(_ok=ok)
    return out.filter("_ok").select(WAITS.names()), out.filter(~pl.col("_ok")).select("line", "text", "t", "family")


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
    for line, text, family in rows.select("line", "text", "family").iter_rows():
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
    fam = pl.col("family")
    ignored = Counter(
        {
            k.removeprefix("ignored:"): v
            for k, v in rows.filter(fam.str.starts_with("ignored:"))["family"].value_counts().iter_rows()
        }
    )
    messages, rest_m = _fast_messages(rows.filter(fam == g.Family.TRANSPORT.value))
    krs, adr, rest_s = _fast_stamps(rows.filter(fam == g.Family.STAMPS.value))
    waits, rest_w = _fast_waits(rows.filter(fam == g.Family.WAIT.value))
    slow = pl.concat(
        [
            rest_m,
            rest_s,
            rest_w,
            rows.filter(fam.is_in([g.Family.LGWR.value, g.Family.HEADER.value])).select("line", "text", "t", "family"),
        ]
    )
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
