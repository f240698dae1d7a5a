"""Findings on the writes table for people: log-switch correlation, per-minute series, verdict, recommendations."""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

import polars as pl

from analyzer.events import shifted_entries
from analyzer.results import Analysis
from analyzer.schemas import COMPARISON, OBSERVED, SWITCHES, TIMELINE, UTC
from analyzer.summary import SLOWEST_ORDER, STAT_COLUMNS, component_stats, matched_only, slowest, time_shares
from analyzer.vocab import TOTAL_AND_COMPONENTS, Component

#: a write is near a log switch when it was sent within this many seconds of one on its thread
SWITCH_WINDOW_S = 2.0
#: ... but never more than this fraction of the median time between two switches of a thread
WINDOW_PER_INTERVAL = 0.1
#: slow writes cluster at log switches when at least this many are near one ...
CLUSTER_MIN_SLOW = 2
#: ... and writes near a switch are slow at least this many times as often as the other writes
CLUSTER_LIFT = 3.0
#: a component drives the slow writes when it holds at least this share of slow-write time
MAJOR_SHARE = 0.4
#: the MAA paper's redo log sizing target: a log lasts at least this long at the peak redo rate
LOG_MINUTES = 20
#: a recommendation drawn from fewer slow writes than this says it is only a hint
FEW_SLOW = 10


#: alert-log switches and standby redo log selections count when this close (s) to the writes' time span
OBSERVED_MARGIN_S = 600.0


def _db(frame: pl.DataFrame) -> pl.Expr:
    """The primary database of each write ("" when unknown): threads and log sequences are its own."""
    return pl.col("primary_db").cast(pl.String).fill_null("") if "primary_db" in frame.columns else pl.lit("")


def log_switches(writes: pl.DataFrame, observed: pl.DataFrame | None = None) -> pl.DataFrame:
    """One row per log switch of a thread of one primary database (schema SWITCHES): those the alert logs
    print (`Thread N advanced to log sequence S`), with the standby redo log selections of both sides
    (`srl_selected_at`, `rfs_selected_at`), beside those inferred from the writes (a change of `seq`
    between consecutive writes of a thread: `inferred_at`, the first write of the new log).

    `at` is the switch's time: the alert log's, else the first write of the new log, else the first
    standby redo log selection; `source` says which. `observed` has kind (log_switch, srl_selected,
    rfs_selected: `analyzer.events.alert_events`), db, thread, seq and at; it counts within
    OBSERVED_MARGIN_S of the writes (all of it without writes). An entry without the primary database
    (an RFS selection names the primary's thread and sequence in the standby's alert log) takes the
    only primary database there is, if there is only one.
    """
    inferred = (
        writes.select("thread", "seq", "sent_at", "msgid", _db=_db(writes))
        .sort("thread", "sent_at", "msgid")  # each (database, thread) in send order: `over` keeps it, no text key
        .select("_db", "thread", "seq", "sent_at", from_seq=pl.col("seq").shift(1).over("_db", "thread"))
        .filter(pl.col("seq") != pl.col("from_seq"))
        .select("_db", "thread", "from_seq", to_seq="seq", inferred_at="sent_at")
    )
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
    """The writes by send time with `switch_at`: the nearest log switch of their thread within the window, else null."""
    marks = switches.select("thread", switch_at="at", _db=_db(switches)).sort("switch_at")
    return (
        writes.with_columns(_db=_db(writes))
        .sort("sent_at")
        .join_asof(
            marks,
            left_on="sent_at",
            right_on="switch_at",
            by=["_db", "thread"],
            strategy="nearest",
            tolerance=timedelta(seconds=window_s),
            check_sortedness=False,
        )
        .drop("_db")
    )


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
    """Latency of some writes (lazy: each statistic reads only its own column)."""
    stats = {row["component"]: row for row in component_stats(part).iter_rows(named=True)}
    count, slow = (int(v) for v in part.select(pl.len(), pl.col("slow").sum()).collect().row(0))
    return {
        "writes": name,
        "count": count,
        "slow": slow,
        "slow_rate": slow / count if count else None,
        "p50_ms": stats["total"]["p50"],
        "p99_ms": stats["total"]["p99"],
        "max_ms": stats["total"]["max"],
        "rfs_io_p99_ms": stats["rfs_io"]["p99"],
    }


