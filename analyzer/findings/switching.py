"""Log switches and the writes near them: where each thread changed its log sequence (from the writes,
and from what the alert logs saw), the latency of the writes sent near a switch against the others,
and whether slow writes cluster there (the MAA paper's Figure 3 effect)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

import polars as pl

from analyzer.base.schemas import COMPARISON, OBSERVED, SWITCHES, UTC
from analyzer.base.words import plural
from analyzer.findings import ordered
from analyzer.findings.events import shifted_entries
from analyzer.findings.summary import SLOWEST_ORDER, STAT_COLUMNS, slowest
from analyzer.match.analysis import Analysis

#: a write is near a log switch when it was sent within this many seconds of one on its thread
SWITCH_WINDOW_S = 2.0
#: ... but never more than this fraction of the median time between two switches of a thread
WINDOW_PER_INTERVAL = 0.1
#: slow writes cluster at log switches when at least this many are near one ...
CLUSTER_MIN_SLOW = 2
#: ... and writes near a switch are slow at least this many times as often as the other writes
CLUSTER_LIFT = 3.0


#: alert-log switches and standby redo log selections count when this close (s) to the writes' time span
OBSERVED_MARGIN_S = 600.0


def _db(frame: pl.DataFrame) -> pl.Expr:
    """The primary database of each write ("" when unknown): threads and log sequences are its own.

    Categorical stays categorical: on the writes table that is 4 bytes a write, where a string column
    would be a 16-byte view each (tens of MB at millions of writes); the few rows met with the logs'
    strings are cast (`_text`).
    """
    if "primary_db" not in frame.columns:
        return pl.lit("")
    if frame.schema["primary_db"] == pl.Categorical:
        return pl.col("primary_db").fill_null("")
    return pl.col("primary_db").cast(pl.String).fill_null("")


def _text(frame: pl.DataFrame) -> pl.DataFrame:
    """The frame with `_db` as text, to meet the alert logs' keys (a few rows: switches, not writes)."""
    return frame.with_columns(pl.col("_db").cast(pl.String))


def _inferred(writes: pl.DataFrame) -> pl.DataFrame:
    """The switches the writes show: each (database, thread) in send order (ties: msgid), a write whose log
    sequence differs from the one before it (`ordered.per_group`: one thread at a time, not a window over
    millions of writes)."""
    keyed = writes.select("thread", "seq", "sent_at", "msgid", _db=_db(writes))
    # the writes come sorted by send time: with no two sharing one, that is already the order of each thread
    ties = bool(keyed.select((pl.col("sent_at").diff() <= 0).any()).item())

    def switched(timed: pl.LazyFrame, window: ordered.Window) -> pl.LazyFrame:
        timed = timed.sort("sent_at", "msgid", maintain_order=True) if ties else timed
        return timed.with_columns(from_seq=window(pl.col("seq").shift(1))).filter(pl.col("seq") != pl.col("from_seq"))

    return (
        ordered.per_group(keyed, ["_db", "thread"], ["seq", "sent_at", "msgid"], switched)
        # wide again on these few rows: the writes' keys may be narrow (`schemas.narrowed`), the logs' are not
        .select("_db", "thread", "from_seq", to_seq="seq", inferred_at="sent_at")
        .cast({"_db": pl.String, "thread": pl.Int64, "from_seq": pl.Int64, "to_seq": pl.Int64})
    )


