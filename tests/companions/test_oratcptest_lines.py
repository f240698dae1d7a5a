"""oratcptest output lines as records, and the sizes, rates and times they print, in bytes, bytes/s, ms and s.

The shapes themselves are golden cases (tests/grammar/cases/oratcptest, checked in test_textinput.py)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import time

import pytest

from analyzer.companions.oratcptest_lines import (
    MIB,
    Clocked,
    Quantity,
    UnitNote,
    millis,
    parse_line,
    rate_bytes_s,
    seconds,
    size_bytes,
)
from analyzer.parse.records import LineError


def test_lines_become_records() -> None:
    assert parse_line("(00:00:05) The server is ready.") == Clocked("ready", time(0, 0, 5))
    assert parse_line("(1 Mbyte = 1024x1024 bytes)") == UnitNote(1.0, "Mbyte", MIB)
    with pytest.raises(LineError, match="at column 1"):
        parse_line("The server is ready.")  # without its clock


@pytest.mark.parametrize(
    ("quantity", "mbyte", "size"),
    [
        (Quantity(8, "kbytes"), MIB, 8192),
        (Quantity(846, "kbytes"), MIB, 866_304),
        (Quantity(1, "Mbyte"), MIB, MIB),
        (Quantity(16, "KB"), 1000 * 1000, 16_000),  # a client whose Mbyte is 1000x1000: its kbyte is 1000
        (Quantity(2, "bytes"), MIB, 2),
        (Quantity(1, "GB"), MIB, 1 << 30),
    ],
)
def test_sizes_in_bytes_with_the_client_s_mbyte(quantity: Quantity, mbyte: int, size: int) -> None:
    assert size_bytes(quantity, mbyte) == size


def test_rates_times_and_durations() -> None:
    assert rate_bytes_s(Quantity(7.5, "Mbytes/s")) == 7.5 * MIB
    assert rate_bytes_s(Quantity(19.58, "Mbytes/s"), 1000 * 1000) == pytest.approx(19_580_000.0)
    assert (millis(250, "us"), millis(1.037, "ms"), millis(2, "sec")) == (0.25, 1.037, 2000.0)
    assert (seconds(Quantity(2, "minutes")), seconds(Quantity(1, "hour")), seconds(Quantity(500, "ms"))) == (
        120.0,
        3600.0,
        0.5,
    )


@pytest.mark.parametrize(
    ("convert", "message"),
    [
        (lambda: size_bytes(Quantity(8, None)), "8 without its unit"),
        (lambda: size_bytes(Quantity(8, "furlongs")), "unknown size unit 'furlongs'"),
        (lambda: rate_bytes_s(Quantity(8, "Mbytes")), "unknown throughput unit 'Mbytes'"),
        (lambda: millis(8, None), "unknown latency unit None"),
        (lambda: seconds(Quantity(8, "days")), "unknown duration unit 'days'"),
    ],
)
def test_a_unit_it_does_not_know_is_said(convert: Callable[[], object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        convert()
