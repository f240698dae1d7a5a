"""Insights on small hand-built writes tables: log switches, clustering, per-minute series, verdict, recommendations."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import polars as pl
import pytest

from analyzer import insights
from analyzer.api import Options, analyze
from analyzer.schemas import OBSERVED, TIMELINE, WRITES
from analyzer.simulate.options import SimOptions
from analyzer.simulate.runner import simulate

T0 = datetime(2024, 1, 1, 12, 0, tzinfo=UTC)
THRESHOLD = 100.0


def row(
    i: int,
    at_s: float,
    *,
    thread: int = 1,
    seq: int = 10,
    network: float = 1.0,
    rfs_io: float = 0.5,
    rfs_other: float = 0.1,
    matched: bool = True,
) -> dict[str, object]:
    """One write as the attribute stage makes it (components in ms, sent `at_s` seconds after T0).

    Not matched: seen on the primary only, so it has a total and nothing else.
    """
    parts = {"network": network, "rfs_io": rfs_io, "rfs_other": rfs_other}
    total = network + rfs_io + rfs_other
    standby = {
        "rfs_ms": rfs_io + rfs_other,
        "network_ms": network,
        "rfs_io_ms": rfs_io,
        "rfs_other_ms": rfs_other,
        "verdict": max(parts, key=lambda k: parts[k]),
        "standby_file": "stby/rfs.trc",
        "standby_line": 20 + i,
    }
    return {
        "thread": thread,
        "seq": seq,
        "msgid": i,
        "oper": "Write",
        "sent_at": T0 + timedelta(seconds=at_s),
        "total_ms": total,
        **(standby if matched else dict.fromkeys(standby)),
        "resolution_ms": 2.0,
        "matched": matched,
        "slow": total >= THRESHOLD,
        "rfs_io_waits": 1,
        "warning": None,
        "primary_file": "prim/nss.trc",
        "primary_line": 10 + i,
        "primary_host": "prim",
        "standby_host": "stby",
    }


def frame(rows: list[dict[str, object]]) -> pl.DataFrame:
    return pl.DataFrame(rows, schema=WRITES)


def steady(seconds: int, log_every_s: int, slow_at: set[int], **slow_parts: float) -> pl.DataFrame:
    """One write a second on thread 1, a new log every `log_every_s` s; writes at `slow_at` get `slow_parts`."""
    rows = [row(i, float(i), seq=10 + i // log_every_s, **(slow_parts if i in slow_at else {})) for i in range(seconds)]
    return frame(rows)


SLOW_IO = {"rfs_io": 250.0}


# --- log switches ---


def test_log_switch_is_a_change_of_seq_on_one_thread() -> None:
    writes = frame(
        [
            row(1, 0.0, thread=1, seq=10),
            row(2, 1.0, thread=2, seq=20),
            row(3, 2.0, thread=1, seq=10),
            row(4, 3.0, thread=2, seq=20),  # thread 2 never switches, although thread 1 does
            row(5, 4.0, thread=1, seq=11),
        ]
    )
    switches = insights.log_switches(writes).select("thread", "from_seq", "to_seq", "at", "primary_db", "source")
    assert switches.rows() == [(1, 10, 11, T0 + timedelta(seconds=4), None, "writes")]


def test_writes_near_a_switch_of_their_own_thread_are_flagged() -> None:
    writes = frame(
        [
            row(1, 0.0, seq=10),
            row(2, 8.5, seq=10),  # 1.5 s before the switch: near
            row(3, 10.0, seq=11),  # the switch itself
            row(4, 13.0, seq=11),  # 3 s after: not near
            row(5, 10.5, thread=2, seq=20),  # near in time, but thread 2 did not switch
        ]
    )
    flagged = insights.flag_near_switch(writes, insights.log_switches(writes), window_s=2.0)
    near = {r["msgid"]: r["switch_at"] is not None for r in flagged.iter_rows(named=True)}
    assert near == {1: False, 2: True, 3: True, 4: False, 5: False}


def test_slow_writes_at_switches_are_a_cluster() -> None:
    """A new log every 60 s; the first write of each new log pays 250 ms of standby I/O (the Figure 3 effect)."""
    writes = steady(600, 60, slow_at={60, 120, 180, 240, 300}, **SLOW_IO)
    sw = insights.analyze_log_switches(writes)
    assert sw.switches.height == 9
    assert sw.window_s == 2.0
    assert sw.interval_min == 1.0
    assert (sw.slow_near, sw.slow_elsewhere, sw.clustered) == (5, 0, True)
    near, rest = sw.comparison.to_dicts()
    assert (near["count"], near["slow"], rest["count"], rest["slow"]) == (9 * 5, 5, 600 - 45, 0)
    assert near["max_ms"] == pytest.approx(251.1)
    assert sw.finding.startswith("Slow writes cluster at log switches: 5 of 5 slow writes were sent within 2 s")
    assert "Figure 3" in sw.finding
    per_switch = sw.switches.filter(pl.col("to_seq") == 11).row(0, named=True)
    assert (per_switch["writes_near"], per_switch["slow_near"]) == (5, 1)


def test_slow_writes_away_from_switches_are_no_cluster() -> None:
    writes = steady(600, 60, slow_at={30, 90, 150, 210, 270}, **SLOW_IO)
    sw = insights.analyze_log_switches(writes)
    assert (sw.slow_near, sw.slow_elsewhere, sw.clustered) == (0, 5, False)
    assert sw.finding.startswith("Slow writes do not cluster at log switches: 0 of 5 slow writes")


def test_one_slow_write_at_a_switch_is_no_cluster() -> None:
    writes = steady(600, 60, slow_at={60}, **SLOW_IO)
    sw = insights.analyze_log_switches(writes)
    assert (sw.slow_near, sw.clustered) == (1, False)


def test_as_many_slow_writes_elsewhere_is_no_cluster() -> None:
    """Near a switch writes are slow twice as often as elsewhere: below the 3x lift, so no cluster."""
    writes = steady(600, 60, slow_at={60, 120, 30, 90, 150, 210, 270, 330, 390, 450, 510, 570}, **SLOW_IO)
    sw = insights.analyze_log_switches(writes)
    assert (sw.slow_near, sw.slow_elsewhere) == (2, 10)
    assert not sw.clustered


def test_no_switch_at_all() -> None:
    sw = insights.analyze_log_switches(steady(120, 1000, slow_at={5, 6}, **SLOW_IO))
    assert sw.switches.height == 0
    assert (sw.clustered, sw.interval_min, sw.slow_near) == (False, None, 0)
    assert sw.finding == "No log switch (change of seq on a thread) among the writes."


def test_window_shrinks_when_logs_switch_every_few_seconds() -> None:
    """Logs every 5 s: +-2 s would call most writes 'near'; the window becomes a tenth of the interval."""
    writes = frame([row(i, i * 0.1, seq=10 + i // 50) for i in range(500)])
    sw = insights.analyze_log_switches(writes)
    assert sw.window_s == pytest.approx(0.5)
    assert sw.comparison["count"].to_list() == [9 * 11, 500 - 99]  # 5 writes either side and the switch itself


def test_top_writes_say_how_far_from_a_switch() -> None:
    writes = steady(600, 60, slow_at={61, 300}, **SLOW_IO)
    sw = insights.analyze_log_switches(writes)
    top = insights.top_writes(writes, 2, sw)
    assert top["msgid"].to_list() == [61, 300]  # ties on total: earlier first
    assert top["switch_at"].to_list() == [T0 + timedelta(seconds=60), T0 + timedelta(seconds=300)]


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
    recs = insights.recommendations(writes, THRESHOLD, insights.analyze_log_switches(writes), versions)
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
        "From 2 slow writes only, treat as a hint: standby I/O (RFS write) was 90% of slow-write time (360.0 of 400.0"
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
    switches = insights.log_switches(writes)
    assert switches.select("primary_db", "thread", "from_seq", "to_seq").rows() == [("sales", 1, 10, 11)]
    flagged = insights.flag_near_switch(writes, switches)
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


def _observed(rows: list[tuple[str, int, int, datetime]], db: str | None = None) -> pl.DataFrame:
    return pl.DataFrame([(kind, db, t, s, at) for kind, t, s, at in rows], schema=OBSERVED, orient="row")


def test_alert_log_switches_and_srl_selections_join_those_of_the_writes() -> None:
    """An alert-log switch gives the switch its time; one the writes do not show is added; SRL selections
    of both sides come beside it; entries far from the writes do not count."""
    w = frame([row(1, 0.0, seq=10), row(2, 10.0, seq=11), row(3, 11.0, seq=11)])
    logged = T0 + timedelta(seconds=9.9)
    observed = _observed(
        [
            ("log_switch", 1, 11, logged),
            ("srl_selected", 1, 11, logged + timedelta(milliseconds=20)),
            ("rfs_selected", 1, 11, logged + timedelta(milliseconds=5)),
            ("log_switch", 1, 12, T0 + timedelta(seconds=12)),  # no write of seq 12
            ("log_switch", 1, 9, T0 - timedelta(hours=3)),  # long before the writes
        ]
    )
    sw = insights.log_switches(w, observed)
    rows = sw.select("to_seq", "from_seq", "at", "source", "inferred_at", "srl_selected_at").rows()
    assert rows == [
        (11, 10, logged, "alert log", T0 + timedelta(seconds=10), logged + timedelta(milliseconds=20)),
        (12, 11, T0 + timedelta(seconds=12), "alert log", None, None),
    ]
    assert sw["rfs_selected_at"][0] == logged + timedelta(milliseconds=5)


def test_without_alert_logs_the_switches_come_from_the_writes() -> None:
    w = frame([row(1, 0.0, seq=10), row(2, 10.0, seq=11)])
    sw = insights.log_switches(w, _observed([]))
    assert sw.select("to_seq", "source", "at").rows() == [(11, "writes", T0 + timedelta(seconds=10))]


@pytest.mark.slow
def test_simulated_alert_logs_give_every_switch_of_the_truth(tmp_path: Path) -> None:
    """`--extras` alert logs: each new log of the truth is a switch of the alert log, just before its
    first write, with the standby redo log selected on both sides."""
    simulate(tmp_path / "set", SimOptions(writes=1200, threads=2, extras=True, log_switch_every=150, seed=9))
    truth = pl.read_csv(tmp_path / "set" / "truth.csv", schema_overrides={"sent_at": pl.String})
    first = truth.with_columns(at=pl.col("sent_at").str.to_datetime(time_zone="UTC", time_unit="us"))
    first = first.group_by("thread", "seq").agg(pl.col("at").min()).sort("thread", "seq")
    sw = insights.switch_analysis(analyze([str(tmp_path / "set")], Options())).switches
    expected = first.filter(pl.col("seq") != pl.col("seq").min().over("thread"))
    got = sw.join(expected, left_on=["thread", "to_seq"], right_on=["thread", "seq"], suffix="_first")
    assert got.height == expected.height == sw.height
    assert (got["source"] == "alert log").all()
    lead = (got["at_first"] - got["at"]).dt.total_microseconds()
    assert lead.min() > 0 and lead.max() < 1000  # LGWR switched just before the first write of the log
    assert got["srl_selected_at"].null_count() == 0 and got["rfs_selected_at"].null_count() == 0


def test_alert_log_switches_keep_to_their_primary_database() -> None:
    """Two primaries on thread 1: the alert log of sales names its switch; the RFS selection of the
    standby's alert log names no primary and, with two, stays apart."""
    w = frame([row(1, 0.0, seq=10) | {"primary_db": "sales"}, row(2, 0.5, seq=10) | {"primary_db": "hr"}])
    logged = T0 + timedelta(seconds=1)
    observed = pl.concat(
        [_observed([("log_switch", 1, 11, logged)], "sales"), _observed([("rfs_selected", 1, 11, logged)], "salesdr")]
    )
    sw = insights.log_switches(w, observed).select("primary_db", "to_seq", "source", "rfs_selected_at")
    assert sw.rows() == [("sales", 11, "alert log", None), (None, 11, "standby redo log selection", logged)]
