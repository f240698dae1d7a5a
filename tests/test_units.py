"""Units users type: UTC offsets, sizes, instants."""

from __future__ import annotations

import pytest

from analyzer.errors import UsageError
from analyzer.units import parse_offset


@pytest.mark.parametrize(
    ("text", "minutes"),
    [("+05:30", 330), ("-07:00", -420), ("-0700", -420), ("+2", 120), ("UTC", 0), ("Z", 0)],
)
def test_parse_offset(text: str, minutes: int) -> None:
    assert parse_offset(text) == minutes


@pytest.mark.parametrize("text", ["Europe/Paris", "07:00", "+25:00", "+07:99", ""])
def test_parse_offset_rejects(text: str) -> None:
    with pytest.raises(UsageError, match="time zone offset"):
        parse_offset(text)
