"""The comparisons in words: each sentence says its numbers, and what they call for."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from analyzer.companions.awr import read_awr
from analyzer.companions.oratcptest import read_baseline
from analyzer.findings import crosscheck
from analyzer.findings.compare import BandwidthDelay, Checks, DistanceCheck, Distribution, RunCheck, WhatIf
from analyzer.findings.reconcile import AwrCheck, EventCheck, HistogramBucket, HistogramCheck, Impact

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"


def _dist(writes: int, slow: int, p99: float) -> Distribution:
    return Distribution(writes, slow, 5.0, 1.0, 2.0, p99, p99 * 2)


def test_fast_sync_says_how_slow_writes_and_p99_would_fall() -> None:
    w = WhatIf(_dist(4000, 160, 495.0), _dist(4000, 9, 12.0), 39_076.3)
    text = crosscheck.fast_sync_sentence(w)
    assert text.startswith("With Fast Sync, slow writes would fall from 160 to 9 and p99 go from 495 ms to 12.0 ms")
    assert "4,000 writes seen on both sides" in text and "39,076 ms of slow-write time" in text
    partly = crosscheck.fast_sync_sentence(WhatIf(_dist(10, 2, 150.0), _dist(10, 0, 3.0), 290.0, already=4))
    assert "the 4 already on Fast Sync count as they were" in partly


def test_fast_sync_says_when_every_write_is_on_it_already() -> None:
    d = _dist(800, 0, 3.0)
    assert "already went over Fast Sync" in crosscheck.fast_sync_sentence(WhatIf(d, d, 0.0, already=800))


def test_the_round_trip_what_if_names_its_run_and_what_stays() -> None:
    w = WhatIf(_dist(100, 5, 302.0), _dist(100, 5, 302.0), 0.5, round_trip_ms=4.797, source="oratcptest run 1 of x.txt")
    text = crosscheck.round_trip_sentence(w)
    assert text.startswith("At the 4.8 ms oratcptest round trip (run 1 of x.txt), slow writes would stay at 5")
    assert "p99 stay at 302 ms" in text and "cost 0.5 ms of slow-write time" in text


def test_each_kind_of_run_is_said_with_what_it_was_set_beside() -> None:
    sync_write = read_baseline(FIXTURES / "oratcptest" / "sync-disk-write.txt")[0]
    check = RunCheck(sync_write, "total", 1.402, 0.740, 1.9, 302.0, 3953, 132, 39_381.0, 0.601)
    text = crosscheck.run_sentence(check)
    assert "total p50 1.9 ms (p99 302 ms) against a 1.4 ms oratcptest round trip with disk write" in text
    assert "standby I/O p50 0.601 ms against its 0.74 ms disk write" in text
    assert "132 slow writes spent 39,381 ms above it" in text
    no_write = read_baseline(FIXTURES / "oratcptest" / "sync-no-write.txt")[0]
    calm = crosscheck.run_sentence(RunCheck(no_write, "network", 4.797, None, 1.2, 2.2, 0, 0, 0.0))
    assert "network p50 1.2 ms" in calm and "without disk write; no slow write went above it" in calm
    asynchronous = read_baseline(FIXTURES / "oratcptest" / "async.txt")[0]
    assert "throughput 231.0 MiB/s (ASYNC" in crosscheck.run_sentence(RunCheck(asynchronous, None, None, None))


def test_a_buffer_below_three_times_the_product_is_told_what_to_set() -> None:
    short = BandwidthDelay(
        104.2 * 2**20,
        "oratcptest run 1",
        False,
        21.0,
        "the writes' network p50",
        2.2e6,
        6.6e6,
        262_144,
        "oratcptest run 1",
    )
    text = crosscheck.bdp_sentence(short)
    assert "a lower bound of the bandwidth" in text and "3 x BDP = 6.29 MiB" in text
    assert "send buffer of 256 KiB is below it" in text and "RECV_BUF_SIZE and SEND_BUF_SIZE" in text
    enough = BandwidthDelay(2.4e8, "oratcptest run 1", True, 1.2, "p50", 2.9e5, 8.7e5, 3 * 2**20, "oratcptest run 1")
    assert crosscheck.bdp_sentence(enough).endswith("send buffer of 3 MiB reaches it.")


def _awr_check(**changes: object) -> AwrCheck:
    report = read_awr(FIXTURES / "awr" / "awr-19c-sim-primary.txt")
    events = (
        EventCheck("log file sync", "foreground", 118_204, 14.4, 1702.0),
        EventCheck("SYNC Remote Write", "background", 119_530, 12.49, 1493.0, "total", 600, 14.46),
    )
    values: dict[str, object] = {
        "report": report,
        "side": "primary",
        "begin_utc": datetime(2024, 10, 22, 15, 30, tzinfo=UTC),
        "end_utc": datetime(2024, 10, 22, 16, 0, tzinfo=UTC),
        "zone_source": "+02:00, the zone of prim01's trace files",
        "host": "prim01.dbnet.example",
        "first_write": datetime(2024, 10, 22, 15, 48, 15, tzinfo=UTC),
        "last_write": datetime(2024, 10, 22, 15, 48, 25, tzinfo=UTC),
        "overlap_s": 10.0,
        "writes": 600,
        "events": events,
        "impact": Impact(14.4, 0.518, 12.49),
        "fast_sync_writes": 0,
        "destinations": ("salesdr",),
    }
    values.update(changes)
    return AwrCheck(**values)  # type: ignore[arg-type]


def test_a_report_says_its_window_in_utc_and_how_the_traces_cover_it() -> None:
    check = _awr_check()
    heading = crosscheck.awr_heading(check)
    assert heading.startswith("awr-19c-sim-primary.txt: AWR report (text) of SALES, instance sales1, host prim01")
    assert "(PRIMARY, 19.0.0.0.0), snapshots 7301-7302" in heading
    assert "2024-10-22 15:30:00 to 2024-10-22 16:00:00 UTC (local times read at +02:00" in heading
    overlap = crosscheck.awr_overlap(check)
    assert "cover 10 s of its 30.0 min window (1%): 600 writes sent inside it are compared" in overlap
    assert "does not overlap" in crosscheck.awr_overlap(_awr_check(writes=0, overlap_s=0.0))


def test_agreement_and_the_reasons_averages_may_differ() -> None:
    remote = _awr_check().events[1]
    assert remote.mean_ms == 12.49
    assert crosscheck.agreement(remote) == "traces 16% above"
    close = EventCheck("SYNC Remote Write", "background", 1000, 1.0, 1.0, "total", 10, 1.05)
    assert crosscheck.agreement(close) == "agree within 10%"
    assert crosscheck.trace_measure(remote) == "mean total of 600 writes"
    reasons = crosscheck.awr_reasons(_awr_check(fast_sync_writes=12, destinations=("salesbc", "salesdr"), host=None))
    assert len(reasons) == 4
    assert reasons[0].startswith("the report averages its whole 30.0 min window; the traces cover 10 s")
    assert (
        "12 of the writes went over Fast Sync" in reasons[1] and "2 SYNC destinations (salesbc, salesdr)" in reasons[2]
    )
    assert "every instance" in reasons[3]
    assert crosscheck.awr_reasons(_awr_check(writes=0, overlap_s=0.0)) == []


def test_the_impact_view_says_which_write_the_commits_wait_on() -> None:
    remote = crosscheck.impact_sentence(Impact(14.4, 0.518, 12.49))
    assert remote.startswith("Commit wait (log file sync) 14.4 ms on average; the remote write (SYNC Remote Write)")
    assert "12.5 ms, 87% of it" in remote and "0.518 ms, 4%" in remote and "on the standby more than" in remote
    assert "on the local redo log write more than on the standby" in crosscheck.impact_sentence(Impact(2.0, 1.5, 0.4))


def test_the_distance_against_light_and_the_sync_limit() -> None:
    near = crosscheck.distance_sentence(DistanceCheck(80.0, 0.8, 4000, 1.059, 1.2))
    assert "Over 80 km light in fibre needs about 0.8 ms of round trip" in near
    assert "(network p1 of 4,000 writes) are 1.06 ms, 0.259 ms above that floor" in near and "Both are below" in near
    odd = crosscheck.distance_sentence(DistanceCheck(500.0, 5.0, 10, 1.1, 1.3))
    assert "below it: check the distance" in odd
    far = crosscheck.distance_sentence(DistanceCheck(2500.0, 25.0, 10, 26.0, 27.0))
    assert "Light alone needs 20 ms or more" in far and "rarely viable" in far
    path = crosscheck.distance_sentence(DistanceCheck(100.0, 1.0, 10, 18.0, 24.0))
    assert "the path, not the distance, is slow" in path


def test_sections_not_read_are_named_with_their_reason() -> None:
    check = _awr_check(report=read_awr(FIXTURES / "awr" / "awr-19c-primary.txt"))
    text = crosscheck.skipped_sentence(check)
    assert text.startswith("Not read: Wait Event Histogram (up to 2 min) (line ") and not text.endswith("..")
    assert crosscheck.skipped_sentence(_awr_check()) == ""


def _histogram(awr: list[float], writes: list[int], io_waits: int | None = None) -> HistogramCheck:
    """SYNC Remote Write (or RFS write with `io_waits`) in buckets of 1 to 2, 2 to 4, 64 to 128 and 128 ms or more."""
    bounds = [(1.0, 2.0, "<2ms"), (2.0, 4.0, "<4ms"), (64.0, 128.0, "<1/8s"), (128.0, None, ">=1/8s")]
    buckets = tuple(
        HistogramBucket(label, "Wait Event Histogram", low, high, pct, n)
        for (low, high, label), pct, n in zip(bounds, awr, writes, strict=True)
    )
    event, measure = ("RFS write", "rfs_io per write") if io_waits else ("SYNC Remote Write", "total")
    return HistogramCheck(event, measure, 119_530, sum(writes), io_waits, buckets, 64.0)


@pytest.mark.parametrize(
    ("awr", "writes", "said"),
    [
        ([60.0, 39.0, 0.5, 0.5], [50, 40, 5, 5], "10% of the writes took 64 ms or more, against 1.0% of the report's"),
        ([40.0, 40.0, 10.0, 10.0], [60, 39, 1, 0], "20% of the report's waits took 64 ms or more, against 1.0% of the"),
        (
            [60.0, 35.0, 3.0, 2.0],
            [60, 35, 3, 2],
            "5.0% of the writes and 5.0% of the report's waits took 64 ms or more",
        ),
    ],
)
def test_a_histogram_says_where_half_the_waits_fall_and_how_often_each_reaches_the_tail(
    awr: list[float], writes: list[int], said: str
) -> None:
    text = crosscheck.histogram_sentence(_histogram(awr, writes))
    assert text.startswith(
        "SYNC Remote Write (Wait Event Histogram): the report's 119,530 waits beside the totals of the 100 writes"
    )
    assert said in text
    assert ("Half the waits took 1 to 2 ms" if awr[0] >= 50 else "Half the waits took 2 to 4 ms") in text
    worse, outside = writes[2] + writes[3] > 2 * (awr[2] + awr[3]), 2 * (writes[2] + writes[3]) < awr[2] + awr[3]
    assert ("the incident is in them" in text) == worse and ("fall outside the traced minutes" in text) == outside


def test_an_rfs_write_histogram_says_the_traces_sum_the_waits_of_a_write() -> None:
    h = _histogram([80.0, 15.0, 3.0, 2.0], [70, 20, 6, 4], io_waits=130)
    text = crosscheck.histogram_sentence(h)
    assert "the RFS I/O times of the 100 writes of its window (130 RFS I/O waits, 1.3 per write" in text
    assert [crosscheck.bucket_range(b) for b in h.buckets] == [
        "1 to 2 ms",
        "2 to 4 ms",
        "64 to 128 ms",
        "128 ms or more",
    ]
    empty = HistogramCheck("RFS write", "rfs_io per write", 10, 0, 0, h.buckets, 64.0)
    assert crosscheck.histogram_sentence(empty).endswith(
        "none of the traces' writes falls in its window, nothing to set beside it."
    )


def _check(name: str) -> AwrCheck:
    """A primary report's check with no writes beside it (its own figures only)."""
    report = read_awr(FIXTURES / "awr" / name)
    events = tuple(
        EventCheck(r["event"], r["section"], r["waits"], r["avg_wait_ms"], r["total_wait_s"])
        for r in report.events.iter_rows(named=True)
    )
    return AwrCheck(report, "primary", None, None, "", None, None, None, None, 0, events, None, 0, ())


