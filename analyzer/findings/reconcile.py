"""AWR and Statspack reports beside the traces: each report's window in UTC, its overlap with the
writes, and its wait events beside the traces' figures for the writes inside that window.

`SYNC Remote Write` (the primary's LGWR waiting for the remote write) measures what a write's total
measures; the standby's `RFS write` what its RFS I/O waits measure (`rfs_io / rfs_io_waits`). The
MAA paper's impact view sets `log file sync` (the commit wait) beside `log file parallel write` (the
local write) and `SYNC Remote Write`: how much of the commit wait is remote. A report's times are the
database host's local time, read in the zone of that host's trace files (else `--tz`).

The report's Wait Event Histogram of `SYNC Remote Write` (and of `RFS write` on the standby) is set beside
the traces' own histogram of the same writes (`HistogramCheck`): its tables (the main one, the detail
tables up to 32 ms, 2 s, 2 min) are merged into one partition of V$EVENT_HISTOGRAM buckets, and each
bucket gets the share of the writes whose total (RFS I/O time) falls in it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from datetime import datetime

import polars as pl

from analyzer.base.schemas import matched_only
from analyzer.base.vocab import Role, Transport
from analyzer.base.zones import ASSUMED_UTC, Zone, same_host, value_to_utc, zone_label
from analyzer.companions.awr import AwrReport
from analyzer.match.analysis import Analysis
from analyzer.reduce.results import known_zones

#: AWR and the traces agree when their means differ by at most this share
AGREE_SHARE = 0.1


def _float(value: object) -> float | None:
    """A value polars gives as Any: a float, or None."""
    return float(value) if isinstance(value, int | float) else None


def _time(value: object) -> datetime | None:
    return value if isinstance(value, datetime) else None


@dataclass(frozen=True)
class EventCheck:
    """One wait event of a report, and the traces' figure it measures (when there is one)."""

    event: str
    section: str
    waits: int | None
    avg_ms: float | None
    total_wait_s: float | None
    #: "total" (SYNC Remote Write), "rfs_io per wait" (RFS write), else None
    measure: str | None = None
    #: writes (or RFS I/O waits) behind the traces' figure, and their mean (ms)
    trace_count: int = 0
    trace_mean_ms: float | None = None

    @property
    def mean_ms(self) -> float | None:
        """The report's average wait (ms) as it prints it ("Avg wait"): the report computes it from
        microseconds, while its Total Wait Time is rounded to seconds. Only a whole number of ms (11.2
        prints no decimals) gives way to total wait time / waits when that rounds to it (finer)."""
        computed = self.total_wait_s * 1000.0 / self.waits if self.waits and self.total_wait_s is not None else None
        if self.avg_ms is None:
            return computed
        if computed is not None and self.avg_ms.is_integer() and abs(computed - self.avg_ms) <= 0.5:
            return computed
        return self.avg_ms

    @property
    def difference(self) -> float | None:
        """The traces' mean against the report's average: +0.2 is 20 % above it."""
        mean = self.mean_ms
        if self.trace_mean_ms is None or not mean:
            return None
        return self.trace_mean_ms / mean - 1.0


@dataclass(frozen=True)
class Impact:
    """The MAA paper's impact view: how much of the commit wait (`log file sync`) is remote."""

    log_file_sync_ms: float
    local_write_ms: float | None
    remote_write_ms: float | None

    @property
    def remote_share(self) -> float | None:
        return None if self.remote_write_ms is None else self.remote_write_ms / self.log_file_sync_ms

    @property
    def local_share(self) -> float | None:
        return None if self.local_write_ms is None else self.local_write_ms / self.log_file_sync_ms


def oracle_bound(value_ms: float) -> float:
    """A histogram bound as V$EVENT_HISTOGRAM draws it: a power of two of milliseconds from 1 ms (the
    reports' `1s` is 1024 ms, `1/8s` 128 ms, `1m` 64 x 1024 ms), of microseconds below."""
    if value_ms <= 0:
        return 0.0
    if value_ms >= 1:
        return float(2 ** round(math.log2(value_ms)))
    return float(2 ** round(math.log2(value_ms * 1000))) / 1000


