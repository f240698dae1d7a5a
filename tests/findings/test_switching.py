"""Log switches (from the writes and the alert logs), the writes near them, and whether slow writes cluster there."""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path

import polars as pl
import pytest

from analyzer.api import Options, analyze
from analyzer.base.schemas import OBSERVED
from analyzer.findings import switching
from analyzer.simulate.options import SimOptions
from analyzer.simulate.runner import simulate
from tests.write_rows import SLOW_IO, T0, frame, row, steady


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
    switches = switching.log_switches(writes).select("thread", "from_seq", "to_seq", "at", "primary_db", "source")
    assert switches.rows() == [(1, 10, 11, T0 + timedelta(seconds=4), None, "writes")]


def test_writes_sent_in_the_same_microsecond_switch_in_msgid_order() -> None:
    """Two writes of a thread share a send time across a switch: msgid orders them, whatever their row order."""
    rows = [row(1, 0.0, seq=10), row(3, 1.0, seq=11), row(2, 1.0, seq=10), row(4, 2.0, seq=11)]
    for ordered in (frame(rows), frame(rows).sort("sent_at", "msgid", descending=[False, True])):
        switches = switching.log_switches(ordered).select("from_seq", "to_seq", "at")
        assert switches.rows() == [(10, 11, T0 + timedelta(seconds=1))]


def test_switches_of_writes_in_send_order_equal_those_of_a_shuffled_copy() -> None:
    """The usual case (every write of a thread at its own time, in send order) is read without a sort:
    it finds the same switches as the sort of a shuffled copy."""
    writes = steady(600, 60, slow_at=set())
    shuffled = writes.sample(fraction=1.0, shuffle=True, seed=7)
    assert switching.log_switches(writes).equals(switching.log_switches(shuffled))
    assert switching.log_switches(writes).height == 9


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
    flagged = switching.flag_near_switch(writes, switching.log_switches(writes), window_s=2.0)
    near = {r["msgid"]: r["switch_at"] is not None for r in flagged.iter_rows(named=True)}
    assert near == {1: False, 2: True, 3: True, 4: False, 5: False}


def test_slow_writes_at_switches_are_a_cluster() -> None:
    """A new log every 60 s; the first write of each new log pays 250 ms of standby I/O (the Figure 3 effect)."""
    writes = steady(600, 60, slow_at={60, 120, 180, 240, 300}, **SLOW_IO)
    sw = switching.analyze_log_switches(writes)
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
    sw = switching.analyze_log_switches(writes)
    assert (sw.slow_near, sw.slow_elsewhere, sw.clustered) == (0, 5, False)
    assert sw.finding.startswith("Slow writes do not cluster at log switches: 0 of 5 slow writes")


def test_one_slow_write_at_a_switch_is_no_cluster() -> None:
    writes = steady(600, 60, slow_at={60}, **SLOW_IO)
    sw = switching.analyze_log_switches(writes)
    assert (sw.slow_near, sw.clustered) == (1, False)


def test_as_many_slow_writes_elsewhere_is_no_cluster() -> None:
    """Near a switch writes are slow twice as often as elsewhere: below the 3x lift, so no cluster."""
    writes = steady(600, 60, slow_at={60, 120, 30, 90, 150, 210, 270, 330, 390, 450, 510, 570}, **SLOW_IO)
    sw = switching.analyze_log_switches(writes)
    assert (sw.slow_near, sw.slow_elsewhere) == (2, 10)
    assert not sw.clustered


def test_no_switch_at_all() -> None:
    sw = switching.analyze_log_switches(steady(120, 1000, slow_at={5, 6}, **SLOW_IO))
    assert sw.switches.height == 0
    assert (sw.clustered, sw.interval_min, sw.slow_near) == (False, None, 0)
    assert sw.finding == "No log switch (change of seq on a thread) among the writes."


