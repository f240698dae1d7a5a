"""Time zones: the UTC offset of each line of a trace file, naive local times turned into UTC, and
host names as people type them.

From 12.2 on a file's ISO ADR lines (`*** 2024-10-22T16:18:49.081732+02:00`) carry its offset; a
line takes that of the nearest ISO line before it. Older files carry none: the zone comes from
`--tz` (for all files or per host: a fixed offset, or an IANA name such as `Europe/Paris`, whose
offset is that of each stamp's own date), or is inferred from epoch `tim` (`analyzer.parse.tim`), or is
the zone every other file of the set agrees on (`common_zone`), else UTC is assumed and said.

A host given on the command line (`--tz stby01=...`, `--clock-offset stby01=...`) names the files
of that host whether they spell it `stby01` or `stby01.dbnet.example` (`same_host`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone, tzinfo
from typing import TypeVar
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError, available_timezones

import polars as pl

from analyzer.base.errors import UsageError
from analyzer.base.schemas import collect_rows
from analyzer.base.units import format_offset, parse_offset

#: a zone: minutes east of UTC, or an IANA zone name (`Europe/Paris`)
Zone = int | str
#: where a file's zone came from when no --tz and no zone in the file decides it
ASSUMED_UTC = "assumed UTC (no zone in the file; use --tz)"
#: the prefix of the zone source of a file that took the zone of the other files
ASSUMED_COMMON = "assumed"
_NO_ZONE = " (no zone in the file)"
T = TypeVar("T")


def parse_zone(text: str, option: str = "--tz") -> Zone:
    """`-07:00`, `+0530`, `UTC` -> minutes; `Europe/Paris` -> the IANA name (checked).

    Raises:
        UsageError: neither an offset nor a known IANA zone name.
    """
    raw = text.strip()
    try:
        return parse_offset(raw)
    except UsageError:
        pass
    if "/" in raw and raw in _iana_names():
        return raw
    hint = "use +HH:MM, -HH:MM or an IANA zone name such as Europe/Paris"
    raise UsageError(f"{option}: bad time zone {text!r}: {hint}")


def _iana_names() -> set[str]:
    """The IANA zone names this system knows (tzdata)."""
    return set(available_timezones())


def zone_label(zone: Zone) -> str:
    """`+01:00` or `Europe/Paris`."""
    return format_offset(zone) if isinstance(zone, int) else zone


def zone_tzinfo(zone: Zone) -> tzinfo:
    """A `tzinfo` for a zone (to read `--since` local times)."""
    if isinstance(zone, int):
        return timezone(timedelta(minutes=zone))
    try:
        return ZoneInfo(zone)
    except ZoneInfoNotFoundError as err:  # pragma: no cover - parse_zone checked it
        raise UsageError(f"unknown time zone {zone!r}") from err


def offset_at(zone: Zone, local: datetime) -> int:
    """Minutes east of UTC of a zone at a naive local time."""
    if isinstance(zone, int):
        return zone
    delta = local.replace(tzinfo=zone_tzinfo(zone)).utcoffset()
    return int(delta.total_seconds() // 60) if delta is not None else 0


def utc_offset_at(zone: Zone, instant: datetime) -> int:
    """Minutes east of UTC of a zone at a UTC instant."""
    if isinstance(zone, int):
        return zone
    delta = instant.astimezone(zone_tzinfo(zone)).utcoffset()
    return int(delta.total_seconds() // 60) if delta is not None else 0


def short_host(name: str) -> str:
    """The host's first label, lower case: `stby01` for `STBY01.dbnet.example`."""
    return name.strip().split(".", 1)[0].lower()


def same_host(given: str, host: str | None) -> bool:
    """A host name as typed names a file's host: the same name (any case), or the same short name
    when either is written without its domain (`stby01` names `stby01.dbnet.example`)."""
    if not host or not given:
        return False
    a, b = given.strip().lower(), host.strip().lower()
    return a == b or (("." not in a or "." not in b) and short_host(a) == short_host(b))


def for_host(values: Mapping[str, T], host: str | None) -> tuple[str, T] | None:
    """The (name as given, value) of the first entry naming `host` (an exact name first)."""
    if host and host in values:
        return host, values[host]
    return next(((name, value) for name, value in values.items() if same_host(name, host)), None)


