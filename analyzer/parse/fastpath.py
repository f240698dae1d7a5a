"""The parse stage's fast paths: canonical spellings of the hot line shapes, parsed vectorised.

Each fast path checks the canonical spelling of its shape (a strict subset of what the family's
grammar accepts) with anchored regexes without capture groups, then takes the fields by
position; rows that fail the check, or whose numbers do not fit, are returned for the grammar
(`analyzer.parse.families` sends them to lark). Each returns `(rows per parse table, rest)`.
"""

from __future__ import annotations

import functools
import re
from collections import Counter
from collections.abc import Callable

import polars as pl

from analyzer.base.schemas import ADR, HEADER, KRS, LGWR, MESSAGES, WAITS, empty
from analyzer.parse.grammar import MAX_LGWR, MAX_MICROS, MAX_OFFSET_MIN, MESSAGE_PREFIXES

#: a fast path: rows of one family (line, text) -> (rows per parse table, rows left for the grammar)
FastPath = Callable[[pl.DataFrame], tuple[dict[str, pl.DataFrame], pl.DataFrame]]

# Each fast path checks the canonical spelling of its shape (a strict subset of what the grammar
# accepts) with anchored regexes without capture groups, then takes the fields by position.
# Rows that fail the check, or whose numbers do not fit, go to lark. Trace lines repeat all but
# a few numbers, so the text parts are checked and parsed once per distinct value and joined
# back; per row remain the numbers (digits only: `_digits`) and, for stamps, a regex on the line
# (a stamp's source is checked, not taken: the tables keep its time only). Offsets from
# `str.find` count bytes and `str.slice` counts characters, so a key that is sliced at found
# offsets must be ASCII (`_ascii`).
#
# Dates: years 1900-2999 (grammar.YEARS) and seconds 00-59 only; second 60 is no `datetime` for
# the grammar, while polars would take it (chrono reads 60 as a leap second). Numbers beyond the
# grammar's ranges (grammar.MAX_MICROS, ...) go to lark, which says why the line is unparsed.
_DATE_TIME = r"(?:19|2[0-9])[0-9]{2}-[0-9]{2}-[0-9]{2}[ T][0-9]{2}:[0-9]{2}:[0-5][0-9]"
_MESSAGE_TEXTS = "|".join(re.escape(text) for text in MESSAGE_PREFIXES.values())
#: a message line less its ` msgid=<n>`: one of a few hundred values per chunk (kinds x log sequences)
MESSAGE_KEY_SHAPE = (
    rf"^(?:\.\.\. )?(?:{_MESSAGE_TEXTS}) \[[A-Za-z0-9_]+\](?: response)? oper='[^']*'"
    r" flag=(?:0x[0-9a-fA-F]+|-?[0-9]+) thrd=[0-9]+ seq=[0-9]+$"
)
#: a krs stamp's source, `line file.c` or `[file.c:line]`: a line of 19 digits or more may not fit an Int64,
#: and the grammar, which rejects such a number, decides
_KRS_SOURCE = r"(?:[0-9]{1,18} [A-Za-z_][A-Za-z0-9_]*\.c|\[[A-Za-z_][A-Za-z0-9_]*\.c:[0-9]{1,18}\])"
KRS_SHAPE = rf"^\*\*\* {_DATE_TIME}\.[0-9]{{1,9}} {_KRS_SOURCE}$"
ADR_LOCAL_SHAPE = rf"^\*\*\* {_DATE_TIME}\.[0-9]{{1,9}}$"
ADR_ISO_SHAPE = rf"^\*\*\* {_DATE_TIME}\.[0-9]{{1,9}}[+-][0-9]{{2}}:[0-9]{{2}}(?: \((?:[^()]|\([^()]*\))*\))?$"
#: a session-block line: an upper-case key, a value in parentheses (one level nested), a bare ADR stamp
SESSION_SHAPE = (
    rf"^\*\*\* [A-Z][A-Z_ ]*[A-Z]:\((?:[^()]|\([^()]*\))*\) {_DATE_TIME}\.[0-9]{{1,9}}(?:[+-][0-9]{{2}}:[0-9]{{2}})?$"
)
#: a WAIT line less its ` tim=<n>`; parameter values are printable ASCII (the grammar ends a value
#: at any white space, a form feed too); a name starts with a printable character but `'` and `=`
#: (`[!-&(-<>-~]`: `100*mode+namespace=`, `0=`, `name|mode=`) and runs to the next `=`
WAIT_KEY_SHAPE = r"^WAIT #[0-9]+: nam='[^']*' ela= ?[0-9]+(?: [!-&(-<>-~][^=']*=[!-~]+)*$"
_LOG_WRITE = "Warning: log write elapsed time "
LOG_WRITE_SHAPE = rf"^{_LOG_WRITE}[0-9]+ms, size [0-9]+KB$"
#: a message kind by the first 8 characters of its text ("Client s", "Server f", ...)
_KIND_BY_START = {text[:8]: kind for kind, text in MESSAGE_PREFIXES.items()}
#: where the fraction of a `*** YYYY-MM-DD HH:MM:SS.f` stamp starts
_FRACTION_AT = 24


