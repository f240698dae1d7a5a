"""Insights on small hand-built writes tables: log switches, clustering, per-minute series, verdict, recommendations."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import polars as pl
import pytest

from analyzer.api import Options, analyze
from analyzer.base.schemas import TIMELINE
from analyzer.findings import assessment, compare, insights, switching
from analyzer.findings.assessment import assess
from analyzer.findings.setting import Setting
from analyzer.report.model import document
from analyzer.simulate import SimOptions, simulate
from tests.write_rows import SLOW_IO, T0, THRESHOLD, frame, row, steady

# --- log switches ---


# --- per-minute series ---


def test_per_minute_series_per_thread() -> None:
    writes = frame(
        [
            row(1, 0.0, network=1.0),
            row(2, 10.0, network=3.0),
            row(3, 20.0, network=150.0),  # slow
            row(4, 30.0, thread=2, rfs_io=7.0),
            row(5, 70.0, network=2.0),  # next minute
        ]
    )
    series = insights.per_minute(writes)
    assert series.schema == TIMELINE
    assert series.select("minute", "thread", "writes", "slow_writes").rows() == [
        (T0, 1, 3, 1),
        (T0, 2, 1, 0),
        (T0 + timedelta(minutes=1), 1, 1, 0),
    ]
    first = series.row(0, named=True)
    assert (first["network_p50_ms"], first["network_p99_ms"]) == (3.0, 150.0)  # nearest rank
    assert first["total_p50_ms"] == pytest.approx(3.6)
    assert series.row(1, named=True)["rfs_io_p99_ms"] == 7.0


# --- verdict sentence ---


def test_verdict_sentence_names_the_largest_share_first() -> None:
    writes = frame([row(1, 0.0, network=12.0, rfs_io=83.0, rfs_other=5.0), row(2, 1.0)])
    assert insights.verdict_sentence(writes, THRESHOLD) == (
        "83% of slow-write time (1 write >= 100 ms) was standby I/O (RFS write); network 12%, other RFS time 5%."
    )


def test_verdict_sentence_without_slow_writes_uses_all_writes() -> None:
    writes = frame([row(1, 0.0, network=3.0, rfs_io=1.0, rfs_other=0.0)])
    assert insights.verdict_sentence(writes, THRESHOLD) == (
        "75% of write time (no write reached 100 ms) was network; standby I/O (RFS write) 25%, other RFS time 0%."
    )


def test_verdict_sentence_counts_one_sided_slow_writes_apart() -> None:
    writes = frame([row(1, 0.0, rfs_io=150.0), row(2, 1.0, network=120.0, matched=False), row(3, 2.0)])
    assert insights.verdict_sentence(writes, THRESHOLD) == (
        "99% of slow-write time (1 write >= 100 ms; 1 more seen on one side only) was standby I/O (RFS write);"
        " network 1%, other RFS time 0%."
    )
    only = frame([row(2, 1.0, network=120.0, matched=False), row(3, 2.0)])
    assert insights.verdict_sentence(only, THRESHOLD).startswith(
        "62% of matched-write time (1 slow write seen on one side only) was network;"
    )


def test_verdict_sentence_without_writes() -> None:
    assert insights.verdict_sentence(frame([]), THRESHOLD).startswith("No remote write was matched")


# --- recommendations ---


def recommend(
    writes: pl.DataFrame, versions: tuple[str, ...] = (), setting: Setting | None = None
) -> dict[str, insights.Recommendation]:
    recs = insights.recommendations(writes, THRESHOLD, switching.analyze_log_switches(writes), versions, None, setting)
    assert len({r.id for r in recs}) == len(recs)
    assert [r.saves_ms for r in recs] == sorted((r.saves_ms for r in recs), reverse=True)  # ranked by time saved
    return {r.id: r for r in recs}


def slow_mix(network: float, rfs_io: float, rfs_other: float, alone: bool = True) -> pl.DataFrame:
    """Fast writes and two slow ones with the given components, no log switch; `alone`: a fast write
    between the two slow ones (outliers), else one right after the other (a run)."""
    rows = [row(i, float(i)) for i in range(10)]
    slow = (20, 30) if alone else (20, 21)
    rows += [row(i, float(i), network=network, rfs_io=rfs_io, rfs_other=rfs_other) for i in slow]
    rows += [row(25, 25.0)] if alone else []
    return frame(rows)


MAX_AVAILABILITY = Setting(versions=("19.22.0.0.0",), protection="MAXIMUM AVAILABILITY", protection_source="a:1")


def test_standby_io_outliers_call_for_fast_sync_and_the_storage_spikes() -> None:
    recs = recommend(slow_mix(network=10.0, rfs_io=180.0, rfs_other=10.0), setting=MAX_AVAILABILITY)
    assert list(recs) == ["fast-sync", "standby-io-outliers"]  # Fast Sync saves the whole standby I/O
    spikes, fast = recs["standby-io-outliers"], recs["fast-sync"]
    assert spikes.symptom == fast.symptom == "outliers"
    assert "iostat -x" in spikes.advice and "single-member" in spikes.advice
    assert "SYNC NOAFFIRM" in fast.title and "data loss" in fast.advice  # the trade-off is stated
    assert "Check first" not in fast.advice  # Maximum Availability on 19c: nothing to check
    assert spikes.evidence.startswith(
        "From 2 slow writes only, treat as a hint: standby I/O (RFS write) was 90% of slow-write time (360 ms of 400 ms"
    )
    assert "2 of 2 slow writes held up by standby I/O came alone" in spikes.evidence
    assert spikes.metrics["share"] == 0.9
    assert (spikes.metrics["slow_writes"], spikes.metrics["largest_in"]) == (2, 2)
    assert fast.saves_ms == pytest.approx(360.0) and spikes.saves_ms == pytest.approx(359.0)  # beyond its p50


def test_standby_io_in_runs_is_saturation() -> None:
    recs = recommend(slow_mix(network=10.0, rfs_io=180.0, rfs_other=10.0, alone=False), setting=MAX_AVAILABILITY)
    srl = recs["standby-redo-logs"]
    assert srl.symptom == "saturation" and "1 of 2 slow writes held up by standby I/O followed another" in srl.evidence
    assert "single member" in srl.advice and "fastest available disk group" in srl.advice and "saturated" in srl.advice


def test_fast_sync_is_offered_with_its_conditions_when_the_uploads_do_not_say() -> None:
    fast = recommend(slow_mix(network=10.0, rfs_io=180.0, rfs_other=10.0))["fast-sync"]
    assert "Check first that it is possible here" in fast.advice and "Maximum Availability" in fast.advice


def test_maximum_protection_gets_no_fast_sync_but_a_note() -> None:
    protected = Setting(versions=("19.22.0.0.0",), protection="MAXIMUM PROTECTION", protection_source="alert.log:12")
    recs = recommend(slow_mix(network=10.0, rfs_io=180.0, rfs_other=10.0), setting=protected)
    assert list(recs) == ["standby-io-outliers"]
    note = recs["standby-io-outliers"].advice
    assert "Fast Sync is not an option here" in note and "Maximum Protection (alert.log:12)" in note
    assert "only in Maximum Availability" in note and recs["standby-io-outliers"].metrics["fast_sync"] == "unavailable"


def test_on_11_2_fast_sync_is_a_note_with_what_an_upgrade_would_change() -> None:
    writes = slow_mix(network=10.0, rfs_io=180.0, rfs_other=10.0).with_columns(
        fastsync_ms=pl.col("total_ms") - pl.col("rfs_io_ms")  # as `match.attribute.fast_sync_ms` gives it
    )
    checks = compare.Checks(compare.fast_sync(writes, THRESHOLD), None, (), None, (), None, 2.0)
    old = Setting(versions=("11.2.0.4.0",))
    recs = insights.recommendations(writes, THRESHOLD, switching.analyze_log_switches(writes), (), checks, old)
    assert [r.id for r in recs] == ["standby-io-outliers"]
    note = recs[0].advice
    assert "Oracle 11.2.0.4.0: Fast Sync (SYNC NOAFFIRM) needs Oracle Database 12c" in note
    assert "An upgrade to 12c or later would make it one: with Fast Sync, slow writes would fall from 2 to 0" in note
    assert "fast-sync" not in recommend(writes, ("11.2.0.4.0", "19.22.0.0.0"))


def test_network_stalls_call_for_drops_retransmits_and_the_path() -> None:
    recs = recommend(slow_mix(network=180.0, rfs_io=15.0, rfs_other=5.0), setting=MAX_AVAILABILITY)
    assert list(recs) == ["network-stalls"]
    rec = recs["network-stalls"]
    assert rec.symptom == "stalls" and "ip -s link" in rec.advice and "netstat -s" in rec.advice
    assert "3 x the bandwidth-delay product" not in rec.advice  # buffers are for a link short of bandwidth
    assert "NET_TIMEOUT" in rec.advice and "Maximum Availability the primary then goes on" in rec.advice
    assert rec.evidence.startswith("From 2 slow writes only, treat as a hint: network was 90% of")


def test_network_in_runs_calls_for_bandwidth() -> None:
    recs = recommend(slow_mix(network=180.0, rfs_io=15.0, rfs_other=5.0, alone=False))
    rec = recs["network-bandwidth"]
    assert rec.symptom == "bandwidth" and "Sustained, not stalls" in rec.evidence
    assert "3 x the bandwidth-delay product" in rec.advice and "SDU=65535" in rec.advice


def test_rfs_other_calls_for_standby_cpu() -> None:
    recs = recommend(slow_mix(network=10.0, rfs_io=10.0, rfs_other=180.0))
    assert list(recs) == ["standby-cpu"]
    assert "mpstat" in recs["standby-cpu"].advice and "run queue" in recs["standby-cpu"].advice


def test_the_paper_examples_give_both_causes_ranked_by_time_saved() -> None:
    """The MAA paper's two examples: one write bound by standby I/O, one by the network."""
    rows = [row(i, float(i)) for i in range(10)]
    rows += [row(20, 20.0, network=0.0, rfs_io=163.0, rfs_other=0.3), row(30, 30.0, network=137.0, rfs_io=0.6)]
    assert list(recommend(frame(rows), setting=MAX_AVAILABILITY)) == [
        "fast-sync",
        "standby-io-outliers",
        "network-stalls",
    ]