def log_switches(writes: pl.DataFrame, observed: pl.DataFrame | None = None) -> pl.DataFrame:
    """One row per log switch of a thread of one primary database (schema SWITCHES): those the alert logs
    print (`Thread N advanced to log sequence S`), with the standby redo log selections of both sides
    (`srl_selected_at`, `rfs_selected_at`), beside those inferred from the writes (a change of `seq`
    between consecutive writes of a thread: `inferred_at`, the first write of the new log).

    `at` is the switch's time: the alert log's, else the first write of the new log, else the first
    standby redo log selection; `source` says which. `observed` has kind (log_switch, srl_selected,
    rfs_selected: `analyzer.findings.events.alert_events`), db, thread, seq and at; it counts within
    OBSERVED_MARGIN_S of the writes (all of it without writes). An entry without the primary database
    (an RFS selection names the primary's thread and sequence in the standby's alert log) takes the
    only primary database there is, if there is only one.
    """
    inferred = _inferred(writes)
    seen = {"log_switch": "alert_at", "srl_selected": "srl_selected_at", "rfs_selected": "rfs_selected_at"}
    rows = (observed if observed is not None else pl.DataFrame(schema=OBSERVED)).select(OBSERVED.names())
    rows = rows.filter(pl.col("kind").is_in(list(seen)))
    if not rows.height:  # the writes' switches alone
        return (
            inferred.select(
                "thread",
                "from_seq",
                "to_seq",
                at="inferred_at",
                primary_db=pl.col("_db").replace("", None),
                source=pl.lit("writes"),
                inferred_at="inferred_at",
            )
            .with_columns(**{name: pl.lit(None, UTC) for name in ("alert_at", "srl_selected_at", "rfs_selected_at")})
            .select(SWITCHES.names())
            .cast(SWITCHES)
            .sort("at", "thread", "primary_db", nulls_last=True)
        )
    if writes.height:
        margin = timedelta(seconds=OBSERVED_MARGIN_S)
        span = (writes["sent_at"].min() - margin, writes["sent_at"].max() + margin)  # type: ignore[operator]
        rows = rows.filter(pl.col("at").is_between(*span))
    known = set(writes.select(_db(writes).alias("_db"))["_db"].unique().to_list())
    dbs = (known | set(rows.filter(pl.col("kind") != "rfs_selected")["db"].drop_nulls().to_list())) - {""}
    only = next(iter(dbs)) if len(dbs) == 1 else ""
    unnamed = (pl.col("kind") == "rfs_selected") | pl.col("db").is_null()
    if writes.height and known == {""}:  # the writes know no database: neither do the logs
        unnamed, only = pl.lit(True), ""
    rows = rows.with_columns(_db=pl.when(unnamed).then(pl.lit(only)).otherwise("db"))
    keys = ["_db", "thread", "to_seq"]
    per_kind = [
        rows.filter(pl.col("kind") == kind)
        .group_by("_db", "thread", to_seq="seq")
        .agg(pl.col("at").min().alias(column))
        for kind, column in seen.items()
    ]
    merged = pl.concat([inferred.select(keys), *(p.select(keys) for p in per_kind)]).drop_nulls().unique()
    merged = merged.join(inferred, on=keys, how="left")
    for part in per_kind:
        merged = merged.join(part, on=keys, how="left")
    return (
        merged.with_columns(
            from_seq=pl.col("from_seq").fill_null(pl.col("to_seq") - 1),
            at=pl.coalesce("alert_at", "inferred_at", "srl_selected_at", "rfs_selected_at"),
            primary_db=pl.col("_db").replace("", None),
            source=pl.when(pl.col("alert_at").is_not_null())
            .then(pl.lit("alert log"))
            .when(pl.col("inferred_at").is_not_null())
            .then(pl.lit("writes"))
            .otherwise(pl.lit("standby redo log selection")),
        )
        .select(SWITCHES.names())
        .cast(SWITCHES)
        .sort("at", "thread", "primary_db", nulls_last=True)
    )


