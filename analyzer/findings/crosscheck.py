"""The comparisons of `analyzer.findings.compare` and `analyzer.findings.reconcile` in words a DBA uses.

Each function turns one comparison into sentences with its numbers: the Fast Sync what-if, the
writes at the oratcptest round trip, each oratcptest run, the bandwidth-delay product against the
socket buffer, each AWR or Statspack report (its window, how it overlaps the traces, how well its
averages agree with the traces' and why they may not) and the distance. The recommendations
(`analyzer.findings.insights`) and every report format use them.
"""

from __future__ import annotations

from datetime import datetime

from analyzer.base.words import ms
from analyzer.findings import advice
from analyzer.findings.compare import (
    BDP_FACTOR,
    FLOOR_QUANTILE,
    SYNC_LIMIT_MS,
    WRITES_NETWORK_P50,
    BandwidthDelay,
    Checks,
    DistanceCheck,
    RunCheck,
    WhatIf,
    latency_test,
    run_name,
    size_text,
)
from analyzer.findings.reconcile import AGREE_SHARE, AwrCheck, EventCheck, HistogramBucket, HistogramCheck, Impact

#: the traces cover "little" of a report's window below this share: AWR averages other minutes too
COVERED_SHARE = 0.9


def _n(count: int, noun: str) -> str:
    return f"{count:,} {noun}" if count != 1 else f"1 {noun.removesuffix('s')}"


def _span(first: datetime | None, last: datetime | None) -> str:
    if first is None or last is None:
        return "unknown"
    return f"{first:%Y-%m-%d %H:%M:%S} to {last:%Y-%m-%d %H:%M:%S} UTC"


def _fall(w: WhatIf, res: float | None) -> str:
    """`slow writes would fall from 132 to 2 and p99 go from 302 ms to 2.3 ms` (or stay at ...)."""
    before, after = w.real.slow_writes, w.what_if.slow_writes
    slow = f"fall from {before:,} to {after:,}" if after < before else f"stay at {before:,}"
    p99, p99_after = ms(w.real.p99_ms, res), ms(w.what_if.p99_ms, res)
    change = f"go from {p99} to {p99_after}" if p99_after != p99 else f"stay at {p99}"
    return f"slow writes would {slow} and p99 {change}"


# ---------------------------------------------------------------------------- what-if
def fast_sync_sentence(w: WhatIf, res: float | None = None) -> str:
    """What Fast Sync would have changed, or that the writes are on it already (`res`: the writes' stamp
    resolution, ms)."""
    if w.already == w.real.writes:
        return (
            f"Every one of the {w.real.writes:,} writes seen on both sides already went over Fast Sync (SYNC"
            " NOAFFIRM): their standby I/O is not in the commit path."
        )
    already = f"; the {w.already:,} already on Fast Sync count as they were" if w.already else ""
    return (
        f"With Fast Sync, {_fall(w, res)} (each of the {w.real.writes:,} writes seen on both sides without its"
        f" standby I/O, never below its network time{already}): {ms(w.saved_ms, res)} of slow-write time would be"
        " saved."
    )


def round_trip_sentence(w: WhatIf, res: float | None = None) -> str:
    """What the writes would have cost with their network part no longer than the oratcptest round trip."""
    source = w.source.removeprefix("oratcptest ")
    return (
        f"At the {ms(w.round_trip_ms)} oratcptest round trip ({source}), {_fall(w, res)}: the network above that"
        f" round trip cost {ms(w.saved_ms, res)} of slow-write time."
    )


