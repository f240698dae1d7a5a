"""`dgtrace batch`: bring a dataset up to date with its inputs, and say what was done.

    lock -> sweep what a killed run left and check the dataset's files against the manifest (a unit
    whose files are damaged or missing is removed, to run again) -> sweep the spill directories of
    dead runs in the temporary folder -> compare the inputs with the manifest (probe what is new
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
from analyzer.batch.inputs import FileRecord, ProgressHook, Scan, load_records, scan
from analyzer.batch.manifest import UnitRecord
from analyzer.batch.migrate import adopt, migrate
from analyzer.batch.plan import Settings, Unit, plan_units
from analyzer.batch.probe import file_of
from analyzer.batch.schemas import SCHEMA_VERSION
from analyzer.batch.store import Dataset, DatasetUnusable
from analyzer.batch.sweep import Damage, Swept, sweep
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
    #: the dataset's files checked against the manifest: whether all were hashed (--verify), how many
    verified: dict[str, Any] = field(default_factory=dict)
    #: every file of the dataset found damaged or missing, and what was done (`lost`: rows that could not be rebuilt)
    repaired: list[dict[str, Any]] = field(default_factory=list)
    #: the schema version the dataset was brought from in place (None: it had this one, or was new)
    migrated_from: int | None = None
    seconds: float = 0.0
    #: seconds spent comparing and probing the inputs, and running and writing the units
    phases: dict[str, float] = field(default_factory=dict)

    @property
    def exit_code(self) -> ExitCode:
        """1 when an input was damaged, unreadable or lost to a limit, a unit failed, or a damaged
        unit of the dataset could not be rebuilt whole."""
        damaged = any(s["partial"] for s in self.skipped) or self.failed or any(r["lost"] for r in self.repaired)
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
            "verified": self.verified,
            "repaired": self.repaired,
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
    verify: bool = False,
) -> RunSummary:
    """Bring the dataset at `out` up to date with the inputs under `paths`; its files are checked
    against the manifest first (all of them hashed when `verify`), and damaged units run again.

    Raises:
        UsageError: a path names nothing.
        DatasetUnusable: the dataset has another schema version, or its record of inputs is damaged.
        NoInputError: no trace file under the paths (nor among the inputs recorded before).
        DatasetBusy: another run is writing the dataset.
        UnsafeLocation: the dataset, or something in it, is one another user controls.
        OutputError: the dataset cannot be written (a full disk, no permission).
        Interrupted: SIGTERM or SIGINT (the dataset stays consistent; the next run goes on).
    """
    start = time.perf_counter()
    settings, engine = settings or Settings(), engine or EngineSpec()
    dataset = Dataset(out)
    summary = RunSummary(str(out), engine.describe())
    with dataset.locked(), stop_on_signals(), _clean_up(dataset):
        version = dataset.check_version(migrating=True)
        swept = sweep(dataset, verify=verify)
        summary.swept_files = swept.removed
        summary.verified = {"all_hashed": verify, "files": swept.checked, "hashed": swept.hashed}
        summary.verified |= {"hashed_bytes": swept.hashed_bytes, "damaged_units": len(swept.damaged)}
        if version is not None and version != SCHEMA_VERSION:
            migrate(dataset, settings.to_json())
            summary.migrated_from = version
        spill.sweep(Path(tempfile.gettempdir()))  # also when no unit runs (each unit sweeps as it starts)
        recorded, known = _known(dataset)
        found = scan(paths, known, settings.zones, settings.limits, progress, dataset=str(out))
        units, unplaced = plan_units(found.sources(), found.skipped(), grouping, settings)
        summary.skipped = [
            {"input": s.label, "reason": s.reason, "partial": s.partial} for s in [*found.skipped(), *unplaced]
        ]
        summary.inputs = _counts(found, units, len(summary.skipped))
        if not any(not found.files[file_of(label)].gone for u in units.values() for label in _labels(u)):
            raise NoInputError(f"no trace file found in {', '.join(paths)} ({_what_was_found(summary)})")
        manifest = found.manifest()
        if recorded != manifest:
            dataset.write_json(dataset.meta / "inputs.json", manifest)
        summary.phases["inputs"] = time.perf_counter() - start
        records = adopt(dataset, dataset.units(), units)
        damaged = {d.record.key: d for d in swept.damaged}
        retired = [r for key, r in records.items() if key not in units]
        stale = [u for key, u in units.items() if key not in records or records[key].fingerprint != u.fingerprint()]
        writes = Counter[str]()
        for record in retired:
            dataset.retire(record)
            writes["removed"] += record.rows.get("writes", 0)
        outcomes = {key: "removed: the plan no longer has this unit" for key in damaged if key not in units}
        for n, (unit, result) in enumerate(run_units(stale, engine), start=1):
            if progress:
                progress(f"unit {unit.key}", n, len(stale))
            if isinstance(result, str):
                summary.failed.append({"unit": unit.key, "error": result})
                outcomes[unit.key] = "not rebuilt: the unit failed (see failed)"
                continue
            _commit(dataset, unit, result)
            earlier, written = records.get(unit.key) or _record(damaged.get(unit.key)), result.tables["writes"].height
            if earlier:
                writes["replaced"] += earlier.rows.get("writes", 0)
                writes["rewritten"] += written
            else:
                writes["added"] += written
            if unit.key in damaged:
                outcomes[unit.key] = _rebuilt(result)
            summary.skipped += [{"input": label, "reason": why, "partial": True} for label, why in result.damaged]
        dataset.describe(settings.to_json())
        summary.phases["units"] = time.perf_counter() - start - summary.phases["inputs"]
        total = sum(r.rows.get("writes", 0) for r in dataset.units().values())
    summary.repaired = _repairs(swept, dataset.healed, outcomes)
    summary.units = {
        "planned": len(units),
        "run": len(stale),
        "unchanged": len(units) - len(stale),
        "retired": len(retired),
        "repaired": sum(1 for key in damaged if key in units),
        "failed": len(summary.failed),
    }
    summary.writes = {k: writes.get(k, 0) for k in ("added", "replaced", "rewritten", "removed")} | {"total": total}
    summary.seconds = time.perf_counter() - start
    return summary


def _known(dataset: Dataset) -> tuple[Any, dict[str, FileRecord]]:
    """inputs.json, and the inputs it records.

    Raises:
        DatasetUnusable: inputs.json is not one dgtrace wrote.
    """
    try:
        recorded = dataset.read_json("inputs.json")
        return recorded, load_records(recorded)
    except ValueError as err:
        raise DatasetUnusable(
            f"{dataset.meta / 'inputs.json'}, the record of the dataset's inputs, is not one dgtrace wrote"
            f" ({str(err).splitlines()[0][:200]}); restore it from a backup, or move it away and run dgtrace batch"
            " again over all the inputs of the dataset: it is made again from them (the units of inputs no longer"
            " there are then removed)"
        ) from None


def _what_was_found(summary: RunSummary) -> str:
    """The inputs skipped, in a few words: `4 files or archive members, all skipped: 2 trace map...`."""
    reasons = Counter(_reason_kind(s["reason"]).split(":")[0] for s in summary.skipped).most_common()
    listed = "; ".join(f"{n} {reason}" for reason, n in reasons[:3]) + ("; ..." if len(reasons) > 3 else "")
    gone, skipped = summary.inputs.get("sources", 0), len(summary.skipped)
    found = [f"{gone} trace{'s' if gone > 1 else ''} read by earlier runs, no longer there"] if gone else []
    entries = "file or archive member" if skipped == 1 else "files or archive members"
    found += [f"{skipped} {entries} skipped: {listed}"] if skipped else []
    return "; ".join(found) or "no file at all"


def _labels(unit: Unit) -> list[str]:
    return [s.label for s in unit.sources]


def _counts(found: Scan, units: dict[str, Unit], skipped: int) -> dict[str, int]:
    """The inputs in numbers: files (`known` = new + changed + unchanged + moved + gone), and entries
    (files and archive members: `entries` = `sources` read into a unit + `skipped`)."""
    status = Counter(found.status.values())
    labels = {s.label for r in found.files.values() for s in r.sources} | {
        s.label for r in found.files.values() for s in r.skipped
    }
    counts = {"seen": found.seen, "known": len(found.files)}
    counts |= {k: status.get(k, 0) for k in ("new", "changed", "unchanged", "moved", "gone")}
    counts |= {"entries": len(labels), "sources": len({label for u in units.values() for label in _labels(u)})}
    return counts | {"skipped": skipped}


def _record(damage: Damage | None) -> UnitRecord | None:
    return damage.record if damage else None


def _rebuilt(result: UnitOutput) -> str:
    gone = int((result.tables["files"]["status"] == "gone").sum())
    if gone:
        return f"rebuilt without {gone} of its inputs, which are gone: their rows are lost"
    return "rebuilt from its inputs"


def _repairs(swept: Swept, healed: list[tuple[str, str, str]], outcomes: dict[str, str]) -> list[dict[str, Any]]:
    """What was found damaged and what was done, for the summary."""
    out = [
        {"unit": None, "file": rel, "problem": problem, "outcome": outcome, "lost": False}
        for rel, problem, outcome in healed
    ]
    for damage in swept.damaged:
        outcome = outcomes.get(damage.record.key, "not rebuilt")
        lost = outcome.startswith("not rebuilt") or "lost" in outcome
        out.append(
            {
                "unit": damage.record.key,
                "file": damage.file,
                "problem": damage.problem,
                "outcome": outcome,
                "lost": lost,
            }
        )
    return out


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
