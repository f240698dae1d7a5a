"""Findings on the writes table for people: per-minute series, verdict, recommendations (the log-switch
correlation they draw on is `analyzer.findings.switching`, the texts and symptoms `analyzer.findings.advice`).

Recommendations follow the assessment (`analyzer.findings.assessment`): a healthy configuration gets none.
Every cause with a material share of the slow writes (MATERIAL_SHARE of their time, or the largest part of
that share of them) gets the advice its symptom calls for, only what the configuration allows (Fast Sync
only in Maximum Availability on 12c or later, `analyzer.findings.setting`), ranked by the slow-write time
it would save."""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import Any

import polars as pl

from analyzer.base.schemas import TIMELINE, matched_only
from analyzer.base.vocab import TOTAL_AND_COMPONENTS, Component
from analyzer.base.words import duration, ms, plural
from analyzer.findings import advice, crosscheck, ordered
from analyzer.findings.assessment import FEW_SLOW, Assessment
from analyzer.findings.compare import Checks
from analyzer.findings.setting import FastSyncOption, Setting
from analyzer.findings.summary import (
    STAT_COLUMNS,
    component_stats,
    resolution_of,
    stamp_resolution,
    time_shares,
)
from analyzer.findings.switching import SwitchAnalysis, flag_near_switch

#: a cause is material when it holds at least this share of slow-write time, or is the largest part of at
#: least this share of the slow writes: it gets its advice
MATERIAL_SHARE = 0.2
#: a recommendation drawn from fewer slow writes than this says it is only a hint


def per_minute(writes: pl.DataFrame) -> pl.DataFrame:
    """Per minute, primary database and thread: writes, slow writes, p50 and p99 (observed values) of each component.

    Grouped one block of whole minutes at a time (`ordered.minute_blocks`): a percentile gathers the
    values of its groups, and on the whole table that is copies of its columns (a fifth of the writes
    table at 2 GB of input); a block holds a few hundred thousand rows.
    """
    db = pl.col("primary_db") if "primary_db" in writes.columns else pl.lit(None, pl.String).alias("primary_db")
    keys = ["minute", "primary_db", "thread"]
    measures = [f"{c}_ms" for c in TOTAL_AND_COMPONENTS]
    aggs = [pl.len().alias("writes"), pl.col("slow").sum().alias("slow_writes")]
    for c in TOTAL_AND_COMPONENTS:
        aggs += [
            pl.col(f"{c}_ms").quantile(q, "nearest").alias(f"{c}_{p}_ms") for p, q in (("p50", 0.5), ("p99", 0.99))
        ]
    blocks = [
        block.lazy()
        .select(pl.col("sent_at").dt.truncate("1m").alias("minute"), db, "thread", "slow", *measures)
        .group_by(keys)
        .agg(aggs)
        .select(TIMELINE.names())
        .cast(TIMELINE)
        .collect()
        for block in ordered.minute_blocks(writes)
    ]
    out = pl.concat(blocks) if blocks else TIMELINE.to_frame()
    return out.sort("minute", "primary_db", "thread", nulls_last=True)


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
    metrics: dict[str, float | int | str | None]
    #: the slow-write time it would save (ms): what ranks the recommendations
    saves_ms: float = 0.0
    #: how the cause shows (stalls, bandwidth, saturation, outliers, log switches), when that chooses the advice
    symptom: str | None = None


def _component_metrics(writes: pl.DataFrame, component: str, share: float) -> dict[str, float | int | str | None]:
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


def _excess(both: pl.DataFrame, component: str) -> float:
    """What the slow writes spent in `component` beyond its usual value (its p50 over all writes), in ms:
    the time fixing that cause would save."""
    column = f"{component}_ms"
    usual = both[column].drop_nulls().quantile(0.5, "nearest")
    usual = float(usual) if isinstance(usual, int | float) else 0.0
    slow = both.filter(pl.col("slow"))[column]
    return float((slow - usual).clip(lower_bound=0.0).sum())