# ---------------------------------------------------------------------------- oratcptest
def run_sentence(check: RunCheck, res: float | None = None) -> str:
    """One oratcptest run beside the figure it measures (`res`: the writes' stamp resolution, ms)."""
    name = run_name(check.run)
    unfinished = "" if check.run.finished else " (the run did not finish: its averages were not printed)"
    if latency_test(check.run):
        unfinished += (
            f"; a latency test ({size_text(check.run.settings.payload_bytes or 0)} payload): it measures no"
            " bandwidth, and no bandwidth-delay product is drawn from it"
        )
    if check.compared_with is None:
        rate = check.throughput_mib_s
        if check.run.settings.mode == "ASYNC":
            what = f"throughput {rate:,.1f} MiB/s" if rate else "no throughput printed"
            return f"oratcptest {name}: {what} (ASYNC: a bandwidth, no round trip to compare){unfinished}."
        if check.run.settings.mode is None:
            return f"oratcptest {name}: its transport mode was not printed (SYNC or ASYNC?): not compared{unfinished}."
        return f"oratcptest {name}: no average latency to compare{unfinished}."
    written = check.compared_with == "total"
    label = "total" if written else "network"
    kind = "with disk write" if written else "without disk write"
    text = (
        f"oratcptest {name}: {label} p50 {ms(check.p50_ms, res)} (p99 {ms(check.p99_ms, res)}) against a"
        f" {ms(check.latency_ms)} oratcptest round trip {kind}"
    )
    if written and check.disk_write_ms is not None:
        text += f" (standby I/O p50 {ms(check.rfs_io_p50_ms)} against its {ms(check.disk_write_ms)} disk write)"
    if check.slow_above:
        text += f"; {_n(check.slow_above, 'slow writes')} spent {ms(check.slow_excess_ms, res)} above it"
    else:
        text += "; no slow write went above it"
    return text + f" ({_n(check.above, 'writes')} in all){unfinished}."


def bdp_sentence(bd: BandwidthDelay, res: float | None = None) -> str:
    """The bandwidth-delay product, 3 x BDP, and the socket buffer oratcptest ran with against it (`res`:
    the writes' stamp resolution, for a round trip that is the writes' network p50)."""
    lower = (
        ""
        if bd.from_async
        else " (not an ASYNC run's throughput: a lower bound of the bandwidth, which an ASYNC run measures)"
    )
    text = (
        f"Bandwidth-delay product: {bd.bandwidth_bytes_s / 2**20:,.1f} MiB/s ({bd.bandwidth_source}){lower}"
        f" x {ms(bd.round_trip_ms, res if bd.round_trip_source == WRITES_NETWORK_P50 else None)}"
        f" ({bd.round_trip_source}) = {size_text(bd.bdp_bytes)}; the MAA advice is socket"
        f" buffers of {BDP_FACTOR} x BDP = {size_text(bd.advised_bytes)}"
    )
    if bd.send_buffer_bytes is None:
        return text + ": oratcptest printed no socket buffer to check against it."
    same = bd.send_buffer_source == bd.bandwidth_source
    buffer = size_text(bd.send_buffer_bytes) + ("" if same else f" ({bd.send_buffer_source})")
    if bd.enough:
        return text + f": oratcptest's send buffer of {buffer} reaches it."
    return (
        text + f": oratcptest's send buffer of {buffer} is below it. Set RECV_BUF_SIZE and SEND_BUF_SIZE of the"
        f" redo transport alias and the standby listener to at least {size_text(bd.advised_bytes)} (and"
        " net.core.rmem_max / wmem_max to allow them)."
    )


# ---------------------------------------------------------------------------- AWR, Statspack
def awr_heading(check: AwrCheck) -> str:
    """What the report is and which window it covers, in UTC."""
    r = check.report
    name = r.label.replace("\\", "/").rsplit("/", 1)[-1]
    what = f"{'Statspack' if r.kind == 'statspack' else 'AWR'} report ({r.format})"
    of = " of " + ", ".join(
        p for p in (r.db_name, f"instance {r.instance}" if r.instance else "", f"host {r.host}" if r.host else "") if p
    )
    role = ", ".join(p for p in (r.role or (f"{check.side}, role not printed" if check.side else ""), r.release) if p)
    snaps = f", snapshots {r.begin_snap}-{r.end_snap}" if r.begin_snap is not None else ""
    window = (
        f"{check.begin_utc:%Y-%m-%d %H:%M:%S} to {check.end_utc:%Y-%m-%d %H:%M:%S} UTC (local times read at"
        f" {check.zone_source})"
        if check.begin_utc and check.end_utc
        else "window not printed"
    )
    return f"{name}: {what}{of if of != ' of ' else ''}{f' ({role})' if role else ''}{snaps}, {window}."


