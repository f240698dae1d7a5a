"""Attribute stage: split every matched write into network, RFS I/O and other RFS time.

total = t4 - t1 (primary clock), rfs = t3 - t2 (standby clock), network = total - rfs (the
clock offset between hosts cancels), rfs_io = the `ela` of the RFS I/O waits written between
that write's `Server received` and `Server finished` lines, rfs_other = rfs - rfs_io. A
negative component is kept as measured and explained in `warning`.
"""

from __future__ import annotations

import polars as pl

from analyzer.schemas import WARNINGS, WRITES

#: the writes table as this stage leaves it: all but the one-way delays, which need the clock
#: offset of all writes (`analyzer.clock.one_way` adds them)
ONE_WAY = ("net_out_ms", "net_back_ms", "clock_bound_ms")
ATTRIBUTED = pl.Schema({name: dtype for name, dtype in WRITES.items() if name not in ONE_WAY})

#: the RFS wait events that are standby I/O (trace-formats.md section 4.2, class System I/O)
RFS_IO_EVENTS = ("RFS write", "RFS random i/o", "RFS sequential i/o")
COMPONENTS = ("network_ms", "rfs_io_ms", "rfs_other_ms")
VERDICTS = {"network_ms": "network", "rfs_io_ms": "rfs_io", "rfs_other_ms": "rfs_other"}
DEFAULT_THRESHOLD_MS = 100.0


def _ms(end: str, start: str) -> pl.Expr:
    return (pl.col(end) - pl.col(start)).dt.total_microseconds() / 1000.0


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
    """The writes table (schema `WRITES`) from the exchanges of `match` (whose standby side
    carries its RFS wait sums: rfs_io_ms, rfs_io_waits, first_start, last_end).

    A write seen on one side only has that side's numbers (total on the primary; rfs, rfs_io
    and rfs_other on the standby); network and the verdict need both sides.
    """
    has_standby = pl.col("standby_file").is_not_null()
    w = exchanges.with_columns(
        rfs_io_ms=pl.when(has_standby).then(pl.col("rfs_io_ms").fill_null(0.0)),
        rfs_io_waits=pl.when(has_standby).then(pl.col("rfs_io_waits").fill_null(0).cast(pl.Int64)),
        total_ms=_ms("t4", "t1"),
        rfs_ms=_ms("t3", "t2"),
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
        primary_host=pl.col("p_host"),
        standby_host=pl.col("s_host"),
        received_at=_refined("t2", "res2_us", "first_start", before=True),
        finished_at=_refined("t3", "res3_us", "last_end", before=False),
        acked_at=pl.col("t4"),
    )
    # in the exchanges' order (by sent_at, then thread); the one-way columns come from analyzer.clock
    return w.select(ATTRIBUTED.names()).cast(ATTRIBUTED)


def _verdict() -> pl.Expr:
    largest = pl.max_horizontal(*COMPONENTS)
    first, *rest = COMPONENTS
    expr: pl.Expr = pl.when(pl.col(first) == largest).then(pl.lit(VERDICTS[first]))
    for name in rest:
        expr = expr.when(pl.col(name) == largest).then(pl.lit(VERDICTS[name]))  # type: ignore[attr-defined]
    return expr


def _warning() -> pl.Expr:
    """Why a component is negative: timestamp resolution, or something worse."""
    res = pl.col("resolution_ms")
    neg_net = pl.col("network_ms") < 0
    neg_other = pl.col("rfs_other_ms") < 0
    net_text = pl.concat_str(
        [
            pl.lit("network_ms < 0: standby RFS time exceeds the round trip by "),
            (-pl.col("network_ms")).round(3).cast(pl.String),
            pl.lit(" ms"),
            pl.when(-pl.col("network_ms") <= res)
            .then(pl.lit(" (within timestamp resolution)"))
            .otherwise(pl.lit(" (beyond timestamp resolution: check the stamps of this write)")),
        ]
    )
    other_text = pl.concat_str(
        [
            pl.lit("rfs_other_ms < 0: RFS I/O waits exceed RFS time by "),
            (-pl.col("rfs_other_ms")).round(3).cast(pl.String),
            pl.lit(" ms"),
            pl.when(-pl.col("rfs_other_ms") <= res)
            .then(pl.lit(" (within timestamp resolution)"))
            .otherwise(pl.lit(" (overlapping or mis-attributed waits)")),
        ]
    )
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


def tie_warnings(lgwr: pl.DataFrame, writes: pl.DataFrame) -> pl.DataFrame:
    """Tie each `log write elapsed time` warning to the remote write(s) it covers (schema `WARNINGS`).

    `lgwr` has the log writer lines with `at` (UTC of the ADR line before each), `host` and
    `wthread` (the redo thread of that instance, null when unknown). A warning covers the writes
    of the same thread and host that lie inside [at - elapsed - slack, at + slack]; the slowest
    of them gives the breakdown.
    """
    slack = pl.duration(milliseconds=WARNING_SLACK_MS)
    warn = (
        lgwr.filter(pl.col("kind") == "log_write")
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
    `_from` is at most its end. One as-of pass over the writes in send order (their order in the
    analysis: no sort, no copy) instead of joining millions of writes with every warning."""
    end = pl.col("sent_at") + pl.duration(microseconds=(pl.col("total_ms") * 1000).cast(pl.Int64))
    sends = writes.select("sent_at", _end=end, _row=pl.int_range(pl.len(), dtype=pl.UInt32))
    if not writes["sent_at"].is_sorted() or writes["sent_at"].null_count():
        sends = sends.drop_nulls("sent_at").sort("sent_at")
    reach = (  # windows by end, each with the earliest start among it and those ending later
        warn.select("_to", _first=pl.col("_from"))
        .drop_nulls()
        .sort("_to")
        .with_columns(pl.col("_first").cum_min(reverse=True))
    )
    found = sends.set_sorted("sent_at").join_asof(reach, left_on="sent_at", right_on="_to", strategy="forward")
    return found.filter(pl.col("_first") <= pl.col("_end"))["_row"]
