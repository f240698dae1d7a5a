"""A dataset of an older schema version brought to this one in place, by `dgtrace batch`.

No input is read again, and no row is lost (rows of inputs deleted since stay): the new columns are
computed from the stored ones, as the analysis computes them.

- 1 -> 2: `fastsync_ms` in `writes` and `shipments` (`analyzer.api.fast_sync_ms` on their
  `total_ms`, `rfs_io_ms`, `network_ms`, `matched` and `transport`); `fastsync_p99_ms` and
  `fastsync_slow_writes` in `daily`, from the writes of the same unit and partition.

Every file of every recorded unit is rewritten (atomically, with the new version in its metadata),
its record first written without the files' sums and then with the new ones, then `dataset.json`
says the new version. Killed in the middle, the next run does it again (each step gives the same
file twice; a record without sums has its files checked as Parquet, not against sums). The unit
records keep their fingerprints; `adopt` gives a unit recorded under the old version the new
fingerprint when the old one is what it recorded, so that it does not run again.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import polars as pl

from analyzer.api import fast_sync_ms
from analyzer.batch.daily import fast_sync_row
from analyzer.batch.manifest import UnitRecord
from analyzer.batch.plan import Unit
from analyzer.batch.schemas import MIGRATES_FROM
from analyzer.batch.store import Dataset


def migrate(dataset: Dataset, settings: dict[str, Any]) -> None:
    """Bring every recorded unit's files from a version of `MIGRATES_FROM` to this one, then say so in
    dataset.json (with the settings it had)."""
    try:
        described = dataset.read_json("dataset.json") or {}
    except ValueError:  # put right by the version check; written again below
        described = {}
    for record in dataset.units().values():
        dataset.put_record(replace(record, sums={}))  # killed below, the files are checked as Parquet only
        sums = {}
        for rel in sorted(record.outputs, key=_daily_last):
            table = rel.split("/", 1)[0]
            path = dataset.root / rel
            frame = pl.read_parquet(path, hive_partitioning=False)
            if table in ("writes", "shipments"):
                frame = frame.with_columns(fast_sync_ms())
            elif table == "daily":
                frame = _daily(dataset, rel, frame)
            sums[rel] = dataset.put_file(path, table, frame)
        dataset.put_record(replace(record, sums=sums))
    dataset.describe(described.get("settings", settings) if isinstance(described, dict) else settings)


def _daily_last(rel: str) -> bool:
    """Daily files after the writes they are computed from."""
    return rel.startswith("daily/")


def _daily(dataset: Dataset, rel: str, daily: pl.DataFrame) -> pl.DataFrame:
    """The Fast Sync columns of a daily file, from the writes file of the same partition and unit."""
    writes = dataset.root / ("writes/" + rel.split("/", 1)[1])
    if not writes.is_file():
        return daily.with_columns(fastsync_p99_ms=pl.lit(None, pl.Float64), fastsync_slow_writes=pl.lit(0, pl.Int64))
    matched = pl.read_parquet(writes, hive_partitioning=False).filter(pl.col("matched"))
    rows = [fast_sync_row(matched, threshold) for threshold in daily["threshold_ms"].fill_null(0.0).to_list()]
    added = pl.DataFrame(rows, schema={"fastsync_p99_ms": pl.Float64, "fastsync_slow_writes": pl.Int64})
    return daily.drop(added.columns, strict=False).hstack(added)


def adopt(dataset: Dataset, records: dict[str, UnitRecord], units: dict[str, Unit]) -> dict[str, UnitRecord]:
    """The records, those of units recorded under an older version (whose files `migrate` brought to
    this one) given this version's fingerprint: their rows are what a run would write again."""
    out = dict(records)
    for key, record in records.items():
        unit = units.get(key)
        if unit is None or record.fingerprint == unit.fingerprint():
            continue
        if record.fingerprint in {unit.fingerprint(old) for old in MIGRATES_FROM}:
            out[key] = replace(record, fingerprint=unit.fingerprint())
            dataset.put_record(out[key])
    return out
