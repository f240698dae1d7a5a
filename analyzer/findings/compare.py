"""The per-write split against what a DBA has today, in numbers (`analyzer.findings.crosscheck` says them in words).

Every other tool answers in averages: AWR's `SYNC Remote Write` minus the standby's `RFS write` (the
MAA paper's method), oratcptest's synthetic round trips. With each write's own split we can say more:

- `fast_sync`: the distribution the writes would have had with Fast Sync (SYNC NOAFFIRM), each write
  without its standby I/O (`fastsync_ms`, `analyzer.match.attribute.fast_sync_ms`), beside the real one;
- `at_round_trip`: the same with each write's network part no longer than the oratcptest round trip;
- `run_checks`: each oratcptest run beside the figure it measures: SYNC with disk write beside the
  total, SYNC without disk write beside the network part, ASYNC runs for their throughput only;
- `bandwidth_delay`: the bandwidth-delay product, and the socket buffer against 3 x BDP (MAA);
- `awr_check` (`analyzer.findings.reconcile`): each AWR or Statspack report beside the writes of its window;
- `distance_check`: the lowest round trips beside what light in fibre needs over the distance.

Statistics are over the writes seen on both sides (the only ones with a split); a percentile is an
observed value, as in `analyzer.findings.summary`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import polars as pl

from analyzer.base.schemas import matched_only
from analyzer.base.vocab import Transport
from analyzer.companions.oratcptest import BaselineRun
from analyzer.findings.reconcile import AwrCheck, awr_check
from analyzer.findings.summary import stamp_resolution
from analyzer.match.analysis import Analysis

#: round trip (ms) light in fibre needs per km: about 1 ms per 100 km (5 us per km each way)
LIGHT_MS_PER_KM = 0.01
#: the MAA papers: beyond this round trip (ms), SYNC transport is rarely viable
SYNC_LIMIT_MS = 20.0
#: the network floor: this quantile of the writes' network part (the lowest round trips)
FLOOR_QUANTILE = 0.01
#: the MAA advice: socket buffers of this many times the bandwidth-delay product
BDP_FACTOR = 3
#: a run measures a bandwidth only with a payload of at least this many bytes (a smaller one, as oratcptest's
#: `-length=0`, is a latency test: its "throughput" counts messages, not a link's capacity)
MIN_PAYLOAD_BYTES = 1024
#: where a bandwidth-delay product's round trip comes from when the writes give it
WRITES_NETWORK_P50 = "the writes' network p50"


def _float(value: object) -> float | None:
    """A statistic polars gives as Any: a float, or None."""
    return float(value) if isinstance(value, int | float) else None


@dataclass(frozen=True)
class Distribution:
    """Some writes' times (ms): how many, how many slow, mean, percentiles (observed values), max."""

    writes: int
    slow_writes: int
    mean_ms: float | None
    p50_ms: float | None
    p90_ms: float | None
    p99_ms: float | None
    max_ms: float | None


def distribution(values: pl.Series, threshold_ms: float) -> Distribution:
    """The distribution of `values` (nulls left out); slow is >= `threshold_ms`, as for the totals."""
    v = values.drop_nulls().cast(pl.Float64)

    def q(quantile: float) -> float | None:
        return _float(v.quantile(quantile, "nearest"))

    return Distribution(
        writes=v.len(),
        slow_writes=int((v >= threshold_ms).sum()),
        mean_ms=_float(v.mean()),
        p50_ms=q(0.5),
        p90_ms=q(0.9),
        p99_ms=q(0.99),
        max_ms=_float(v.max()),
    )


@dataclass(frozen=True)
class WhatIf:
    """The same writes as they were (`real`, their total) and as they would have been (`what_if`)."""

    real: Distribution
    what_if: Distribution
    #: slow-write time the change would have saved: the sum of total - what-if over the slow writes (ms)
    saved_ms: float
    #: writes already on Fast Sync links (their what-if is their total)
    already: int = 0
    #: `at_round_trip`: the round trip the network part is capped at (ms) and where it comes from
    round_trip_ms: float | None = None
    source: str = ""


