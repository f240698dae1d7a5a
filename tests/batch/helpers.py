"""Shared by the batch tests: a small simulated archive share, its truth, and the dataset's writes."""

from __future__ import annotations

import shutil
from datetime import date
from pathlib import Path

import polars as pl

from analyzer.batch.engine import EngineName, EngineSpec
from analyzer.batch.run import RunSummary, run_batch
from analyzer.simulate import ShareOptions, simulate_share

#: a write's identity within the estate: its configuration, then its key
KEY = ["primary_db", "thread", "seq", "msgid"]
#: the measures the truth gives, to 3 decimals
MEASURES = ["total_ms", "network_ms", "rfs_ms", "rfs_io_ms", "rfs_other_ms"]
INLINE = EngineSpec(EngineName.LOCAL, workers=1)


def make_share(root: Path, configs: int = 3, days: int = 3, writes: int = 120) -> Path:
    """A share as `dgtrace simulate-share` writes it: older days gzipped, alert logs, .trm, foreground traces."""
    options = ShareOptions(configs=configs, days=days, writes=writes, log_switch_every=50, seed=7)
    simulate_share(root, options)
    return root


def copy_share(source: Path, target: Path) -> Path:
    shutil.copytree(source, target)
    return target


def truth(share: Path) -> pl.DataFrame:
    """truth.csv with the columns the dataset is checked against."""
    frame = pl.read_csv(share / "truth.csv", schema_overrides={"sent_at": pl.String})
    return frame.with_columns(
        pl.col("sent_at").str.to_datetime(time_unit="us", time_zone="UTC"), pl.col("day").str.to_date()
    )


def writes(dataset: Path) -> pl.DataFrame:
    """Every write of a dataset, read as a user would (polars, hive partitions)."""
    return pl.scan_parquet(dataset / "writes").collect()


def batch(share: Path, dataset: Path, engine: EngineSpec = INLINE, *, verify: bool = False) -> RunSummary:
    return run_batch([str(share)], dataset, engine=engine, verify=verify)


def unit_tables(db: str | None, day: date, writes: int) -> dict[str, pl.DataFrame]:
    """A unit's tables as `Dataset.commit` takes them: `writes` rows of nulls in `writes`, the others empty."""
    from analyzer.batch.schemas import FILE_SCHEMAS

    frames = {}
    for name, columns in FILE_SCHEMAS.items():
        rows = writes if name == "writes" else 0
        frame = pl.DataFrame({c: [None] * rows for c in columns.names()}, schema=columns)
        frames[name] = frame.with_columns(primary_db=pl.lit(db, pl.String), day=pl.lit(day, pl.Date))
    return frames


def check_against_truth(dataset: Path, expected: pl.DataFrame) -> None:
    """Every expected write is in the dataset exactly once, matched, with the truth's numbers, on its
    day and in its configuration; the dataset holds no other write."""
    got = writes(dataset)
    assert got.height == expected.height, (got.height, expected.height)
    dup = got.group_by(KEY).len().filter(pl.col("len") > 1)
    assert dup.is_empty(), dup
    joined = expected.join(got, on=KEY, how="left", suffix="_got")
    assert joined["sent_at_got"].null_count() == 0, joined.filter(pl.col("sent_at_got").is_null())
    assert joined["matched"].all()
    assert (joined["standby_db"] == joined["standby_db_got"]).all()
    assert (joined["day"] == joined["day_got"]).all()
    assert (joined["sent_at"] == joined["sent_at_got"]).all()
    for m in MEASURES:
        assert ((joined[m] - joined[f"{m}_got"]).abs() < 0.0015).all(), m
    assert (joined["verdict"] == joined["verdict_got"]).all()


def snapshot(dataset: Path) -> dict[str, tuple[int, bytes]]:
    """Every file of a dataset but the lock, with its modification time and bytes."""
    return {
        p.relative_to(dataset).as_posix(): (p.stat().st_mtime_ns, p.read_bytes())
        for p in sorted(dataset.rglob("*"))
        if p.is_file() and p.name != "lock"
    }


def dataset_rows(dataset: Path) -> dict[str, pl.DataFrame]:
    """Every table of a dataset, its rows in a fixed order (to compare two datasets row for row)."""
    from analyzer.batch.query import scan_table
    from analyzer.batch.schemas import TABLES

    out = {}
    for table in TABLES:
        frame = scan_table(dataset, table).collect()
        out[table] = frame.sort(frame.columns, nulls_last=True)
    return out


def same_rows(a: Path, b: Path) -> None:
    left, right = dataset_rows(a), dataset_rows(b)
    for table, frame in left.items():
        assert frame.equals(right[table]), table
