"""Insights on small hand-built writes tables: log switches, clustering, per-minute series, verdict, recommendations."""

from __future__ import annotations

from datetime import timedelta

import polars as pl
import pytest

from analyzer.base.schemas import TIMELINE
from analyzer.findings import insights, switching
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


def recommend(writes: pl.DataFrame, versions: tuple[str, ...] = ()) -> dict[str, insights.Recommendation]:
    recs = insights.recommendations(writes, THRESHOLD, switching.analyze_log_switches(writes), versions)
    assert len({r.id for r in recs}) == len(recs)
    return {r.id: r for r in recs}


def slow_mix(network: float, rfs_io: float, rfs_other: float) -> pl.DataFrame:
    """Ten fast writes and two slow ones with the given components, no log switch."""
    rows = [row(i, float(i)) for i in range(10)]
    rows += [row(i, float(i), network=network, rfs_io=rfs_io, rfs_other=rfs_other) for i in (20, 30)]
    return frame(rows)


def test_standby_io_calls_for_standby_redo_logs_and_fast_sync() -> None:
    recs = recommend(slow_mix(network=10.0, rfs_io=180.0, rfs_other=10.0))
    assert list(recs) == ["standby-redo-logs", "fast-sync"]
    srl, fast = recs["standby-redo-logs"], recs["fast-sync"]
    assert "single member" in srl.advice and "fastest available disk group" in srl.advice
    assert "SYNC NOAFFIRM" in fast.title and "data loss" in fast.advice  # the trade-off is stated
    assert srl.evidence.startswith(
        "From 2 slow writes only, treat as a hint: standby I/O (RFS write) was 90% of slow-write time (360 ms of 400 ms"
    )
    assert srl.metrics["share"] == 0.9
    assert (srl.metrics["slow_writes"], srl.metrics["largest_in"]) == (2, 2)


def test_fast_sync_says_when_the_version_is_too_old() -> None:
    writes = slow_mix(network=10.0, rfs_io=180.0, rfs_other=10.0)
    assert "11.2.0.4.0" in recommend(writes, ("11.2.0.4.0", "19.22.0.0.0"))["fast-sync"].advice
    assert "where Fast Sync is not available" not in recommend(writes, ("19.22.0.0.0",))["fast-sync"].advice


def test_network_calls_for_socket_buffers_sdu_and_the_path() -> None:
    recs = recommend(slow_mix(network=180.0, rfs_io=15.0, rfs_other=5.0))
    assert list(recs) == ["network"]
    advice = recs["network"].advice
    assert "3 x the bandwidth-delay product" in advice and "SDU=65535" in advice and "network path" in advice
    assert recs["network"].evidence.startswith("From 2 slow writes only, treat as a hint: network was 90% of")


def test_rfs_other_calls_for_standby_cpu() -> None:
    recs = recommend(slow_mix(network=10.0, rfs_io=10.0, rfs_other=180.0))
    assert list(recs) == ["standby-cpu"]
    assert "CPU" in recs["standby-cpu"].advice


def test_two_major_components_give_both_sets_largest_first() -> None:
    """The MAA paper's two examples: one write bound by standby I/O, one by the network."""
    rows = [row(i, float(i)) for i in range(10)]
    rows += [row(20, 20.0, network=0.0, rfs_io=163.0, rfs_other=0.3), row(30, 30.0, network=137.0, rfs_io=0.6)]
    assert list(recommend(frame(rows))) == ["standby-redo-logs", "fast-sync", "network"]


def test_a_minor_component_gets_no_recommendation() -> None:
    recs = recommend(slow_mix(network=60.0, rfs_io=130.0, rfs_other=10.0))  # network 30%: below 40%
    assert "network" not in recs and "standby-cpu" not in recs


def test_one_sided_slow_writes_give_no_breakdown_advice() -> None:
    """Slow writes seen on the primary only have no components: no component advice from them."""
    rows = [row(i, float(i)) for i in range(10)]
    rows += [row(i, float(i), network=10.0, rfs_io=180.0, rfs_other=10.0, matched=False) for i in (20, 30)]
    assert recommend(frame(rows)) == {}


def test_no_slow_write_no_recommendation() -> None:
    """Standby I/O is all of the time, but nothing is slow: nothing to fix."""
    writes = frame([row(i, float(i), network=0.0, rfs_io=50.0, rfs_other=0.0) for i in range(20)])
    assert recommend(writes) == {}


def test_clustered_switches_call_for_larger_redo_logs() -> None:
    writes = steady(600, 60, slow_at={60, 120, 180, 240, 300}, **SLOW_IO)
    recs = recommend(writes)
    assert next(iter(recs)) == "redo-log-size"
    rec = recs["redo-log-size"]
    assert "5 of 5 slow writes were sent within 2 s of one of 9 log switch(es)" in rec.evidence
    assert "every 60 s (median" in rec.evidence
    assert "4 GB" in rec.advice and "20 minutes" in rec.advice
    assert (rec.metrics["slow_near"], rec.metrics["switches"]) == (5, 9)


def test_unclustered_switches_do_not_call_for_larger_redo_logs() -> None:
    writes = steady(600, 60, slow_at={30, 90, 150, 210, 270}, **SLOW_IO)
    assert "redo-log-size" not in recommend(writes)


def test_a_recommendation_from_enough_slow_writes_is_no_mere_hint() -> None:
    """Ten slow writes or more: the evidence stands without the small-sample warning; fewer: it says so."""
    rows = [row(i, float(i)) for i in range(10)]
    rows += [row(i, float(i), network=180.0, rfs_io=15.0, rfs_other=5.0) for i in range(20, 20 + insights.FEW_SLOW)]
    evidence = recommend(frame(rows))["network"].evidence
    assert evidence.startswith("network was 90% of slow-write time") and "hint" not in evidence
    one = recommend(frame([*rows[:10], rows[10]]))["network"].evidence
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
    assert list(recommend(writes)) == ["standby-redo-logs"]
    mixed = writes.with_columns(
        transport=pl.when(pl.col("msgid") == 20).then(pl.lit("SYNC")).otherwise(pl.lit("FASTSYNC")).cast(pl.Categorical)
    )
    assert "fast-sync" in recommend(mixed), "one slow write on a SYNC AFFIRM link still calls for it"
