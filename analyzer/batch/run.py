"""`dgtrace batch`: bring a dataset up to date with its inputs, and say what was done.

    lock -> sweep what a killed run left (in the dataset, and the spill directories of dead runs in
    the temporary folder) -> compare the inputs with the manifest (probe what is new
    or changed) -> plan the units -> retire the units the plan no longer has -> run the units whose
    fingerprint changed, on the engine -> put each one's rows in place, then record it

A second run over the same inputs finds every unit's fingerprint recorded and does nothing.
"""

from __future__ import annotations

import contextlib
import tempfile
import time
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any

from analyzer.base import spill
from analyzer.base.errors import ExitCode, NoInputError
from analyzer.base.spill import stop_on_signals
from analyzer.batch.configs import Grouping, by_identity
from analyzer.batch.engine import EngineSpec, run_units
from analyzer.batch.inputs import ProgressHook, load_records, scan
from analyzer.batch.migrate import adopt, migrate
from analyzer.batch.plan import Settings, Unit, plan_units
from analyzer.batch.schemas import SCHEMA_VERSION
from analyzer.batch.store import Dataset
from analyzer.batch.unit import UnitOutput


@dataclass
class RunSummary:
    """What a run found and did (`dgtrace batch --format json`)."""

    dataset: str
    engine: str
    inputs: dict[str, int] = field(default_factory=dict)
    #: every skipped input, with the reason and whether content was lost (`partial`)
    skipped: list[dict[str, Any]] = field(default_factory=list)
    units: dict[str, int] = field(default_factory=dict)
    failed: list[dict[str, str]] = field(default_factory=list)
    writes: dict[str, int] = field(default_factory=dict)
    swept_files: int = 0
    #: the schema version the dataset was brought from in place (None: it had this one, or was new)
    migrated_from: int | None = None
    seconds: float = 0.0
    #: seconds spent comparing and probing the inputs, and running and writing the units
    phases: dict[str, float] = field(default_factory=dict)

    @property
    def exit_code(self) -> ExitCode:
        """1 when an input was damaged, unreadable or lost to a limit, or a unit failed."""
        damaged = any(s["partial"] for s in self.skipped) or self.failed
        return ExitCode.PARTIAL if damaged else ExitCode.OK

    def to_json(self) -> dict[str, Any]:
        return {
            "schema_version": SCHEMA_VERSION,
            "dataset": self.dataset,
            "engine": self.engine,
            "inputs": self.inputs,
            "skipped_by_reason": dict(sorted(Counter(_reason_kind(s["reason"]) for s in self.skipped).items())),
            "damaged": [s for s in self.skipped if s["partial"]],
            "units": self.units,
            "failed": self.failed,
            "writes": self.writes,
            "swept_files": self.swept_files,
            "migrated_from": self.migrated_from,
            "seconds": round(self.seconds, 3),
            "phases": {k: round(v, 3) for k, v in self.phases.items()},
            "exit_code": int(self.exit_code),
        }


def run_batch(
    paths: Sequence[str],
    out: Path,
    settings: Settings | None = None,
    engine: EngineSpec | None = None,
    *,
    grouping: Grouping = by_identity,
    progress: ProgressHook | None = None,
) -> RunSummary:
    """Bring the dataset at `out` up to date with the inputs under `paths`.

    Raises:
        UsageError: a path names nothing, or the dataset has another schema version.
        NoInputError: no trace file under the paths.
        DatasetBusy: another run is writing the dataset.
        Interrupted: SIGTERM or SIGINT (the dataset stays consistent; the next run goes on).
    """
    start = time.perf_counter()
    settings, engine = settings or Settings(), engine or EngineSpec()
    dataset = Dataset(out)
    summary = RunSummary(str(out), engine.describe())
    with dataset.locked(), stop_on_signals(), _clean_up(dataset):
        version = dataset.check_version(migrating=True)
        summary.swept_files = dataset.sweep()
        if version is not None and version != SCHEMA_VERSION:
            migrate(dataset, settings.to_json())
            summary.migrated_from = version
        spill.sweep(Path(tempfile.gettempdir()))  # also when no unit runs (each unit sweeps as it starts)
        known = load_records(dataset.read_json("inputs.json"))
        found = scan(paths, known, settings.zones, settings.limits, progress, dataset=str(out))
        manifest = found.manifest()
        if dataset.read_json("inputs.json") != manifest:
            dataset.write_json(dataset.meta / "inputs.json", manifest)
        units, unplaced = plan_units(found.sources(), found.skipped(), grouping, settings)
        counts = Counter(found.status.values())
        summary.inputs = {"seen": found.seen, "known": len(found.files), "sources": len(found.sources())}
        summary.inputs |= {k: counts.get(k, 0) for k in ("new", "changed", "unchanged", "moved", "gone")}
        summary.skipped = [
            {"input": s.label, "reason": s.reason, "partial": s.partial} for s in [*found.skipped(), *unplaced]
        ]
        summary.inputs["skipped"] = len(summary.skipped)
        if not any(not r.gone for r in found.files.values() for _ in r.sources):
            raise NoInputError("no trace files found in " + ", ".join(paths))
        summary.phases["inputs"] = time.perf_counter() - start
        records = adopt(dataset, dataset.units(), units)
        retired = [r for key, r in records.items() if key not in units]
        stale = [u for key, u in units.items() if key not in records or records[key].fingerprint != u.fingerprint()]
        writes = Counter[str]()
        for record in retired:
            dataset.retire(record)
            writes["removed"] += record.rows.get("writes", 0)
        for n, (unit, result) in enumerate(run_units(stale, engine), start=1):
            if progress:
                progress(f"unit {unit.key}", n, len(stale))
            if isinstance(result, str):
                summary.failed.append({"unit": unit.key, "error": result})
                continue
            _commit(dataset, unit, result)
            earlier, written = records.get(unit.key), result.tables["writes"].height
            if earlier:
                writes["replaced"] += earlier.rows.get("writes", 0)
                writes["rewritten"] += written
            else:
                writes["added"] += written
            summary.skipped += [{"input": label, "reason": why, "partial": True} for label, why in result.damaged]
        dataset.describe(settings.to_json())
        summary.phases["units"] = time.perf_counter() - start - summary.phases["inputs"]
        total = sum(r.rows.get("writes", 0) for r in dataset.units().values())
    summary.units = {
        "planned": len(units),
        "run": len(stale),
        "unchanged": len(units) - len(stale),
        "retired": len(retired),
        "failed": len(summary.failed),
    }
    summary.writes = {k: writes.get(k, 0) for k in ("added", "replaced", "rewritten", "removed")} | {"total": total}
    summary.seconds = time.perf_counter() - start
    return summary


def _reason_kind(reason: str) -> str:
    """A reason without the name of the other input it mentions (duplicates, counted together)."""
    return "duplicate of another input" if reason.startswith("duplicate of ") else reason


def _commit(dataset: Dataset, unit: Unit, result: UnitOutput) -> None:
    labels = [s.label for s in unit.sources] + [s.label for s in unit.skipped]
    home = (unit.primary_db, date.fromisoformat(unit.day))
    dataset.commit(unit.key, result.fingerprint, unit.name, home, result.tables, labels)


@contextlib.contextmanager
def _clean_up(dataset: Dataset) -> Iterator[None]:
    """This run's temporary files go, however it ends: its files being written into the dataset, and
    the spill directories of its workers if they were stopped in the middle of a unit."""
    try:
        yield
    finally:
        dataset.remove_temporary(mine_only=True)
        spill.sweep(Path(tempfile.gettempdir()))
