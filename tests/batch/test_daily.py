"""The daily row: counts, percentiles, time shares and verdicts of one configuration's day."""

from __future__ import annotations

from datetime import date

import polars as pl
import pytest

from analyzer.batch.daily import daily_table
from analyzer.batch.schemas import SCHEMAS


def _writes() -> pl.DataFrame:
    return pl.DataFrame(
        {
            "primary_db": ["sales"] * 4,
            "standby_db": ["salesdr", "salesdr", "salesdr", None],
            "matched": [True, True, True, False],
            "primary_file": ["p", "p", "p", "p"],
            "slow": [False, True, False, False],
            "total_ms": [2.0, 200.0, 4.0, 9.0],
            "network_ms": [1.0, 20.0, 1.0, None],
            "rfs_io_ms": [0.5, 170.0, 2.5, None],
            "rfs_other_ms": [0.5, 10.0, 0.5, None],
            "rfs_ms": [1.0, 180.0, 3.0, None],
            "verdict": ["network", "rfs_io", "rfs_io", None],
            "fastsync_ms": [1.5, 30.0, 1.5, None],
        }
    )


def test_daily_numbers() -> None:
    unmatched = pl.DataFrame({"primary_db": ["sales", "sales"]})
    warnings = pl.DataFrame({"primary_db": ["sales"]})
    table = daily_table(_writes(), unmatched, warnings, "sales+salesdr", "sales", pl.lit(date(2024, 10, 22)), 100.0)
    assert table.schema == SCHEMAS["daily"]
    (row,) = table.to_dicts()
    assert (row["writes"], row["matched"], row["primary_only"], row["standby_only"]) == (4, 3, 1, 0)
    assert (row["slow_writes"], row["unmatched_messages"], row["lgwr_warnings"]) == (1, 2, 1)
    assert row["standby_db"] == "salesdr" and row["configuration"] == "sales+salesdr"
    assert row["total_max_ms"] == 200.0 and row["total_p50_ms"] == 9.0  # an observed value: index round(0.5 x 3) of 4
    assert row["network_p99_ms"] == 20.0 and row["rfs_io_p50_ms"] == 2.5
    assert row["network_share"] == pytest.approx(22 / 206)
    assert row["rfs_io_share"] == pytest.approx(173 / 206)
    assert row["slow_rfs_io_share"] == pytest.approx(0.85)
    assert (row["network_verdicts"], row["rfs_io_verdicts"], row["slow_rfs_io_verdicts"]) == (1, 2, 1)
    # with Fast Sync, the slow write (170 ms of standby I/O) would have taken 30 ms: none slow
    assert (row["fastsync_p99_ms"], row["fastsync_slow_writes"]) == (30.0, 0)


def test_a_day_without_writes_has_a_row_of_zeros() -> None:
    empty = _writes().clear()
    table = daily_table(
        empty,
        pl.DataFrame({"primary_db": []}, schema={"primary_db": pl.String}),
        pl.DataFrame({"primary_db": []}, schema={"primary_db": pl.String}),
        "hr+hrdr",
        "hr",
        pl.lit(date(2024, 10, 22)),
        100.0,
    )
    (row,) = table.to_dicts()
    assert (row["primary_db"], row["writes"], row["total_p99_ms"], row["network_share"]) == ("hr", 0, None, None)
    assert (row["fastsync_p99_ms"], row["fastsync_slow_writes"]) == (None, 0)
