"""The facts of an analysis in plain words (files, hosts, versions, time span, zones, clock, coverage)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from datetime import datetime
from typing import Any

import polars as pl

from analyzer.base.units import format_offset
from analyzer.base.vocab import SIDES, Role
from analyzer.base.words import duration, ms, plural
from analyzer.base.zones import ASSUMED_COMMON, same_host, short_host, unmatched_hosts, utc_offset_at, zone_label
from analyzer.match.analysis import Analysis
from analyzer.reduce.results import FileResult, coverage
from analyzer.report.fmt import common_dir


def oracle_versions(a: Analysis) -> list[str]:
    """The Oracle versions named in the trace headers, sorted."""
    return sorted({f.reduced.info.version for f in a.files if f.reduced.info.version})


def _span(a: Analysis) -> str:
    """First to last remote write, else the trace files' own span."""
    if a.writes.height:
        sent = pl.col("sent_at")
        times, what = list(a.writes.select(sent.min().alias("first"), sent.max()).row(0)), "remote writes"
    else:
        times = [t for f in a.files for t in (f.reduced.first_at, f.reduced.last_at) if t]
        what = "trace files"
    if not times:
        return "unknown"
    first: datetime = min(times)
    last: datetime = max(times)
    seconds = (last - first).total_seconds()
    return f"{first:%Y-%m-%d %H:%M:%S} to {last:%Y-%m-%d %H:%M:%S} ({duration(seconds)} of {what})"


def applied_offset(f: FileResult) -> str:
    """The UTC offset(s) the file's stamps were read in: `+01:00`, or `+01:00/+02:00` across a change."""
    ex = f.reduced.exchanges
    if ex.zones.height:
        minutes = sorted({int(m) for m in ex.zones["utc_offset_min"]})
    else:
        instants = [t for t in (f.reduced.first_at, f.reduced.last_at) if t is not None]
        minutes = sorted({utc_offset_at(ex.fallback_min, t) for t in instants})
        if isinstance(ex.fallback_min, int):
            minutes = [ex.fallback_min]
    return "/".join(format_offset(m) for m in minutes)


def zone_text(f: FileResult) -> str:
    """Where a file's zone came from, with the offset applied when the source does not say it."""
    zone, offset = f.reduced.zone, applied_offset(f)
    return zone if not offset or offset in zone else f"{zone}: {offset}"


def _zones(a: Analysis) -> str:
    counts = Counter(zone_text(f) for f in a.files)
    return "; ".join(f"{label} ({plural(n, 'file')})" for label, n in sorted(counts.items()))


def _clock(a: Analysis) -> str:
    """`stby01 vs prim01: +0.004 ms +/- 0.503 ms (estimated)`, one per host pair."""
    parts = [
        f"{r['standby_host']} vs {r['primary_host']}: {ms(r['offset_ms'], signed=True)}"
        f" +/- {ms(r['bound_ms'])} ({r['source']})"
        for r in a.clock.iter_rows(named=True)
    ]
    return "; ".join(parts) or "unknown (no matched write)"


def facts(a: Analysis, summary: Mapping[str, Any]) -> list[tuple[str, str]]:
    """The facts of an analysis in plain words: files, hosts, versions, time span, match rate, coverage."""
    infos = [f.reduced.info for f in a.files]
    roles = Counter(str(info.role) for info in infos)
    hosts = {r: sorted({i.host for i in infos if i.role == r and i.host}) for r in SIDES}
    cov = coverage(a.files)
    lines = {c: int(cov[c].sum()) if cov.height else 0 for c in ("lines", "parsed", "ignored", "unparsed")}
    rate = summary["match_rate"]
    skipped = f"; {len(a.skipped)} skipped" if a.skipped else ""
    return [
        ("Files", f"{len(a.files)} read: " + ", ".join(f"{n} {r}" for r, n in sorted(roles.items())) + skipped),
        ("Trace files in", common_dir([f.source.label for f in a.files]) or "(no common folder)"),
        ("Hosts", "; ".join(f"{r} {', '.join(h)}" for r, h in hosts.items() if h) or "unknown"),
        ("Oracle versions", ", ".join(oracle_versions(a)) or "unknown"),
        ("Time span (UTC)", _span(a)),
        ("Time zones", _zones(a)),
        ("Clock offset (standby - primary)", _clock(a)),
        (
            "Remote writes",
            f"{summary['primary_writes']:,} sent by the primary, {summary['standby_writes']:,} received by the"
            f" standby, {summary['matched_writes']:,} matched (match rate {'n/a' if rate is None else f'{rate:.1%}'})",
        ),
        ("Slow writes", f"{summary['slow_writes']:,} with total >= {a.options.threshold_ms:g} ms"),
        ("Unmatched messages", f"{summary['unmatched_messages']:,}" + _in_gaps(a)),
        (
            "Coverage",
            f"{lines['lines']:,} lines: {lines['parsed']:,} parsed, {lines['ignored']:,} ignored,"
            f" {lines['unparsed']:,} unparsed",
        ),
        ("LGWR warnings", f"{len(summary['lgwr_warnings']):,} (long writes and broadcast waits)"),
    ]


