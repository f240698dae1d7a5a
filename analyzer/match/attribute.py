"""Attribute stage: split every matched write into network, RFS I/O and other RFS time.

total = t4 - t1 (primary clock), rfs = t3 - t2 (standby clock), network = total - rfs (the
clock offset between hosts cancels), rfs_io = the `ela` of the RFS I/O waits written between
that write's `Server received` and `Server finished` lines, rfs_other = rfs - rfs_io. A
negative component is kept as measured and explained in `warning`.
"""

from __future__ import annotations

import polars as pl

from analyzer.base.schemas import ATTRIBUTED, WARNINGS, narrowed
from analyzer.base.units import elapsed_ms
from analyzer.base.vocab import COMPONENTS, Transport
from analyzer.reduce.results import DEFAULT_THRESHOLD_MS


def _refined(stamp: str, res_us: str, bound: str, before: bool) -> pl.Expr:
    """A millisecond stamp narrowed by anchored wait times: the midpoint of what both allow.

    A truncated stamp s means [s, s + resolution). RFS received the write before its first wait
    started, and finished it after its last wait ended, which can shrink that interval.
    """
    s, step, edge = pl.col(stamp), pl.duration(microseconds=pl.col(res_us)), pl.col(bound)
    low, high = (s, pl.min_horizontal(s + step, edge)) if before else (pl.max_horizontal(s, edge), s + step)
    usable = (pl.col(res_us) >= 1000) & edge.is_not_null() & (low <= high)
    return pl.when(usable).then(low + (high - low) / 2).otherwise(s)


def attribute(exchanges: pl.DataFrame, threshold_ms: float = DEFAULT_THRESHOLD_MS) -> pl.DataFrame:
    """The writes table (schema `ATTRIBUTED`, `NARROW_INTS` as Int32 where they fit) from the exchanges
    of `match` (whose standby side carries its RFS wait sums: rfs_io_ms, rfs_io_waits, first_start, last_end).

    A write seen on one side only has that side's numbers (total on the primary; rfs, rfs_io
    and rfs_other on the standby); network and the verdict need both sides.
    """
    has_standby = pl.col("standby_file").is_not_null()
    w = exchanges.with_columns(
        rfs_io_ms=pl.when(has_standby).then(pl.col("rfs_io_ms").fill_null(0.0)),
        rfs_io_waits=pl.when(has_standby).then(pl.col("rfs_io_waits").fill_null(0).cast(pl.Int64)),
        total_ms=elapsed_ms("t4", "t1"),
        rfs_ms=elapsed_ms("t3", "t2"),
        resolution_ms=pl.sum_horizontal(
            pl.max_horizontal("res1_us", "res4_us"), pl.max_horizontal("res2_us", "res3_us")
        )
        / 1000.0,
    )
    w = w.with_columns(
        network_ms=pl.col("total_ms") - pl.col("rfs_ms"), rfs_other_ms=pl.col("rfs_ms") - pl.col("rfs_io_ms")
    )
    w = w.with_columns(
        verdict=pl.when("matched").then(_verdict()),
        slow=(pl.col("total_ms") >= threshold_ms).fill_null(False),
        warning=_warning(),
        sent_at=pl.coalesce("t1", "t2"),
        primary_line=pl.col("send_line"),
        standby_line=pl.col("recv_line"),
        finished_line=pl.col("done_line"),
        acked_line=pl.col("ack_line"),
        primary_host=pl.col("p_host"),
        standby_host=pl.col("s_host"),
        received_at=_refined("t2", "res2_us", "first_start", before=True),
        finished_at=_refined("t3", "res3_us", "last_end", before=False),
        acked_at=pl.col("t4"),
    )
    # in the exchanges' order (by sent_at, then thread); the one-way columns come from analyzer.match.clock;
    # the key and line columns narrow where they fit (`schemas.narrowed`): every later stage holds them
    return narrowed(w.select(ATTRIBUTED.names()).cast(ATTRIBUTED))


def fast_sync_ms() -> pl.Expr:
    """What a write would have cost with Fast Sync (SYNC NOAFFIRM), where the standby acknowledges
    on receipt, before its standby redo log write: total - rfs_io, never below the network part
    (from millisecond stamps rfs_other can come out slightly negative). On a Fast Sync link, the
    total itself; null for a write seen on one side only and for ASYNC shipments (not in the commit path)."""
    transport = pl.col("transport").cast(pl.String)
    without_io = pl.max_horizontal(pl.col("total_ms") - pl.col("rfs_io_ms"), pl.col("network_ms"))
    return (
        pl.when(transport == str(Transport.FASTSYNC))
        .then(pl.col("total_ms"))
        .when((transport == str(Transport.SYNC)) & pl.col("matched"))
        .then(without_io)
        .otherwise(None)
        .cast(pl.Float64)
        .alias("fastsync_ms")
    )


def _verdict() -> pl.Expr:
    """The largest component (a tie goes to the first in COMPONENTS order). Components are compared
    at the nanosecond: they are differences of microsecond stamps and waits, and a tie must not be
    broken by the last bit of a float subtraction."""
    exact = {c: pl.col(c.column).round(6) for c in COMPONENTS}
    largest = pl.max_horizontal(*exact.values())
    first, *rest = COMPONENTS
    expr: pl.Expr = pl.when(exact[first] == largest).then(pl.lit(str(first)))
    for c in rest:
        expr = expr.when(exact[c] == largest).then(pl.lit(str(c)))  # type: ignore[attr-defined]
    return expr


