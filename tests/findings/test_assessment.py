"""The assessment before anything else: healthy, isolated outliers or systemic, with its numbers; on
hand-built writes and on simulated sets whose truth says which they are."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from analyzer.api import Options, analyze
from analyzer.findings import switching
from analyzer.findings.assessment import HEALTHY, ISOLATED, NOT_ASSESSED, SYSTEMIC, assess, bursts
from analyzer.report.model import document
from analyzer.simulate import SimOptions, simulate
from tests.write_rows import THRESHOLD, frame, row


def _judge(rows: list[dict[str, object]]):  # type: ignore[no-untyped-def]
    writes = frame(rows)
    return assess(writes, THRESHOLD, switching.analyze_log_switches(writes))


def test_two_isolated_outliers_of_four_thousand_are_healthy() -> None:
    """The issue's baseline: p99 near the round trip, 2 of 4,000 writes slow: no remedy, what was seen."""
    rows = [row(i, i * 0.01) for i in range(4000)]
    rows[1000] = row(1000, 10.0, rfs_io=120.0)
    rows[3000] = row(3000, 30.0, network=135.0)
    a = _judge(rows)
    assert a.word == HEALTHY and a.healthy
    assert (a.writes, a.slow_writes, a.typical_ms, a.p99_ms, a.outlier_limit_ms) == (4000, 2, 1.6, 1.6, 6.4)
    # written as finely as the stamps allow (2 ms here)
    assert a.reason.startswith("Healthy: p99 2 ms is within 4 x the typical round trip (p50 2 ms); 2 of 4,000")
    assert "never 3 one after the other" in a.reason
    assert (
        "What was seen: 136 ms at 12:00:30 UTC, mostly network; 121 ms at 12:00:10 UTC, mostly standby I/O" in a.reason
    )
    assert any("_long_log_write_warning_threshold" in w for w in a.watch)


def test_a_few_scattered_slow_writes_are_isolated_outliers() -> None:
    rows = [row(i, i * 0.01) for i in range(2000)]
    for i in (100, 700, 1300, 1900):  # 0.2%: more than rare, scattered, the body near the round trip
        rows[i] = row(i, i * 0.01, rfs_io=300.0)
    a = _judge(rows)
    assert a.word == ISOLATED and not a.clustered and a.bursts == 0


def test_the_same_share_in_a_run_is_systemic() -> None:
    rows = [row(i, i * 0.01) for i in range(2000)]
    for i in (700, 701, 702, 703):  # one after the other: a stall, not chance
        rows[i] = row(i, i * 0.01, network=300.0)
    a = _judge(rows)
    assert a.word == SYSTEMIC and a.clustered
    assert (a.bursts, a.in_bursts) == (1, 4) and a.largest_burst is not None and a.largest_burst.writes == 4
    assert "4 of them in 1 burst of slow writes one after the other (the largest 4 within a second" in a.reason


def test_one_percent_slow_is_systemic_whatever_the_spread() -> None:
    rows = [row(i, i * 0.01) for i in range(1000)]
    for i in range(0, 1000, 90):
        rows[i] = row(i, i * 0.01, rfs_io=200.0)
    a = _judge(rows)
    assert a.word == SYSTEMIC and a.slow_share >= 0.01
    assert "Systemic: p99 201 ms is 126 x the typical round trip (p50 2 ms): 12 of the 1,000 redo writes" in a.reason


def test_fewer_than_ten_scattered_slow_writes_are_outliers_whatever_their_share() -> None:
    """The MAA paper's sample: 2 of 66 redo writes slow (3%), one of each cause, minutes apart: two
    outliers, not a systemic problem; 9 scattered are still outliers, 10 are systemic."""
    rows = [row(i, float(i)) for i in range(66)]
    rows[10] = row(10, 10.0, rfs_io=160.0)
    rows[40] = row(40, 40.0, network=135.0)
    a = _judge(rows)
    assert a.word == ISOLATED and a.slow_share > 0.01 and not a.clustered
    assert a.reason.startswith("Isolated outliers: p99 ")
    for slow, word in ((9, ISOLATED), (10, SYSTEMIC)):
        rows = [row(i, float(i), rfs_io=200.0 if i % 20 == 0 and i < 20 * slow else 0.5) for i in range(1000)]
        assert _judge(rows).word == word, slow


def test_a_wide_tail_below_the_threshold_is_not_healthy() -> None:
    rows = [row(i, i * 0.01, network=30.0 if i % 20 == 0 else 1.0) for i in range(1000)]
    a = _judge(rows)
    assert a.word == ISOLATED and a.slow_writes == 0 and a.outliers == 50
    assert "none of the 1,000 redo writes reached 100 ms" in a.reason


def test_no_total_is_not_assessed() -> None:
    a = _judge([row(1, 0.0, matched=False) | {"total_ms": None, "slow": None}])
    assert a.word == NOT_ASSESSED and a.watch == ()


def test_bursts_are_runs_on_a_thread_not_across_threads() -> None:
    rows = [row(i, float(i), thread=1 + i % 2, rfs_io=200.0 if i in (4, 5, 6, 7) else 0.5) for i in range(20)]
    assert bursts(frame(rows)) == []  # alternate threads: two slow writes in a row on each, no run of three
    rows = [row(i, float(i), rfs_io=200.0 if i in (4, 5, 6) else 0.5) for i in range(20)]
    (found,) = bursts(frame(rows))
    assert found.writes == 3 and (found.last - found.first).total_seconds() == 2.0


@pytest.mark.slow
@pytest.mark.parametrize(
    ("options", "word"),
    [
        ({"scenario": "baseline"}, HEALTHY),
        ({"scenario": "standby-io"}, SYSTEMIC),
        ({"scenario": "bandwidth"}, SYSTEMIC),
        ({"scenario": "mixed", "format_version": "11.2"}, SYSTEMIC),
    ],
)
def test_simulated_sets_get_the_word_their_truth_calls_for(
    tmp_path: Path, options: dict[str, object], word: str
) -> None:
    result = simulate(tmp_path / "set", SimOptions(writes=2000, threads=1, **options))  # type: ignore[arg-type]
    truth = pl.read_csv(result.truth)
    slow = truth.filter(pl.col("total_ms") >= THRESHOLD).height
    summary = document(analyze([str(tmp_path / "set")], Options()), 0)["summary"]
    judged = summary["assessment"]
    assert judged["word"] == word and judged["slow_writes"] == slow and judged["writes"] == truth.height
    assert judged["p99_ms"] == pytest.approx(float(truth["total_ms"].quantile(0.99, "nearest")), abs=0.002)  # type: ignore[arg-type]
    assert summary["configurations"][0]["assessment"] == judged
    if word == HEALTHY:
        assert summary["recommendations"] == [] and judged["watch"]
    else:
        assert summary["recommendations"]