def unmatched_hosts(given: Iterable[str], hosts: Iterable[str | None]) -> list[str]:
    """The host names as given that name none of `hosts`."""
    known = [h for h in hosts if h]
    return [name for name in given if not any(same_host(name, h) for h in known)]


@dataclass(frozen=True)
class TimeZones:
    """Zones for files without ISO ADR lines: per host, else the default (minutes or IANA names)."""

    default_min: Zone | None = None
    per_host: dict[str, Zone] = field(default_factory=dict)

    def for_host(self, host: str | None) -> tuple[Zone, str]:
        """The zone for a host and where it came from (`--tz stby01=+01:00`)."""
        found = for_host(self.per_host, host)
        if found is not None:
            name, zone = found
            return zone, f"--tz {name}={zone_label(zone)}"
        if self.default_min is not None:
            return self.default_min, f"--tz {zone_label(self.default_min)}"
        return 0, ASSUMED_UTC

    def default_tzinfo(self) -> tzinfo | None:
        """The default zone as a `tzinfo` (local times of --since/--until), None when not given."""
        return None if self.default_min is None else zone_tzinfo(self.default_min)


def parse_zones(specs: Sequence[str]) -> TimeZones:
    """`--tz` values: `ZONE` (all files) or `HOST=ZONE` (files of that host); ZONE is `-07:00` or
    an IANA name.

    Raises:
        UsageError: a bad zone, an empty host, or a zone given twice (for all files, or one host).
    """
    default: Zone | None = None
    per_host: dict[str, Zone] = {}
    for spec in specs:
        host, sep, text = spec.rpartition("=")
        zone = parse_zone(text, "--tz")
        if sep and not host.strip():
            raise UsageError(f"--tz {spec!r}: the host before '=' is empty; write HOST=ZONE, e.g. stby01=-07:00")
        if not sep:
            if default is not None and default != zone:
                raise UsageError(
                    f"--tz given twice for all files ({zone_label(default)} and {zone_label(zone)}):"
                    " give one, and HOST=ZONE for hosts in another zone"
                )
            default = zone
            continue
        host = host.strip()
        twice = next((name for name in per_host if same_host(name, host) and per_host[name] != zone), None)
        if twice is not None:
            raise UsageError(f"--tz given twice for host {host} ({zone_label(per_host[twice])} and {zone_label(zone)})")
        per_host[host] = zone
    return TimeZones(default, per_host)


def assumed_zones(files: Sequence[tuple[str | None, frozenset[Zone] | None]]) -> list[tuple[Zone, str] | None]:
    """For each file whose zone is only assumed, the zone to assume instead of UTC, and why.

    `files`: per file, its host and the zones its stamps were read in (None when only assumed).
    One configuration nearly always lives in one zone: a file takes the zone of the other files
    of its host when they agree, else the zone all files of known zone agree on; else none.
    """
    everywhere: set[Zone] = set()
    per_host: dict[str, set[Zone]] = {}
    for host, known in files:
        if known is not None:
            everywhere |= known
            per_host.setdefault(short_host(host or ""), set()).update(known)
    out: list[tuple[Zone, str] | None] = []
    for host, known in files:
        same = per_host.get(short_host(host or ""), set()) if host else set()
        if known is not None:
            out.append(None)
        elif len(same) == 1:
            zone = next(iter(same))
            out.append(
                (zone, f"{ASSUMED_COMMON} {zone_label(zone)} as the other files of {host} (no zone in the file)")
            )
        elif len(everywhere) == 1:
            zone = next(iter(everywhere))
            out.append((zone, f"{ASSUMED_COMMON} {zone_label(zone)} as the other files (no zone in the file)"))
        else:
            out.append(None)
    return out


