"""Findings on the writes table for people: per-minute series, verdict, recommendations (the log-switch
correlation they draw on is `analyzer.switches`)."""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import Any

import polars as pl

from analyzer.base.schemas import TIMELINE, matched_only
from analyzer.base.vocab import TOTAL_AND_COMPONENTS, Component
from analyzer.base.words import duration, ms, plural
from analyzer.findings import crosscheck
from analyzer.findings.compare import Checks
from analyzer.findings.summary import (
    STAT_COLUMNS,
    component_stats,
    resolution_of,
    stamp_resolution,
    time_shares,
)
from analyzer.findings.switching import SwitchAnalysis

#: a component drives the slow writes when it holds at least this share of slow-write time
MAJOR_SHARE = 0.4
#: the MAA paper's redo log sizing target: a log lasts at least this long at the peak redo rate
LOG_MINUTES = 20
#: a recommendation drawn from fewer slow writes than this says it is only a hint
FEW_SLOW = 10


def per_minute(writes: pl.DataFrame) -> pl.DataFrame:
    """Per minute, primary database and thread: writes, slow writes, p50 and p99 (observed values) of each component.

    One grouping per component, joined on the keys: polars gathers the values of every group of each
    percentile it computes at once, so grouping all components together holds ten copies of a column
    (a fifth of the writes table at 2 GB of input); this holds two.
    """
    db = pl.col("primary_db") if "primary_db" in writes.columns else pl.lit(None, pl.String).alias("primary_db")
    measures = [f"{c}_ms" for c in TOTAL_AND_COMPONENTS]
    keyed = writes.select(pl.col("sent_at").dt.truncate("1m").alias("minute"), db, "thread", "slow", *measures)
    keys = ["minute", "primary_db", "thread"]
    out = keyed.group_by(keys).agg(writes=pl.len(), slow_writes=pl.col("slow").sum())
    for c in TOTAL_AND_COMPONENTS:
        percentiles = [
            pl.col(f"{c}_ms").quantile(q, "nearest").alias(f"{c}_{p}_ms") for p, q in (("p50", 0.5), ("p99", 0.99))
        ]
        out = out.join(keyed.group_by(keys).agg(percentiles), on=keys, how="left", nulls_equal=True)
    return out.select(TIMELINE.names()).cast(TIMELINE).sort("minute", "primary_db", "thread", nulls_last=True)


def _matched(writes: pl.DataFrame) -> pl.DataFrame:
    """Writes seen on both sides (the only ones with a network / RFS breakdown), with the
    columns the findings read: selected before filtering, so no whole row is copied."""
    return matched_only(writes, "slow", "verdict", *STAT_COLUMNS)


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


def _component_evidence(component: str, m: Mapping[str, Any], threshold_ms: float, res: float | None) -> str:
    """The numbers behind a component's advice; `res`: the writes' stamp resolution (ms)."""
    own = resolution_of(component, res)
    return few(m["slow_writes"]) + (
        f"{Component(component).label} was {m['share']:.0%} of slow-write time ({ms(m['component_ms'], own)} of"
        f" {ms(m['slow_total_ms'], res)} over {plural(m['slow_writes'], 'write')} >= {threshold_ms:g} ms)"
        f" and the largest part of {m['largest_in']:,} of them; over all writes its p50 is {ms(m['p50_ms'], own)},"
        f" p99 {ms(m['p99_ms'], own)}, max {ms(m['max_ms'], own)}."
    )


def _major(version: str) -> int | None:
    head = version.split(".", 1)[0]
    return int(head) if head.isdigit() else None


def _version_note(versions: Collection[str]) -> str:
    old = sorted(v for v in versions if (_major(v) or 12) < 12)
    return f" These traces come from Oracle {', '.join(old)}, where Fast Sync is not available." if old else ""


def _redo_log_size(sw: SwitchAnalysis, res: float | None) -> Recommendation:
    near, rest = sw.comparison.row(0, named=True), sw.comparison.row(1, named=True)
    evidence = few(sw.slow_near + sw.slow_elsewhere) + (
        f"{sw.slow_near:,} of {plural(sw.slow_near + sw.slow_elsewhere, 'slow write')} were sent"
        f" within {sw.window_s:.3g} s of one of {sw.switches.height:,} log switch(es);"
        f" {near['slow_rate']:.0%} of the writes near a switch were slow against {rest['slow_rate']:.1%} elsewhere;"
        f" p99 {ms(near['p99_ms'], res)} near a switch against {ms(rest['p99_ms'], res)} elsewhere"
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


def _compared(rec_id: str, checks: Checks | None) -> tuple[str, str, dict[str, float | int | None]]:
    """What the comparisons add to a recommendation: (evidence, advice, metrics). Fast Sync: the
    what-if; the network: the writes at the oratcptest round trip, each SYNC run, the distance, and
    the socket buffer against 3 x BDP."""
    if checks is None:
        return "", "", {}
    if rec_id == "fast-sync" and checks.fast_sync is not None:
        w = checks.fast_sync
        what_if = {
            "fastsync_slow_writes": w.what_if.slow_writes,
            "fastsync_p99_ms": w.what_if.p99_ms,
            "fastsync_saved_ms": round(w.saved_ms, 3),
        }
        return " " + crosscheck.fast_sync_sentence(w, checks.resolution_ms), "", what_if
    if rec_id != "network":
        return "", "", {}
    res = checks.resolution_ms
    evidence = [crosscheck.round_trip_sentence(checks.at_round_trip, res)] if checks.at_round_trip else []
    evidence += [crosscheck.run_sentence(c, res) for c in checks.runs if c.compared_with]
    evidence += [crosscheck.distance_sentence(checks.distance, res)] if checks.distance else []
    bd = checks.bandwidth_delay
    metrics: dict[str, float | int | None] = {}
    if checks.at_round_trip:
        metrics["baseline_round_trip_ms"] = checks.at_round_trip.round_trip_ms
    if bd:
        metrics |= {"bdp_bytes": round(bd.bdp_bytes), "advised_buffer_bytes": round(bd.advised_bytes)}
        metrics["send_buffer_bytes"] = bd.send_buffer_bytes
    advice = " " + crosscheck.bdp_sentence(bd, res) if bd else ""
    return "".join(" " + e for e in evidence), advice, metrics


def recommendations(
    writes: pl.DataFrame,
    threshold_ms: float,
    switches: SwitchAnalysis,
    versions: Collection[str] = (),
    checks: Checks | None = None,
) -> list[Recommendation]:
    """The MAA best practices the numbers call for: none without a slow write, each with its evidence
    (and with `checks`, what the comparisons add: the Fast Sync what-if, the oratcptest baseline).

    Log switches count every write with a total; the components only writes seen on both sides.
    """
    res = stamp_resolution(writes)
    out = [_redo_log_size(switches, res)] if switches.clustered else []
    both = _matched(writes)
    shares = time_shares(both) if both["slow"].any() else {}
    for component in sorted(shares, key=lambda c: -shares[c]):
        if shares[component] < MAJOR_SHARE:
            continue
        metrics = _component_metrics(both, component, shares[component])
        evidence = _component_evidence(component, metrics, threshold_ms, res)
        for rec_id, title, advice in ADVICE[Component(component)]:
            if rec_id == "fast-sync" and _on_fast_sync(writes):
                continue
            note = _version_note(versions) if rec_id == "fast-sync" else ""
            more, advised, measured = _compared(rec_id, checks)
            out.append(Recommendation(rec_id, title, evidence + more, advice + note + advised, metrics | measured))
    return out