def _in_gaps(a: Analysis) -> str:
    """The messages counted with missing segments instead, when there are any."""
    if not a.gaps.height:
        return ""
    fell = int(a.gaps["messages"].sum())
    return f" ({fell:,} more fall in {a.gaps.height:,} missing segment(s): see Missing segments)"


def _hosts(a: Analysis, role: Role | None = None) -> list[str]:
    return sorted({f.reduced.info.host for f in a.files if f.reduced.info.host and role in (None, f.reduced.info.role)})


def host_option_notes(a: Analysis) -> list[str]:
    """`--tz HOST=` and `--clock-offset HOST=` values that named no host of the traces or were not
    used, and a zone assumed for some files that the clock offset contradicts."""
    out = []
    hosts = _hosts(a)
    known = ", ".join(hosts) or "none found"
    zones = a.options.zones
    for name in unmatched_hosts(zones.per_host, hosts):
        out.append(f"--tz {name}={zone_label(zones.per_host[name])} named no host of the traces (hosts: {known})")
    for name in set(zones.per_host) - set(unmatched_hosts(zones.per_host, hosts)):
        mine = [f for f in a.files if same_host(name, f.reduced.info.host)]
        if mine and all(f.reduced.exchanges.zones.height for f in mine):
            out.append(f"--tz {name}=... was not used: the files of that host carry their own zone (ISO ADR lines)")
    if zones.default_min is not None and a.files and all(f.reduced.exchanges.zones.height for f in a.files):
        out.append(
            f"--tz {zone_label(zones.default_min)} was not used: every file carries its own zone (ISO ADR lines)"
        )
    standby = _hosts(a, Role.STANDBY)
    for name in unmatched_hosts(a.options.clock_offsets, standby):
        primary = [h for h in _hosts(a, Role.PRIMARY) if same_host(name, h)]
        why = (
            f"{primary[0]} is a primary host: give the standby host, whose clock minus the primary's it is"
            if primary
            else f"standby hosts: {', '.join(standby) or 'none found'}"
        )
        out.append(f"--clock-offset {name}={a.options.clock_offsets[name]:g} named no standby host ({why})")
    out += _contradicted(a)
    return out


def _contradicted(a: Analysis) -> list[str]:
    """A zone assumed for a host's files that its clock offset says is wrong (a whole number of quarter hours)."""
    out = []
    for r in a.clock.iter_rows(named=True):
        if "time zone difference" not in (r["warning"] or ""):
            continue
        for host in (r["primary_host"], r["standby_host"]):
            assumed = sorted(
                {
                    f.reduced.zone
                    for f in a.files
                    if f.reduced.info.host == host and f.reduced.zone.startswith(ASSUMED_COMMON + " ")
                }
            )
            out += [
                f"the zone of {host}'s files ({z.removesuffix(' (no zone in the file)')}) is contradicted by the clock"
                f" offset {r['standby_host']} - {r['primary_host']} of {r['offset_ms'] / 60_000:+,.1f} min: give --tz"
                f" {short_host(host or '')}=ZONE"
                for z in assumed
            ]
    return out