def _what_if(
    total: pl.Series,
    changed: pl.Series,
    threshold_ms: float,
    already: int = 0,
    round_trip: tuple[float, str] | None = None,
) -> WhatIf:
    slow = total >= threshold_ms
    saved = float((total - changed).filter(slow).sum())
    real, what_if = distribution(total, threshold_ms), distribution(changed, threshold_ms)
    if round_trip is None:
        return WhatIf(real, what_if, saved, already)
    return WhatIf(real, what_if, saved, already, *round_trip)


def fast_sync(writes: pl.DataFrame, threshold_ms: float) -> WhatIf | None:
    """The writes seen on both sides (as for `at_round_trip`), real and with Fast Sync (`fastsync_ms`);
    None without any."""
    chosen = matched_only(writes, "total_ms", "fastsync_ms", "transport").filter(pl.col("fastsync_ms").is_not_null())
    if not chosen.height:
        return None
    already = int(chosen["transport"].cast(pl.String).eq(str(Transport.FASTSYNC)).sum())
    return _what_if(chosen["total_ms"], chosen["fastsync_ms"], threshold_ms, already=already)


def at_round_trip(writes: pl.DataFrame, threshold_ms: float, round_trip_ms: float, source: str) -> WhatIf | None:
    """The writes seen on both sides, real and with their network part no longer than `round_trip_ms`."""
    both = matched_only(writes, "total_ms", "network_ms")
    if not both.height:
        return None
    excess = (both["network_ms"] - round_trip_ms).clip(lower_bound=0.0)
    return _what_if(both["total_ms"], both["total_ms"] - excess, threshold_ms, round_trip=(round_trip_ms, source))


# ---------------------------------------------------------------------------- oratcptest
def run_name(run: BaselineRun) -> str:
    """`run 2 of sync.txt (SYNC, disk write, 16 KiB messages)`."""
    s = run.settings
    mode = s.mode or "mode not printed"
    write = "" if s.mode != "SYNC" else (", disk write" if s.disk_write else ", no disk write")
    size = f", {size_text(s.payload_bytes)} messages" if s.payload_bytes else ""
    name = run.label.replace("\\", "/").rsplit("/", 1)[-1]
    return f"run {run.run} of {name} ({mode}{write}{size})"


def size_text(n: float) -> str:
    """`256 KiB`, `3 MiB`, `283 KiB`, `900 bytes`."""
    for unit, factor in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if n >= factor:
            return f"{n / factor:,.3g} {unit}" if n % factor else f"{n / factor:,.0f} {unit}"
    return f"{n:,.0f} bytes"


@dataclass(frozen=True)
class RunCheck:
    """One oratcptest run beside the writes' figure it measures."""

    run: BaselineRun
    #: "total" (SYNC with disk write), "network" (SYNC without) or None (ASYNC, no latency: throughput only)
    compared_with: str | None
    #: the run's average round trip (ms) and its disk-write part
    latency_ms: float | None
    disk_write_ms: float | None
    #: the writes' figure it is compared with: p50 and p99 (ms), over the writes seen on both sides
    p50_ms: float | None = None
    p99_ms: float | None = None
    #: writes, and slow writes, whose figure exceeded the run's round trip
    above: int = 0
    slow_above: int = 0
    #: what the slow writes spent above it (ms)
    slow_excess_ms: float = 0.0
    #: with disk write: the writes' standby I/O p50 beside the run's disk write
    rfs_io_p50_ms: float | None = None

    @property
    def throughput_mib_s(self) -> float | None:
        return self.run.averages.throughput_mib_s if self.run.averages else None

    @property
    def send_buffer_bytes(self) -> int | None:
        """The socket send buffer the test ended with, else the one it asked for."""
        ended = self.run.averages.send_buffer_bytes if self.run.averages else None
        return ended if ended is not None else self.run.settings.send_buffer_bytes