@dataclass(frozen=True)
class HistogramBucket:
    """One bucket: its label and table as the report prints them, its bounds (ms, `oracle_bound`), the share
    of the event's waits the report puts in it and how many of the traces' writes fall in it."""

    label: str
    table: str
    lower_ms: float
    upper_ms: float | None
    awr_pct: float
    trace_writes: int


@dataclass(frozen=True)
class HistogramCheck:
    """A report's histogram of one event beside the traces' histogram of the writes of its window."""

    event: str
    #: "total" (SYNC Remote Write: each write's total) or "rfs_io per write" (RFS write: each write's RFS I/O time)
    measure: str
    #: the event's waits in the report (its main table's count)
    waits: int | None
    #: the writes compared (with RFS I/O waits, for `RFS write`) and, for `RFS write`, their I/O waits
    writes: int
    io_waits: int | None
    buckets: tuple[HistogramBucket, ...]
    #: where the tail starts: the highest bucket bound at or below the slow-write threshold (ms)
    tail_ms: float | None = None

    def trace_pct(self, bucket: HistogramBucket) -> float | None:
        """The share (%) of the compared writes in a bucket, None without any write."""
        return 100.0 * bucket.trace_writes / self.writes if self.writes else None

    def at_least(self, bound_ms: float) -> tuple[float, float | None]:
        """The shares (%) of the report's waits and of the traces' writes at `bound_ms` or more."""
        above = [b for b in self.buckets if b.lower_ms >= bound_ms]
        writes = sum(b.trace_writes for b in above)
        return sum(b.awr_pct for b in above), (100.0 * writes / self.writes if self.writes else None)

    def median_bucket(self) -> tuple[HistogramBucket | None, HistogramBucket | None]:
        """The buckets that hold the median wait of the report and the median write of the traces."""
        return _median(self.buckets, [b.awr_pct for b in self.buckets]), _median(
            self.buckets, [float(b.trace_writes) for b in self.buckets]
        )


def _median(buckets: tuple[HistogramBucket, ...], weights: list[float]) -> HistogramBucket | None:
    total, running = sum(weights), 0.0
    for bucket, weight in zip(buckets, weights, strict=True):
        running += weight
        if total and running >= total / 2:
            return bucket
    return None


#: a bucket of a report's table: label, table, lower and upper bound (ms, `oracle_bound`), share of the waits (%)
_Part = tuple[str, str, float, float | None, float]


def _partition(rows: pl.DataFrame) -> list[_Part]:
    """The finest buckets the report's tables of one event give, in order, without overlap: from each
    bound on, the bucket of any table that starts there and ends first (a detail table's first bucket,
    `<32ms`, holds every wait below its range)."""
    found: list[_Part] = [
        (
            str(r["bucket"]),
            str(r["table"]),
            oracle_bound(float(r["lower_ms"])),
            None if r["upper_ms"] is None else oracle_bound(float(r["upper_ms"])),
            float(r["pct"]),
        )
        for r in rows.iter_rows(named=True)
    ]
    out: list[_Part] = []
    at: float | None = 0.0
    while at is not None:
        starting = [p for p in found if p[2] == at] or [p for p in found if p[2] > at]
        if not starting:
            break
        low = min(p[2] for p in starting)
        chosen = min((p for p in starting if p[2] == low), key=lambda p: math.inf if p[3] is None else p[3])
        out.append(chosen)
        at = chosen[3]
    return out


def _between(values: pl.Series, lower: float, upper: float | None) -> pl.Series:
    return values >= lower if upper is None else (values >= lower) & (values < upper)


#: the events whose histograms are set beside the traces', with the side that prints them and the measure
HISTOGRAM_EVENTS = {"SYNC Remote Write": (Role.PRIMARY, "total"), "RFS write": (Role.STANDBY, "rfs_io per write")}


