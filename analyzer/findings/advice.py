"""The advice itself: what each cause of slow writes calls for, chosen by its symptom, in the words of the
MAA paper "Best Practices for Synchronous Redo Transport" (docs/rules.md lists each rule with its source).

- the network: stalls (a write's network part now and then far above the link's usual, its neighbours
  fine: "inconsistent network response") call for the interfaces, retransmits and the path; sustained
  congestion (slow network parts one after the other, the usual network part far above the link's floor,
  or a redo rate near the measured bandwidth: "insufficient network bandwidth") for socket buffers at
  3 x BDP, SDU 65535 and the bandwidth of the slowest segment. The paper: "The top network problems
  encountered are inconsistent network response and insufficient network bandwidth."
- standby I/O: saturation (slow I/O one write after the other, or standby redo log writes far slower than
  the primary's local log writes) calls for the standby storage and the standby redo log layout; outliers
  (rare spikes on a fast device) for Fast Sync, which "prevents fluctuations and outliers in standby I/O
  performance from impacting application response time", and the storage's spikes.
- other RFS time (RFS busy outside any wait): CPU and scheduling on the standby host.
"""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl

from analyzer.base.words import ms, plural
from analyzer.findings.compare import Checks, size_text
from analyzer.findings.ordered import Window, per_group
from analyzer.findings.summary import stamp_resolution

#: a series of slow writes of one cause is sustained when at least this share follows another of them
SUSTAINED_SHARE = 0.5
#: the usual network part is congested when it is this many times the link's floor ...
QUEUED_FACTOR = 2.0
#: ... and at least this much above it (ms)
QUEUED_MIN_MS = 1.0
#: a redo rate at this share of the measured bandwidth or more leaves no headroom
BANDWIDTH_SHARE = 0.7
#: standby redo log writes are saturated when their p50 is this many times the primary's local log write
IO_FACTOR = 2.0
#: the MAA redo log sizing: a log lasts at least this many minutes at the peak redo rate ...
LOG_MINUTES = 20
#: ... and its table of peak redo rate (MB/s) -> log size (GB)
LOG_SIZES = ((5, 4), (25, 16), (50, 32), (None, 64))
MB = 2**20


@dataclass(frozen=True)
class Workload:
    """What an AWR report of the primary says of the workload: its redo rate, average redo write, local
    log write time, and which report."""

    redo_bytes_s: float | None
    write_bytes: float | None
    local_write_ms: float | None
    source: str


def workload(checks: Checks | None) -> Workload | None:
    """The workload of the first primary AWR report with a Load Profile or a local write time (those that
    overlap the writes first)."""
    if checks is None:
        return None
    primary = [c for c in checks.awr if c.side != "standby"]
    for check in sorted(primary, key=lambda c: not c.overlaps):
        load = check.report.load
        local = next((e.mean_ms for e in check.events if e.event == "log file parallel write"), None)
        if (load is None or load.empty) and local is None:
            continue
        name = check.report.label.replace("\\", "/").rsplit("/", 1)[-1]
        rate = load.redo_bytes_s if load else None
        return Workload(rate, load.write_bytes if load else None, local, f"AWR {name}")
    return None


def log_size_gb(rate_bytes_s: float) -> tuple[int, float]:
    """(the MAA table's log size in GB for a peak rate, the rate per minute x LOG_MINUTES in GB)."""
    mb_s = rate_bytes_s / MB
    table = next(size for limit, size in LOG_SIZES if limit is None or mb_s <= limit)
    return table, rate_bytes_s * 60 * LOG_MINUTES / 2**30


def sustained(writes: pl.DataFrame, component: str) -> tuple[int, int]:
    """(slow writes whose largest part is `component`, those of them that follow another such write on
    their link and thread): how much of a cause comes in runs rather than alone."""
    keys = [c for c in ("primary_db", "standby_db", "thread") if c in writes.columns]
    hit = pl.col("slow").fill_null(False) & (pl.col("verdict") == component)

    def runs(timed: pl.LazyFrame, window: Window) -> pl.LazyFrame:
        after = window(pl.col("hit").shift(1)).fill_null(False) & pl.col("hit")
        return timed.with_columns(hit=hit).select(pl.col("hit").sum(), after=after.sum())

    found = per_group(writes, keys, ["slow", "verdict"], runs).sum()
    return int(found.item(0, "hit")), int(found.item(0, "after"))


def _quantile(values: pl.Series, q: float) -> float | None:
    found = values.drop_nulls().quantile(q, "nearest") if values.len() else None
    return float(found) if isinstance(found, int | float) else None


