"""Counts, durations and milliseconds in words: one formatter of milliseconds, as fine as the stamps allow."""

from __future__ import annotations

import re

import pytest

from analyzer.api import Options, analyze
from analyzer.base.words import decimals, duration, ms, plural
from analyzer.base.zones import parse_zones
from analyzer.report.model import summary
from tests.conftest import PAPER


def test_counts_and_durations() -> None:
    assert (plural(1, "write"), plural(1204, "write")) == ("1 write", "1,204 writes")
    assert (duration(45.2), duration(750.0), duration(11_520.0)) == ("45 s", "12.5 min", "3.2 h")


def test_a_sentence_keeps_three_significant_digits_below_100_ms() -> None:
    values = (1835.521, 302.219, 12.49, 2.296, 0.601, 0.0601, 1e-5, None)
    assert [ms(v) for v in values] == [
        "1,836 ms",
        "302 ms",
        "12.5 ms",
        "2.3 ms",
        "0.601 ms",
        "0.06 ms",  # never below a microsecond, the finest stamp
        "0 ms",
        "n/a",
    ]


@pytest.mark.parametrize(
    ("resolution", "places"), [(None, 3), (0.002, 3), (0.001, 3), (0.1, 1), (0.5, 0), (1.0, 0), (2.0, 0)]
)
def test_the_stamps_resolution_sets_the_decimals(resolution: float | None, places: int) -> None:
    assert decimals(resolution) == places
    cell = ms(137.0, resolution, unit=False)
    assert cell == ("137" if places == 0 else f"137.{'0' * places}")
    assert ms(2.296, resolution) == {3: "2.3 ms", 1: "2.3 ms", 0: "2 ms"}[places]


def test_no_minus_zero_and_a_sign_on_request() -> None:
    assert (ms(-0.0001, unit=False), ms(-0.3, 2.0, unit=False), ms(-0.0001)) == ("0.000", "0", "0 ms")
    assert (ms(0.003, signed=True), ms(-4.858, signed=True), ms(0.0, signed=True, unit=False)) == (
        "+0.003 ms",
        "-4.86 ms",
        "+0.000",
    )
    assert (ms(1234.5678, unit=False), ms(None, unit=False)) == ("1,234.568", "")


def test_figures_of_millisecond_stamps_show_no_decimals_in_any_sentence_or_table() -> None:
    """The MAA paper's 11.2 traces: stamps of 1 ms on each side; RFS I/O time is `ela` (microseconds)."""
    a = analyze([PAPER], Options(zones=parse_zones(["-07:00"])))
    s = summary(a, 10)
    network = next(r for r in s["recommendations"] if r["id"] == "network-stalls")
    assert "over all writes its p50 is 1 ms, p99 2 ms, max 137 ms." in network["evidence"]
    assert "the network part's p50 (1 ms) is near its floor (0 ms)" in network["evidence"]  # as the stamps allow
    assert "(137 ms of 301 ms over 2 writes >= 100 ms)" in network["evidence"]
    srl = next(r for r in s["recommendations"] if r["id"] == "standby-io-outliers")
    assert "its p50 is 0.938 ms, p99 1.47 ms, max 163 ms." in srl["evidence"]  # RFS I/O: microseconds
    assert "p99 go from 138 ms to 2 ms" in s["what_if"]["fast_sync"]["finding"]
    every = " ".join(r["evidence"] for r in s["recommendations"]) + s["what_if"]["fast_sync"]["finding"]
    stamped = re.findall(r"\b\d+\.\d+ ms", every)
    assert stamped and all(v in ("0.938 ms", "1.47 ms") for v in stamped), stamped


@pytest.mark.parametrize(
    ("count", "text"), [(0, "0 writes"), (1, "1 write"), (2, "2 writes"), (1204, "1,204 writes"), (-1, "-1 writes")]
)
def test_a_count_takes_its_noun_in_the_plural_unless_it_is_one(count: int, text: str) -> None:
    assert plural(count, "write") == text


@pytest.mark.parametrize(
    ("seconds", "text"),
    [
        (0, "0 s"),
        (45.4, "45 s"),
        (119.4, "119 s"),
        (120, "2.0 min"),
        (750, "12.5 min"),
        (7199, "120.0 min"),
        (7200, "2.0 h"),
        (11_520, "3.2 h"),
        (86_400 * 3, "72.0 h"),
    ],
)
def test_a_duration_in_the_unit_that_keeps_it_short(seconds: float, text: str) -> None:
    assert duration(seconds) == text