def run_checks(writes: pl.DataFrame, runs: Sequence[BaselineRun]) -> list[RunCheck]:
    """Every run beside the writes' total (SYNC with disk write) or network part (without)."""
    both = matched_only(writes, "total_ms", "network_ms", "rfs_io_ms", "slow")
    out = []
    for run in runs:
        avg = run.averages
        latency = avg.latency_ms if avg else None
        disk = avg.disk_write_ms if avg else None
        if run.settings.mode != "SYNC" or latency is None:
            out.append(RunCheck(run, None, latency, disk))
            continue
        column = "total_ms" if run.settings.disk_write else "network_ms"
        values = both[column]
        over = values > latency
        slow_over = over & both["slow"]
        out.append(
            RunCheck(
                run,
                column.removesuffix("_ms"),
                latency,
                disk,
                p50_ms=distribution(values, float("inf")).p50_ms,
                p99_ms=distribution(values, float("inf")).p99_ms,
                above=int(over.sum()),
                slow_above=int(slow_over.sum()),
                slow_excess_ms=float((values - latency).filter(slow_over).sum()),
                rfs_io_p50_ms=distribution(both["rfs_io_ms"], float("inf")).p50_ms if run.settings.disk_write else None,
            )
        )
    return out


def network_round_trip(runs: Sequence[BaselineRun]) -> tuple[float, str] | None:
    """The network round trip the baseline measured: the lowest average latency of a SYNC run without
    disk write, else of a SYNC run with disk write less its disk-write part; with where it comes from."""
    plain: list[tuple[float, BaselineRun]] = []
    written: list[tuple[float, BaselineRun]] = []
    for run in runs:
        avg = run.averages
        if run.settings.mode != "SYNC" or avg is None or avg.latency_ms is None:
            continue
        if not run.settings.disk_write:
            plain.append((avg.latency_ms, run))
        elif avg.disk_write_ms is not None:
            written.append((max(0.0, avg.latency_ms - avg.disk_write_ms), run))
    if plain:
        latency, run = min(plain, key=lambda item: item[0])
        return latency, f"oratcptest {run_name(run)}"
    if written:
        latency, run = min(written, key=lambda item: item[0])
        return latency, f"oratcptest {run_name(run)}, less its disk write"
    return None


@dataclass(frozen=True)
class BandwidthDelay:
    """The bandwidth-delay product and the socket buffer against the MAA advice (3 x BDP)."""

    bandwidth_bytes_s: float
    bandwidth_source: str
    #: the bandwidth comes from an ASYNC run (else a SYNC run's throughput: a lower bound)
    from_async: bool
    round_trip_ms: float
    round_trip_source: str
    bdp_bytes: float
    advised_bytes: float
    #: the socket send buffer oratcptest ran with (the bandwidth run's), and which run
    send_buffer_bytes: int | None
    send_buffer_source: str

    @property
    def enough(self) -> bool | None:
        """The buffer reaches 3 x BDP (None when no buffer was printed)."""
        return None if self.send_buffer_bytes is None else self.send_buffer_bytes >= self.advised_bytes


def latency_test(run: BaselineRun) -> bool:
    """A run whose payload is too small to measure a bandwidth (MIN_PAYLOAD_BYTES)."""
    payload = run.settings.payload_bytes
    return payload is not None and payload < MIN_PAYLOAD_BYTES