def awr_overlap(check: AwrCheck) -> str:
    """Whether the report's window overlaps the traces' writes, and how much of it they cover."""
    whose = f"the writes of {check.host}" if check.host else "the traces' writes"
    span = _span(check.first_write, check.last_write)
    if check.overlaps is None:
        return f"Its window is unknown: it cannot be set beside {whose} ({span})."
    if not check.overlaps:
        return f"It does not overlap {whose} ({span}): its figures are of other hours, and none is compared."
    window = check.window_s or 0.0
    share = (check.overlap_s or 0.0) / window if window else 0.0
    return (
        f"{whose.capitalize()} ({span}) cover {_duration(check.overlap_s or 0.0)} of its"
        f" {_duration(window)} window ({'under 1%' if 0 < share < 0.005 else f'{share:.0%}'}):"
        f" {_n(check.writes, 'writes')} sent inside it are compared."
    )


def _duration(seconds: float) -> str:
    if seconds < 120:
        return f"{seconds:.0f} s"
    return f"{seconds / 60:.1f} min" if seconds < 7200 else f"{seconds / 3600:.1f} h"


def agreement(event: EventCheck) -> str:
    """`agree within 10%`, `traces 23% above`, `traces 40% below`, or "" without a comparison."""
    diff = event.difference
    if diff is None:
        return ""
    if abs(diff) <= AGREE_SHARE:
        return f"agree within {AGREE_SHARE:.0%}"
    return f"traces {abs(diff):.0%} {'above' if diff > 0 else 'below'}"


def trace_measure(event: EventCheck) -> str:
    """What the traces' figure beside an event is."""
    if event.measure and not event.trace_count:
        return "none in its window"
    if event.measure == "total":
        return f"mean total of {_n(event.trace_count, 'writes')}"
    if event.measure == "rfs_io per wait":
        return f"mean of {_n(event.trace_count, 'RFS I/O waits')}"
    return ""


def awr_reasons(check: AwrCheck) -> list[str]:
    """Why the report's averages and the traces' may differ, for this report and these writes."""
    if not check.overlaps or not any(e.difference is not None for e in check.events):
        return []
    out = []
    window = check.window_s or 0.0
    if window and (check.overlap_s or 0.0) < COVERED_SHARE * window:
        out.append(
            f"the report averages its whole {_duration(window)} window; the traces cover"
            f" {_duration(check.overlap_s or 0.0)} of it, the minutes of the incident only"
        )
    if check.fast_sync_writes:
        out.append(
            f"{_n(check.fast_sync_writes, 'of the writes')} went over Fast Sync (no standby I/O in their round trip):"
            " a report window that also covers SYNC AFFIRM hours averages both"
        )
    if len(check.destinations) > 1:
        out.append(
            f"the writes went to {len(check.destinations)} SYNC destinations ({', '.join(check.destinations)}):"
            " the report's SYNC Remote Write counts the waits of all of them, the traces each write of each"
        )
    if check.host is None and check.writes:
        out.append("the report's host is none of the traces' hosts: the traces' figures are of every instance")
    return out


def impact_sentence(impact: Impact) -> str:
    """The MAA paper's impact view: how much of the commit wait is the remote write."""
    parts = [f"Commit wait (log file sync) {ms(impact.log_file_sync_ms)} on average"]
    if impact.remote_write_ms is not None:
        parts.append(
            f"the remote write (SYNC Remote Write) {ms(impact.remote_write_ms)}, {impact.remote_share:.0%} of it"
        )
    if impact.local_write_ms is not None:
        parts.append(f"the local write (log file parallel write) {ms(impact.local_write_ms)}, {impact.local_share:.0%}")
    text = "; ".join(parts)
    if impact.remote_write_ms is None or impact.local_write_ms is None:
        return text + "."
    if impact.remote_write_ms >= impact.local_write_ms:
        return text + ": the commits wait on the standby more than on the local redo log write."
    return text + ": the commits wait on the local redo log write more than on the standby."


#: the traces' tail is "as often" as the report's within this factor
TAIL_FACTOR = 2.0


def _bound(value_ms: float) -> str:
    """A histogram bound (a power of two): `0.512 ms`, `1 ms`, `1,024 ms`."""
    return f"{value_ms:,.0f} ms" if value_ms >= 1 else ms(value_ms)


