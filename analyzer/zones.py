"""Time zones: the UTC offset of each line of a trace file, and naive local times turned into UTC.

From 12.2 on a file's ISO ADR lines (`*** 2024-10-22T16:18:49.081732+02:00`) carry its offset; a
line takes that of the nearest ISO line before it. Older files carry none: the offset comes from
`--tz` (for all files or per host), or is inferred from epoch `tim` (`analyzer.tim`), else UTC is
assumed and said.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import polars as pl

from analyzer.units import parse_offset


@dataclass(frozen=True)
class TimeZones:
    """UTC offsets (minutes) for files without ISO ADR lines: per host, else the default."""

    default_min: int | None = None
    per_host: dict[str, int] = field(default_factory=dict)

    def for_host(self, host: str | None) -> tuple[int, str]:
        """The offset for a host and where it came from."""
        for name in (host, (host or "").split(".")[0]):  # `prim01` also names `prim01.example.com`
            if name and name in self.per_host:
                return self.per_host[name], f"--tz {name}="
        if self.default_min is not None:
            return self.default_min, "--tz"
        return 0, "assumed UTC (no zone in the file; use --tz)"


def parse_zones(specs: list[str]) -> TimeZones:
    """`--tz` values: `OFFSET` (all files) or `HOST=OFFSET` (files of that host)."""
    default: int | None = None
    per_host: dict[str, int] = {}
    for spec in specs:
        host, sep, offset = spec.rpartition("=")
        if sep:
            per_host[host] = parse_offset(offset)
        else:
            default = parse_offset(spec)
    return TimeZones(default, per_host)


def zone_lines(adr: pl.DataFrame) -> pl.DataFrame:
    """The ISO ADR lines of a file (schema ZONE_LINES), in line order."""
    return (
        adr.filter(pl.col("utc_offset_min").is_not_null())
        .sort("line")
        .select(zone_line=pl.col("line"), utc_offset_min=pl.col("utc_offset_min"))
    )


def utc_columns(
    frame: pl.DataFrame, columns: dict[str, tuple[str, str]], zones: pl.DataFrame, fallback_min: int
) -> pl.DataFrame:
    """Add UTC columns: {out: (naive local column, line whose zone applies)}, row order kept.

    The zone of a line is the offset of the nearest ISO ADR line before it (else the file's
    first one), or `fallback_min` when the file has none. Most files keep one offset: then it
    is a constant, with no join.
    """
    offsets = zones["utc_offset_min"].unique()
    for out, (local, key) in columns.items():
        if len(offsets) <= 1:
            minutes: pl.Expr = pl.lit(int(offsets[0]) if len(offsets) else fallback_min)
            frame = frame.with_columns(_offset=minutes)
        else:
            first = int(zones["utc_offset_min"][0])
            found = (
                frame.select(_row=pl.int_range(pl.len()), _key=pl.col(key))
                .sort("_key")
                .join_asof(zones, left_on="_key", right_on="zone_line", strategy="backward")
                .sort("_row")
            )
            frame = frame.with_columns(_offset=found["utc_offset_min"].fill_null(first))
        at = (pl.col(local) - pl.duration(minutes=pl.col("_offset"))).dt.replace_time_zone("UTC")
        frame = frame.with_columns(at.alias(out)).drop("_offset")
    return frame


def to_utc(rows: pl.DataFrame, adr: pl.DataFrame, fallback_min: int) -> pl.DataFrame:
    """Add `at` (UTC) to rows with `local` and a `stamp_line` (else their own `line`) giving the zone."""
    keyed = rows.with_columns(_key=pl.col("stamp_line").fill_null(pl.col("line")))
    return utc_columns(keyed, {"at": ("local", "_key")}, zone_lines(adr), fallback_min).drop("_key")