def _is_cluster(near: Mapping[str, Any], rest: Mapping[str, Any]) -> bool:
    if near["slow"] < CLUSTER_MIN_SLOW or not rest["count"]:
        return False
    return bool(near["slow_rate"] >= CLUSTER_LIFT * rest["slow_rate"])


def _interval_min(switches: pl.DataFrame) -> float | None:
    gaps = switches.with_columns(_db=_db(switches)).sort("_db", "thread", "at")
    gaps = gaps.select(pl.col("at").diff().over("_db", "thread").dt.total_seconds() / 60.0)
    value = gaps.to_series().drop_nulls().median()
    return float(value) if isinstance(value, int | float) else None


def _finding(switches: int, near: Mapping[str, Any], rest: Mapping[str, Any], clustered: bool, window_s: float) -> str:
    if not switches:
        return "No log switch (change of seq on a thread) among the writes."
    slow = near["slow"] + rest["slow"]
    within = (
        f"{near['slow']} of {plural(slow, 'slow write')} were sent within {window_s:.3g} s"
        f" of one of {switches} log switch(es)"
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
            per_switch.with_columns(_db=_db(per_switch)).drop("primary_db"),
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


def switch_analysis(a: Analysis) -> SwitchAnalysis:
    """The log-switch analysis of an analysis's writes, with what its alert logs say."""
    observed = shifted_entries(a).select(kind="kind", db="database", thread="thread", seq="seq", at="at")
    return analyze_log_switches(a.writes, observed=observed)


def top_writes(writes: pl.DataFrame, top: int, switches: SwitchAnalysis) -> pl.DataFrame:
    """The `top` slowest writes (`summary.slowest`) with `switch_at`: the log switch they were sent near, else null."""
    keys, descending = SLOWEST_ORDER
    flagged = flag_near_switch(slowest(writes, top), switches.switches, switches.window_s)
    return flagged.sort(keys, descending=descending, nulls_last=True)


def per_minute(writes: pl.DataFrame) -> pl.DataFrame:
    """Per minute, primary database and thread: writes, slow writes, p50 and p99 (observed values) of each component."""
    percentiles = [
        pl.col(f"{c}_ms").quantile(q, "nearest").alias(f"{c}_{p}_ms")
        for c in TOTAL_AND_COMPONENTS
        for p, q in (("p50", 0.5), ("p99", 0.99))
    ]
    db = pl.col("primary_db") if "primary_db" in writes.columns else pl.lit(None, pl.String).alias("primary_db")
    return (
        writes.group_by(pl.col("sent_at").dt.truncate("1m").alias("minute"), db, "thread")
        .agg(*percentiles, writes=pl.len(), slow_writes=pl.col("slow").sum())
        .select(TIMELINE.names())
        .cast(TIMELINE)
        .sort("minute", "primary_db", "thread", nulls_last=True)
    )


def _matched(writes: pl.DataFrame) -> pl.DataFrame:
    """Writes seen on both sides (the only ones with a network / RFS breakdown), with the
    columns the findings read: selected before filtering, so no whole row is copied."""
    return matched_only(writes, "slow", "verdict", *STAT_COLUMNS)


def plural(count: int, noun: str) -> str:
    """`1 write`, `1,204 writes`."""
    return f"{count} {noun}" if count == 1 else f"{count:,} {noun}s"


def verdict_sentence(writes: pl.DataFrame, threshold_ms: float) -> str:
    """Where the time went, in one sentence with its numbers (slow writes, else all writes, seen on both sides)."""
    shares = time_shares(writes)
    if not shares:
        return "No remote write was matched: there is no breakdown to give."
    (first, share), *rest = sorted(shares.items(), key=lambda kv: -kv[1])
    slow = int(_matched(writes)["slow"].sum())
    one_sided = int(writes["slow"].sum()) - slow
    if slow:
        more = f"; {one_sided:,} more seen on one side only" if one_sided else ""
        scope = f"slow-write time ({plural(slow, 'write')} >= {threshold_ms:g} ms{more})"
    elif one_sided:
        scope = f"matched-write time ({plural(one_sided, 'slow write')} seen on one side only)"
    else:
        scope = f"write time (no write reached {threshold_ms:g} ms)"
    others = ", ".join(f"{Component(k).label} {v:.0%}" for k, v in rest)
    return f"{share:.0%} of {scope} was {Component(first).label}; {others}."


@dataclass(frozen=True)
class Recommendation:
    """One piece of advice (the MAA paper's best practice) with the numbers that triggered it."""

    id: str
    title: str
    #: the numbers, in a sentence
    evidence: str
    advice: str
    #: the same numbers, for machines
    metrics: dict[str, float | int | None]


#: per component driving the slow writes: (id, title, advice) in the MAA paper's words
ADVICE: dict[Component, tuple[tuple[str, str, str], ...]] = {
    Component.RFS_IO: (
        (
            "standby-redo-logs",
            "Standby redo logs: a single member each, on the fastest disk group",
            "It is critical for performance that standby redo log groups contain only a single member: place"
            " single-member standby redo log groups in the fastest available disk group, so that standby log file"
            " write times are comparable to log file I/O on the primary. Size them exactly as the online redo logs,"
            " with one more group per thread than the online logs. Check the standby storage with iostat -x"
            " (%util near 100% or avgqu-sz above 1 means the device is saturated), and look for other databases"
            " sharing it.",
        ),
        (
            "fast-sync",
            "Consider Fast Sync (SYNC NOAFFIRM)",
            "With Fast Sync (SYNC NOAFFIRM on the standby destination) the standby acknowledges the primary as soon"
            " as it has received the redo in memory, without waiting for the write to the standby redo log: standby"
            " I/O, and its outliers, leave the round trip. Trade-off: a very small exposure to data loss if the"
            " primary and the standby both fail within milliseconds of each other, before the standby I/O completes."
            " Fast Sync needs Oracle Database 12c or later and must be enabled explicitly (the default is SYNC"
            " AFFIRM).",
        ),
    ),
    Component.NETWORK: (
        (
            "network",
            "Network: socket buffers at 3 x BDP, SDU 65535, and the network path",
            "Set the TCP send and receive socket buffers to 3 x the bandwidth-delay product (BDP = bandwidth x"
            " round-trip latency) with RECV_BUF_SIZE and SEND_BUF_SIZE in the Oracle Net alias used for redo"
            " transport and in the standby listener (raise net.core.rmem_max and net.core.wmem_max on Linux to allow"
            " them). Set SDU=65535 in tnsnames.ora and listener.ora, or DEFAULT_SDU_SIZE=65535 in sqlnet.ora. Then"
            " check the network path end to end: its slowest segment, switch or interface limits the bandwidth, and"
            " inconsistent network response is the most common network problem.",
        ),
    ),
    Component.RFS_OTHER: (
        (
            "standby-cpu",
            "Standby CPU for RFS",
            "Time inside RFS that is not a standby redo log write points at the standby host: RFS needs sufficient"
            " CPU to write to the standby redo logs efficiently. Check the standby's CPU load and run queue"
            " (OSWatcher, vmstat) at the times of the slow writes, and other work sharing the standby host.",
        ),
    ),
}
REDO_LOG_SIZE = (
    "redo-log-size",
    "Fewer log switches: larger redo logs",
    "Size the online redo logs, and the standby redo logs exactly the same, at 4 GB or at least the peak redo rate"
    f" per minute x {LOG_MINUTES} minutes (MAA: up to 5 MB/s 4 GB, up to 25 MB/s 16 GB, up to 50 MB/s 32 GB,"
    " above 50 MB/s 64 GB), from the peak redo rate in AWR, not an average. At each log switch RFS updates the"
    " standby redo log headers and switches to a new standby redo log, the standby takes a full checkpoint and"
    " archives the previous log: remote writes slow down at every switch.",
)


def _component_metrics(writes: pl.DataFrame, component: str, share: float) -> dict[str, float | int | None]:
    slow = writes.filter(pl.col("slow"))
    stats = component_stats(writes).filter(pl.col("component") == component).row(0, named=True)
    return {
        "share": round(share, 4),
        "component_ms": round(float(slow[f"{component}_ms"].sum()), 3),
        "slow_total_ms": round(float(slow["total_ms"].sum()), 3),
        "slow_writes": slow.height,
        "largest_in": int((slow["verdict"] == component).sum()),
        "p50_ms": stats["p50"],
        "p99_ms": stats["p99"],
        "max_ms": stats["max"],
    }


def few(slow: int) -> str:
    """`From 2 slow writes only, treat as a hint: ` when there are fewer than FEW_SLOW, else ""."""
    return f"From {plural(slow, 'slow write')} only, treat as a hint: " if slow < FEW_SLOW else ""


def _component_evidence(component: str, m: Mapping[str, Any], threshold_ms: float) -> str:
    return few(m["slow_writes"]) + (
        f"{Component(component).label} was {m['share']:.0%} of slow-write time ({m['component_ms']:,.1f} of"
        f" {m['slow_total_ms']:,.1f} ms over {plural(m['slow_writes'], 'write')} >= {threshold_ms:g} ms)"
        f" and the largest part of {m['largest_in']} of them; over all writes its p50 is {m['p50_ms']:,.3f} ms, p99"
        f" {m['p99_ms']:,.3f} ms, max {m['max_ms']:,.3f} ms."
    )


def _major(version: str) -> int | None:
    head = version.split(".", 1)[0]
    return int(head) if head.isdigit() else None


def _version_note(versions: Collection[str]) -> str:
    old = sorted(v for v in versions if (_major(v) or 12) < 12)
    return f" These traces come from Oracle {', '.join(old)}, where Fast Sync is not available." if old else ""


def _redo_log_size(sw: SwitchAnalysis) -> Recommendation:
    near, rest = sw.comparison.row(0, named=True), sw.comparison.row(1, named=True)
    evidence = few(sw.slow_near + sw.slow_elsewhere) + (
        f"{sw.slow_near} of {plural(sw.slow_near + sw.slow_elsewhere, 'slow write')} were sent"
        f" within {sw.window_s:.3g} s of one of {sw.switches.height} log switch(es);"
        f" {near['slow_rate']:.0%} of the writes near a switch were slow against {rest['slow_rate']:.1%} elsewhere;"
        f" p99 {near['p99_ms']:.1f} ms near a switch against"
        f" {rest['p99_ms']:.1f} ms elsewhere"
    )
    if sw.interval_min is not None:
        every = duration(sw.interval_min * 60.0)
        evidence += f"; a thread switched logs every {every} (median; the MAA target is {LOG_MINUTES} min at peak)"
    metrics = {
        "switches": sw.switches.height,
        "slow_near": sw.slow_near,
        "slow_elsewhere": sw.slow_elsewhere,
        "slow_rate_near": near["slow_rate"],
        "slow_rate_elsewhere": rest["slow_rate"],
        "p99_near_ms": near["p99_ms"],
        "p99_elsewhere_ms": rest["p99_ms"],
        "interval_min": sw.interval_min,
    }
    rec_id, title, advice = REDO_LOG_SIZE
    return Recommendation(rec_id, title, evidence + ".", advice, metrics)


def _on_fast_sync(writes: pl.DataFrame) -> bool:
    """Every slow write seen on both sides went over a Fast Sync link: that advice is taken already."""
    if "transport" not in writes.columns:
        return False
    slow = writes.select("transport", "slow", "matched").filter(pl.col("slow") & pl.col("matched"))
    return slow.height > 0 and bool(slow["transport"].cast(pl.String).eq_missing("FASTSYNC").all())


def recommendations(
    writes: pl.DataFrame, threshold_ms: float, switches: SwitchAnalysis, versions: Collection[str] = ()
) -> list[Recommendation]:
    """The MAA best practices the numbers call for: none without a slow write, each with its evidence.

    Log switches count every write with a total; the components only writes seen on both sides.
    """
    out = [_redo_log_size(switches)] if switches.clustered else []
    both = _matched(writes)
    shares = time_shares(both) if both["slow"].any() else {}
    for component in sorted(shares, key=lambda c: -shares[c]):
        if shares[component] < MAJOR_SHARE:
            continue
        metrics = _component_metrics(both, component, shares[component])
        evidence = _component_evidence(component, metrics, threshold_ms)
        for rec_id, title, advice in ADVICE[Component(component)]:
            if rec_id == "fast-sync" and _on_fast_sync(writes):
                continue
            note = _version_note(versions) if rec_id == "fast-sync" else ""
            out.append(Recommendation(rec_id, title, evidence, advice + note, metrics))
    return out


def duration(seconds: float) -> str:
    """`45 s`, `12.5 min`, `3.2 h`."""
    if seconds < 120:
        return f"{seconds:.0f} s"
    return f"{seconds / 60:.1f} min" if seconds < 7200 else f"{seconds / 3600:.1f} h"
