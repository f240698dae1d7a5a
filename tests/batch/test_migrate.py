"""A dataset written by the release of schema version 1 brought to version 2 in place: no unit runs
again, rows of inputs deleted since are kept, and the rows are those a new dataset has."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from analyzer.base.errors import UsageError
from analyzer.base.zones import TimeZones
from analyzer.batch import migrate as migration
from analyzer.batch.configs import by_identity
from analyzer.batch.inputs import scan
from analyzer.batch.plan import Settings, Unit, plan_units
from analyzer.batch.query import scan_table, trend
from analyzer.batch.schemas import SCHEMA_VERSION
from analyzer.batch.store import Dataset
from analyzer.inputs.limits import Limits
from tests.batch.helpers import batch, copy_share, same_rows, truth, writes

#: the columns version 2 added, by table
ADDED = {"writes": ["fastsync_ms"], "shipments": ["fastsync_ms"], "daily": ["fastsync_p99_ms", "fastsync_slow_writes"]}


def _units(share: Path, dataset: Path) -> dict[str, Unit]:
    found = scan([str(share)], {}, TimeZones(), Limits(), dataset=str(dataset))
    return plan_units(found.sources(), found.skipped(), by_identity, Settings())[0]


def as_version_1(dataset: Path, units: dict[str, Unit]) -> None:
    """A version-2 dataset as the release of version 1 wrote it (checked file by file against one it
    wrote: the same rows, columns and Parquet metadata, dataset.json, inputs.json and unit records
    but their `written_at`): without the columns version 2 added, version 1 said everywhere, and
    the unit records' fingerprints as version 1 computed them, without the files' sums."""
    for path in sorted(dataset.rglob("*.parquet")):
        table = path.relative_to(dataset).parts[0]
        frame = pl.read_parquet(path, hive_partitioning=False).drop(ADDED.get(table, []))
        frame.write_parquet(path, compression="zstd", metadata={"dgtrace.schema_version": "1", "dgtrace.table": table})
    meta = dataset / "_dgtrace"

    def rewrite(path: Path, change: Any) -> None:
        document = json.loads(path.read_text())
        change(document)
        path.write_text(json.dumps(document, indent=1, sort_keys=True) + "\n")

    def described(document: dict[str, Any]) -> None:
        document["schema_version"] = 1
        for table, columns in ADDED.items():
            for column in columns:
                del document["tables"][table][column]

    rewrite(meta / "dataset.json", described)
    rewrite(meta / "inputs.json", lambda document: document.update(schema_version=1))

    def recorded(record: dict[str, Any]) -> None:
        record.update(fingerprint=units[record["key"]].fingerprint(1))
        del record["files"]  # version 1 kept no sums of the files

    for path in (meta / "units").glob("*.json"):
        rewrite(path, recorded)


@pytest.fixture
def version_1(one_day: Path, tmp_path: Path) -> tuple[Path, Path, Path]:
    """A share, a version-2 dataset of it (the reference), and a copy of that as version 1 wrote it."""
    share = copy_share(one_day, tmp_path / "share")
    reference = tmp_path / "reference"
    batch(share, reference)
    old = tmp_path / "old"
    shutil.copytree(reference, old)
    as_version_1(old, _units(share, old))
    return share, reference, old


def test_a_version_1_dataset_is_brought_to_version_2_in_place(version_1: tuple[Path, Path, Path]) -> None:
    share, reference, old = version_1
    with pytest.raises(
        UsageError, match="schema version 1; this dgtrace reads version 2: run dgtrace batch on it once"
    ):
        trend(old)
    assert "fastsync_ms" not in pl.read_parquet(next((old / "writes").rglob("*.parquet"))).columns
    gone = next(share.rglob("hrdr1_rfs_*.trc"))
    gone.unlink()  # deleted since: its rows stay, as the version-1 dataset had them

    summary = batch(share, old)
    assert summary.migrated_from == 1 and summary.to_json()["migrated_from"] == 1
    assert summary.units["run"] == 0 and summary.inputs["gone"] == 1
    same_rows(old, reference)
    assert json.loads((old / "_dgtrace" / "dataset.json").read_text())["schema_version"] == SCHEMA_VERSION
    assert writes(old)["fastsync_ms"].null_count() == 0 and writes(old).height == truth(share).height
    assert trend(old)["fastsync_p99_ms"].null_count() == 0

    again = batch(share, old)  # the units were adopted: nothing runs, nothing is migrated again
    assert again.migrated_from is None and again.units["run"] == 0


def test_a_migration_cut_short_is_done_again(
    version_1: tuple[Path, Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Stopped after a few files (as by a kill): the dataset still says version 1, and the next run
    migrates it whole, the files done before as well."""
    share, reference, old = version_1
    written: list[Path] = []
    put_file = Dataset.put_file

    def five_then_stop(self: Dataset, target: Path, table: str, frame: pl.DataFrame) -> None:
        if len(written) == 5:
            raise KeyboardInterrupt
        put_file(self, target, table, frame)
        written.append(target)

    with monkeypatch.context() as patch:
        patch.setattr(Dataset, "put_file", five_then_stop)
        with pytest.raises(KeyboardInterrupt):
            batch(share, old)
    assert len(written) == 5
    with pytest.raises(UsageError, match="schema version 1"):
        scan_table(old, "writes")
    summary = batch(share, old)
    assert summary.migrated_from == 1 and summary.units["run"] == 0
    same_rows(old, reference)


def test_the_fast_sync_columns_are_the_analysis_own(version_1: tuple[Path, Path, Path]) -> None:
    """Computed from the stored columns, `fastsync_ms` is the value the analysis gives each write."""
    share, reference, old = version_1
    dataset = Dataset(old)
    with dataset.locked():  # the dataset is written only under its lock
        migration.migrate(dataset, Settings().to_json())
    key = ["primary_db", "thread", "seq", "msgid"]
    joined = writes(reference).join(writes(old), on=key, suffix="_migrated")
    assert joined.height == truth(share).height
    assert (joined["fastsync_ms"] == joined["fastsync_ms_migrated"]).all()
