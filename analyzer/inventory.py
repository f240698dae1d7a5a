"""Inventory: what an upload holds (files and their classification) and what is missing, in words.

The findings are the caveats every report prints (`analyzer.report.model.notes` uses them).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

import polars as pl

from analyzer.api import Analysis, FileResult
from analyzer.schemas import INVENTORY


def _threads(files: list[FileResult], role: str) -> set[int]:
    found: set[int] = set()
    for f in files:
        if f.tables.info.role == role:
            found |= set(f.tables.threads)
    return found


def _span(files: list[FileResult], role: str) -> tuple[datetime, datetime] | None:
    firsts = [f.tables.first_at for f in files if f.tables.info.role == role and f.tables.first_at]
    lasts = [f.tables.last_at for f in files if f.tables.info.role == role and f.tables.last_at]
    return (min(firsts), max(lasts)) if firsts and lasts else None


def _coverage_findings(a: Analysis) -> list[str]:
    out = []
    primary, standby = _span(a.files, "primary"), _span(a.files, "standby")
    if primary and standby and (primary[1] < standby[0] or standby[1] < primary[0]):
        fmt = "%Y-%m-%d %H:%M:%S"
        out.append(
            f"trace windows do not overlap: primary {primary[0]:{fmt}} to {primary[1]:{fmt}} UTC, "
            f"standby {standby[0]:{fmt}} to {standby[1]:{fmt}} UTC (check --tz, or the files are from different times)"
        )
    p_threads, s_threads = _threads(a.files, "primary"), _threads(a.files, "standby")
    if p_threads and s_threads:
        out += [f"thread {t} has NSS messages but no standby counterpart" for t in sorted(p_threads - s_threads)]
        out += [f"thread {t} has RFS messages but no primary counterpart" for t in sorted(s_threads - p_threads)]
    return out


def findings(a: Analysis) -> list[str]:
    """Plain-language findings: missing sides, missing tracing, non-overlapping windows, assumptions."""
    out = []
    roles = {f.tables.info.role for f in a.files}
    messages = sum(f.tables.messages for f in a.files)
    if not messages:
        out.append("no event 16410 messages found: was the event set on the primary and the standby?")
    if "standby" not in roles and messages:
        out.append("no standby RFS trace: the network/RFS split is unavailable, totals come from the primary only")
    if "primary" not in roles and messages:
        out.append("no primary NSS/LNS/LGWR trace with 16410 messages: only RFS time and its I/O split are available")
    for f in a.files:
        if f.tables.info.role == "standby" and not f.tables.waits:
            out.append(f"RFS trace {f.source.label} has no 10046 WAIT lines: rfs_io cannot be told from rfs_other")
    if messages and not any(f.tables.lgwr.height for f in a.files):
        out.append("no LGWR trace with long-write warnings: warnings cannot be tied to remote writes")
    out += [f"{f.source.label}: {f.tables.tim.warning}" for f in a.files if f.tables.tim.warning]
    out += _coverage_findings(a)
    assumed = [f for f in a.files if f.tables.zone.startswith("assumed")]
    if assumed:
        out.append(
            f"{len(assumed)} file(s) have no time zone and none was given (--tz): "
            "UTC assumed for display; durations are unaffected"
        )
    out += [f"read stopped early: {f.source.label}: {f.stats.error}" for f in a.files if f.stats.error]
    lost = [s for s in a.skipped if s.partial]
    out += [f"not read: {s.label}: {s.reason}" for s in lost]
    return out


def table(a: Analysis) -> pl.DataFrame:
    """One row per file found: classification, time span and line accounting."""
    rows: list[dict[str, Any]] = []
    for f in a.files:
        i = f.tables.info
        rows.append(
            {
                "file": f.source.label,
                "role": i.role,
                "process": i.process,
                "instance": i.instance,
                "host": i.host,
                "thread": i.thread,
                "pid": i.pid,
                "version": i.version,
                "first_at": f.tables.first_at,
                "last_at": f.tables.last_at,
                "lines": f.stats.lines,
                "unparsed": f.parsed.unparsed,
                "messages": f.tables.messages,
                "waits": f.tables.waits,
                "lgwr_warnings": f.tables.lgwr.filter(pl.col("kind") == "log_write").height,
            }
        )
    return pl.DataFrame(rows, schema=INVENTORY)
