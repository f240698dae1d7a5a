"""The records the line grammars yield: the ranges their numbers keep and the times they read."""

from __future__ import annotations

from datetime import datetime

import pytest

from analyzer.base.vocab import MessageKind
from analyzer.parse.records import MAX_MICROS, MAX_OFFSET_MIN, Message, check, parse_iso, parse_local


def test_a_number_in_range_is_kept_and_one_out_of_range_named() -> None:
    assert check("ela", 0, MAX_MICROS) == 0 and check("ela", MAX_MICROS - 1, MAX_MICROS) == MAX_MICROS - 1
    for value in (-1, MAX_MICROS):
        with pytest.raises(ValueError, match=rf"^tim={value} out of range$"):
            check("tim", value, MAX_MICROS)


@pytest.mark.parametrize(
    ("date", "clock", "local", "digits"),
    [
        ("2014-12-02", "08:46:34.598", datetime(2014, 12, 2, 8, 46, 34, 598000), 3),
        ("2014-12-02", "08:46:34.598123", datetime(2014, 12, 2, 8, 46, 34, 598123), 6),
        ("2014-12-02", "08:46:34.598123456", datetime(2014, 12, 2, 8, 46, 34, 598123), 6),  # nanoseconds cut
        ("2014-12-02", "08:46:34", datetime(2014, 12, 2, 8, 46, 34), 0),
    ],
)
def test_local_stamps_keep_the_digits_they_print(date: str, clock: str, local: datetime, digits: int) -> None:
    assert parse_local(date, clock) == (local, digits)


@pytest.mark.parametrize(
    ("date", "clock"), [("1899-12-31", "23:59:59"), ("3000-01-01", "00:00:00"), ("2014-13-45", "00:00:00")]
)
def test_impossible_dates_are_refused(date: str, clock: str) -> None:
    with pytest.raises(ValueError):
        parse_local(date, clock)


@pytest.mark.parametrize(
    ("text", "offset"),
    [
        ("2024-10-22T14:00:00.123456+02:00", 120),
        ("2024-10-22T14:00:00.123456-0700", -420),
        ("2024-10-22T14:00:00.123456Z", 0),
        ("2024-10-22T14:00:00.123456", None),
    ],
)
def test_iso_stamps_give_local_time_digits_and_their_offset(text: str, offset: int | None) -> None:
    assert parse_iso(text) == (datetime(2024, 10, 22, 14, 0, 0, 123456), 6, offset)


@pytest.mark.parametrize("zone", ["+14:01", "-15:00", "+02:60"])
def test_offsets_beyond_the_zones_in_use_are_refused(zone: str) -> None:
    assert MAX_OFFSET_MIN == 14 * 60
    with pytest.raises(ValueError, match="out of range"):
        parse_iso(f"2024-10-22T14:00:00.1{zone}")


def test_records_are_frozen_values() -> None:
    message = Message(MessageKind.CLIENT_SEND, "kpurcs", "Write", "1", 1, 2, 3)
    assert message == Message(MessageKind.CLIENT_SEND, "kpurcs", "Write", "1", 1, 2, 3)
    with pytest.raises(AttributeError):
        message.msgid = 4  # type: ignore[misc]
