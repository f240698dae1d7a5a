"""Units users type (UTC offsets, sizes, instants, clock offsets) and durations between stamps."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import polars as pl
import pytest

from analyzer.base.errors import UsageError
from analyzer.base.units import elapsed_ms, format_offset, parse_clock_offsets, parse_instant, parse_offset, parse_size


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


@pytest.mark.parametrize("minutes", [0, 330, -420, 345, -570, 840, -720])
def test_format_offset_is_the_inverse_of_parse_offset(minutes: int) -> None:
    text = format_offset(minutes)
    assert len(text) == 6 and text[0] in "+-" and parse_offset(text) == minutes


def test_parse_size_and_offset() -> None:
    assert parse_size("500MB") == 500 * 2**20
    assert parse_size("2g") == 2 * 2**30
    assert parse_size("1.5KB") == 1536
    assert parse_size("4096") == 4096
    assert parse_offset("-07:00") == -420 and parse_offset("+05:30") == 330
    with pytest.raises(UsageError):
        parse_size("lots")


@pytest.mark.parametrize("text", ["", "MB", "-5MB", "5 PB", "five"])
def test_parse_size_rejects_names_the_option(text: str) -> None:
    with pytest.raises(UsageError, match=rf"^--segment-bytes: cannot read {text!r}; write e.g. 500MB or 2GB$"):
        parse_size(text, "--segment-bytes")


def test_elapsed_ms_keeps_microseconds() -> None:
    t0 = datetime(2024, 1, 1, tzinfo=UTC)
    frame = pl.DataFrame({"start": [t0, t0], "end": [t0 + timedelta(microseconds=1500), t0 - timedelta(seconds=2)]})
    assert frame.select(elapsed_ms("end", "start"))["end"].to_list() == [1.5, -2000.0]


def test_parse_clock_offsets_by_host() -> None:
    assert parse_clock_offsets(["stby01=-2500", "stby02 = 1.5", "stby01=-2500"]) == {"stby01": -2500.0, "stby02": 1.5}
    assert parse_clock_offsets(["a=b=3"]) == {"a=b": 3.0}  # the value is after the last `=`


@pytest.mark.parametrize("spec", ["stby01", "=5", "stby01=", "stby01=fast", "stby01=nan", "stby01=inf"])
def test_parse_clock_offsets_rejects(spec: str) -> None:
    with pytest.raises(UsageError, match=r"use HOST=MS, e\.g\. stby01=-2500"):
        parse_clock_offsets([spec])


def test_parse_clock_offsets_refuses_one_host_given_twice_differently() -> None:
    with pytest.raises(UsageError, match=r"--clock-offset given twice for host stby01 \(-2500 and 10 ms\)"):
        parse_clock_offsets(["stby01=-2500", "stby01=10"])


@pytest.mark.parametrize(
    ("text", "zone", "utc"),
    [
        ("2014-12-02T08:46:30-07:00", None, datetime(2014, 12, 2, 15, 46, 30, tzinfo=UTC)),
        ("2014-12-02 08:46:30", None, datetime(2014, 12, 2, 8, 46, 30, tzinfo=UTC)),  # UTC when no --tz
        ("2014-12-02 08:46:30", timezone(timedelta(hours=-7)), datetime(2014, 12, 2, 15, 46, 30, tzinfo=UTC)),
        ("2014-12-02T15:46:30Z", timezone(timedelta(hours=5)), datetime(2014, 12, 2, 15, 46, 30, tzinfo=UTC)),
    ],
)
def test_parse_instant_gives_utc(text: str, zone: timezone | None, utc: datetime) -> None:
    got = parse_instant(text, zone)
    assert got == utc and got.tzinfo is UTC


def test_parse_instant_rejects_names_the_option() -> None:
    with pytest.raises(UsageError, match=r"^--until: cannot read 'yesterday'; write e.g. 2024-12-09T06:43:00"):
        parse_instant("yesterday", None, "--until")
