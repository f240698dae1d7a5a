"""Counts with their noun and durations, in words."""

from __future__ import annotations

import pytest

from analyzer.words import duration, plural


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
