"""Each input file as the reports see it: what it is, when it ran, the zone its stamps were read in and how
its lines were accounted for.

A typed view of the reduce stage's per-file results (`FileResult`): the reports read these fields and never
the results themselves, so that a change inside the reduce stage stops here.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

import polars as pl

from analyzer.base.units import format_offset
from analyzer.base.vocab import Role
from analyzer.base.zones import utc_offset_at
from analyzer.match.analysis import Analysis
from analyzer.match.links import with_databases
from analyzer.parse.tim import TimClock
from analyzer.reduce import results
from analyzer.reduce.results import FileResult


@dataclass(frozen=True)
class FileView:
    """One file read: its identity, time span, zone and line accounting."""

    label: str
    role: Role
    host: str | None
    version: str | None
    #: where each fact of the file's identity came from (its header, its path)
    evidence: str
    #: its database (db_unique_name), from its own path or head or from another file of its instance
    db_unique_name: str | None
    first_at: datetime | None
    last_at: datetime | None
    #: where the file's zone came from (`--tz -07:00`, `ISO ADR lines`, `assumed UTC ...`)
    zone: str
    #: the UTC offsets (minutes east) its stamps were read in, in order (two across a change of offset)
    offsets_min: tuple[int, ...]
    #: its own lines carry their zone (ISO ADR lines): a --tz value is not used for it
    own_zone: bool
    #: how its 10046 `tim` maps to UTC
    tim: TimClock
    #: lines read, and how they were accounted for
    lines: int
    parsed: int
    ignored: int
    unparsed: int
    #: its unparsed lines with their reasons (schema UNPARSED)
    unparsed_lines: pl.DataFrame
    lines_with_bad_bytes: int
    #: why reading stopped early (a limit, a damaged member), None when read to its end
    read_error: str | None

    @property
    def offset(self) -> str:
        """The UTC offset(s) the stamps were read in: `+01:00`, or `+01:00/+02:00` across a change ("" unknown)."""
        return "/".join(format_offset(m) for m in self.offsets_min)

    @property
    def zone_text(self) -> str:
        """Where the zone came from, with the offset applied when the source does not say it."""
        return self.zone if not self.offset or self.offset in self.zone else f"{self.zone}: {self.offset}"

    @property
    def first_problem(self) -> str:
        """What went wrong reading it, first: the read error, or its first unparsed line; then its bad bytes."""
        un = self.unparsed_lines
        problem = self.read_error or (f"line {un['line'][0]}: {un['reason'][0]}" if un.height else "")
        if self.lines_with_bad_bytes:
            problem = "; ".join(p for p in (problem, f"{self.lines_with_bad_bytes:,} lines with bad bytes") if p)
        return problem


def _offsets(f: FileResult) -> tuple[int, ...]:
    """The offsets the file's stamps were read in: its ISO lines' own, else its zone's at its first and last
    stamps (a fixed offset once)."""
    r = f.reduced
    ex = r.exchanges
    if ex.zones.height:
        return tuple(sorted({int(m) for m in ex.zones["utc_offset_min"]}))
    if isinstance(ex.fallback_min, int):
        return (ex.fallback_min,)
    return tuple(sorted({utc_offset_at(ex.fallback_min, t) for t in (r.first_at, r.last_at) if t is not None}))


def file_views(a: Analysis) -> list[FileView]:
    """Every file read, in the analysis's order."""
    dbs = {i.label: i.db for i in with_databases([f.identity for f in a.files])}
    out = []
    for f in a.files:
        r, p, s = f.reduced, f.parsed, f.stats
        out.append(
            FileView(
                label=f.source.label,
                role=r.info.role,
                host=r.info.host,
                version=r.info.version,
                evidence=r.info.evidence,
                db_unique_name=dbs[f.source.label],
                first_at=r.first_at,
                last_at=r.last_at,
                zone=r.zone,
                offsets_min=_offsets(f),
                own_zone=bool(r.exchanges.zones.height),
                tim=r.tim,
                lines=s.lines,
                parsed=sum(p.parsed.values()),
                ignored=sum(p.ignored.values()),
                unparsed=p.unparsed,
                unparsed_lines=p.tables["unparsed"],
                lines_with_bad_bytes=s.lines_with_bad_bytes,
                read_error=s.error,
            )
        )
    return out


def oracle_versions(files: Sequence[FileView]) -> list[str]:
    """The Oracle versions named in the trace headers, sorted."""
    return sorted({f.version for f in files if f.version})


def coverage(a: Analysis) -> pl.DataFrame:
    """Per file: lines read = parsed + ignored + unparsed, with the breakdown and what the reader repaired."""
    return results.coverage(a.files)


def unparsed(a: Analysis) -> pl.DataFrame:
    """Every unparsed line of every file, with its file's label (`file`)."""
    return results.unparsed(a.files)
