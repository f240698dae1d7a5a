"""Run one unit of work: read a configuration's sources of one day and return its rows.

A pure function of its `Unit` (inputs, configuration, settings): it writes nothing but temporary
spill files (in a spill directory of `analyzer.base.spill`, owned by the worker's process: removed at the
end, and swept by any later run of dgtrace once that process is gone), so any engine may run it on
any worker that can read the inputs, and run it again after a crash. The tables it returns carry
their partition columns (`primary_db`, `day`).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from datetime import date

import polars as pl

from analyzer.api import FileResult, Source, analyze_files, discover, read_files
from analyzer.base.errors import AnalyzerError
from analyzer.base.schemas import CLOCK, UNMATCHED, WARNINGS, WRITES, empty
from analyzer.base.spill import spill_directory
from analyzer.base.vocab import Role
from analyzer.batch.configs import db_columns
from analyzer.batch.daily import daily_table
from analyzer.batch.plan import Unit
from analyzer.batch.probe import SourceInfo
from analyzer.batch.schemas import CLOCK_FILE, FILES_FILE, UNMATCHED_FILE, WARNINGS_FILE, WRITES_FILE

GONE = "the file is no longer where the manifest recorded it: not read"


@dataclass(frozen=True)
class UnitOutput:
    """The rows of one unit, table by table, with their partition columns."""

    key: str
    fingerprint: str
    tables: dict[str, pl.DataFrame]
    #: sources that could not be read to their end: (label, reason)
    damaged: list[tuple[str, str]] = field(default_factory=list)
    seconds: float = 0.0


def run_unit(unit: Unit) -> UnitOutput:
    """Read, match and attribute the unit's sources; keep the rows of its day."""
    start = time.perf_counter()
    day = date.fromisoformat(unit.day)
    options = unit.settings.options(day)
    sources, gone = _sources(unit)
    with spill_directory() as spill:
        files = read_files(sources, options.zones, spill) if sources else []
        analysis = analyze_files(files, [], options) if files else None
    writes = analysis.writes if analysis else empty(WRITES)
    shipments = analysis.shipments if analysis else empty(WRITES)
    unmatched = analysis.unmatched if analysis else empty(UNMATCHED)
    warnings = analysis.warnings if analysis else empty(WARNINGS)
    clock = analysis.clock if analysis else empty(CLOCK)
    homes = {s.label: s.home_day() for s in unit.sources}
    day_lit = pl.lit(day, pl.Date)
    dbs, standby = unit.dbs, unit.standby_dbs

    writes, shipments = (
        db_columns(
            _own(w, "sent_at", "primary_file", homes, day),
            dbs,
            unit.primary_db,
            standby,
            primary="primary_file",
            standby="standby_file",
        )
        for w in (writes, shipments)
    )
    unmatched = _own(unmatched, "at", "file", homes, day).with_columns(
        _p=pl.when(pl.col("side") == str(Role.PRIMARY)).then(pl.col("file")),
        _s=pl.when(pl.col("side") == str(Role.STANDBY)).then(pl.col("file")),
    )
    unmatched = db_columns(unmatched, dbs, unit.primary_db, standby, primary="_p", standby="_s")
    warnings = db_columns(_own(warnings, "at", "file", homes, day), dbs, unit.primary_db, standby, primary="file")
    tables = {
        "writes": _shape(writes, WRITES_FILE, day_lit),
        "shipments": _shape(shipments, WRITES_FILE, day_lit),
        "unmatched": _shape(unmatched, UNMATCHED_FILE, day_lit),
        "lgwr_warnings": _shape(warnings, WARNINGS_FILE, day_lit),
        "files": _files(unit, files, gone, day_lit),
        "clock": _clock(clock, unit, day_lit),
    }
    if unit.sources:
        tables["daily"] = daily_table(
            tables["writes"],
            tables["unmatched"],
            tables["lgwr_warnings"],
            unit.configuration,
            unit.primary_db,
            day_lit,
            unit.settings.threshold_ms,
        )
    damaged = [(f.source.label, f.stats.error) for f in files if f.stats.error]
    return UnitOutput(unit.key, unit.fingerprint(), tables, damaged, time.perf_counter() - start)