def _negative(column: str, exceeds: str, beyond: str) -> pl.Expr:
    """Why `column` is negative, in words: by how much `exceeds`, and whether the stamps' resolution explains it."""
    return pl.concat_str(
        [
            pl.lit(f"{column} < 0: {exceeds} by "),
            (-pl.col(column)).round(3).cast(pl.String),
            pl.lit(" ms"),
            pl.when(-pl.col(column) <= pl.col("resolution_ms"))
            .then(pl.lit(" (within timestamp resolution)"))
            .otherwise(pl.lit(f" ({beyond})")),
        ]
    )


def _warning() -> pl.Expr:
    """Why a component is negative: timestamp resolution, or something worse."""
    neg_net = pl.col("network_ms") < 0
    neg_other = pl.col("rfs_other_ms") < 0
    net_text = _negative(
        "network_ms",
        "standby RFS time exceeds the round trip",
        "beyond timestamp resolution: check the stamps of this write",
    )
    other_text = _negative("rfs_other_ms", "RFS I/O waits exceed RFS time", "overlapping or mis-attributed waits")
    return (
        pl.when(neg_net & neg_other)
        .then(pl.concat_str([net_text, pl.lit("; "), other_text]))
        .when(neg_net)
        .then(net_text)
        .when(neg_other)
        .then(other_text)
    )


#: tolerance (ms) when a remote write is tested against a warning's interval: the ADR line
#: that dates the warning has millisecond resolution and is written just before it
WARNING_SLACK_MS = 2.0


#: the log writer warnings tied to remote writes: long local writes and broadcast waits (12.2+)
WARNING_KINDS = ("log_write", "broadcast_wait")


def tie_warnings(lgwr: pl.DataFrame, writes: pl.DataFrame) -> pl.DataFrame:
    """Tie each `log write elapsed time` and `log write broadcast wait time` warning to the remote
    write(s) it covers (schema `WARNINGS`): fast remote writes under a long one say the time was local.

    `lgwr` has the log writer lines of every file (schema LGWR_LINES: `at` is the UTC of the ADR
    line before each, `wthread` the redo thread of that instance, null when unknown). A warning covers the writes
    of the same thread and host that lie inside [at - elapsed - slack, at + slack]; the slowest
    of them gives the breakdown.
    """
    slack = pl.duration(milliseconds=WARNING_SLACK_MS)
    warn = (
        lgwr.filter(pl.col("kind").is_in(WARNING_KINDS))
        .with_row_index("_w")
        .with_columns(
            _from=pl.col("at") - pl.duration(milliseconds=pl.col("elapsed_ms")) - slack,
            _to=pl.col("at") + slack,
        )
    )
    rows = _near_warnings(writes, warn)
    remote = writes.select(
        pl.col("sent_at", "total_ms", "thread", "primary_host").gather(rows),
        _end=(pl.col("sent_at") + pl.duration(microseconds=(pl.col("total_ms") * 1000).cast(pl.Int64))).gather(rows),
        _row=pl.lit(rows),
    )
    bounds = warn.select("_w", "_from", "_to", "wthread", "host")
    cand = bounds.join_where(remote, pl.col("sent_at") <= pl.col("_to"), pl.col("_end") >= pl.col("_from"))
    same_thread = pl.col("wthread").is_null() | (pl.col("thread") == pl.col("wthread"))
    same_host = pl.col("host").is_null() | pl.col("primary_host").is_null() | (pl.col("host") == pl.col("primary_host"))
    slowest = (  # per warning: how many writes it covers, and the row of the slowest
        cand.filter(same_thread & same_host)
        .sort("total_ms", descending=True)
        .group_by("_w", maintain_order=True)
        .agg(writes=pl.len().cast(pl.Int64), _row=pl.col("_row").first())
    )
    details = writes.select(
        "msgid", "network_ms", "rfs_io_ms", "rfs_other_ms", "verdict", remote_total_ms="total_ms"
    ).select(pl.all().gather(slowest["_row"]))
    best = pl.concat([slowest.drop("_row"), details], how="horizontal")
    tied = warn.join(best, on="_w", how="left").with_columns(writes=pl.col("writes").fill_null(0))
    return tied.rename({"wthread": "thread"}).select(WARNINGS.names()).cast(WARNINGS).sort("at", "file", "line")


def _near_warnings(writes: pl.DataFrame, warn: pl.DataFrame) -> pl.Series:
    """Row numbers of the writes whose [sent_at, end] meets some warning's [_from, _to], in send
    order: a write sent at t meets one when, among the warnings with `_to` >= t, the earliest
    `_from` is at most its end. One binary search of each send time among the warnings' ends (a few
    thousand) instead of joining millions of writes with every warning; only the writes' row numbers
    and what the search finds are held beside them."""
    reach = (  # windows by end, each with the earliest start among it and those ending later
        warn.select("_to", _first=pl.col("_from"))
        .drop_nulls()
        .sort("_to")
        .with_columns(pl.col("_first").cum_min(reverse=True))
    )
    first = reach["_first"].append(pl.Series([None], dtype=reach["_first"].dtype))  # past the last: none
    end = pl.col("sent_at") + pl.duration(microseconds=(pl.col("total_ms") * 1000).cast(pl.Int64))
    at = pl.lit(reach["_to"]).search_sorted(pl.col("sent_at"), side="left")
    near = (
        writes.lazy()
        .select(_row=pl.int_range(pl.len(), dtype=pl.UInt32), _near=pl.lit(first).gather(at) <= end, _sent="sent_at")
        .filter(pl.col("_near"))
    )
    if not writes["sent_at"].is_sorted() or writes["sent_at"].null_count():
        near = near.sort("_sent", maintain_order=True)
    return near.collect()["_row"]