def local_to_utc(local: pl.Expr, zone: Zone | pl.Expr) -> pl.Expr:
    """A naive local datetime expression in `zone` -> UTC (`Datetime(us, UTC)`): the one conversion of
    local times to UTC. `zone`: minutes east of UTC, an IANA zone name, or an expression of minutes (each
    row its own offset: the ISO ADR line before it, or its file's zone when rows of several files convert
    at once).

    For an IANA zone each value takes the offset of its own date: a time of the repeated hour in
    autumn is read as the first of the two (the earlier), a time in the skipped hour of spring as
    if the clock had not moved yet.
    """
    if isinstance(zone, int | pl.Expr):
        return (local - pl.duration(minutes=zone)).dt.replace_time_zone("UTC")
    at = local.dt.replace_time_zone(zone, ambiguous="earliest", non_existent="null").dt.convert_time_zone("UTC")
    skipped = (local + pl.duration(hours=1)).dt.replace_time_zone(zone, ambiguous="earliest", non_existent="null")
    # a skipped time, one hour on, is the same instant read at the offset after the change
    return at.fill_null(skipped.dt.convert_time_zone("UTC")).cast(pl.Datetime("us", "UTC"))


#: the time zone of the UTC datetimes polars gives back (`value_to_utc` gives the same)
_UTC = ZoneInfo("UTC")


def value_to_utc(local: datetime, zone: Zone) -> datetime:
    """One naive local time in `zone` -> UTC, as `local_to_utc` converts a column (a fixed offset
    without a query: files and probes convert a few such values each)."""
    if isinstance(zone, int):
        return (local - timedelta(minutes=zone)).replace(tzinfo=_UTC)
    frame = pl.DataFrame({"t": [local]}, schema={"t": pl.Datetime("us")})
    out: datetime = frame.select(local_to_utc(pl.col("t"), zone))["t"][0]
    return out


def zone_lines(adr: pl.DataFrame) -> pl.DataFrame:
    """The ISO ADR lines of a file (schema ZONE_LINES), in line order."""
    query = (
        adr.lazy()
        .filter(pl.col("utc_offset_min").is_not_null())
        .sort("line")
        .select(zone_line=pl.col("line"), utc_offset_min=pl.col("utc_offset_min"))
    )
    return collect_rows(query, adr.height)


def utc_columns(
    frame: pl.DataFrame, columns: dict[str, tuple[str, str]], zones: pl.DataFrame, fallback: Zone
) -> pl.DataFrame:
    """Add UTC columns: {out: (naive local column, line whose zone applies)}, row order kept.

    The zone of a line is the offset of the nearest ISO ADR line before it (else the file's
    first one), or `fallback` (minutes or an IANA name) when the file has none. Most files keep
    one offset: then it is a constant, with no join.
    """
    if not frame.height:  # the columns' types, without a query (many of a small file's tables are empty)
        zone = fallback if not zones.height else 0
        added = {out: local_to_utc(pl.col(local), zone) for out, (local, _) in columns.items()}
        return collect_rows(frame.lazy().with_columns(**added), 0)
    offsets = zones["utc_offset_min"].unique()
    if len(offsets) <= 1:  # no ISO line (the fallback zone), or one offset: every column in one query
        zone = int(offsets[0]) if len(offsets) else fallback
        return frame.with_columns(**{out: local_to_utc(pl.col(local), zone) for out, (local, _) in columns.items()})
    first = int(zones["utc_offset_min"][0])
    for out, (local, key) in columns.items():
        found = (
            frame.select(_row=pl.int_range(pl.len()), _key=pl.col(key))
            .sort("_key")
            .join_asof(zones, left_on="_key", right_on="zone_line", strategy="backward")
            .sort("_row")
        )
        frame = frame.with_columns(_offset=found["utc_offset_min"].fill_null(first))
        frame = frame.with_columns(local_to_utc(pl.col(local), pl.col("_offset")).alias(out)).drop("_offset")
    return frame


def to_utc(rows: pl.DataFrame, adr: pl.DataFrame, fallback: Zone) -> pl.DataFrame:
    """Add `at` (UTC) to rows with `local` and a `stamp_line` (else their own `line`) giving the zone."""
    if not rows.height:
        return utc_columns(rows, {"at": ("local", "line")}, zone_lines(adr.clear()), fallback)
    keyed = rows.with_columns(_key=pl.col("stamp_line").fill_null(pl.col("line")))
    return utc_columns(keyed, {"at": ("local", "_key")}, zone_lines(adr), fallback).drop("_key")
