"""True event times of remote writes: the scenarios' delays, and how SYNC and Fast Sync place the RFS's work."""

from __future__ import annotations

import itertools
from pathlib import Path
from random import Random

import pytest

from analyzer.simulate import SimResult
from analyzer.simulate.model import (
    EV_DISPATCH,
    EV_WRITE,
    IO_EVENTS,
    NOISE_NONE,
    NOISE_RFS_DISPATCH,
    SCENARIOS,
    Link,
)
from tests.simulate.sets import run, truth_of, us

T1 = 1_729_613_929_000_000


#: RFS waits of one write: (event, ela, end), in µs
Waits = tuple[tuple[int, int, int], ...]


def _exchanges(fastsync: bool, noise: int = NOISE_NONE, count: int = 200) -> list[tuple[int, int, int, int, Waits]]:
    """`count` writes of a link of the mixed scenario, one after the other: (t1, t2, t3, t4, waits)."""
    link = Link(SCENARIOS["mixed"], Random(5), fastsync=fastsync)
    out, t1 = [], T1
    for n in range(count):
        t2, t3, t4, waits = link.exchange(t1, 64, n % 50, noise)
        out.append((t1, t2, t3, t4, waits))
        t1 = t4 + 2_000
    return out


def slow_verdicts(result: SimResult) -> list[str]:
    return [r["verdict"] for r in truth_of(result) if us(r["total_ms"]) >= 30_000]


@pytest.mark.parametrize(("scenario", "verdict"), [("standby-io", "rfs_io"), ("network", "network")])
def test_scenario_dominance(tmp_path: Path, scenario: str, verdict: str) -> None:
    verdicts = slow_verdicts(run(tmp_path, scenario=scenario, writes=2000, threads=1))
    assert len(verdicts) >= 30
    assert verdicts.count(verdict) >= 0.8 * len(verdicts)


def test_log_switch_scenario_slows_the_first_writes_of_each_log(tmp_path: Path) -> None:
    result = run(tmp_path, scenario="log-switch", writes=3000, threads=1)
    rows = truth_of(result)
    first_seq = rows[0]["seq"]
    position: dict[str, int] = {}
    slow_positions = []
    for row in rows:
        index = position.get(row["seq"], 0)
        position[row["seq"]] = index + 1
        if us(row["total_ms"]) >= 30_000 and row["seq"] != first_seq:
            slow_positions.append((index, row["verdict"]))
    assert len(slow_positions) >= 20
    early = [v for i, v in slow_positions if i < 4]
    assert len(early) >= 0.8 * len(slow_positions)
    assert early.count("rfs_io") == len(early)


def test_baseline_is_mostly_fast(tmp_path: Path) -> None:
    rows = truth_of(run(tmp_path, writes=2000, threads=1))
    assert sum(us(r["total_ms"]) >= 30_000 for r in rows) <= 0.02 * len(rows)


def test_sync_waits_for_the_standby_redo_log_write_before_it_finishes() -> None:
    for t1, t2, t3, t4, waits in _exchanges(fastsync=False):
        assert t1 < t2 < t3 < t4
        assert all(t2 <= end - ela and end <= t3 for _, ela, end in waits)
        assert waits[-1][0] == EV_WRITE  # the write is the last wait before the finish


def test_fast_sync_finishes_first_and_writes_the_standby_redo_log_after() -> None:
    for t1, t2, t3, t4, waits in _exchanges(fastsync=True):
        assert t1 < t2 < t3 < t4
        io = [(event, end) for event, _, end in waits if event in IO_EVENTS]
        assert io and all(end > t3 for _, end in io)


@pytest.mark.parametrize("fastsync", [False, True])
def test_dispatch_noise_is_a_wait_before_the_rest_and_the_draws_repeat(fastsync: bool) -> None:
    noisy = _exchanges(fastsync, NOISE_RFS_DISPATCH, 20)
    assert all(waits[0][0] == EV_DISPATCH for *_, waits in noisy)
    assert noisy == _exchanges(fastsync, NOISE_RFS_DISPATCH, 20)  # the same seed, the same times


def test_a_bandwidth_bound_link_queues_requests_in_sustained_periods() -> None:
    link = Link(SCENARIOS["bandwidth"], Random(3))
    outs = []
    t1 = T1
    for n in range(6000):
        t2, _, t4, _ = link.exchange(t1, 16, n + 10, 0)
        outs.append(t2 - t1)
        t1 = t4 + 2_000
    queued = [d >= 40_000 for d in outs]  # a request that waited in a queue (median 150 ms)
    assert 0.01 * len(outs) < sum(queued) < 0.15 * len(outs)
    # sustained: a queued request follows a queued one (periods of 50 writes), unlike isolated stalls
    follows = sum(b for a, b in itertools.pairwise(queued) if a)
    assert follows >= 0.8 * sum(queued)
    # the other scenarios draw nothing for congestion: their link's draws are those of a profile without it
    plain = SCENARIOS["network"]
    assert (plain.congestion_rate, plain.congestion_writes, plain.congestion_ms) == (0.0, 0, 0.0)
