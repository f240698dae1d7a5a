"""The tables of a batch dataset: stored columns without the partitions, categoricals as strings, what readers see."""

from __future__ import annotations

import polars as pl

from analyzer.batch.schemas import (
    DAILY_FILE,
    FILE_SCHEMAS,
    PARTITION_SCHEMA,
    PARTITIONS,
    SCHEMAS,
    TABLES,
    TREND,
    WRITES_FILE,
)
from analyzer.schemas import WRITES
from analyzer.vocab import MEASURES


def test_files_store_no_partition_column_and_no_categorical() -> None:
    assert set(PARTITIONS) == set(PARTITION_SCHEMA)
    for name, stored in FILE_SCHEMAS.items():
        assert not set(PARTITIONS) & set(stored), name
        assert pl.Categorical not in stored.values(), name  # every reader of Parquet reads strings alike


def test_the_writes_file_is_the_writes_contract_without_the_what_if() -> None:
    kept = [n for n in WRITES if n not in PARTITIONS and n != "fastsync_ms"]
    assert list(WRITES_FILE) == kept  # standby_db is already among them
    assert all(WRITES_FILE[n] == (pl.String if WRITES[n] == pl.Categorical else WRITES[n]) for n in kept)
    assert FILE_SCHEMAS["shipments"] == WRITES_FILE


def test_a_reader_sees_the_stored_columns_then_the_partitions() -> None:
    assert TABLES == ("writes", "shipments", "unmatched", "lgwr_warnings", "files", "clock", "daily")
    for name in TABLES:
        assert list(SCHEMAS[name]) == [*FILE_SCHEMAS[name], *PARTITIONS], name
        assert SCHEMAS[name]["day"] == pl.Date


def test_the_daily_table_keeps_four_percentiles_of_every_measure_and_the_trend_reads_from_it() -> None:
    percentiles = [n for n in DAILY_FILE if n.endswith("_ms") and n.split("_")[-2] in ("p50", "p90", "p99", "max")]
    assert len(percentiles) == 4 * len(MEASURES)
    daily = SCHEMAS["daily"]
    assert all(daily[n] == t for n, t in TREND.items())