@dataclass(frozen=True)
class Symptom:
    """How a cause shows: its kind and the numbers that tell it, in a sentence."""

    kind: str
    evidence: str


def network_symptom(both: pl.DataFrame, checks: Checks | None, work: Workload | None) -> Symptom:
    """Stalls or bandwidth (see the module's docstring), from the writes seen on both sides."""
    floor, p50 = _quantile(both["network_ms"], 0.01), _quantile(both["network_ms"], 0.5)
    res = stamp_resolution(both)  # the network part is a difference of stamps
    slow, after = sustained(both, "network")
    reasons = []
    if slow and after >= SUSTAINED_SHARE * slow:
        reasons.append(f"{after:,} of {plural(slow, 'slow write')} held up by the network followed another one")
    if floor and p50 is not None and p50 >= QUEUED_FACTOR * floor and p50 - floor >= QUEUED_MIN_MS:
        reasons.append(f"the network part's p50 ({ms(p50, res)}) is {p50 / floor:.1f} x its floor ({ms(floor, res)})")
    bd = checks.bandwidth_delay if checks is not None else None
    if work is not None and work.redo_bytes_s and bd is not None and bd.bandwidth_bytes_s:
        share = work.redo_bytes_s / bd.bandwidth_bytes_s
        if share >= BANDWIDTH_SHARE:
            reasons.append(
                f"the redo rate ({work.redo_bytes_s / MB:,.1f} MB/s, {work.source}) is {share:.0%} of the"
                f" bandwidth oratcptest measured ({bd.bandwidth_bytes_s / MB:,.1f} MB/s)"
            )
    if reasons:
        return Symptom("bandwidth", "Sustained, not stalls: " + "; ".join(reasons) + ".")
    told = f"{after:,} of {plural(slow, 'slow write')} held up by the network followed another one" if slow else ""
    usual = (
        f"the network part's p50 ({ms(p50, res)}) is near its floor ({ms(floor, res)})"
        if p50 is not None and floor is not None
        else ""
    )
    parts = [p for p in (usual, told) if p]
    return Symptom("stalls", "Stalls, not bandwidth: " + "; ".join(parts) + "." if parts else "Stalls.")


def io_symptom(both: pl.DataFrame, work: Workload | None) -> Symptom:
    """Saturation or outliers (see the module's docstring), from the writes seen on both sides."""
    waited = both.filter(pl.col("rfs_io_ms") > 0) if "rfs_io_ms" in both.columns else both.clear()
    p50 = _quantile(waited["rfs_io_ms"], 0.5) if waited.height else None
    slow, after = sustained(both, "rfs_io")
    reasons = []
    if slow and after >= SUSTAINED_SHARE * slow:
        reasons.append(f"{after:,} of {plural(slow, 'slow write')} held up by standby I/O followed another one")
    local = work.local_write_ms if work is not None else None
    if p50 is not None and local and p50 >= IO_FACTOR * local:
        reasons.append(
            f"the standby's I/O p50 ({ms(p50)}) is {p50 / local:.1f} x the primary's log file parallel write"
            f" ({ms(local)}, {work.source if work else ''}): the MAA paper's red flag (it should be in line"
            " with the local write)"
        )
    if reasons:
        return Symptom("saturation", "Saturation, not outliers: " + "; ".join(reasons) + ".")
    usual = f"the standby I/O p50 is {ms(p50)}" if p50 is not None else ""
    alone = f"{slow - after:,} of {plural(slow, 'slow write')} held up by standby I/O came alone" if slow else ""
    parts = [p for p in (usual, alone) if p]
    return Symptom("outliers", "Outliers on a device that is usually fast: " + "; ".join(parts) + "." if parts else "")


