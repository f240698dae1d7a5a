"""Units: the sizes and UTC offsets users type (`500MB`, `-07:00`), and durations between stamps."""

from __future__ import annotations

import re
from datetime import UTC, datetime, tzinfo

import polars as pl

from analyzer.base.errors import UsageError

_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([KMGT]?)(?:i?B)?\s*$", re.IGNORECASE)
_UNITS = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}


def parse_size(text: str, option: str = "--size") -> int:
    """Turn `500MB`, `2GB`, `1.5G` or `65536` into bytes (binary units: 1 MB = 2**20 bytes)."""
    match = _SIZE.match(text)
    if match is None:
        raise UsageError(f"{option}: cannot read {text!r}; write e.g. 500MB or 2GB")
    return int(float(match.group(1)) * _UNITS[match.group(2).upper()])


def parse_offset(text: str) -> int:
    """`+05:30`, `-0700`, `+2`, `UTC`, `Z` -> minutes east of UTC.

    Raises:
        UsageError: anything else (IANA zone names are not accepted: give the offset).
    """
    raw = text.strip()
    if raw.upper() in {"UTC", "Z", "GMT"}:
        return 0
    sign = {"+": 1, "-": -1}.get(raw[:1])
    digits = raw[1:].replace(":", "")
    if sign is None or not digits.isdigit() or len(digits) not in (1, 2, 4):
        raise UsageError(f"bad time zone offset {text!r}: use +HH:MM or -HH:MM (e.g. -07:00)")
    hours, minutes = (int(digits), 0) if len(digits) <= 2 else (int(digits[:2]), int(digits[2:]))
    if hours > 14 or minutes >= 60:
        raise UsageError(f"bad time zone offset {text!r}: out of range")
    return sign * (hours * 60 + minutes)


def format_offset(minutes: int) -> str:
    """Minutes east of UTC as `+HH:MM` / `-HH:MM` (the inverse of `parse_offset`)."""
    sign = "-" if minutes < 0 else "+"
    return f"{sign}{abs(minutes) // 60:02d}:{abs(minutes) % 60:02d}"


def elapsed_ms(end: str, start: str) -> pl.Expr:
    """Milliseconds from the datetime column `start` to `end` (microsecond precision)."""
    return (pl.col(end) - pl.col(start)).dt.total_microseconds() / 1000.0


def parse_clock_offsets(specs: list[str]) -> dict[str, float]:
    """`--clock-offset HOST=MS` values -> {host: ms}.

    Raises:
        UsageError: not HOST=MS, an empty host, or one host given twice with different values.
    """
    out: dict[str, float] = {}
    for spec in specs:
        host, sep, value = spec.rpartition("=")
        host = host.strip()
        try:
            ms = float(value)
        except ValueError:
            host = ""
        if not sep or not host or ms != ms or abs(ms) == float("inf"):
            raise UsageError(f"bad --clock-offset {spec!r}: use HOST=MS, e.g. stby01=-2500")
        if out.get(host, ms) != ms:
            raise UsageError(f"--clock-offset given twice for host {host} ({out[host]:g} and {ms:g} ms)")
        out[host] = ms
    return out


def parse_instant(text: str, default_zone: tzinfo | None, option: str = "--since") -> datetime:
    """ISO-8601 with or without offset (`2014-12-02T08:46:30-07:00`, `2014-12-02 08:46:30`) -> UTC.

    A time without an offset is local time in `default_zone` (the `--tz` zone), else UTC.
    """
    raw = text.strip().replace("Z", "+00:00").replace("z", "+00:00")
    try:
        when = datetime.fromisoformat(raw)
    except ValueError:
        raise UsageError(
            f"{option}: cannot read {text!r}; write e.g. 2024-12-09T06:43:00 or 2024-12-09T06:43:00+08:00"
        ) from None
    if when.tzinfo is None:
        when = when.replace(tzinfo=default_zone or UTC)
    return when.astimezone(UTC)