def _redo_log_size(sw: SwitchAnalysis, writes: pl.DataFrame, work: advice.Workload | None) -> Recommendation:
    near, rest = sw.comparison.row(0, named=True), sw.comparison.row(1, named=True)
    res = stamp_resolution(writes)
    evidence = few(sw.slow_near + sw.slow_elsewhere) + (
        f"{sw.slow_near:,} of {plural(sw.slow_near + sw.slow_elsewhere, 'slow write')} were sent"
        f" within {sw.window_s:.3g} s of one of {sw.switches.height:,} log switch(es);"
        f" {near['slow_rate']:.0%} of the writes near a switch were slow against {rest['slow_rate']:.1%} elsewhere;"
        f" p99 {ms(near['p99_ms'], res)} near a switch against {ms(rest['p99_ms'], res)} elsewhere"
    )
    if sw.interval_min is not None:
        every = duration(sw.interval_min * 60.0)
        evidence += (
            f"; a thread switched logs every {every} (median; the MAA target is {advice.LOG_MINUTES} min at peak)"
        )
    metrics: dict[str, float | int | str | None] = {
        "switches": sw.switches.height,
        "slow_near": sw.slow_near,
        "slow_elsewhere": sw.slow_elsewhere,
        "slow_rate_near": near["slow_rate"],
        "slow_rate_elsewhere": rest["slow_rate"],
        "p99_near_ms": near["p99_ms"],
        "p99_elsewhere_ms": rest["p99_ms"],
        "interval_min": sw.interval_min,
    }
    if work is not None and work.redo_bytes_s:
        table, minutes = advice.log_size_gb(work.redo_bytes_s)
        metrics |= {"redo_bytes_s": round(work.redo_bytes_s, 1), "log_size_gb": table, "log_minutes_gb": minutes}
    slow_near = flag_near_switch(writes.filter(pl.col("slow")), sw.switches, sw.window_s)
    typical = writes["total_ms"].drop_nulls().quantile(0.5, "nearest")
    usual = float(typical) if isinstance(typical, int | float) else 0.0
    near_slow = slow_near.filter(pl.col("switch_at").is_not_null())["total_ms"]
    saves = float((near_slow - usual).clip(lower_bound=0.0).sum())
    rec_id, title, text = advice.REDO_LOG_SIZE
    return Recommendation(
        rec_id, title, evidence + ".", text + advice.log_size_sentence(work), metrics, saves, "log switches"
    )


def _on_fast_sync(writes: pl.DataFrame) -> bool:
    """Every slow write seen on both sides went over a Fast Sync link: that advice is taken already."""
    if "transport" not in writes.columns:
        return False
    slow = writes.select("transport", "slow", "matched").filter(pl.col("slow") & pl.col("matched"))
    return slow.height > 0 and bool(slow["transport"].cast(pl.String).eq_missing("FASTSYNC").all())


def _network(
    both: pl.DataFrame, checks: Checks | None, work: advice.Workload | None, setting: Setting
) -> tuple[tuple[str, str, str], str, str, dict[str, float | int | str | None]]:
    """The network's advice by its symptom: (id, title, text), the symptom, what the comparisons add to
    the evidence, and their numbers."""
    symptom = advice.network_symptom(both, checks, work)
    res = checks.resolution_ms if checks is not None else None
    more: list[str] = [symptom.evidence]
    metrics: dict[str, float | int | str | None] = {}
    if checks is not None:
        if checks.at_round_trip:
            more.append(crosscheck.round_trip_sentence(checks.at_round_trip, res))
            metrics["baseline_round_trip_ms"] = checks.at_round_trip.round_trip_ms
        more += [crosscheck.run_sentence(c, res) for c in checks.runs if c.compared_with]
        more += [crosscheck.distance_sentence(checks.distance, res)] if checks.distance else []
    if symptom.kind == "stalls":
        return advice.NETWORK_STALLS, symptom.kind, " ".join(more), metrics | {"net_timeout": _timeouts(setting)}
    bd = checks.bandwidth_delay if checks is not None else None
    if bd is not None:
        metrics |= {"bdp_bytes": round(bd.bdp_bytes), "advised_buffer_bytes": round(bd.advised_bytes)}
        metrics["send_buffer_bytes"] = bd.send_buffer_bytes
        more.append(crosscheck.bdp_sentence(bd, res))
    return advice.NETWORK_BANDWIDTH, symptom.kind, " ".join(more), metrics


def _timeouts(setting: Setting) -> str:
    """The NET_TIMEOUT of the SYNC destinations, in words."""
    found = [f"{d.target} {d.net_timeout_s} s" for d in setting.destinations if d.net_timeout_s is not None]
    return ", ".join(found) if found else "not seen"


def _stall_context(setting: Setting) -> str:
    """What a stall as long as NET_TIMEOUT does, in this protection mode."""
    timeouts = _timeouts(setting)
    told = f"NET_TIMEOUT here: {timeouts}" if timeouts != "not seen" else "NET_TIMEOUT is not in the alert logs"
    if setting.protection == "MAXIMUM PROTECTION":
        after = "in Maximum Protection the primary cannot go on without an acknowledgement"
    elif setting.protection == "MAXIMUM AVAILABILITY":
        after = (
            "in Maximum Availability the primary then goes on without that destination, unsynchronized until it"
            " reconnects"
        )
    else:
        after = (
            "in Maximum Availability the primary then goes on without that destination; in Maximum Protection it cannot"
        )
    return f" A stall as long as NET_TIMEOUT ({told}) makes LGWR give the destination up: {after}."