def test_window_shrinks_when_logs_switch_every_few_seconds() -> None:
    """Logs every 5 s: +-2 s would call most writes 'near'; the window becomes a tenth of the interval."""
    writes = frame([row(i, i * 0.1, seq=10 + i // 50) for i in range(500)])
    sw = switching.analyze_log_switches(writes)
    assert sw.window_s == pytest.approx(0.5)
    assert sw.comparison["count"].to_list() == [9 * 11, 500 - 99]  # 5 writes either side and the switch itself


def test_switches_under_a_second_apart_give_a_window_of_a_tenth_of_their_interval() -> None:
    """Logs every 0.8 s (the interval is not cut to whole seconds, which made it 0 and the window 0 s)."""
    writes = frame([row(i, i * 0.01, seq=10 + i // 80) for i in range(800)])
    sw = switching.analyze_log_switches(writes)
    assert sw.interval_min == pytest.approx(0.8 / 60)
    assert sw.window_s == pytest.approx(0.08)
    assert "within 0.08 s of one of 9 log switch(es)" in sw.finding


def test_top_writes_say_how_far_from_a_switch() -> None:
    writes = steady(600, 60, slow_at={61, 300}, **SLOW_IO)
    sw = switching.analyze_log_switches(writes)
    top = switching.top_writes(writes, 2, sw)
    assert top["msgid"].to_list() == [61, 300]  # ties on total: earlier first
    assert top["switch_at"].to_list() == [T0 + timedelta(seconds=60), T0 + timedelta(seconds=300)]


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
    sw = switching.log_switches(w, observed)
    rows = sw.select("to_seq", "from_seq", "at", "source", "inferred_at", "srl_selected_at").rows()
    assert rows == [
        (11, 10, logged, "alert log", T0 + timedelta(seconds=10), logged + timedelta(milliseconds=20)),
        (12, 11, T0 + timedelta(seconds=12), "alert log", None, None),
    ]
    assert sw["rfs_selected_at"][0] == logged + timedelta(milliseconds=5)


def test_without_alert_logs_the_switches_come_from_the_writes() -> None:
    w = frame([row(1, 0.0, seq=10), row(2, 10.0, seq=11)])
    sw = switching.log_switches(w, _observed([]))
    assert sw.select("to_seq", "source", "at").rows() == [(11, "writes", T0 + timedelta(seconds=10))]


@pytest.mark.slow
def test_simulated_alert_logs_give_every_switch_of_the_truth(tmp_path: Path) -> None:
    """`--extras` alert logs: each new log of the truth is a switch of the alert log, just before its
    first write, with the standby redo log selected on both sides."""
    simulate(tmp_path / "set", SimOptions(writes=1200, threads=2, extras=True, log_switch_every=150, seed=9))
    truth = pl.read_csv(tmp_path / "set" / "truth.csv", schema_overrides={"sent_at": pl.String})
    first = truth.with_columns(at=pl.col("sent_at").str.to_datetime(time_zone="UTC", time_unit="us"))
    first = first.group_by("thread", "seq").agg(pl.col("at").min()).sort("thread", "seq")
    sw = switching.switch_analysis(analyze([str(tmp_path / "set")], Options())).switches
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
    sw = switching.log_switches(w, observed).select("primary_db", "to_seq", "source", "rfs_selected_at")
    assert sw.rows() == [("sales", 11, "alert log", None), (None, 11, "standby redo log selection", logged)]


def test_writes_with_narrow_keys_and_categorical_databases_give_the_switches_of_wide_text_ones(tmp_path: Path) -> None:
    """The writes table holds thread and seq as Int32 and primary_db as categorical: the switches, the
    writes near them and the comparison equal those of the same writes with Int64 keys and text databases."""
    simulate(tmp_path / "set", SimOptions(format_version="19c", writes=900, log_switch_every=150, threads=2, seed=5))
    a = analyze([str(tmp_path / "set")])
    narrow = a.writes
    assert (narrow.schema["thread"], narrow.schema["primary_db"]) == (pl.Int32, pl.Categorical)
    wide = narrow.with_columns(pl.col("thread", "seq", "msgid").cast(pl.Int64), pl.col("primary_db").cast(pl.String))
    found, expected = switching.analyze_log_switches(narrow), switching.analyze_log_switches(wide)
    assert found.switches.height >= 6
    assert found.switches.equals(expected.switches)
    assert found.comparison.equals(expected.comparison)
    assert (found.slow_near, found.finding) == (expected.slow_near, expected.finding)
