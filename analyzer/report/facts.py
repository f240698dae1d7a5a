"""The facts of an analysis in plain words (files, hosts, versions, time span, zones, clock, coverage)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from datetime import datetime
from typing import Any

import polars as pl

from analyzer.insights import duration, plural
from analyzer.results import Analysis, coverage
from analyzer.units import format_offset
from analyzer.vocab import SIDES


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


def _zones(a: Analysis) -> str:
    zones = a.options.zones
    shown = {f"--tz {h}=": f"--tz {h}={format_offset(m)}" for h, m in zones.per_host.items()}
    if zones.default_min is not None:
        shown["--tz"] = f"--tz {format_offset(zones.default_min)}"
    counts = Counter(shown.get(f.reduced.zone, f.reduced.zone) for f in a.files)
    return "; ".join(f"{label} ({plural(n, 'file')})" for label, n in sorted(counts.items()))


def _clock(a: Analysis) -> str:
    """`stby01 vs prim01: +0.004 ms +/- 0.503 ms (estimated)`, one per host pair."""
    parts = [
        f"{r['standby_host']} vs {r['primary_host']}: {r['offset_ms']:+,.3f} ms"
        f" +/- {r['bound_ms']:,.3f} ms ({r['source']})"
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
        ("Unmatched messages", f"{summary['unmatched_messages']:,}"),
        (
            "Coverage",
            f"{lines['lines']:,} lines: {lines['parsed']:,} parsed, {lines['ignored']:,} ignored,"
            f" {lines['unparsed']:,} unparsed",
        ),
        ("LGWR warnings (long writes, broadcast waits)", f"{len(summary['lgwr_warnings']):,}"),
    ]