def _fast_sync_note(option: FastSyncOption, checks: Checks | None) -> str:
    """Why Fast Sync is not offered, and on 11.2 what an upgrade would change (its what-if)."""
    text = f" Fast Sync is not an option here: {option.why}."
    if option.available is False and "needs Oracle Database 12c" in option.why and checks and checks.fast_sync:
        said = crosscheck.fast_sync_sentence(checks.fast_sync, checks.resolution_ms)
        text += f" An upgrade to 12c or later would make it one: {said[0].lower()}{said[1:]}"
    return text


def recommendations(
    writes: pl.DataFrame,
    threshold_ms: float,
    switches: SwitchAnalysis,
    versions: Collection[str] = (),
    checks: Checks | None = None,
    setting: Setting | None = None,
    assessment: Assessment | None = None,
) -> list[Recommendation]:
    """The MAA best practices the numbers call for, each with its evidence, ranked by the slow-write time it
    would save: none without a slow write, none for a healthy configuration (`assessment`).

    `writes` are a configuration's commit path; `setting` what the uploads say of it (else only `versions`);
    `checks` the comparisons (the Fast Sync what-if, the oratcptest runs, the AWR workload). Log switches
    count every write with a total; the components only writes seen on both sides.
    """
    if assessment is not None and assessment.healthy:
        return []
    setting = setting or Setting(versions=tuple(sorted(versions)))
    work = advice.workload(checks)
    res = stamp_resolution(writes)
    out = [_redo_log_size(switches, writes, work)] if switches.clustered else []
    both = matched_only(writes)  # every column: the symptoms read the writes' order on their links
    shares = time_shares(both) if both["slow"].any() else {}
    slow = int(both["slow"].sum())
    for component in shares:
        metrics = _component_metrics(both, component, shares[component])
        largest = int((both["slow"] & (both["verdict"] == component)).sum())
        if shares[component] < MATERIAL_SHARE and largest < max(1, MATERIAL_SHARE * slow):
            continue
        evidence = _component_evidence(component, metrics, threshold_ms, res)
        out += _advise(Component(component), both, writes, evidence, metrics, (checks, work, setting))
    return sorted(out, key=lambda r: -r.saves_ms)


def _advise(
    component: Component,
    both: pl.DataFrame,
    writes: pl.DataFrame,
    evidence: str,
    metrics: dict[str, float | int | str | None],
    given: tuple[Checks | None, advice.Workload | None, Setting],
) -> list[Recommendation]:
    """The recommendations of one material cause."""
    checks, work, setting = given
    saves = _excess(both, component)
    if component is Component.NETWORK:
        (rec_id, title, text), kind, more, measured = _network(both, checks, work, setting)
        extra = _stall_context(setting) if kind == "stalls" else ""
        payloads = [c.run.settings.payload_bytes for c in checks.runs] if checks is not None else []
        extra += advice.write_size_sentence(work, [p for p in payloads if p])
        return [Recommendation(rec_id, title, f"{evidence} {more}", text + extra, metrics | measured, saves, kind)]
    if component is Component.RFS_OTHER:
        rec_id, title, text = advice.STANDBY_CPU
        return [Recommendation(rec_id, title, evidence, text, metrics, saves, "CPU or scheduling")]
    symptom = advice.io_symptom(both, work)
    rec_id, title, text = advice.STANDBY_STORAGE if symptom.kind == "saturation" else advice.STANDBY_SPIKES
    option = setting.fast_sync()
    told = f"{evidence} {symptom.evidence}".strip()
    if _on_fast_sync(writes):
        return [Recommendation(rec_id, title, told, text, metrics, saves, symptom.kind)]
    if option.available is False:
        note = _fast_sync_note(option, checks)
        return [
            Recommendation(
                rec_id, title, told, text + note, metrics | {"fast_sync": "unavailable"}, saves, symptom.kind
            )
        ]
    out = [Recommendation(rec_id, title, told, text, metrics, saves, symptom.kind)]
    fs_id, fs_title, fs_text = advice.FAST_SYNC
    fs_evidence, fs_metrics, fs_saves = evidence, dict(metrics), float(both.filter(pl.col("slow"))["rfs_io_ms"].sum())
    if checks is not None and checks.fast_sync is not None:
        w = checks.fast_sync
        fs_evidence += " " + crosscheck.fast_sync_sentence(w, checks.resolution_ms)
        fs_metrics |= {
            "fastsync_slow_writes": w.what_if.slow_writes,
            "fastsync_p99_ms": w.what_if.p99_ms,
            "fastsync_saved_ms": round(w.saved_ms, 3),
        }
        fs_saves = w.saved_ms
    condition = "" if option.available else f" Check first that it is possible here: {option.why}."
    out.append(Recommendation(fs_id, fs_title, fs_evidence, fs_text + condition, fs_metrics, fs_saves, symptom.kind))
    return out