def bucket_range(b: HistogramBucket) -> str:
    """`under 1 ms`, `1 to 2 ms`, `1,024 ms or more`: a bucket's bounds in words."""
    if b.upper_ms is None:
        return f"{_bound(b.lower_ms)} or more"
    if not b.lower_ms:
        return f"under {_bound(b.upper_ms)}"
    return f"{_bound(b.lower_ms).removesuffix(' ms')} to {_bound(b.upper_ms)}"


def _pct(value: float) -> str:
    return f"{value:.1f}%" if value < 10 else f"{value:.0f}%"


def histogram_sentence(h: HistogramCheck) -> str:
    """The report's histogram of an event beside the traces' in a DBA's words: where half the waits (and
    writes) fall, how often each reaches the tail, and what the difference says."""
    tables = " and ".join(dict.fromkeys(b.table for b in h.buckets))
    waits = f"{h.waits:,} waits" if h.waits is not None else "waits"
    what = "totals" if h.measure == "total" else "RFS I/O times"
    head = f"{h.event} ({tables}): the report's {waits} beside the {what} of the {_n(h.writes, 'writes')} of its window"
    if h.io_waits is not None and h.writes:
        head += (
            f" ({_n(h.io_waits, 'RFS I/O waits')}, {h.io_waits / h.writes:.1f} per write; a write's waits are summed,"
            " so a write of several waits falls in a higher bucket than each of them)"
        )
    if not h.writes:
        return head + ": none of the traces' writes falls in its window, nothing to set beside it."
    median_awr, median_trace = h.median_bucket()
    parts = [head + "."]
    if median_awr is not None and median_trace is not None:
        same = median_awr is median_trace
        parts.append(
            f"Half the waits took {bucket_range(median_awr)}"
            + (", and so did half the writes." if same else f"; half the writes {bucket_range(median_trace)}.")
        )
    if h.tail_ms is not None:
        awr, traces = h.at_least(h.tail_ms)
        traces = traces or 0.0
        at = f"{_bound(h.tail_ms)} or more"
        if not awr and not traces:
            parts.append(f"Neither has a wait of {at}.")
        elif traces > TAIL_FACTOR * awr:
            parts.append(
                f"{_pct(traces)} of the writes took {at}, against {_pct(awr)} of the report's waits: the traced"
                " minutes are worse than the report's window on average (the incident is in them)."
            )
        elif traces * TAIL_FACTOR < awr:
            parts.append(
                f"{_pct(awr)} of the report's waits took {at}, against {_pct(traces)} of the writes: most of the"
                " window's slow waits fall outside the traced minutes (or on a destination the traces do not hold)."
            )
        else:
            parts.append(
                f"{_pct(traces)} of the writes and {_pct(awr)} of the report's waits took {at}: the traced minutes"
                " look like the rest of the window."
            )
    return " ".join(parts)


def skipped_sentence(check: AwrCheck) -> str:
    """The sections of the report that were not read, and why ("" when all were)."""
    parts = [
        f"{s.section or 'report'}{f' (line {s.line})' if s.line else ''}: {s.reason.rstrip('.')}"
        for s in check.report.skipped
    ]
    return "Not read: " + "; ".join(parts) + "." if parts else ""


# ---------------------------------------------------------------------------- distance
def distance_sentence(d: DistanceCheck, res: float | None = None) -> str:
    """The lowest round trips beside what light in fibre needs, and the 20 ms beyond which SYNC is rarely viable
    (`res`: the writes' stamp resolution, ms)."""
    light = f"Over {d.km:,.0f} km light in fibre needs about {ms(d.light_ms)} of round trip (1 ms per 100 km)"
    if d.floor_ms is None or d.above_ms is None:
        text = light + "; no write was seen on both sides to set beside it."
    elif d.above_ms < 0:
        text = (
            light + f"; the lowest round trips (network p{FLOOR_QUANTILE * 100:g} of {_n(d.writes, 'writes')})"
            f" are {ms(d.floor_ms, res)}, below it: check the distance (a shorter fibre path?) or the stamps."
        )
    else:
        text = (
            light + f"; the lowest round trips (network p{FLOOR_QUANTILE * 100:g} of {_n(d.writes, 'writes')})"
            f" are {ms(d.floor_ms, res)}, {ms(d.above_ms, res)} above that floor (equipment, routing and the redo's"
            f" own transfer), and the network p50 is {ms(d.p50_ms, res)}."
        )
    if d.light_ms >= SYNC_LIMIT_MS:
        return text + (
            f" Light alone needs {SYNC_LIMIT_MS:g} ms or more: beyond that round trip the MAA papers find SYNC"
            " rarely viable (Far Sync near the primary, or ASYNC)."
        )
    if d.p50_ms is not None and d.p50_ms >= SYNC_LIMIT_MS:
        return text + (
            f" The network p50 is beyond the {SYNC_LIMIT_MS:g} ms round trip where the MAA papers find SYNC rarely"
            " viable, while light needs less: the path, not the distance, is slow."
        )
    return (
        text
        + f" Both are below the {SYNC_LIMIT_MS:g} ms round trip beyond which the MAA papers find SYNC rarely viable."
    )


