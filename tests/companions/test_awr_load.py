"""The workload of an AWR report as the MAA paper reads it: Load Profile and Instance Activity Stats, in the
text layouts of 11.2 and 12.2 and the HTML layout of 19c (hand-written fixtures of those layouts)."""

from __future__ import annotations

import pytest

from analyzer.companions.awr import read_awr
from analyzer.companions.awr_load import LoadProfile, from_lines
from tests.conftest import ROOT

AWR = ROOT / "tests" / "fixtures" / "awr"


@pytest.mark.parametrize(
    ("name", "rate", "tps", "writes", "size", "write_ms"),
    [
        ("awr-11.2-primary-load.txt", 3_758_080.0, 428.9, 1_426_311, 9477.5, 1.87),  # `Redo size:`
        ("awr-12.2-primary-load.txt", 7_340_032.0, 2285.6, 2_201_477, 11992.0, 1.32),  # `Redo size (bytes):`
        ("awr-19c-async-primary.html", 21_495_808.0, 1532.9, 4_988_102, 15522.1, 0.341),
    ],
)
def test_redo_rate_transactions_and_the_average_redo_write(
    name: str, rate: float, tps: float, writes: int, size: float, write_ms: float
) -> None:
    load = read_awr(AWR / name).load
    assert load is not None and not load.empty
    assert (load.redo_bytes_s, load.transactions_s, load.redo_writes) == (rate, tps, writes)
    assert load.write_bytes == pytest.approx(size, abs=0.1)  # redo size / redo writes
    assert load.write_ms == pytest.approx(write_ms, abs=0.005)  # redo write time (cs) / redo writes x 10
    assert len(load.lines) == 5


def test_a_report_without_them_has_none() -> None:
    assert read_awr(AWR / "awr-12c-primary.txt").load is None
    assert from_lines(["Load Profile", "  Redo size (bytes):   n/a", "redo sizes    1   2"]) is None


def test_a_statistic_only_where_its_row_begins_the_line() -> None:
    load = from_lines(
        [
            "redo size for direct writes                 811,008          225.5           0.1",
            "redo writes                               2,201,477          612.1           0.3",
            "   redo size                               1,000          1.0           0.1",  # indented: not a row
        ]
    )
    assert load == LoadProfile(redo_writes=2_201_477.0, lines=(2,))
    assert load.write_bytes is None and load.write_ms is None
