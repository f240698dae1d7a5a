"""Reading a batch dataset back: any table as a lazy frame, and the trend `dgtrace report` prints."""

from __future__ import annotations

import re
from datetime import date
from pathlib import Path

import polars as pl

from analyzer.base.errors import NoInputError, UsageError
from analyzer.batch.schemas import FILE_SCHEMAS, PARTITION_SCHEMA, SCHEMAS, TREND
from analyzer.batch.store import META, Dataset, DatasetUnusable


def scan_table(root: Path, table: str) -> pl.LazyFrame:
    """One table of the dataset with its partition columns (schema `SCHEMAS[table]`).

    Raises:
        UsageError: `root` is not a dataset, or has another schema version.
        NoInputError: the dataset holds no unit yet.
    """
    if table not in FILE_SCHEMAS:
        raise UsageError(f"no table {table!r} in a dataset (tables: {', '.join(FILE_SCHEMAS)})")
    if not (root / META / "dataset.json").is_file():
        raise UsageError(
            f"{root} is not a dgtrace batch dataset (no {META}/dataset.json): write one with dgtrace batch"
        )
    Dataset(root).check_version()
    if not any((root / table).rglob("*.parquet")):
        raise NoInputError(f"{root} holds no {table} yet: run dgtrace batch first")
    frame = pl.scan_parquet(
        root / table, hive_partitioning=True, hive_schema=PARTITION_SCHEMA, missing_columns="insert"
    )
    return frame.select([pl.col(name).cast(dtype) for name, dtype in SCHEMAS[table].items()])


def trend(
    root: Path, since: date | None = None, until: date | None = None, dbs: list[str] | None = None
) -> pl.DataFrame:
    """Per configuration and day in [since, until): writes, slow writes, percentiles of the total and
    the time shares, the worst days (largest p99 of the total) first (schema TREND).

    Raises:
        UsageError, NoInputError: as `scan_table`.
        DatasetUnusable: a file of the dataset cannot be read (`dgtrace batch` rebuilds it).
    """
    daily = scan_table(root, "daily")
    if since is not None:
        daily = daily.filter(pl.col("day") >= since)
    if until is not None:
        daily = daily.filter(pl.col("day") < until)
    if dbs:
        daily = daily.filter(
            pl.col("primary_db").is_in(dbs)
            | pl.col("standby_db").str.split(",").list.set_intersection(dbs).list.len().gt(0)
        )
    try:
        rows = daily.select(TREND.names()).collect().cast(TREND)
    except (pl.exceptions.ComputeError, OSError) as err:
        raise DatasetUnusable(
            f"a file of the dataset {root} cannot be read ({_printable(str(err))}):"
            " run dgtrace batch on it (with --verify to check every file): damaged units are rebuilt from their inputs"
        ) from None
    return rows.sort(
        ["total_p99_ms", "slow_writes", "day", "primary_db"], descending=[True, True, True, False], nulls_last=True
    )


def _printable(text: str) -> str:
    """The first line of a reader's error, its bytes that are not printable ASCII as `?` (they may be the file's)."""
    return re.sub(r"[^\x20-\x7e]", "?", text.splitlines()[0][:160] if text else "")
