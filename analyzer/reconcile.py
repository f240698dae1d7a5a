"""AWR and Statspack reports beside the traces: each report's window in UTC, its overlap with the
writes, and its wait events beside the traces' figures for the writes inside that window.

`SYNC Remote Write` (the primary's LGWR waiting for the remote write) measures what a write's total
measures; the standby's `RFS write` what its RFS I/O waits measure (`rfs_io / rfs_io_waits`). The
MAA paper's impact view sets `log file sync` (the commit wait) beside `log file parallel write` (the
local write) and `SYNC Remote Write`: how much of the commit wait is remote. A report's times are the
database host's local time, read in the zone of that host's trace files (else `--tz`).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime

import polars as pl

from analyzer.awr import AwrReport
from analyzer.results import Analysis, known_zones
from analyzer.summary import matched_only
from analyzer.vocab import Role, Transport
from analyzer.zones import ASSUMED_UTC, Zone, same_host, value_to_utc, zone_label

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
        """The report's average wait (ms): total wait time / waits when both are printed (the printed
        average is rounded, to whole ms in 11.2), else the average as printed."""
        if self.waits and self.total_wait_s is not None:
            return self.total_wait_s * 1000.0 / self.waits
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