def test_the_printed_average_wait_is_the_reports_figure() -> None:
    """12.2: 9 s over 6,998 waits is 1.286 ms, the report prints 1.30 ms (from microseconds): 1.30 it is.
    11.2 prints whole ms: 3,783 s over 1,544,118 waits, 2.45 ms, rounds to the printed 2: the finer one."""
    sync = {e.event: e.mean_ms for e in _check("awr-12.2-primary-load.txt").events}
    assert sync["log file sync"] == 1.30 and sync["SYNC Remote Write"] == 0.90
    old = {e.event: e.mean_ms for e in _check("awr-11.2-primary-load.txt").events}
    assert old["log file sync"] == pytest.approx(3783 * 1000 / 1_544_118)
    assert old["log file parallel write"] == pytest.approx(428 * 1000 / 1_426_311)  # printed 0


def test_an_async_primary_and_missing_sync_events_are_remarked() -> None:
    (remark, workload) = crosscheck.awr_remarks(_check("awr-19c-async-primary.html"))
    assert remark.startswith("The report shows ASYNC Remote Write (1,210,550 waits) and no SYNC Remote Write")
    assert "shipped its redo ASYNC" in remark
    assert workload.startswith(
        "Workload (Load Profile, Instance Activity Stats): redo 20.50 MB/s; 1,532.9 transactions/s"
    )
    assert "4,988,102 redo writes of 15.2 KiB on average" in workload
    assert crosscheck.awr_remarks(_check("awr-12.2-primary-load.txt"))[0].startswith("Workload")  # SYNC: no remark
    no_sync = _check("awr-12c-primary.txt")
    bare = AwrCheck(no_sync.report, "primary", None, None, "", None, None, None, None, 0, (), None, 0, ())
    assert crosscheck.awr_remarks(bare) == [
        "The report shows no SYNC Remote Write: in its window this primary had no SYNC destination (an ASYNC or"
        " deferred one), or the event fell below the report's thresholds."
    ]


def test_the_redo_rate_against_the_bandwidth_and_the_redo_write_against_the_payload() -> None:
    check = _check("awr-12.2-primary-load.txt")  # 7 MB/s of redo, 11.7 KiB a write
    bd = BandwidthDelay(8.0 * 2**20, "oratcptest run 1 of a.txt", True, 1.0, "x", 8388.6, 25165.8, None, "")
    runs = tuple(RunCheck(run, None, None, None) for run in read_baseline(FIXTURES / "oratcptest" / "async.txt"))
    said = crosscheck.workload_sentence(Checks(None, None, runs, bd, (check,), None))
    assert said.startswith("AWR awr-12.2-primary-load.txt: redo 7.00 MB/s (58.7 Mbit/s), its window's average, 88%")
    assert "little headroom for peaks" in said and "a SYNC run with -length=12k" in said
    assert crosscheck.workload_sentence(Checks(None, None, (), None, (), None)) == ""