def flag_near_switch(writes: pl.DataFrame, switches: pl.DataFrame, window_s: float = SWITCH_WINDOW_S) -> pl.DataFrame:
    """The writes with `switch_at`: the nearest log switch of their thread within the window, else null.

    One (database, thread) of the switches at a time, and only its writes' row numbers and send times go
    through the join: an as-of join `by` those keys over millions of writes holds several columns'
    worth of them at once. The writes keep their order and columns; `switch_at` is added beside them.
    """
    marks = switches.select(pl.col("thread").cast(pl.Int64), switch_at="at", _db=_db(switches).cast(pl.String))
    marks = marks.filter(pl.col("switch_at").is_not_null())
    found = pl.repeat(None, writes.height, dtype=UTC, eager=True).alias("switch_at")
    timed = writes.lazy().with_row_index("_row").filter(pl.col("sent_at").is_not_null())
    nears = []
    if marks.select("_db", "thread").n_unique() > ordered.GROUPS_ONE_BY_ONE:  # one join over all, by thread
        # the writes' thread may be narrow (`schemas.narrowed`), the switches' is not
        sends = timed.select("_row", "sent_at", _db=_db(writes).cast(pl.String), thread=pl.col("thread").cast(pl.Int64))
        nears.append(_nearest(sends.collect(), marks, window_s, ["_db", "thread"]))
    else:
        for (name, thread), theirs in marks.group_by("_db", "thread"):
            mine = timed.filter((_db(writes) == name) & (pl.col("thread") == thread)).select("_row", "sent_at")
            nears.append(_nearest(mine.collect(), theirs, window_s, []))
    for near in nears:
        if near.height:
            found = found.scatter(near["_row"], near["switch_at"])
    return writes.with_columns(found)


def _nearest(sends: pl.DataFrame, marks: pl.DataFrame, window_s: float, by: list[str]) -> pl.DataFrame:
    """The sends (`_row`, `sent_at`, and `by`) with the nearest of the marks within the window (`switch_at`)."""
    if not sends["sent_at"].is_sorted():
        sends = sends.sort("sent_at", maintain_order=True)
    return sends.join_asof(
        marks.select("switch_at", *by).sort("switch_at"),
        left_on="sent_at",
        right_on="switch_at",
        by=by or None,
        strategy="nearest",
        tolerance=timedelta(seconds=window_s),
        check_sortedness=False,
    ).filter(pl.col("switch_at").is_not_null())


@dataclass(frozen=True)
class SwitchAnalysis:
    """Log switches, the latency of writes near them against the rest, and whether slow writes cluster there."""

    window_s: float
    #: SWITCHES plus writes_near, slow_near, max_total_ms
    switches: pl.DataFrame
    #: one row for writes near a switch, one for the others: count, slow, slow_rate, p50/p99/max ms, rfs_io p99
    comparison: pl.DataFrame
    slow_near: int
    slow_elsewhere: int
    clustered: bool
    #: median minutes between two log switches of a thread (None with fewer than two on every thread)
    interval_min: float | None
    finding: str


def _latency_row(name: str, part: pl.LazyFrame) -> dict[str, Any]:
    """Latency of some writes, in one query (one pass over the part's rows; the percentiles are those
    of `summary.component_stats`: polars' "nearest")."""
    total, io = pl.col("total_ms"), pl.col("rfs_io_ms")
    figures = part.select(
        count=pl.len(),
        slow=pl.col("slow").sum(),
        p50_ms=total.quantile(0.5, "nearest"),
        p99_ms=total.quantile(0.99, "nearest"),
        max_ms=total.max(),
        rfs_io_p99_ms=io.quantile(0.99, "nearest"),
    )
    row = (
        figures.cast(dict.fromkeys(("p50_ms", "p99_ms", "max_ms", "rfs_io_p99_ms"), pl.Float64))
        .collect()
        .row(0, named=True)
    )
    count, slow = int(row.pop("count")), int(row.pop("slow"))
    return {"writes": name, "count": count, "slow": slow, "slow_rate": slow / count if count else None, **row}


def _is_cluster(near: Mapping[str, Any], rest: Mapping[str, Any]) -> bool:
    if near["slow"] < CLUSTER_MIN_SLOW or not rest["count"]:
        return False
    return bool(near["slow_rate"] >= CLUSTER_LIFT * rest["slow_rate"])


