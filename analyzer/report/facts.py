"""The facts of an analysis in plain words (files, hosts, versions, time span, zones, clock, coverage), its
counts, and the caveats every report gives (`notes`)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

import polars as pl

from analyzer.base.vocab import SIDES, Role
from analyzer.base.words import duration, ms, plural
from analyzer.base.zones import ASSUMED_COMMON, same_host, short_host, unmatched_hosts, zone_label
from analyzer.findings import compare, inventory
from analyzer.findings.files import FileView, oracle_versions
from analyzer.match.analysis import Analysis
from analyzer.report.fmt import common_dir


@dataclass(frozen=True)
class Counts:
    """The analysis counted: the writes each side saw and matched, the slow ones, what was left over."""

    primary_writes: int
    standby_writes: int
    matched_writes: int
    slow_writes: int
    unmatched_messages: int
    unparsed_lines: int
    lgwr_warnings: int

    @property
    def match_rate(self) -> float | None:
        """Matched writes per write the primary sent (4 decimals), None when it sent none."""
        return round(self.matched_writes / self.primary_writes, 4) if self.primary_writes else None


def counts(a: Analysis, files: Sequence[FileView]) -> Counts:
    """The counts of an analysis (`files`: its files' views)."""
    return Counts(
        primary_writes=a.primary_exchanges,
        standby_writes=a.standby_exchanges,
        matched_writes=int(a.writes["matched"].sum()),
        slow_writes=int(a.writes["slow"].sum()),
        unmatched_messages=a.unmatched.height,
        unparsed_lines=sum(f.unparsed for f in files),
        lgwr_warnings=a.warnings.height,
    )


def _span(a: Analysis, files: Sequence[FileView]) -> str:
    """First to last remote write, else the trace files' own span."""
    if a.writes.height:
        sent = pl.col("sent_at")
        times, what = list(a.writes.select(sent.min().alias("first"), sent.max()).row(0)), "remote writes"
    else:
        times = [t for f in files for t in (f.first_at, f.last_at) if t]
        what = "trace files"
    if not times:
        return "unknown"
    first: datetime = min(times)
    last: datetime = max(times)
    seconds = (last - first).total_seconds()
    return f"{first:%Y-%m-%d %H:%M:%S} to {last:%Y-%m-%d %H:%M:%S} ({duration(seconds)} of {what})"


def _zones(files: Sequence[FileView]) -> str:
    counts = Counter(f.zone_text for f in files)
    return "; ".join(f"{label} ({plural(n, 'file')})" for label, n in sorted(counts.items()))


def _clock(a: Analysis) -> str:
    """`stby01 vs prim01: +0.004 ms +/- 0.503 ms (estimated)`, one per host pair."""
    parts = [
        f"{r['standby_host']} vs {r['primary_host']}: {ms(r['offset_ms'], signed=True)}"
        f" +/- {ms(r['bound_ms'])} ({r['source']})"
        for r in a.clock.iter_rows(named=True)
    ]
    return "; ".join(parts) or "unknown (no matched write)"


def facts(a: Analysis, counted: Counts, files: Sequence[FileView]) -> list[tuple[str, str]]:
    """The facts of an analysis in plain words: files, hosts, versions, time span, match rate, coverage."""
    roles = Counter(str(f.role) for f in files)
    hosts = {r: sorted({f.host for f in files if f.role == r and f.host}) for r in SIDES}
    rate = counted.match_rate
    skipped = f"; {len(a.skipped)} skipped" if a.skipped else ""
    lines, parsed = sum(f.lines for f in files), sum(f.parsed for f in files)
    ignored, unparsed = sum(f.ignored for f in files), sum(f.unparsed for f in files)
    return [
        ("Files", f"{len(files)} read: " + ", ".join(f"{n} {r}" for r, n in sorted(roles.items())) + skipped),
        ("Trace files in", common_dir([f.label for f in files]) or "(no common folder)"),
        ("Hosts", "; ".join(f"{r} {', '.join(h)}" for r, h in hosts.items() if h) or "unknown"),
        ("Oracle versions", ", ".join(oracle_versions(files)) or "unknown"),
        ("Time span (UTC)", _span(a, files)),
        ("Time zones", _zones(files)),
        ("Clock offset (standby - primary)", _clock(a)),
        (
            "Remote writes",
            f"{counted.primary_writes:,} sent by the primary, {counted.standby_writes:,} received by the"
            f" standby, {counted.matched_writes:,} matched (match rate {'n/a' if rate is None else f'{rate:.1%}'})",
        ),
        ("Slow writes", f"{counted.slow_writes:,} with total >= {a.options.threshold_ms:g} ms"),
        ("Unmatched messages", f"{counted.unmatched_messages:,}" + _in_gaps(a)),
        ("Coverage", f"{lines:,} lines: {parsed:,} parsed, {ignored:,} ignored, {unparsed:,} unparsed"),
        ("LGWR warnings", f"{counted.lgwr_warnings:,} (long writes and broadcast waits)"),
    ]


def _in_gaps(a: Analysis) -> str:
    """The messages counted with missing segments instead, when there are any."""
    if not a.gaps.height:
        return ""
    fell = int(a.gaps["messages"].sum())
    return f" ({fell:,} more fall in {a.gaps.height:,} missing segment(s): see Missing segments)"


def _hosts(files: Sequence[FileView], role: Role | None = None) -> list[str]:
    return sorted({f.host for f in files if f.host and role in (None, f.role)})


def host_option_notes(a: Analysis, files: Sequence[FileView]) -> list[str]:
    """`--tz HOST=` and `--clock-offset HOST=` values that named no host of the traces or were not
    used, and a zone assumed for some files that the clock offset contradicts."""
    out = []
    hosts = _hosts(files)
    known = ", ".join(hosts) or "none found"
    zones = a.options.zones
    for name in unmatched_hosts(zones.per_host, hosts):
        out.append(f"--tz {name}={zone_label(zones.per_host[name])} named no host of the traces (hosts: {known})")
    for name in set(zones.per_host) - set(unmatched_hosts(zones.per_host, hosts)):
        mine = [f for f in files if same_host(name, f.host)]
        if mine and all(f.own_zone for f in mine):
            out.append(f"--tz {name}=... was not used: the files of that host carry their own zone (ISO ADR lines)")
    if zones.default_min is not None and files and all(f.own_zone for f in files):
        out.append(
            f"--tz {zone_label(zones.default_min)} was not used: every file carries its own zone (ISO ADR lines)"
        )
    standby = _hosts(files, Role.STANDBY)
    for name in unmatched_hosts(a.options.clock_offsets, standby):
        primary = [h for h in _hosts(files, Role.PRIMARY) if same_host(name, h)]
        why = (
            f"{primary[0]} is a primary host: give the standby host, whose clock minus the primary's it is"
            if primary
            else f"standby hosts: {', '.join(standby) or 'none found'}"
        )
        out.append(f"--clock-offset {name}={a.options.clock_offsets[name]:g} named no standby host ({why})")
    out += _contradicted(a, files)
    return out


def _contradicted(a: Analysis, files: Sequence[FileView]) -> list[str]:
    """A zone assumed for a host's files that its clock offset says is wrong (a whole number of quarter hours)."""
    out = []
    for r in a.clock.iter_rows(named=True):
        if "time zone difference" not in (r["warning"] or ""):
            continue
        for host in (r["primary_host"], r["standby_host"]):
            assumed = sorted({f.zone for f in files if f.host == host and f.zone.startswith(ASSUMED_COMMON + " ")})
            out += [
                f"the zone of {host}'s files ({z.removesuffix(' (no zone in the file)')}) is contradicted by the clock"
                f" offset {r['standby_host']} - {r['primary_host']} of {r['offset_ms'] / 60_000:+,.1f} min: give --tz"
                f" {short_host(host or '')}=ZONE"
                for z in assumed
            ]
    return out


def notes(a: Analysis, files: Sequence[FileView]) -> list[str]:
    """Plain-language caveats: the inventory's findings, plus what the analysis itself found."""
    out = inventory.findings(a) + a.topology.notes() + host_option_notes(a, files)
    for run in a.baselines:  # --baseline lines that could not be read
        bad = run.lines.filter(pl.col("status") == "unparsed")
        if bad.height:
            first = bad.row(0, named=True)
            where = f"line {first['line']}: " if first["line"] is not None else ""
            out.append(
                f"oratcptest {compare.run_name(run)}: {bad.height} line(s) not read (first: {where}{first['reason']})"
            )
    warned = a.writes["warning"].drop_nulls().cast(pl.String)
    if len(warned):
        small = int(warned.str.contains("within timestamp resolution", literal=True).sum())
        out.append(
            f"{len(warned)} write(s) have a negative component ({small} within timestamp resolution,"
            f" {len(warned) - small} beyond it: see their 'warning')"
        )
    return out
