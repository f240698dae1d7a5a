"""AWR and Statspack reports beside a simulated set whose writes fall in their windows (the fixtures
`*-sim-*` were written for the set of seed 7 at UTC+02:00), and beside one of other hours."""

from __future__ import annotations

import itertools
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

import polars as pl
import pytest

from analyzer.api import Analysis, Options, analyze
from analyzer.base.zones import TimeZones
from analyzer.companions.awr import AwrReport, read_awr
from analyzer.findings.reconcile import HistogramBucket, awr_check, oracle_bound
from analyzer.simulate.options import SimOptions
from analyzer.simulate.runner import simulate

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "awr"
#: host prim01 (instance sales1, thread 1), 17:30 to 18:00 at +02:00: the whole set is inside
PRIMARY = FIXTURES / "awr-19c-sim-primary.txt"
#: host stby01, 17:48:20 to 18:48:20 at +02:00: the set's last seconds only
STANDBY = FIXTURES / "statspack-19c-sim-standby.txt"
#: another database's report of April 2024
ELSEWHERE = FIXTURES / "awr-19c-primary.txt"


@pytest.fixture(scope="module")
def incident(tmp_path_factory: pytest.TempPathFactory) -> tuple[Analysis, pl.DataFrame]:
    out = tmp_path_factory.mktemp("set")
    simulate(out, SimOptions(scenario="standby-io", writes=600, seed=7, primary_tz="+02:00", standby_tz="+02:00"))
    truth = pl.read_csv(out / "truth.csv").with_columns(pl.col("sent_at").str.to_datetime(time_zone="UTC"))
    return analyze([str(out)], Options(awr=(str(PRIMARY), str(STANDBY), str(ELSEWHERE)))), truth


def test_the_primary_report_is_read_in_its_host_zone_and_compared_with_its_instance(
    incident: tuple[Analysis, pl.DataFrame],
) -> None:
    a, truth = incident
    check = awr_check(a.awr_reports[0], a)
    assert check.side == "primary" and check.host == "prim01.dbnet.example"
    assert "+02:00" in check.zone_source and "prim01" in check.zone_source
    assert check.begin_utc == datetime(2024, 10, 22, 15, 30, tzinfo=UTC)
    assert check.end_utc == datetime(2024, 10, 22, 16, 0, tzinfo=UTC) and check.window_s == 1800
    mine = truth.filter(pl.col("thread") == 1)  # prim01 runs instance sales1, thread 1
    assert check.writes == mine.height and check.overlaps
    assert check.overlap_s == pytest.approx((mine["sent_at"].max() - mine["sent_at"].min()).total_seconds(), abs=1e-3)  # type: ignore[operator]
    events = {e.event: e for e in check.events}
    assert list(events) == ["log file sync", "SYNC Remote Write", "log file parallel write"]
    remote = events["SYNC Remote Write"]
    assert (remote.section, remote.waits, remote.measure, remote.trace_count) == ("background", 119_530, "total", 600)
    assert remote.mean_ms == 12.49  # the report's printed Avg wait, not its rounded total / waits
    assert remote.trace_mean_ms == pytest.approx(float(mine["total_ms"].mean()), abs=0.003)  # type: ignore[arg-type]
    assert remote.difference == pytest.approx(remote.trace_mean_ms / remote.mean_ms - 1)  # type: ignore[operator]
    assert events["log file sync"].section == "foreground" and events["log file sync"].measure is None
    impact = check.impact
    assert impact is not None
    assert impact.remote_share == pytest.approx(12.49 / 14.40)  # the printed averages
    assert impact.local_share == pytest.approx(0.51835 / 14.40)
    assert check.fast_sync_writes == 0 and check.destinations == ("salesdr",)


def test_the_standby_report_compares_the_rfs_io_waits_of_the_writes_in_its_window(
    incident: tuple[Analysis, pl.DataFrame],
) -> None:
    a, truth = incident
    check = awr_check(a.awr_reports[1], a)
    assert check.report.kind == "statspack" and check.report.role is None
    assert check.side == "standby" and check.host == "stby01.dbnet.example"
    begin = datetime(2024, 10, 22, 15, 48, 20, tzinfo=UTC)
    assert check.begin_utc == begin
    inside = truth.filter(pl.col("sent_at") >= begin)
    assert 0 < check.writes == inside.height < truth.height
    waits = a.writes.filter(pl.col("sent_at") >= begin)["rfs_io_waits"].sum()
    rfs = next(e for e in check.events if e.event == "RFS write")
    assert (rfs.measure, rfs.trace_count) == ("rfs_io per wait", waits)
    assert rfs.trace_mean_ms == pytest.approx(float(inside["rfs_io_ms"].sum()) / waits, abs=1e-3)
    assert rfs.mean_ms == pytest.approx(2561 * 1000 / 238_950)  # the printed 11 ms is rounded
    assert check.impact is None  # no log file sync on a standby


def test_a_report_of_other_hours_is_said_not_to_overlap(incident: tuple[Analysis, pl.DataFrame]) -> None:
    a, _ = incident
    check = awr_check(a.awr_reports[2], a)
    assert check.host is None and check.writes == 0 and check.overlaps is False and check.overlap_s == 0
    assert "assumed" in check.zone_source
    assert all(e.trace_mean_ms is None and e.difference is None for e in check.events)
    assert check.impact is not None  # the report's own figures still stand


def test_tz_names_the_zone_of_a_host_without_traces(incident: tuple[Analysis, pl.DataFrame]) -> None:
    a, _ = incident
    given = replace(a, options=replace(a.options, zones=TimeZones(per_host={"dbprim01": -420})))
    check = awr_check(read_awr(ELSEWHERE), given)
    assert check.begin_utc == datetime(2024, 4, 16, 16, 0, 2, tzinfo=UTC)
    assert check.zone_source == "-07:00, from --tz dbprim01=-07:00"


