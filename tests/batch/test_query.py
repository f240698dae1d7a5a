"""Reading a dataset back: polars, DuckDB and pyarrow read it as it is; the trend of `dgtrace report`."""

from __future__ import annotations

import json
import shutil
from datetime import date
from pathlib import Path

import duckdb
import polars as pl
import pyarrow.dataset as pads
import pyarrow.parquet as pq
import pytest

from analyzer.base.errors import NoInputError, UsageError
from analyzer.batch.query import scan_table, trend
from analyzer.batch.schemas import SCHEMA_VERSION, SCHEMAS, TABLES, TREND
from analyzer.batch.store import DatasetUnusable
from tests.batch.helpers import batch, truth


@pytest.fixture(scope="module")
def dataset(one_day: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("query") / "ds"
    batch(one_day, out)
    return out


@pytest.mark.parametrize("table", TABLES)
def test_every_table_reads_alike_in_polars_duckdb_and_pyarrow(dataset: Path, table: str) -> None:
    ours = scan_table(dataset, table).collect()
    assert ours.schema == SCHEMAS[table]
    plain = pl.scan_parquet(dataset / table).collect()  # no option: the hive layout speaks for itself
    assert set(plain.columns) == set(SCHEMAS[table].names())
    glob = (dataset / table / "**" / "*.parquet").as_posix()
    duck = duckdb.sql(f"select * from read_parquet('{glob}', hive_partitioning=true)").pl()
    arrow = pads.dataset(dataset / table, partitioning="hive").to_table()
    also = pq.read_table(dataset / table)
    assert plain.height == duck.height == arrow.num_rows == also.num_rows == ours.height
    assert set(duck.columns) == set(arrow.column_names) == set(plain.columns)
    if ours.height:
        keys = [
            c
            for c in ("file", "line", "sent_at", "thread", "msgid", "primary_host", "standby_host")
            if c in ours.columns
        ]
        first = ours.sort(keys, nulls_last=True).row(0, named=True)
        duck_first = duck.sort(keys, nulls_last=True).row(0, named=True)
        assert duck_first["primary_db"] == first["primary_db"]
        assert str(duck_first["day"]) == str(first["day"])


def test_duckdb_counts_per_configuration_and_day(dataset: Path, one_day: Path) -> None:
    glob = (dataset / "writes" / "**" / "*.parquet").as_posix()
    rows = duckdb.sql(
        f"select primary_db, standby_db, day, count(*) as n, quantile_disc(total_ms, 0.99) as p99"
        f" from read_parquet('{glob}', hive_partitioning=true) group by all order by primary_db"
    ).fetchall()
    expected = truth(one_day).group_by("primary_db", "standby_db", "day").len().sort("primary_db")
    assert [(r[0], r[1], r[2], r[3]) for r in rows] == expected.rows()


def test_trend_filters_and_order(dataset: Path, one_day: Path) -> None:
    rows = trend(dataset)
    assert rows.schema == TREND
    assert rows["total_p99_ms"].to_list() == sorted(rows["total_p99_ms"].to_list(), reverse=True)
    expected = truth(one_day).group_by("primary_db").len()
    assert dict(rows.select("primary_db", "writes").rows()) == dict(expected.rows())
    day = rows["day"][0]
    assert trend(dataset, since=day + (date(2000, 1, 2) - date(2000, 1, 1))).is_empty()
    assert trend(dataset, until=day).is_empty()
    assert trend(dataset, dbs=["hr"])["primary_db"].to_list() == ["hr"]
    assert trend(dataset, dbs=["salesdr"])["primary_db"].to_list() == ["sales"]  # a standby names its configuration


def test_not_a_dataset(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="not a dgtrace batch dataset"):
        scan_table(tmp_path, "writes")
    with pytest.raises(UsageError, match="no table"):
        scan_table(tmp_path, "nothing")
    (tmp_path / "_dgtrace").mkdir()
    (tmp_path / "_dgtrace" / "dataset.json").write_text(json.dumps({"schema_version": SCHEMA_VERSION}))
    with pytest.raises(NoInputError):
        scan_table(tmp_path, "daily")


def test_a_damaged_file_is_named_with_what_to_do(dataset: Path, tmp_path: Path) -> None:
    damaged = tmp_path / "ds"
    shutil.copytree(dataset, damaged)
    daily = next((damaged / "daily").rglob("*.parquet"))
    daily.write_bytes(daily.read_bytes()[:100] + b"\x1b[31m")
    with pytest.raises(DatasetUnusable, match=r"cannot be read .*: run dgtrace batch on it") as err:
        trend(damaged)
    assert "\x1b" not in str(err.value)