# ---------------------------------------------------------------------------- the texts
NETWORK_STALLS = (
    "network-stalls",
    "Network stalls: interface drops, retransmits and the path",
    "Look for the stalls at the times of the slow writes on both hosts: `ip -s link` (the dropped and overrun"
    " counters show an interface at its limit), `netstat -s` or `ss -ti` (TCP retransmits and timeouts),"
    " `sar -n DEV` and `sar -n EDEV` (the rate and errors per interface), and the path between them (a switch,"
    " firewall, VPN or a link shared with backups: the MAA paper finds inconsistent network response the top"
    " network problem). Socket buffers and SDU do not help a stall; they size a link that is short of bandwidth.",
)
NETWORK_BANDWIDTH = (
    "network-bandwidth",
    "Network bandwidth: socket buffers at 3 x BDP, SDU 65535, the slowest segment",
    "Set the TCP send and receive socket buffers to 3 x the bandwidth-delay product (BDP = bandwidth x round"
    " trip) with RECV_BUF_SIZE and SEND_BUF_SIZE in the Oracle Net alias used for redo transport and in the"
    " standby listener (raise net.core.rmem_max and net.core.wmem_max on Linux to allow them), and SDU=65535"
    " in tnsnames.ora and listener.ora (or DEFAULT_SDU_SIZE in sqlnet.ora). The bandwidth must carry the peak"
    " redo rate with every other traffic on the same path, and the slowest segment, switch or interface of"
    " the path limits it.",
)
STANDBY_STORAGE = (
    "standby-redo-logs",
    "Standby I/O saturated: single-member standby redo logs on the fastest disk group",
    "It is critical for performance that standby redo log groups contain only a single member, in the fastest"
    " available disk group, so that standby log writes take as long as the primary's local log writes; size"
    " them exactly as the online redo logs, one group more per thread. Check the standby storage with"
    " `iostat -x` at the times of the slow writes (%util near 100% or avgqu-sz above 1 means the device is"
    " saturated: add bandwidth) and whatever shares it (other databases, backups, archiving).",
)
STANDBY_SPIKES = (
    "standby-io-outliers",
    "Standby I/O outliers: the spikes of the standby storage",
    "The standby redo log writes are usually fast and now and then very slow: look at the standby storage at"
    " the times of the slow writes (`iostat -x` for latency spikes, the storage array's own statistics, other"
    " databases or backups sharing it), and keep the standby redo logs single-member on the fastest disk group.",
)
FAST_SYNC = (
    "fast-sync",
    "Consider Fast Sync (SYNC NOAFFIRM)",
    "With Fast Sync (SYNC NOAFFIRM on the standby destination, LogXptMode FASTSYNC with the broker) the standby"
    " acknowledges the redo as soon as it has received it in memory, without waiting for the standby redo log"
    " write: standby I/O and its outliers leave the round trip. Trade-off: a very small exposure to data loss"
    " if the primary and the standby both fail within milliseconds of each other, before the standby I/O"
    " completes. It must be enabled explicitly (the default is SYNC AFFIRM).",
)
STANDBY_CPU = (
    "standby-cpu",
    "Standby CPU and scheduling for RFS",
    "Time inside RFS that is no wait points at the standby host: RFS needs CPU to write the standby redo logs."
    " At the times of the slow writes check `mpstat -P ALL` or `sar -u` (%idle near 0 means CPU-bound, %sys"
    " above 30% is high), `sar -q` (a run queue or load average above twice the cores), and memory (`sar -B`"
    " scans above 200 pages/s, `sar -W` swapping), and what else runs on the standby host.",
)
REDO_LOG_SIZE = (
    "redo-log-size",
    "Fewer log switches: larger redo logs",
    "Size the online redo logs, and the standby redo logs exactly the same, at 4 GB or at least the peak redo"
    f" rate per minute x {LOG_MINUTES} minutes (MAA: up to 5 MB/s 4 GB, up to 25 MB/s 16 GB, up to 50 MB/s 32 GB,"
    " above 50 MB/s 64 GB). At each log switch RFS updates the standby redo log headers and switches to a new"
    " one, the standby takes a full checkpoint and archives the previous log: remote writes slow down at every"
    " switch.",
)


def log_size_sentence(work: Workload | None) -> str:
    """The log size the MAA table gives for the AWR redo rate, or where to take the rate from."""
    if work is None or not work.redo_bytes_s:
        return " Take the peak redo rate from AWR reports of peak periods (batch, month end), not an average."
    table, minutes = log_size_gb(work.redo_bytes_s)
    return (
        f" {work.source} gives a redo rate of {work.redo_bytes_s / MB:,.1f} MB/s, the average of its window (a"
        f" peak period's report may show more): {LOG_MINUTES} minutes of it are {minutes:,.1f} GB, and the MAA"
        f" table gives logs of {table} GB for that rate."
    )


def write_size_sentence(work: Workload | None, payloads: list[int]) -> str:
    """The average redo write beside the oratcptest payloads (the SYNC test should send what LGWR sends)."""
    if work is None or not work.write_bytes:
        return ""
    size = size_text(work.write_bytes)
    off = [p for p in payloads if p and not 0.5 <= p / work.write_bytes <= 2]
    if not off:
        return f" The average redo write is {size} ({work.source}: redo size / redo writes)."
    return (
        f" The average redo write is {size} ({work.source}: redo size / redo writes), while oratcptest sent"
        f" {', '.join(size_text(p) for p in sorted(set(off)))} messages: a SYNC run with"
        f" -length={round(work.write_bytes / 1024)}k measures the round trip LGWR's writes see."
    )
