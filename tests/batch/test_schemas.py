"""The tables of a batch dataset: stored columns without the partitions, categoricals as strings, what readers see."""

from __future__ import annotations

import polars as pl

from analyzer.base.schemas import WRITES
from analyzer.base.vocab import MEASURES
from analyzer.batch.schemas import (
    DAILY_FILE,
    DAILY_STATS,
    FILE_SCHEMAS,
    MIGRATES_FROM,
    PARTITION_SCHEMA,
    PARTITIONS,
    SCHEMA_VERSION,
    SCHEMAS,
    TABLES,
    TREND,
    WRITES_FILE,
)


def test_files_store_no_partition_column_and_no_categorical() -> None:
    assert set(PARTITIONS) == set(PARTITION_SCHEMA)
    for name, stored in FILE_SCHEMAS.items():
        assert not set(PARTITIONS) & set(stored), name
        assert pl.Categorical not in stored.values(), name  # every reader of Parquet reads strings alike


def test_the_writes_file_is_the_writes_contract_with_the_databases() -> None:
    kept = [n for n in WRITES if n not in PARTITIONS]
    assert list(WRITES_FILE) == kept and "fastsync_ms" in WRITES_FILE  # standby_db is already among them
    assert all(WRITES_FILE[n] == (pl.String if WRITES[n] == pl.Categorical else WRITES[n]) for n in kept)
    assert FILE_SCHEMAS["shipments"] == WRITES_FILE


def test_a_reader_sees_the_stored_columns_then_the_partitions() -> None:
    assert TABLES == ("writes", "shipments", "unmatched", "lgwr_warnings", "files", "clock", "daily")
    for name in TABLES:
        assert list(SCHEMAS[name]) == [*FILE_SCHEMAS[name], *PARTITIONS], name
        assert SCHEMAS[name]["day"] == pl.Date


def test_the_daily_table_keeps_four_percentiles_of_every_measure_and_the_trend_reads_from_it() -> None:
    assert all(f"{m}_{s}_ms" in DAILY_FILE for m in MEASURES for s in DAILY_STATS)
    assert DAILY_FILE["fastsync_p99_ms"] == pl.Float64  # the Fast Sync what-if beside the measures
    daily = SCHEMAS["daily"]
    assert all(daily[n] == t for n, t in TREND.items())


def test_a_dataset_of_an_older_version_is_brought_to_this_one() -> None:
    assert SCHEMA_VERSION not in MIGRATES_FROM and all(v < SCHEMA_VERSION for v in MIGRATES_FROM)
