"""Pairing within a process: the two messages of each exchange, and the RFS waits between them.

Shared by the reduce stage (inside each chunk of a file) and by segment joining (across the
segments of one process). On each host a write is one exchange: the message that opens it
(`Client sending` / `Server received`) and the next message of the same stream, side and key
that closes it (`Client received` / `Server finished`). A standby exchange owns the RFS waits
printed between its two messages.
"""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl

from analyzer.vocab import CLIENT_KINDS, OPENING, OPENING_KINDS

#: what identifies one remote write on both hosts
KEY = ["thread", "seq", "msgid", "oper"]
#: the RFS wait events that are standby I/O (class System I/O)
RFS_IO_EVENTS = ("RFS write", "RFS random i/o", "RFS sequential i/o")


@dataclass(frozen=True)
class Paired:
    """`pair_events` result: exchanges, messages that can never pair, and those that still may."""

    #: stream, KEY, client (bool), a_<column> and b_<column> for every payload column
    exchanges: pl.DataFrame
    #: unpaired messages that a later or earlier message of their key rules out, with `reason`
    unpairable: pl.DataFrame
    #: an opening message that is the last of its key (its partner may come later), and a
    #: closing message that is the first of its key (its partner may have come earlier)
    pending: pl.DataFrame


def pair_events(rows: pl.DataFrame, payload: list[str]) -> Paired:
    """Pair each opening message with the next message of the same stream, side and key when that one closes it.

    `rows` are messages without a stamp problem, with `stream`, `kind`, KEY, `ord` (order in the
    stream) and the `payload` columns. One sort by key then order, and a look at the row after:
    no window functions. Pieces in order pair as a whole does: the `pending` rows of one piece,
    put before the rows of the next, pair as if both had been paired at once (a pair never
    spans a row of its key, so only the last row of a key in one piece and the first in the
    next can still meet). That lets a file be paired chunk by chunk, and the segments of one
    process after their files. (One difference: a closing message whose key was already paired
    in an earlier piece stays pending instead of unpairable; it is reported alone in the end
    unless the previous segment of its process left an opening message of that key.)
    """
    client = pl.col("kind").is_in(CLIENT_KINDS)
    opens = pl.col("kind").is_in(OPENING_KINDS)
    by = ["stream", "_client", *KEY]
    rows = rows.with_columns(_client=client, _open=opens).sort([*by, "ord"])
    same_next = pl.all_horizontal([pl.col(k).shift(-1) == pl.col(k) for k in by]).fill_null(False)
    same_prev = pl.all_horizontal([pl.col(k).shift(1) == pl.col(k) for k in by]).fill_null(False)
    pairs = same_next & pl.col("_open") & ~pl.col("_open").shift(-1).fill_null(True)
    rows = rows.with_columns(_pairs=pairs, _same_next=same_next, _same_prev=same_prev)
    rows = rows.with_columns(_closed=pl.col("_pairs").shift(1).fill_null(False))
    after = {f"b_{c}": pl.col(c).shift(-1) for c in payload}
    exchanges = (
        rows.with_columns(**after)
        .filter("_pairs")
        .select("stream", *KEY, client="_client", **{f"a_{c}": c for c in payload}, **{b: b for b in after})
    )
    single = rows.filter(~pl.col("_pairs") & ~pl.col("_closed"))
    ruled_out = pl.when(pl.col("_open")).then(pl.col("_same_next")).otherwise(pl.col("_same_prev"))
    unpairable = single.filter(ruled_out).with_columns(reason=unpaired_reason())
    pending = single.filter(~ruled_out)
    helpers = ["_client", "_open", "_pairs", "_same_next", "_same_prev", "_closed"]
    return Paired(exchanges, unpairable.drop(helpers), pending.drop(helpers))


def unpaired_reason() -> pl.Expr:
    """Why an unpaired message stays alone (the text names the partner it lacks)."""
    reasons = {}
    for first, second in OPENING.items():
        reasons[str(first)] = f"no '{second}' message for it later in the same process"
        reasons[str(second)] = f"no '{first}' message for it earlier in the same process"
    return pl.col("kind").cast(pl.String).replace_strict(reasons, default=None, return_dtype=pl.String)


def wait_sums(spans: pl.DataFrame, waits: pl.DataFrame) -> pl.DataFrame:
    """Per standby exchange (stream, a_ord): its RFS I/O wait time and count, the wait that
    started first and the end of the last one, in the waits' own `tim` units.

    A wait belongs to a write when it stands between that write's `Server received` and
    `Server finished` lines of the same RFS process (`ord` orders a process's lines). `spans`
    has stream, a_ord, b_ord; `waits` has stream, ord, event, ela_us, tim. The sums stay in
    `tim` units because a file's tim clock is only known at its end (`wait_columns`).
    """
    rows = waits.select(
        "stream",
        w_ord="ord",
        ela="ela_us",
        tim="tim",
        io=pl.col("event").is_in(RFS_IO_EVENTS),
    ).sort("w_ord")
    inside = rows.join_asof(
        spans.sort("a_ord"), left_on="w_ord", right_on="a_ord", by="stream", strategy="backward", check_sortedness=False
    ).filter(pl.col("w_ord") < pl.col("b_ord"))
    start = pl.col("tim") - pl.col("ela")
    return inside.group_by("stream", "a_ord").agg(
        io_ela=pl.col("ela").filter("io").sum(),
        rfs_io_waits=pl.col("io").sum().cast(pl.Int64),
        first_tim=pl.col("tim").sort_by(start).first(),
        first_ela=pl.col("ela").sort_by(start).first(),
        last_tim=pl.col("tim").max(),
    )


def wait_columns(exchanges: pl.DataFrame, factor: float, offset_us: float | None) -> pl.DataFrame:
    """Turn `wait_sums` columns into rfs_io_ms and UTC first_start / last_end (utc = tim * factor
    + offset; no offset: the tim clock is not anchored and the times stay null)."""

    def utc(tim: str) -> pl.Expr:
        if offset_us is None:
            return pl.lit(None, pl.Datetime("us", "UTC"))
        us = (pl.col(tim) * factor + offset_us).round().cast(pl.Int64)
        return pl.from_epoch(us, time_unit="us").dt.replace_time_zone("UTC")

    ela = (pl.col("first_ela") * factor).round().cast(pl.Int64)
    return exchanges.with_columns(
        rfs_io_ms=pl.col("io_ela") * factor / 1000.0,
        first_start=utc("first_tim") - pl.duration(microseconds=ela),
        last_end=utc("last_tim"),
    ).drop("io_ela", "first_tim", "first_ela", "last_tim")
