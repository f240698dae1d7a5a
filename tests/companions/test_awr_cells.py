"""AWR and Statspack cells and lines: counts, numbers and times as printed, histogram headings in ms.

The shapes themselves are golden cases (tests/grammar/cases/awr, checked in test_textinput.py)."""

from __future__ import annotations

from datetime import datetime

import pytest

from analyzer.companions.awr_cells import Bucket, SnapLine, Title, Value, buckets, count, millis, parse_line, plain
from analyzer.companions.awr_tables import Column
from analyzer.parse.records import LineError


def _headings(*names: str) -> tuple[Column, ...]:
    return tuple(Column(name, name) for name in names)


def test_lines_and_cells_become_records() -> None:
    assert parse_line("Begin Snap:      2668 04-Feb-23 19:00:39       65       2.1") == SnapLine(
        "begin", 2668, datetime(2023, 2, 4, 19, 0, 39)
    )
    assert parse_line("Foreground Wait Events  DB/Inst: PRODA/proda1  Snaps: 10-11") == Title(
        "Foreground Wait Events", "PRODA", "proda1"
    )
    assert (parse_line("705.2K"), parse_line("N/A")) == (Value(705.2, "K"), Value(None, None))
    assert parse_line("<1/8s") == Bucket("<", 0.125, "s") and parse_line("%<32ms") == Bucket("<", 32.0, "ms")


@pytest.mark.parametrize(("cell", "value"), [("1,217,279", 1217279), ("705.2K", 705200), ("2M", 2_000_000), ("", None)])
def test_counts_with_the_reports_thousands(cell: str, value: int | None) -> None:
    assert count(cell) == value
    assert count("N/A") is None


def test_plain_numbers_and_blank_cells() -> None:
    assert (plain("1.5M"), plain("12.25"), plain(""), plain("", 0.0), plain("N/A")) == (
        1_500_000.0,
        12.25,
        None,
        0.0,
        None,
    )
    with pytest.raises(LineError, match="unexpected unit"):
        plain("3ms")


@pytest.mark.parametrize(
    ("cell", "unit", "ms"),
    [("811.09us", "ms", 0.81109), ("1.03ms", "ms", 1.03), ("60.00 s", "ms", 60_000.0), ("12", "s", 12_000.0)],
)
def test_average_waits_in_milliseconds_whatever_the_printed_unit(cell: str, unit: str, ms: float) -> None:
    assert millis(cell, unit) == ms


def test_a_count_or_time_with_the_wrong_suffix_is_refused() -> None:
    with pytest.raises(LineError, match="is not a count"):
        count("5ms")
    with pytest.raises(LineError, match="is not a time"):
        millis("5K")
    with pytest.raises(LineError, match="is not a number"):
        count("<1ms")


def test_histogram_headings_become_bounds_in_ms_with_units_carried_along_the_row() -> None:
    micro = buckets(_headings("Event", "Waits", "<512", "<1ms", "<2ms", "<4ms", ">=8ms"))
    assert micro == [  # a first heading without unit: the largest unit below the next heading
        (2, "<512", 0.0, 0.512),
        (3, "<1ms", 0.512, 1.0),
        (4, "<2ms", 1.0, 2.0),
        (5, "<4ms", 2.0, 4.0),
        (6, ">=8ms", 8.0, None),
    ]
    seconds = buckets(_headings("Event", "<1/8s", "<1/4", "<1s", "<2", ">=2"))
    assert [(low, high) for _, _, low, high in seconds] == [
        (0.0, 125.0),
        (125.0, 250.0),
        (250.0, 1000.0),
        (1000.0, 2000.0),
        (2000.0, None),
    ]