def test_a_secondary_cause_of_a_material_share_gets_its_advice() -> None:
    recs = recommend(slow_mix(network=60.0, rfs_io=130.0, rfs_other=10.0))  # network 30%: at least 20%
    assert "network-stalls" in recs and "standby-cpu" not in recs  # other RFS time 5%
    assert list(recs).index("network-stalls") > list(recs).index("standby-io-outliers")  # it saves less


def test_the_largest_part_of_a_material_number_of_slow_writes_gets_its_advice() -> None:
    """Other RFS time is 10% of slow-write time, yet the largest part of a third of the slow writes."""
    rows = [row(i, float(i)) for i in range(40)]
    rows += [row(100 + 2 * i, 100.0 + 2 * i, rfs_io=400.0) for i in range(6)]
    rows += [row(200 + 2 * i, 200.0 + 2 * i, network=10.0, rfs_io=10.0, rfs_other=90.0) for i in range(3)]
    writes = frame(sorted(rows, key=lambda r: r["sent_at"]))  # type: ignore[arg-type,return-value]
    recs = recommend(writes)
    assert recs["standby-cpu"].metrics["share"] < insights.MATERIAL_SHARE  # type: ignore[operator]
    assert recs["standby-cpu"].metrics["largest_in"] == 3


def test_one_sided_slow_writes_give_no_breakdown_advice() -> None:
    """Slow writes seen on the primary only have no components: no component advice from them."""
    rows = [row(i, float(i)) for i in range(10)]
    rows += [row(i, float(i), network=10.0, rfs_io=180.0, rfs_other=10.0, matched=False) for i in (20, 30)]
    assert recommend(frame(rows)) == {}


