"""The comparisons in numbers, on simulated sets against their truth.csv: the Fast Sync what-if per
write and in distribution, the writes at the oratcptest round trip, each oratcptest run beside the
writes, the bandwidth-delay product, the distance."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import polars as pl
import pytest

from analyzer.api import Analysis, Options, analyze
from analyzer.companions.oratcptest import read_baseline
from analyzer.findings import compare, crosscheck
from analyzer.simulate.options import SimOptions
from analyzer.simulate.runner import simulate

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "oratcptest"
SYNC_NO_WRITE = FIXTURES / "sync-no-write.txt"  # 512 KiB messages, 4.797 ms, 256 KiB buffer at the end
SYNC_DISK_WRITE = FIXTURES / "sync-disk-write.txt"  # 16 KiB messages, 1.402 ms (disk-write 0.740 ms), 4 MiB
ASYNC = FIXTURES / "async.txt"  # 231.013 MiB/s, 3 MiB buffer at the end
LATENCY_TEST = FIXTURES / "sync-latency-test.txt"  # -length=0: 0.503 ms, "0.046 Mbytes/s"
MIB = 1024 * 1024
#: 19c stamps are microseconds: a component read from them is within 2 us of the truth
TOLERANCE = 0.003


def _truth(outdir: Path) -> pl.DataFrame:
    return pl.read_csv(outdir / "truth.csv")


def _nearest(values: list[float], q: float) -> float:
    """The observed value at index round(q x (n - 1)) of the sorted values (what the reports show)."""
    ordered = sorted(values)
    return ordered[round(q * (len(ordered) - 1))]


@pytest.fixture(scope="module")
def standby_io(tmp_path_factory: pytest.TempPathFactory) -> tuple[Analysis, pl.DataFrame]:
    out = tmp_path_factory.mktemp("standby-io")
    simulate(out, SimOptions(scenario="standby-io", writes=600, seed=7))
    options = Options(baselines=(str(SYNC_NO_WRITE), str(SYNC_DISK_WRITE), str(ASYNC)), distance_km=80.0)
    return analyze([str(out)], options), _truth(out)


@pytest.fixture(scope="module")
def fastsync(tmp_path_factory: pytest.TempPathFactory) -> tuple[Analysis, pl.DataFrame]:
    out = tmp_path_factory.mktemp("fastsync")
    simulate(out, SimOptions(scenario="standby-io", writes=400, seed=3, transport="fastsync"))
    return analyze([str(out)]), _truth(out)


def _joined(a: Analysis, truth: pl.DataFrame) -> pl.DataFrame:
    got = a.writes.select("thread", "seq", "msgid", "fastsync_ms", "total_ms", "network_ms", "slow")
    return truth.join(got, on=["thread", "seq", "msgid"], suffix="_got")


def test_the_fast_sync_what_if_of_every_write_is_its_total_without_standby_io(
    standby_io: tuple[Analysis, pl.DataFrame],
) -> None:
    a, truth = standby_io
    both = _joined(a, truth)
    assert both.height == truth.height == a.writes.height
    expected = pl.max_horizontal(pl.col("total_ms") - pl.col("rfs_io_ms"), pl.col("network_ms"))
    worst = both.select((pl.col("fastsync_ms") - expected).abs().max()).item()
    assert worst <= TOLERANCE
    assert (both["fastsync_ms"] >= both["network_ms_got"]).all()
    assert (both["fastsync_ms"] <= both["total_ms_got"]).all()
    # the set has slow writes of standby I/O, and Fast Sync takes most of them out of the commit path
    assert (both["total_ms"] - both["fastsync_ms"]).max() > 100  # type: ignore[operator]


def test_the_fast_sync_distribution_is_that_of_the_truth(standby_io: tuple[Analysis, pl.DataFrame]) -> None:
    a, truth = standby_io
    w = compare.fast_sync(a.writes, 100.0)
    assert w is not None and w.already == 0
    real = truth["total_ms"].to_list()
    fast = truth.select(pl.max_horizontal(pl.col("total_ms") - pl.col("rfs_io_ms"), pl.col("network_ms"))).to_series()
    assert w.real.writes == w.what_if.writes == truth.height
    assert w.real.slow_writes == sum(v >= 100 for v in real) > 10
    assert w.what_if.slow_writes == int((fast >= 100).sum()) < w.real.slow_writes
    for got, values in ((w.real, real), (w.what_if, fast.to_list())):
        for stat, q in (("p50_ms", 0.5), ("p90_ms", 0.9), ("p99_ms", 0.99), ("max_ms", 1.0)):
            assert getattr(got, stat) == pytest.approx(_nearest(values, q), abs=TOLERANCE), stat
        assert got.mean_ms == pytest.approx(sum(values) / len(values), abs=TOLERANCE)
    slow = truth.with_columns(fast=fast).filter(pl.col("total_ms") >= 100)
    assert w.saved_ms == pytest.approx(float((slow["total_ms"] - slow["fast"]).sum()), abs=0.01)


def test_writes_on_fast_sync_keep_their_total(fastsync: tuple[Analysis, pl.DataFrame]) -> None:
    a, truth = fastsync
    assert set(a.writes["transport"].cast(pl.String)) == {"FASTSYNC"}
    assert a.writes["fastsync_ms"].equals(a.writes["total_ms"], check_names=False)
    w = compare.fast_sync(a.writes, 100.0)
    assert w is not None and w.already == w.real.writes == truth.height
    assert w.what_if == w.real and w.saved_ms == 0


def test_asynchronous_shipments_have_no_fast_sync_what_if(tmp_path: Path) -> None:
    simulate(tmp_path, SimOptions(writes=60, threads=1, seed=5, async_sender=True))
    a = analyze([str(tmp_path)])
    assert a.shipments.height > 0 and a.shipments["fastsync_ms"].null_count() == a.shipments.height
    assert a.writes["fastsync_ms"].null_count() == 0


def test_the_writes_at_the_oratcptest_round_trip(standby_io: tuple[Analysis, pl.DataFrame]) -> None:
    a, truth = standby_io
    found = compare.network_round_trip(a.baselines)
    assert found is not None
    round_trip, source = found
    assert round_trip == pytest.approx(4.797) and "sync-no-write.txt" in source and "no disk write" in source
    w = compare.at_round_trip(a.writes, 100.0, round_trip, source)
    assert w is not None and w.round_trip_ms == round_trip
    capped = truth.select(pl.col("total_ms") - (pl.col("network_ms") - round_trip).clip(lower_bound=0)).to_series()
    assert w.what_if.slow_writes == int((capped >= 100).sum())
    assert w.what_if.p99_ms == pytest.approx(_nearest(capped.to_list(), 0.99), abs=TOLERANCE)
    excess = truth.filter(pl.col("total_ms") >= 100).select(
        (pl.col("network_ms") - round_trip).clip(lower_bound=0).sum()
    )
    assert w.saved_ms == pytest.approx(excess.item(), abs=0.01)


def test_the_round_trip_falls_back_to_a_disk_write_run_less_its_disk_write() -> None:
    runs = read_baseline(SYNC_DISK_WRITE) + read_baseline(ASYNC)
    found = compare.network_round_trip(runs)
    assert found is not None and found[0] == pytest.approx(1.402 - 0.740) and "less its disk write" in found[1]
    assert compare.network_round_trip(read_baseline(ASYNC)) is None


def test_each_run_is_set_beside_what_it_measures(standby_io: tuple[Analysis, pl.DataFrame]) -> None:
    a, truth = standby_io
    plain, written, asynchronous = compare.run_checks(a.writes, a.baselines)
    assert (plain.compared_with, written.compared_with, asynchronous.compared_with) == ("network", "total", None)
    for check, column in ((plain, "network_ms"), (written, "total_ms")):
        latency = check.latency_ms
        assert latency is not None
        over = truth.filter(pl.col(column) > latency)
        slow_over = over.filter(pl.col("total_ms") >= 100)
        assert (check.above, check.slow_above) == (over.height, slow_over.height)
        assert check.slow_excess_ms == pytest.approx(float((slow_over[column] - latency).sum()), abs=0.01)
        assert check.p50_ms == pytest.approx(_nearest(truth[column].to_list(), 0.5), abs=TOLERANCE)
    assert written.rfs_io_p50_ms == pytest.approx(_nearest(truth["rfs_io_ms"].to_list(), 0.5), abs=TOLERANCE)
    assert plain.rfs_io_p50_ms is None and written.disk_write_ms == pytest.approx(0.740)
    assert asynchronous.throughput_mib_s == pytest.approx(231.013) and asynchronous.above == 0
    assert (plain.send_buffer_bytes, written.send_buffer_bytes, asynchronous.send_buffer_bytes) == (
        256 * 1024,
        4 * MIB,
        3 * MIB,
    )


def test_the_bandwidth_delay_product_uses_the_async_throughput_and_the_network_p50(
    standby_io: tuple[Analysis, pl.DataFrame],
) -> None:
    a, truth = standby_io
    bd = compare.bandwidth_delay(a.writes, compare.run_checks(a.writes, a.baselines))
    assert bd is not None and bd.from_async and "async.txt" in bd.bandwidth_source
    assert bd.bandwidth_bytes_s == pytest.approx(231.013 * MIB)
    assert bd.round_trip_ms == pytest.approx(_nearest(truth["network_ms"].to_list(), 0.5), abs=TOLERANCE)
    assert bd.bdp_bytes == pytest.approx(bd.bandwidth_bytes_s * bd.round_trip_ms / 1000)
    assert bd.advised_bytes == pytest.approx(3 * bd.bdp_bytes)
    assert (bd.send_buffer_bytes, bd.enough) == (3 * MIB, True)


def test_a_sync_throughput_is_a_lower_bound_and_a_small_buffer_falls_short(
    standby_io: tuple[Analysis, pl.DataFrame],
) -> None:
    a, _ = standby_io
    slow_link = a.writes.with_columns(network_ms=pl.col("network_ms") + 20.0)  # 21 ms round trips
    bd = compare.bandwidth_delay(slow_link, compare.run_checks(slow_link, read_baseline(SYNC_NO_WRITE)))
    assert bd is not None and not bd.from_async and bd.bandwidth_bytes_s == pytest.approx(104.218 * MIB)
    assert bd.round_trip_ms > 20 and bd.advised_bytes > 6 * MIB
    assert (bd.send_buffer_bytes, bd.enough) == (256 * 1024, False)


def test_without_a_throughput_there_is_no_product(standby_io: tuple[Analysis, pl.DataFrame]) -> None:
    a, _ = standby_io
    assert compare.bandwidth_delay(a.writes, []) is None


def test_a_latency_test_gives_no_bandwidth_delay_product(standby_io: tuple[Analysis, pl.DataFrame]) -> None:
    """A 0-byte payload measures round trips: its "throughput" (0.046 MiB/s) is no bandwidth."""
    a, _ = standby_io
    runs = read_baseline(LATENCY_TEST)
    assert compare.latency_test(runs[0]) and not compare.latency_test(read_baseline(SYNC_NO_WRITE)[0])
    checks = compare.run_checks(a.writes, runs)
    assert compare.bandwidth_delay(a.writes, checks) is None
    with_async = compare.run_checks(a.writes, [*runs, *read_baseline(ASYNC)])
    bd = compare.bandwidth_delay(a.writes, with_async)
    assert bd is not None and bd.bandwidth_bytes_s == pytest.approx(231.013 * MIB)
    said = crosscheck.run_sentence(checks[0])
    assert "a latency test (0 bytes payload): it measures no bandwidth" in said
    # its round trip still counts: the network part beside 0.503 ms
    assert checks[0].compared_with == "network" and checks[0].latency_ms == 0.503


def test_the_network_floor_beside_light_in_fibre(standby_io: tuple[Analysis, pl.DataFrame]) -> None:
    a, truth = standby_io
    d = compare.distance_check(a.writes, 80.0)
    assert d.light_ms == pytest.approx(0.8) and d.writes == truth.height
    network = truth["network_ms"].to_list()
    assert d.floor_ms == pytest.approx(_nearest(network, 0.01), abs=TOLERANCE)
    assert d.p50_ms == pytest.approx(_nearest(network, 0.5), abs=TOLERANCE)
    assert d.above_ms == pytest.approx(d.floor_ms - 0.8)  # type: ignore[operator]


def test_checks_gathers_every_comparison_the_options_ask_for(standby_io: tuple[Analysis, pl.DataFrame]) -> None:
    a, _ = standby_io
    c = compare.checks(a)
    assert c.fast_sync is not None and c.at_round_trip is not None and len(c.runs) == 3
    assert c.bandwidth_delay is not None and c.distance is not None and c.distance.km == 80.0 and c.awr == ()
    bare = compare.checks(replace(a, options=Options(), baselines=()))
    assert bare.at_round_trip is None and bare.runs == () and bare.bandwidth_delay is None and bare.distance is None