def test_an_html_report_is_compared_as_a_text_one(incident: tuple[Analysis, pl.DataFrame]) -> None:
    a, _ = incident
    check = awr_check(read_awr(FIXTURES / "awr-19c-primary.html"), a)
    assert check.report.format == "html" and check.side == "primary"
    assert check.begin_utc == datetime(2024, 4, 17, 12, 0, 4, tzinfo=UTC) and check.overlaps is False
    remote = next(e for e in check.events if e.event == "SYNC Remote Write")
    assert remote.mean_ms == pytest.approx(0.83611) and remote.measure == "total"  # printed 836.11us
    assert check.impact is not None and check.impact.log_file_sync_ms == 1.08


def _counts(values: pl.Series, buckets: tuple[HistogramBucket, ...]) -> list[int]:
    """The values per bucket, counted here from the truth (bounds [lower, upper))."""
    return [
        int(((values >= b.lower_ms) & (values < (b.upper_ms if b.upper_ms is not None else float("inf")))).sum())
        for b in buckets
    ]


def _report_pcts(report: AwrReport, event: str, buckets: tuple[HistogramBucket, ...]) -> list[float]:
    """Each bucket's share as the report prints it in the table the bucket names."""
    rows = report.histogram.filter(pl.col("event") == event)
    return [
        rows.filter(pl.col("table") == b.table, pl.col("bucket") == b.label)["pct"].item()  # type: ignore[misc]
        for b in buckets
    ]


def test_oracle_histogram_bounds_are_powers_of_two() -> None:
    """The reports' `1/8s` is 128 ms, `1s` 1024 ms, `1m` 64 x 1024 ms; below 1 ms, microseconds."""
    bounds = (0.0, 0.008, 0.512, 1.0, 32.0, 125.0, 250.0, 1000.0, 2000.0, 60_000.0, 120_000.0)
    assert [oracle_bound(b) for b in bounds] == [
        0.0,
        0.008,
        0.512,
        1.0,
        32.0,
        128.0,
        256.0,
        1024.0,
        2048.0,
        65536.0,
        131072.0,
    ]


def test_the_sync_remote_write_histogram_is_set_beside_the_totals_of_the_writes_in_its_window(
    incident: tuple[Analysis, pl.DataFrame],
) -> None:
    a, truth = incident
    check = awr_check(a.awr_reports[0], a)
    (h,) = check.histograms
    mine = truth.filter(pl.col("thread") == 1)  # prim01: instance sales1, thread 1
    assert (h.event, h.measure, h.writes, h.io_waits) == ("SYNC Remote Write", "total", mine.height, None)
    assert h.waits == a.awr_reports[0].histogram.filter(pl.col("event") == "SYNC Remote Write")["waits"].max()
    # the tables merged without overlap: each bucket starts where the one before ends
    assert all(x.upper_ms == y.lower_ms for x, y in itertools.pairwise(h.buckets))
    tables = [b.table for b in h.buckets]
    assert tables == sorted(tables, key=lambda t: "2 sec" in t) and len(set(tables)) == 2
    assert [b.trace_writes for b in h.buckets] == _counts(mine["total_ms"], h.buckets)
    assert sum(b.trace_writes for b in h.buckets) == mine.height  # every write is in a bucket
    assert [b.awr_pct for b in h.buckets] == _report_pcts(a.awr_reports[0], "SYNC Remote Write", h.buckets)
    assert h.tail_ms == max(b.lower_ms for b in h.buckets if b.lower_ms <= a.options.threshold_ms)
    report_tail, traces_tail = h.at_least(h.tail_ms)
    assert traces_tail == pytest.approx(100 * (mine["total_ms"] >= h.tail_ms).sum() / mine.height)
    assert report_tail == pytest.approx(sum(b.awr_pct for b in h.buckets if b.lower_ms >= h.tail_ms))


def test_the_rfs_write_histogram_is_set_beside_the_rfs_io_time_of_the_writes_that_waited(
    incident: tuple[Analysis, pl.DataFrame],
) -> None:
    a, truth = incident
    check = awr_check(a.awr_reports[1], a)
    (h,) = check.histograms
    assert check.begin_utc is not None
    inside = a.writes.filter(pl.col("sent_at") >= check.begin_utc, pl.col("rfs_io_waits") > 0)
    assert (h.event, h.measure, h.writes, h.io_waits) == (
        "RFS write",
        "rfs_io per write",
        inside.height,
        inside["rfs_io_waits"].sum(),
    )
    waited = truth.filter(pl.col("sent_at") >= check.begin_utc, pl.col("rfs_io_ms") > 0)
    assert waited.height == h.writes
    assert [b.trace_writes for b in h.buckets] == _counts(waited["rfs_io_ms"], h.buckets)
    assert [b.awr_pct for b in h.buckets] == _report_pcts(a.awr_reports[1], "RFS write", h.buckets)
    assert h.buckets[0].lower_ms == 0.0 and h.buckets[-1].label == "<=1s"


def test_a_report_of_other_hours_has_its_histogram_and_no_write_beside_it(
    incident: tuple[Analysis, pl.DataFrame],
) -> None:
    a, _ = incident
    (h,) = awr_check(a.awr_reports[2], a).histograms
    assert h.writes == 0 and all(b.trace_writes == 0 for b in h.buckets) and h.trace_pct(h.buckets[0]) is None
    assert [b.label for b in h.buckets][:3] == ["<128u", "<256u", "<512u"]  # the empty buckets around are left out