def test_no_slow_write_no_recommendation() -> None:
    """Standby I/O is all of the time, but nothing is slow: nothing to fix."""
    writes = frame([row(i, float(i), network=0.0, rfs_io=50.0, rfs_other=0.0) for i in range(20)])
    assert recommend(writes) == {}


def test_a_healthy_configuration_gets_no_remedy() -> None:
    writes = frame([row(i, float(i)) for i in range(3000)] + [row(5000, 5000.0, rfs_io=250.0)])
    switches = switching.analyze_log_switches(writes)
    judged = assess(writes, THRESHOLD, switches)
    assert judged.word == "healthy"
    assert insights.recommendations(writes, THRESHOLD, switches, assessment=judged) == []
    assert insights.recommendations(writes, THRESHOLD, switches)  # without the assessment the write gets advice


def test_clustered_switches_call_for_larger_redo_logs() -> None:
    writes = steady(600, 60, slow_at={60, 120, 180, 240, 300}, **SLOW_IO)
    recs = recommend(writes)
    rec = recs["redo-log-size"]
    assert "5 of 5 slow writes were sent within 2 s of one of 9 log switch(es)" in rec.evidence
    assert "every 60 s (median" in rec.evidence
    assert "4 GB" in rec.advice and "20 minutes" in rec.advice and "Take the peak redo rate from AWR" in rec.advice
    assert (rec.metrics["slow_near"], rec.metrics["switches"]) == (5, 9)
    assert rec.saves_ms == pytest.approx(5 * (251.1 - 1.6))  # beyond the typical total