def _int(expr: pl.Expr) -> pl.Expr:
    return expr.cast(pl.Int64, strict=False)


def _below(expr: pl.Expr, limit: int) -> pl.Expr:
    """The value when it is below `limit` (the grammar's range), else null (the row goes to lark)."""
    return pl.when(expr < limit).then(expr)


def _ascii(expr: pl.Expr) -> pl.Expr:
    """No character beyond ASCII, so byte offsets (`str.find`) are character offsets (`str.slice`)."""
    return expr.str.len_bytes() == expr.str.len_chars()


def _keep(out: pl.DataFrame, required: list[str], schema: pl.Schema) -> tuple[pl.DataFrame, pl.DataFrame]:
    """(rows whose required fields converted, as `schema`; the others as line + text, for lark)."""
    ok = out.select(pl.all_horizontal([pl.col(c).is_not_null() for c in required])).to_series()
    if ok.all():  # the usual case: no filter (a copy of every column) to take them all
        return out.select(schema.names()), out.select("line", "text").clear()
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


def messages(rows: pl.DataFrame) -> tuple[dict[str, pl.DataFrame], pl.DataFrame]:
    """Canonical 16410 messages -> MESSAGES rows; the rest is returned for the grammar.

    A message line is `<key> msgid=<n>`, where the key (kind, function, oper, flag, thread,
    sequence) repeats from line to line: it is checked and parsed once per distinct value, and
    only the msgid is taken per row (see `_by_number_end`).
    """
    if rows.is_empty():
        return {"messages": empty(MESSAGES)}, rows.select("line", "text")
    found, rest = _by_number_end(rows, " msgid=", _messages)
    return {"messages": found}, rest


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


def _local(digits: int, form: str, start: int = 4) -> pl.Expr:
    """Naive time of a `*** YYYY-MM-DD<form>HH:MM:SS.f` stamp (the date at `start`: an alert log's time
    line has no stars) from its first `digits` fraction digits.

    Whole seconds repeat from line to line, so polars' conversion cache parses each once; the
    fraction is an integer scaled to microseconds.
    """
    text = pl.col("text")
    seconds = text.str.slice(start, 19).str.to_datetime(f"%Y-%m-%d{form}%H:%M:%S", strict=False, time_unit="us")
    micros = _int(text.str.slice(start + 20, digits)) * 10 ** (6 - digits)
    return seconds + pl.duration(microseconds=micros)


def stamps(rows: pl.DataFrame) -> tuple[dict[str, pl.DataFrame], pl.DataFrame]:
    """krs stamps, bare ADR lines of both generations and session lines (`*** MODULE NAME:(x) <stamp>`).

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
    krs, bad_krs = _keep(krs, ["local"], KRS)
    adr_local, rest = _take(rest, ADR_LOCAL_SHAPE, text.str.len_bytes() - _FRACTION_AT, _adr_local)
    adr_iso, rest = _take(rest, ADR_ISO_SHAPE, text.str.slice(_FRACTION_AT, 10).str.find("[+-]"), _adr_iso)
    session, rest = _sessions(rest)
    adr, bad_adr = _keep(pl.concat([adr_local, adr_iso, session]).sort("line"), ["local"], ADR)
    return {"krs": krs, "adr": adr}, pl.concat([rest, bad_krs, bad_adr.join(rows, on="line").select("line", "text")])


def _sessions(rows: pl.DataFrame) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Session-block lines (`*** SESSION ID:(9.1) <stamp>`; 10046 traces print one at every module or
    action change): their stamp, the text after the value, is read as a bare ADR line would be."""
    text = pl.col("text")
    if rows.is_empty():
        return _adr_local(rows.clear(), 0), rows
    ok = rows.select(text.str.contains(SESSION_SHAPE)).to_series()
    if not ok.any():
        return _adr_local(rows.clear(), 0), rows
    bare = rows.filter(ok).with_columns(text=pl.lit("*** ") + text.str.extract(r"\) ([^)]+)$", 1))
    local, left = _take(bare, ADR_LOCAL_SHAPE, text.str.len_bytes() - _FRACTION_AT, _adr_local)
    iso, left = _take(left, ADR_ISO_SHAPE, text.str.slice(_FRACTION_AT, 10).str.find("[+-]"), _adr_iso)
    unread = rows.join(left.select("line"), on="line")  # no shape of ours: their own text to the grammar
    return pl.concat([local, iso]), pl.concat([rows.filter(~ok), unread]).sort("line")


