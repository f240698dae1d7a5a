"""The parse stage's fast path for alert logs: time lines and the three entries every log switch writes.

An alert log of 12.2 and later writes, for each log switch, a time line above each of
`Thread 1 advanced to log sequence 1234 (LGWR switch),  current SCN: 9876` (the primary),
`NSS2 (PID:4401): SRL selected for T-1.S-1235 for LAD:2` (the primary's transport process) and
`rfs (PID:4809): Selected LNO:22 for T-1.S-1235 dbid 3054843085 branch 1129541200` (the standby).
These are nearly all the alert lines dgtrace reads, and the grammar parses one line at a time
through lark. Their canonical spellings (a strict subset of what `grammars/alert.lark` accepts) are read
here with one anchored regex each; any other spelling, a number too large for the tables, or a
character beyond printable ASCII in the tail goes to the grammar, which stays the specification.
"""

from __future__ import annotations

import polars as pl

from analyzer.base.schemas import ALERT, empty
from analyzer.parse import fastpath

#: a message's tail after white space, kept as detail: printable ASCII, no white space at its ends
#: (the grammar reads right-stripped lines, and `str.rstrip` strips more than any regex class)
_TAIL = r"(?:[ \t]+([!-~](?:[ -~]*[!-~])?))?"
_INT = "([0-9]{1,18})"  # 18 digits at most: the tables' 64-bit integers hold them
#: a 12.2+ process prefix with its pid (`NSS2 (PID:4401): `, `rfs (PID:4809): `)
_PREFIX = rf"([A-Za-z][A-Za-z0-9_]*) \(PID:{_INT}\): "
_SEQ = rf"T-{_INT}\.S-{_INT}"
#: kind -> (shape, the fields of its groups in order); the other fields of the row are null
SHAPES: dict[str, tuple[str, tuple[str, ...]]] = {
    "log_switch": (
        rf"^Thread {_INT} advanced to log sequence {_INT}{_TAIL}$",
        ("thread", "seq", "detail"),
    ),
    "srl_selected": (
        rf"^{_PREFIX}SRL selected for {_SEQ} for LAD:{_INT}$",
        ("process", "pid", "thread", "seq", "dest"),
    ),
    "rfs_selected": (
        rf"^{_PREFIX}Selected LNO:{_INT} for {_SEQ}{_TAIL}$",
        ("process", "pid", "log", "thread", "seq", "detail"),
    ),
}
#: any of the shapes, to leave the other rows alone in one pass
_ANY = "|".join(f"(?:{shape})" for shape, _ in SHAPES.values())
_TEXT_FIELDS = ("process", "detail")


def alert_lines(rows: pl.DataFrame) -> tuple[dict[str, pl.DataFrame], pl.DataFrame]:
    """Alert-log rows (line, text) -> ADR rows for the time lines and ALERT rows for the log-switch
    entries of their canonical spellings; the rows left go to the grammar."""
    found, rest = fastpath.alert_times(rows)
    if rest.is_empty():
        return found | {"alert": empty(ALERT)}, rest
    hit = rest.select(pl.col("text").str.contains(_ANY)).to_series()
    if not hit.any():
        return found | {"alert": empty(ALERT)}, rest
    candidates, rest = rest.filter(hit), rest.filter(~hit)
    parts, left = [], [rest]  # the rows of each shape; the rows of none
    for kind, (shape, fields) in SHAPES.items():
        groups = pl.col("text").str.extract_groups(shape)
        values = {
            name: groups.struct[k].str.to_uppercase() if name == "process" else groups.struct[k]
            for k, name in enumerate(fields)
        }
        out = candidates.select(
            "line",
            "text",
            # the first group of every shape is never optional: it is null only where the shape does not match
            kind=pl.when(groups.struct[0].is_not_null()).then(pl.lit(kind)),
            **{
                name: values[name] if name in values else pl.lit(None, pl.String)
                for name in ALERT.names()
                if name not in ("line", "kind")
            },
        )
        numbers = [name for name in fields if name not in _TEXT_FIELDS]
        out = out.with_columns(pl.col(name).cast(pl.Int64) for name in numbers)
        matched = out.filter(pl.col("kind").is_not_null())
        parts.append(matched.select(ALERT.names()).cast(ALERT))
        candidates = out.filter(pl.col("kind").is_null()).select("line", "text")
    left.append(candidates)
    alert = pl.concat(parts).sort("line")
    return found | {"alert": alert}, pl.concat(left).sort("line")