def test_unclustered_switches_do_not_call_for_larger_redo_logs() -> None:
    writes = steady(600, 60, slow_at={30, 90, 150, 210, 270}, **SLOW_IO)
    assert "redo-log-size" not in recommend(writes)


def test_a_recommendation_from_enough_slow_writes_is_no_mere_hint() -> None:
    """Ten slow writes or more: the evidence stands without the small-sample warning; fewer: it says so."""
    rows = [row(i, float(i)) for i in range(10)]
    rows += [row(i, float(i), network=180.0, rfs_io=15.0, rfs_other=5.0) for i in range(20, 20 + assessment.FEW_SLOW)]
    found = recommend(frame(rows))
    evidence = next(r for r in found.values()).evidence
    assert evidence.startswith("network was 90% of slow-write time") and "hint" not in evidence
    one = next(r for r in recommend(frame([*rows[:10], rows[10]])).values()).evidence
    assert one.startswith("From 1 slow write only, treat as a hint: ")


# --- several configurations, Fast Sync ---


def test_log_switches_and_minutes_are_per_primary_database() -> None:
    """Two configurations on thread 1 at the same log sequences: sales switches, hr does not."""
    writes = frame(
        [
            row(1, 0.0, seq=10) | {"primary_db": "sales"},
            row(2, 1.0, seq=10) | {"primary_db": "hr"},
            row(3, 2.0, seq=11) | {"primary_db": "sales"},
            row(4, 3.0, seq=10) | {"primary_db": "hr"},
        ]
    )
    switches = switching.log_switches(writes)
    assert switches.select("primary_db", "thread", "from_seq", "to_seq").rows() == [("sales", 1, 10, 11)]
    flagged = switching.flag_near_switch(writes, switches)
    assert flagged.filter(pl.col("switch_at").is_not_null())["primary_db"].cast(pl.String).to_list() == [
        "sales",
        "sales",
    ]
    assert insights.per_minute(writes).select("primary_db", "writes").rows() == [("hr", 2), ("sales", 2)]


def test_fast_sync_is_not_offered_where_it_is_on_already() -> None:
    writes = slow_mix(network=10.0, rfs_io=180.0, rfs_other=10.0).with_columns(
        transport=pl.lit("FASTSYNC", pl.Categorical)
    )
    assert list(recommend(writes)) == ["standby-io-outliers"]
    mixed = writes.with_columns(
        transport=pl.when(pl.col("msgid") == 20).then(pl.lit("SYNC")).otherwise(pl.lit("FASTSYNC")).cast(pl.Categorical)
    )
    assert "fast-sync" in recommend(mixed), "one slow write on a SYNC AFFIRM link still calls for it"


@pytest.mark.slow
@pytest.mark.parametrize(
    ("options", "why"),
    [
        ({"protection": "protection", "extras": True}, "the alert logs say the primary runs in Maximum Protection"),
        ({"format_version": "11.2"}, "An upgrade to 12c or later would make it one: with Fast Sync, slow writes"),
    ],
)
def test_simulated_sets_where_fast_sync_is_not_possible(tmp_path: Path, options: dict[str, object], why: str) -> None:
    simulate(tmp_path / "set", SimOptions(scenario="standby-io", writes=1500, threads=1, **options))  # type: ignore[arg-type]
    recs = document(analyze([str(tmp_path / "set")], Options()), 0)["summary"]["recommendations"]
    assert "fast-sync" not in [r["id"] for r in recs]
    (io,) = [r for r in recs if r["id"] in ("standby-redo-logs", "standby-io-outliers")]
    assert "Fast Sync is not an option here" in io["advice"] and why in io["advice"]
    assert io["metrics"]["fast_sync"] == "unavailable"