def histogram_check(
    report: AwrReport, event: str, measure: str, inside: pl.DataFrame, threshold_ms: float
) -> HistogramCheck | None:
    """The report's histogram of `event` (all its tables merged) beside the `inside` writes' total (or RFS
    I/O time, of the writes that waited on RFS I/O), bucket by bucket; None when the report prints none.
    The tail is what lies at the highest bucket bound at or below `threshold_ms` or beyond."""
    rows = report.histogram.filter(pl.col("event") == event)
    if not rows.height:
        return None
    parts = _partition(rows)
    io_waits = None
    if measure == "total":
        values = inside["total_ms"].drop_nulls()
    else:
        waited = inside.filter(pl.col("rfs_io_waits") > 0)
        values, io_waits = waited["rfs_io_ms"].drop_nulls(), int(waited["rfs_io_waits"].sum())
    buckets = [
        HistogramBucket(label, table, lower, upper, pct, int(_between(values, lower, upper).sum()))
        for label, table, lower, upper, pct in parts
    ]
    while len(buckets) > 1 and not buckets[0].awr_pct and not buckets[0].trace_writes:
        buckets.pop(0)
    while len(buckets) > 1 and not buckets[-1].awr_pct and not buckets[-1].trace_writes:
        buckets.pop()
    most = rows["waits"].max()  # the main table counts every wait; a detail table those of its range
    bounds = [b.lower_ms for b in buckets if 0 < b.lower_ms <= threshold_ms]
    return HistogramCheck(
        event,
        measure,
        int(most) if isinstance(most, int) else None,
        values.len(),
        io_waits,
        tuple(buckets),
        max(bounds) if bounds else None,
    )


@dataclass(frozen=True)
class AwrCheck:
    """One report: its side, its window in UTC, how it overlaps the writes, its events beside the traces."""

    report: AwrReport
    #: "primary", "standby" or None (neither its role, its host nor its events tell)
    side: str | None
    begin_utc: datetime | None
    end_utc: datetime | None
    #: how the report's local times were read: `+01:00, the zone of prim01's trace files`
    zone_source: str
    #: the trace host the report's host names (its writes only are compared), else None (all writes)
    host: str | None
    #: the writes compared: first and last sent, and the seconds of the report's window they cover
    first_write: datetime | None
    last_write: datetime | None
    overlap_s: float | None
    #: writes (seen on both sides) sent inside the window; the figures are theirs
    writes: int
    events: tuple[EventCheck, ...]
    impact: Impact | None
    #: writes inside the window that went over Fast Sync, and the SYNC destinations they went to
    fast_sync_writes: int
    destinations: tuple[str, ...]
    #: the report's histogram of `SYNC Remote Write` / `RFS write` beside the traces' (when it prints one)
    histograms: tuple[HistogramCheck, ...] = ()

    @property
    def window_s(self) -> float | None:
        if self.begin_utc is None or self.end_utc is None:
            return None
        return (self.end_utc - self.begin_utc).total_seconds()

    @property
    def overlaps(self) -> bool | None:
        """The window holds some of the writes (None when the report's window is unknown)."""
        return None if self.window_s is None else self.writes > 0


#: the section of a report each event is taken from, in order of preference
_SECTIONS = {"log file sync": ("foreground", "all", "background")}
_DEFAULT_SECTIONS = ("background", "all", "foreground")
_RFS_IO = ("RFS write", "RFS random i/o", "RFS sequential i/o")


def _zone(report: AwrReport, a: Analysis) -> tuple[Zone, str]:
    """The zone of the report's local times: its host's trace files', else --tz, else UTC (assumed)."""
    if report.host:
        zones: set[Zone] = set()
        for f in a.files:
            if same_host(report.host, f.reduced.info.host):
                zones |= known_zones(f) or set()
        if len(zones) == 1:
            zone = zones.pop()
            return zone, f"{zone_label(zone)}, the zone of {report.host}'s trace files"
    zone, source = a.options.zones.for_host(report.host)
    if source == ASSUMED_UTC:
        return zone, "+00:00, assumed: no trace file of its host carries a zone (use --tz HOST=ZONE)"
    return zone, f"{zone_label(zone)}, from {source}"