def _sources(unit: Unit) -> tuple[list[Source], list[SourceInfo]]:
    """The unit's sources, found again from their files; those whose file is gone."""
    wanted = {s.label: s for s in unit.sources}
    found: dict[str, Source] = {}
    for path in sorted({s.path for s in unit.sources}):
        try:
            sources, _ = discover([path], limits=unit.settings.limits, dedupe=False)
        except AnalyzerError:
            continue
        found.update({s.label: s for s in sources if s.label in wanted})
    return [found[label] for label in sorted(found)], [s for label, s in sorted(wanted.items()) if label not in found]


def _own(frame: pl.DataFrame, at: str, file: str, homes: dict[str, date | None], day: date) -> pl.DataFrame:
    """The rows of this day: by their time, or (rows without one) by the first day of their file."""
    timed = pl.col(at).is_not_null()
    if frame.filter(~timed).is_empty():
        return frame
    home = pl.col(file).cast(pl.String).replace_strict(homes, default=None, return_dtype=pl.Date)
    return frame.filter(timed | home.eq_missing(pl.lit(day, pl.Date)))


def _shape(frame: pl.DataFrame, columns: pl.Schema, day: pl.Expr) -> pl.DataFrame:
    """The stored columns in their declared types, then the partition columns."""
    return frame.select(*[pl.col(name).cast(dtype) for name, dtype in columns.items()], "primary_db").with_columns(
        day=day
    )


def _files(unit: Unit, files: list[FileResult], gone: list[SourceInfo], day: pl.Expr) -> pl.DataFrame:
    infos = {s.label: s for s in unit.sources}
    rows: list[dict[str, object]] = []
    for f in files:
        info, reduced, p = infos[f.source.label], f.reduced, f.parsed
        rows.append(
            _source_row(info)
            | {
                "role": str(reduced.info.role),
                "thread": reduced.info.thread,
                "version": reduced.info.version,
                "first_at": reduced.first_at,
                "last_at": reduced.last_at,
                "lines": f.stats.lines,
                "messages": int(p.parsed.get("transport", 0)),
                "unparsed": p.unparsed,
                "status": "partial" if f.stats.error else "read",
                "reason": f.stats.error,
            }
        )
    rows += [_source_row(info) | {"status": "gone", "reason": GONE} for info in gone]
    rows += [
        {"file": s.label, "path": s.label.split("!", 1)[0], "db": s.db, "status": "skipped", "reason": s.reason}
        for s in unit.skipped
    ]
    frame = pl.from_dicts(rows, schema=FILES_FILE) if rows else pl.DataFrame(schema=FILES_FILE)
    return frame.with_columns(
        configuration=pl.lit(unit.configuration), primary_db=pl.lit(unit.primary_db, pl.String), day=day
    )


def _source_row(info: SourceInfo) -> dict[str, object]:
    return {
        "file": info.label,
        "path": info.path,
        "sha256": info.sha256,
        "bytes": info.bytes,
        "db": info.db,
        "role": info.role,
        "process": info.process,
        "instance": info.instance,
        "host": info.host,
    }


def _clock(clock: pl.DataFrame, unit: Unit, day: pl.Expr) -> pl.DataFrame:
    """The day's clock offsets, filed under the database of the primary host (the configuration's
    primary when no primary trace of that host says)."""
    hosts = {s.host: s.db for s in unit.sources if s.role == Role.PRIMARY and s.host and s.db}
    frame = clock.select([pl.col(n).cast(t) for n, t in CLOCK_FILE.items()])
    db = (
        pl.col("primary_host")
        .str.split(".")
        .list.first()
        .replace_strict(hosts, default=unit.primary_db, return_dtype=pl.String)
    )
    return frame.with_columns(primary_db=db, day=day)