def awr_remarks(check: AwrCheck) -> list[str]:
    """What a DBA remarks on a primary's report: the redo transport events it lacks (an ASYNC primary, no SYNC
    destination in its window), and its workload as the MAA paper reads it (Load Profile, Instance Activity)."""
    r = check.report
    out = []
    names = {e.event: e for e in check.events}
    if check.side != "standby" and "SYNC Remote Write" not in names and "LNS wait on SENDREQ" not in names:
        shipped = names.get("ASYNC Remote Write")
        if shipped is not None:
            waits = f" ({shipped.waits:,} waits)" if shipped.waits else ""
            out.append(
                f"The report shows ASYNC Remote Write{waits} and no SYNC Remote Write: in its window this primary"
                " shipped its redo ASYNC (TTnn), so no commit waited for a standby; the traces' SYNC writes have"
                " no counterpart in it."
            )
        elif (r.release or "").startswith("11."):
            out.append(
                "The report shows no LNS wait on SENDREQ: in its window this 11.2 primary shipped no redo SYNC (or"
                " the event fell below the report's thresholds)."
            )
        elif r.kind == "awr":
            out.append(
                "The report shows no SYNC Remote Write: in its window this primary had no SYNC destination (an"
                " ASYNC or deferred one), or the event fell below the report's thresholds."
            )
    load = r.load
    if load is not None and not load.empty:
        parts = []
        if load.redo_bytes_s is not None:
            parts.append(f"redo {load.redo_bytes_s / 2**20:,.2f} MB/s")
        if load.transactions_s is not None:
            parts.append(f"{load.transactions_s:,.1f} transactions/s")
        if load.write_bytes is not None and load.redo_writes:
            per = f", {load.redo_writes / check.window_s:,.0f} a second" if check.window_s else ""
            parts.append(f"{load.redo_writes:,.0f} redo writes{per} of {size_text(load.write_bytes)} on average")
        if load.write_ms is not None:
            parts.append(f"redo write time {ms(load.write_ms)} a write (local and remote)")
        out.append("Workload (Load Profile, Instance Activity Stats): " + "; ".join(parts) + ".")
    return out


def workload_sentence(checks: Checks) -> str:
    """The AWR workload beside the oratcptest runs: the redo rate against the bandwidth measured (the MAA
    paper: bandwidth for the peak redo rate with the rest of the traffic), and the average redo write
    against the payloads sent; "" without a primary report's Load Profile."""
    work = advice.workload(checks)
    if work is None or not work.redo_bytes_s:
        return ""
    rate = work.redo_bytes_s
    text = f"{work.source}: redo {rate / advice.MB:,.2f} MB/s ({rate * 8 / 1e6:,.1f} Mbit/s), its window's average"
    bd = checks.bandwidth_delay
    if bd is not None and bd.bandwidth_bytes_s:
        share = rate / bd.bandwidth_bytes_s
        text += (
            f", {share:.0%} of the {bd.bandwidth_bytes_s / advice.MB:,.1f} MB/s oratcptest measured"
            f" ({bd.bandwidth_source.removeprefix('oratcptest ')})"
        )
        text += (
            ": little headroom for peaks, gap resolution and other traffic on the path"
            if share >= advice.BANDWIDTH_SHARE
            else ": the network carries it"
        )
    elif checks.runs:
        text += "; no oratcptest run with a real payload measured a bandwidth to set it against"
    payloads = [c.run.settings.payload_bytes for c in checks.runs if c.run.settings.payload_bytes]
    return text + "." + advice.write_size_sentence(work, payloads)