def _side(report: AwrReport, a: Analysis) -> str | None:
    role = (report.role or "").upper()
    if "STANDBY" in role:
        return str(Role.STANDBY)
    if "PRIMARY" in role:
        return str(Role.PRIMARY)
    for side in (Role.PRIMARY, Role.STANDBY):
        column = a.writes[f"{side}_host"].cast(pl.String).drop_nulls().unique()
        if report.host and any(same_host(report.host, h) for h in column):
            return str(side)
    names = set(report.events["event"].to_list())
    if names & set(_RFS_IO):
        return str(Role.STANDBY)
    return str(Role.PRIMARY) if names else None


def _pick(report: AwrReport, event: str) -> dict[str, object] | None:
    rows = report.events.filter(pl.col("event") == event)
    for section in _SECTIONS.get(event, _DEFAULT_SECTIONS):
        found = rows.filter(pl.col("section") == section)
        if found.height:
            return found.row(0, named=True)
    return None


def awr_check(report: AwrReport, a: Analysis) -> AwrCheck:
    """The report beside the writes of its host (all writes when its host is none of the traces')
    sent inside its window."""
    side = _side(report, a)
    zone, zone_source = _zone(report, a)
    begin = value_to_utc(report.begin_time, zone) if report.begin_time else None
    end = value_to_utc(report.end_time, zone) if report.end_time else None
    column = "standby_host" if side == str(Role.STANDBY) else "primary_host"
    both = matched_only(a.writes, "sent_at", "total_ms", "rfs_io_ms", "rfs_io_waits", "transport", "standby_db", column)
    hosts = both[column].cast(pl.String).drop_nulls().unique().sort().to_list()
    host = next((h for h in hosts if report.host and same_host(report.host, h)), None)
    mine = both.filter(pl.col(column).cast(pl.String) == host) if host else both
    inside = mine
    overlap = None
    first, last = _time(mine["sent_at"].min()), _time(mine["sent_at"].max())
    if begin is not None and end is not None:
        inside = mine.filter(pl.col("sent_at").is_between(begin, end))
        if first is not None and last is not None:
            overlap = max(0.0, (min(end, last) - max(begin, first)).total_seconds())
    events = []
    for name in dict.fromkeys(report.events["event"].to_list()):
        row = _pick(report, name)
        if row is None:
            continue
        waits = row["waits"]
        check = EventCheck(
            name,
            str(row["section"]),
            waits if isinstance(waits, int) else None,
            _float(row["avg_wait_ms"]),
            _float(row["total_wait_s"]),
        )
        if name == "SYNC Remote Write" and side != str(Role.STANDBY):
            check = _with(check, "total", inside.height, _float(inside["total_ms"].mean()))
        elif name == "RFS write" and side == str(Role.STANDBY):
            io_waits = int(inside["rfs_io_waits"].sum())
            mean = float(inside["rfs_io_ms"].sum()) / io_waits if io_waits else None
            check = _with(check, "rfs_io per wait", io_waits, mean)
        events.append(check)
    histograms = [
        found
        for event, (role, measure) in HISTOGRAM_EVENTS.items()
        if (side == str(Role.STANDBY)) == (role is Role.STANDBY)
        and (found := histogram_check(report, event, measure, inside, a.options.threshold_ms)) is not None
    ]
    fast = inside.filter(pl.col("transport").cast(pl.String) == str(Transport.FASTSYNC)).height
    return AwrCheck(
        report=report,
        side=side,
        begin_utc=begin,
        end_utc=end,
        zone_source=zone_source,
        host=host,
        first_write=first,
        last_write=last,
        overlap_s=overlap,
        writes=inside.height,
        events=tuple(events),
        impact=_impact(events),
        fast_sync_writes=fast,
        destinations=tuple(sorted(inside["standby_db"].cast(pl.String).drop_nulls().unique().to_list())),
        histograms=tuple(histograms),
    )


def _with(check: EventCheck, measure: str, count: int, mean: float | None) -> EventCheck:
    return replace(check, measure=measure, trace_count=count, trace_mean_ms=mean if count else None)


def _impact(events: list[EventCheck]) -> Impact | None:
    """log file sync against log file parallel write (local) and SYNC Remote Write (remote), averages."""
    means = {e.event: e.mean_ms for e in events}
    commit = means.get("log file sync")
    if not commit:
        return None
    return Impact(commit, means.get("log file parallel write"), means.get("SYNC Remote Write"))