def _krs_shape(digits: int) -> str:
    """KRS_SHAPE with exactly `digits` fraction digits (`_local` then takes the time at fixed offsets).

    The source is checked, not taken: the stage after this one needs a stamp's time only, and the
    regex runs on to the end of the line for about the cost of stopping after the fraction.
    """
    return rf"^\*\*\* {_DATE_TIME}\.[0-9]{{{digits}}} {_KRS_SOURCE}$"


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
    if ok.all():  # every row of the usual shape (a chunk past the file's head): no filters
        return _per_fraction(rows, fraction, build), rows.clear()
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
    return rows.with_columns(local=_local(digits, " "), digits=pl.lit(digits, pl.Int8))


def _adr_local(rows: pl.DataFrame, fraction: int) -> pl.DataFrame:
    digits = min(fraction, 6)
    return rows.with_columns(
        local=_local(digits, " "), digits=pl.lit(digits, pl.Int8), utc_offset_min=pl.lit(None, pl.Int32)
    )


def _adr_iso(rows: pl.DataFrame, fraction: int, start: int = 4) -> pl.DataFrame:
    """ISO ADR lines (the date at `start`): the zone `+HH:MM` follows the fraction."""
    digits = min(fraction, 6)
    zone = pl.col("text").str.slice(start + 20 + fraction, 6)
    sign = pl.when(zone.str.starts_with("-")).then(-1).otherwise(1)
    minutes = _int(zone.str.slice(1, 2)) * 60 + _int(zone.str.slice(4, 2))
    valid = (_int(zone.str.slice(4, 2)) < 60) & (minutes <= MAX_OFFSET_MIN)  # else lark says why
    return rows.with_columns(
        local=pl.when(valid).then(_local(digits, "T", start)),
        digits=pl.lit(digits, pl.Int8),
        utc_offset_min=(sign * minutes).cast(pl.Int32),
    )


def waits(rows: pl.DataFrame) -> tuple[dict[str, pl.DataFrame], pl.DataFrame]:
    """Canonical 10046 WAIT lines (either `ela=` spacing).

    A WAIT line is `<key> tim=<n>`: the key (cursor, event, elapsed time, parameters) repeats
    far more than the line does, so it is checked and parsed once per distinct value; only
    `tim` is taken per row, from the end of the line (see `_by_number_end`).
    """
    if rows.is_empty():
        return {"waits": empty(WAITS)}, rows
    found, rest = _by_number_end(rows, " tim=", _waits)
    return {"waits": found}, rest


def _waits(cut: pl.DataFrame, suffix: str) -> tuple[pl.DataFrame, pl.DataFrame]:
    if _mostly_distinct(cut["_key"]):  # a foreground's waits name their blocks: parse each row, no join
        out = cut.hstack(_wait_fields(cut.select("_key"), suffix).drop("_key"))
    else:
        out = _per_distinct(cut, "_key", functools.partial(_wait_keys, suffix=suffix))
    # the tim is converted once, then bounded: `_below` names its expression twice, and polars would
    # convert every tim twice (the conversion of 13-digit numbers is the costliest step here)
    out = out.with_columns(tim=_digits(pl.col("_number")))
    numbers = {"tim": _below(pl.col("tim"), MAX_MICROS), "ela_us": _below(pl.col("ela_us"), MAX_MICROS)}
    return _keep(out.with_columns(**numbers), ["cursor", "ela_us", "tim"], WAITS)


#: `_mostly_distinct` estimates on this many keys of a chunk (the choice it makes costs time, not results)
DISTINCT_SAMPLE = 16_384


def _mostly_distinct(keys: pl.Series) -> bool:
    """More than half of the keys differ (estimated by HyperLogLog on the first DISTINCT_SAMPLE): parsing
    each key then costs less than finding the distinct ones and joining them back. Both ways give the
    same rows; a sample is enough to choose, for a fraction of a pass over all the keys of a chunk."""
    sample = keys.head(DISTINCT_SAMPLE)
    estimate = sample.approx_n_unique() if sample.len() > 64 else 0
    return isinstance(estimate, int) and estimate * 2 > sample.len()