def bandwidth_delay(writes: pl.DataFrame, checks: Sequence[RunCheck]) -> BandwidthDelay | None:
    """BDP = bandwidth (the highest ASYNC throughput, else the highest SYNC one, of the runs with a real
    payload: MIN_PAYLOAD_BYTES) x round trip (the writes' network p50, else the baseline's network round
    trip); None without such a throughput or a round trip."""
    measured = [(c.run.averages.throughput_bytes_s, c) for c in checks if c.run.averages and not latency_test(c.run)]
    rated = [(rate, c) for rate, c in measured if rate]
    asynchronous = [(rate, c) for rate, c in rated if c.run.settings.mode == "ASYNC"]
    pool = asynchronous or rated
    if not pool:
        return None
    bandwidth, best = max(pool, key=lambda item: item[0] or 0.0)
    bandwidth = float(bandwidth or 0.0)
    network = distribution(matched_only(writes, "network_ms")["network_ms"], float("inf")).p50_ms
    if network is not None and network > 0:
        round_trip, rt_source = network, WRITES_NETWORK_P50
    else:
        found = network_round_trip([c.run for c in checks])
        if found is None:
            return None
        round_trip, rt_source = found
    bdp = bandwidth * round_trip / 1000.0
    buffer, buffer_source = best.send_buffer_bytes, f"oratcptest {run_name(best.run)}"
    if buffer is None:
        sized = [c for c in checks if c.send_buffer_bytes is not None]
        if sized:
            largest = max(sized, key=lambda c: c.send_buffer_bytes or 0)
            buffer, buffer_source = largest.send_buffer_bytes, f"oratcptest {run_name(largest.run)}"
    return BandwidthDelay(
        bandwidth,
        f"oratcptest {run_name(best.run)}",
        bool(asynchronous),
        round_trip,
        rt_source,
        bdp,
        BDP_FACTOR * bdp,
        buffer,
        buffer_source,
    )


# ---------------------------------------------------------------------------- distance
@dataclass(frozen=True)
class DistanceCheck:
    """The lowest round trips beside what light in fibre needs over the distance."""

    km: float
    #: the round trip light in fibre needs (ms)
    light_ms: float
    #: the writes seen on both sides, the 1st percentile of their network part and its p50 (ms)
    writes: int
    floor_ms: float | None
    p50_ms: float | None

    @property
    def above_ms(self) -> float | None:
        """What the floor adds to light (negative: the distance or the stamps are off)."""
        return None if self.floor_ms is None else self.floor_ms - self.light_ms


def distance_check(writes: pl.DataFrame, km: float) -> DistanceCheck:
    """The network floor (FLOOR_QUANTILE of the network part) and p50 beside km x LIGHT_MS_PER_KM."""
    network = matched_only(writes, "network_ms")["network_ms"].drop_nulls()
    floor = network.quantile(FLOOR_QUANTILE, "nearest") if network.len() else None
    p50 = network.quantile(0.5, "nearest") if network.len() else None
    return DistanceCheck(km, km * LIGHT_MS_PER_KM, network.len(), floor, p50)


# ---------------------------------------------------------------------------- all of them
@dataclass(frozen=True)
class Checks:
    """Every comparison an analysis allows (those without their input are None or empty)."""

    fast_sync: WhatIf | None
    at_round_trip: WhatIf | None
    runs: tuple[RunCheck, ...]
    bandwidth_delay: BandwidthDelay | None
    awr: tuple[AwrCheck, ...]
    distance: DistanceCheck | None
    #: the writes' coarsest stamp resolution (ms): how finely their figures may be written
    resolution_ms: float | None = None


def checks(a: Analysis, writes: pl.DataFrame | None = None) -> Checks:
    """The comparisons of an analysis: the what-ifs, its baseline runs, its reports, its distance.

    `writes`: some of its writes (one configuration's) to compare instead of all; the AWR and Statspack
    reports, which pick the writes of their own host and window, are then left out.
    """
    threshold = a.options.threshold_ms
    chosen = a.writes if writes is None else writes
    runs = run_checks(chosen, a.baselines)
    found = network_round_trip(a.baselines)
    return Checks(
        fast_sync=fast_sync(chosen, threshold),
        at_round_trip=at_round_trip(chosen, threshold, *found) if found else None,
        runs=tuple(runs),
        bandwidth_delay=bandwidth_delay(chosen, runs),
        awr=tuple(awr_check(report, a) for report in a.awr_reports) if writes is None else (),
        distance=None if a.options.distance_km is None else distance_check(chosen, a.options.distance_km),
        resolution_ms=stamp_resolution(chosen),
    )