def _interval_min(switches: pl.DataFrame) -> float | None:
    gaps = switches.with_columns(_db=_db(switches)).sort("_db", "thread", "at")
    gaps = gaps.select(pl.col("at").diff().over("_db", "thread").dt.total_microseconds() / 60e6)  # not whole seconds
    value = gaps.to_series().drop_nulls().median()
    return float(value) if isinstance(value, int | float) else None


def _finding(switches: int, near: Mapping[str, Any], rest: Mapping[str, Any], clustered: bool, window_s: float) -> str:
    if not switches:
        return "No log switch (change of seq on a thread) among the writes."
    slow = near["slow"] + rest["slow"]
    within = (
        f"{near['slow']:,} of {plural(slow, 'slow write')} were sent within {window_s:.3g} s"
        f" of one of {switches:,} log switch(es)"
    )
    if not clustered:
        return f"Slow writes do not cluster at log switches: {within}."
    return (
        f"Slow writes cluster at log switches: {within}; {near['slow_rate']:.0%} of the writes near a switch were"
        f" slow against {rest['slow_rate']:.1%} elsewhere (the MAA paper's Figure 3 effect)."
    )


def analyze_log_switches(
    writes: pl.DataFrame, window_s: float = SWITCH_WINDOW_S, observed: pl.DataFrame | None = None
) -> SwitchAnalysis:
    """Find log switches, compare writes near them with the rest, and decide whether slow writes cluster there.

    The window shrinks to a tenth of the median time between switches when logs switch every few seconds.
    `observed`: the switches and standby redo log selections of the alert logs (see `log_switches`).
    """
    switches = log_switches(writes, observed)
    interval = _interval_min(switches)
    if interval is not None:
        window_s = min(window_s, interval * 60.0 * WINDOW_PER_INTERVAL)
    flagged = flag_near_switch(
        writes.select("thread", "sent_at", "slow", *STAT_COLUMNS, _db(writes)), switches, window_s
    )
    near_flag = pl.col("switch_at").is_not_null()
    per_switch = (
        flagged.lazy()
        .filter(near_flag)
        .group_by("primary_db", "thread", "switch_at")
        .agg(
            writes_near=pl.len().cast(pl.Int64),
            slow_near=pl.col("slow").sum().cast(pl.Int64),
            max_total_ms=pl.col("total_ms").max(),
        )
        .collect()
    )
    near = _latency_row("near a log switch", flagged.lazy().filter(near_flag))
    rest = _latency_row("elsewhere", flagged.lazy().filter(~near_flag))
    clustered = _is_cluster(near, rest)
    return SwitchAnalysis(
        window_s=window_s,
        switches=switches.with_columns(_db=_db(switches))
        .join(
            _text(per_switch.with_columns(_db=_db(per_switch))).drop("primary_db"),
            left_on=["_db", "thread", "at"],
            right_on=["_db", "thread", "switch_at"],
            how="left",
        )
        .drop("_db"),
        comparison=pl.DataFrame([near, rest], schema=COMPARISON),
        slow_near=near["slow"],
        slow_elsewhere=rest["slow"],
        clustered=clustered,
        interval_min=interval,
        finding=_finding(switches.height, near, rest, clustered, window_s),
    )


def switch_analysis(a: Analysis, writes: pl.DataFrame | None = None) -> SwitchAnalysis:
    """The log-switch analysis of an analysis's writes (or of `writes`, a configuration's commit path), with
    what its alert logs say."""
    observed = shifted_entries(a).select(kind="kind", db="database", thread="thread", seq="seq", at="at")
    return analyze_log_switches(a.writes if writes is None else writes, observed=observed)


def top_writes(writes: pl.DataFrame, top: int, switches: SwitchAnalysis) -> pl.DataFrame:
    """The `top` slowest writes (`summary.slowest`) with `switch_at`: the log switch they were sent near, else null."""
    keys, descending = SLOWEST_ORDER
    flagged = flag_near_switch(slowest(writes, top), switches.switches, switches.window_s)
    return flagged.sort(keys, descending=descending, nulls_last=True)