def _wait_fields(keys: pl.DataFrame, suffix: str = "") -> pl.DataFrame:
    """Every WAIT key (a line less its ` tim=<n>`, followed by `suffix`) with cursor, event and elapsed
    time; null fields for a key of another shape (the row goes to the grammar).

    No parameter may be named `tim` (the grammar ends the parameters there): a key holding
    ` tim=` goes to the grammar.
    """
    key = pl.col("_bare")
    name_at = key.str.find(": nam='", literal=True)
    ela_at = key.str.find("' ela=", literal=True)  # the event holds no quote: this is its end
    ok = pl.col("_key").str.ends_with(suffix) & key.str.contains(WAIT_KEY_SHAPE)
    ok = ok & ~key.str.contains(" tim=", literal=True) & _ascii(key)
    good = pl.col("_ok")
    return (
        keys.with_columns(_bare=pl.col("_key").str.strip_suffix(suffix))
        .with_columns(_ok=ok)
        .with_columns(
            cursor=pl.when(good).then(_int(key.str.slice(6, name_at - 6))),
            event=pl.when(good).then(key.str.slice(name_at + 7, ela_at - name_at - 7)),
            ela_us=pl.when(good).then(
                _int(key.str.slice(ela_at + 6).str.strip_prefix(" ").str.splitn(" ", 2).struct.field("field_0"))
            ),
        )
        .drop("_bare", "_ok")
    )


def _wait_keys(keys: pl.DataFrame, suffix: str = "") -> pl.DataFrame:
    """The canonical WAIT keys among distinct ones, with their fields (see `_wait_fields`)."""
    return _wait_fields(keys, suffix).filter(pl.col("cursor").is_not_null())


def log_writes(rows: pl.DataFrame) -> tuple[dict[str, pl.DataFrame], pl.DataFrame]:
    """LGWR long-write warnings (one per slow write: thousands in a bad hour); other LGWR lines go to lark."""
    if rows.is_empty():
        return {"lgwr": empty(LGWR)}, rows
    text, ok = pl.col("text"), pl.col("_ok")
    rows = rows.with_columns(_ok=text.str.contains(LOG_WRITE_SHAPE))
    size_at = text.str.find("ms, size ", literal=True)
    out = rows.filter(ok).with_columns(
        kind=pl.lit("log_write"),
        elapsed_ms=_below(_int(text.str.slice(len(_LOG_WRITE), size_at - len(_LOG_WRITE))), MAX_LGWR),
        size_kb=_below(_int(text.str.slice(size_at + 9).str.strip_suffix("KB")), MAX_LGWR),
        detail=pl.lit(None, pl.String),
    )
    out, bad = _keep(out, ["elapsed_ms", "size_kb"], LGWR)
    return {"lgwr": out}, pl.concat([rows.filter(~ok).select("line", "text"), bad])


#: an alert log's time line from 12.2 on: ISO with the zone, alone on its line
ALERT_TIME_SHAPE = rf"^{_DATE_TIME}\.[0-9]{{1,9}}[+-][0-9]{{2}}:[0-9]{{2}}$"


def alert_times(rows: pl.DataFrame) -> tuple[dict[str, pl.DataFrame], pl.DataFrame]:
    """The ISO time lines of an alert log (one above each entry: about half its lines) -> ADR rows;
    the other alert lines go to the grammar."""
    if rows.is_empty():
        return {"adr": empty(ADR)}, rows
    length = pl.col("text").str.len_bytes() - 26  # the fraction: between the 20 characters and the zone
    times, rest = _take(rows, ALERT_TIME_SHAPE, length, functools.partial(_adr_iso, start=0))
    adr, bad = _keep(times, ["local"], ADR)
    return {"adr": adr}, pl.concat([rest, bad]).sort("line")


#: the keys of the trace-header lines every file repeats (the `field` rule of grammars/header.lark);
#: the other header lines (banner, process, trace file, rarer keys) go to the grammar
HEADER_KEYS = (
    "ORACLE_HOME",
    "Build label",
    "System name",
    "Node name",
    "Release",
    "Version",
    "Machine",
    "VM name",
    "CLID",
    "Instance name",
    "Instance number",
    "Database name",
    "Database unique name",
    "Database id",
    "Database role",
    "Redo thread mounted by this instance",
    "Oracle binary inode",
    "Oracle process number",
)
HEADER_FIELD_SHAPE = r"^(?:" + "|".join(re.escape(k) for k in HEADER_KEYS) + r")[ \t]*[:=]"


def header_fields(rows: pl.DataFrame) -> tuple[dict[str, pl.DataFrame], pl.DataFrame]:
    """Header lines `Key:<TAB>value`, `Key: value`, `Key = value` of the usual keys -> HEADER rows
    (kind `field`); a key and its value are cut at the first `:` or `=` after the key."""
    if rows.is_empty():
        return {"header": empty(HEADER)}, rows
    text = pl.col("text")
    ok = rows.select(text.str.contains(HEADER_FIELD_SHAPE)).to_series()
    if not ok.any():
        return {"header": empty(HEADER)}, rows
    cut = text.str.find("[:=]")
    fields = rows.filter(ok).select(
        "line",
        kind=pl.lit("field"),
        key=text.str.slice(0, cut).str.strip_chars(),
        value=text.str.slice(cut + 1).str.strip_chars(),
    )
    return {"header": fields.cast(HEADER)}, rows.filter(~ok)
