"""Tables stage: one parsed file -> its events in UTC, with each message's transport stamp.

Stamp association follows the MAA paper: `Client sending`, `Server received` and `Server
finished` take the krs stamp that follows them, `Client received` the one before it. A stamp
is only taken if no other 16410 message stands between it and its message, and a stamp that
two messages would take is given to neither (both are reported). Local times become UTC with
the offset of the file's own ISO ADR lines (12.2+), else the `--tz` offset for the file's host,
else the default offset.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

import polars as pl

from analyzer.classify import FileInfo, classify_file
from analyzer.parse import Parsed
from analyzer.schemas import CAT, EVENTS, UTC
from analyzer.tim import TimClock, read_tim, wait_times
from analyzer.units import parse_offset

FORWARD_KINDS = ("client_send", "server_recv", "server_done")
BACKWARD_KINDS = ("client_recv",)


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


@dataclass(frozen=True)
class FileTables:
    """A file after the tables stage."""

    info: FileInfo
    events: pl.DataFrame
    waits: pl.DataFrame
    lgwr: pl.DataFrame
    zone: str
    first_at: datetime | None
    last_at: datetime | None
    #: how the file's 10046 tim maps to UTC
    tim: TimClock = field(default_factory=lambda: TimClock("none"))


def associate(messages: pl.DataFrame, krs: pl.DataFrame) -> pl.DataFrame:
    """Give each message its transport stamp (or a `problem` saying why it has none)."""
    msgs = messages.sort("line").with_columns(prev_msg=pl.col("line").shift(1), next_msg=pl.col("line").shift(-1))
    stamps = krs.sort("line").select(
        stamp_line=pl.col("line"),
        local=pl.col("local"),
        digits=pl.col("digits"),
        stamp_src=pl.concat_str([pl.col("src_file"), pl.lit(":"), pl.col("src_line").cast(pl.String)]),
    )
    fwd = msgs.filter(pl.col("kind").is_in(FORWARD_KINDS)).join_asof(
        stamps, left_on="line", right_on="stamp_line", strategy="forward"
    )
    fwd = fwd.with_columns(_far=pl.col("next_msg").is_not_null() & (pl.col("stamp_line") > pl.col("next_msg")))
    bwd = msgs.filter(pl.col("kind").is_in(BACKWARD_KINDS)).join_asof(
        stamps, left_on="line", right_on="stamp_line", strategy="backward"
    )
    bwd = bwd.with_columns(_far=pl.col("prev_msg").is_not_null() & (pl.col("stamp_line") < pl.col("prev_msg")))
    both = pl.concat([fwd, bwd]).sort("line")
    missing = pl.col("stamp_line").is_null() | pl.col("_far")
    both = both.with_columns(
        problem=pl.when(missing & pl.col("kind").is_in(FORWARD_KINDS))
        .then(pl.lit("no transport stamp after this message"))
        .when(missing)
        .then(pl.lit("no transport stamp before this message"))
    )
    both = both.with_columns(
        [pl.when(pl.col("problem").is_null()).then(pl.col(c)) for c in ("stamp_line", "local", "digits", "stamp_src")]
    )
    claims = pl.col("stamp_line").count().over("stamp_line")
    return both.with_columns(
        problem=pl.when(pl.col("stamp_line").is_not_null() & (claims > 1))
        .then(
            pl.concat_str(
                [
                    pl.lit("stamp at line "),
                    pl.col("stamp_line").cast(pl.String),
                    pl.lit(" claimed by two messages"),
                ]
            )
        )
        .otherwise(pl.col("problem"))
    ).drop("prev_msg", "next_msg", "_far")


def to_utc(events: pl.DataFrame, adr: pl.DataFrame, fallback_min: int) -> pl.DataFrame:
    """Add `at` (UTC): offset of the nearest earlier ISO ADR line (else the first one, else fallback)."""
    zones = (
        adr.filter(pl.col("utc_offset_min").is_not_null())
        .sort("line")
        .select(zone_line=pl.col("line"), utc_offset_min=pl.col("utc_offset_min"))
    )
    ordered = events.with_columns(_key=pl.col("stamp_line").fill_null(pl.col("line"))).sort("_key")
    if zones.height:
        first = int(zones["utc_offset_min"][0])
        ordered = ordered.join_asof(zones, left_on="_key", right_on="zone_line", strategy="backward")
        offset = pl.col("utc_offset_min").fill_null(first)
    else:
        offset = pl.lit(fallback_min)
    at = (pl.col("local") - pl.duration(minutes=offset)).dt.replace_time_zone("UTC")
    return ordered.with_columns(at=at).sort("line")


def build_file_tables(label: str, name: str, parsed: Parsed, zones: TimeZones) -> FileTables:
    """Classify a parsed file and build its UTC event table."""
    t = parsed.tables
    info = classify_file(label, name, t["header"], t["messages"])
    has_iso = t["adr"]["utc_offset_min"].is_not_null().any()
    fallback, source = zones.for_host(info.host)
    assumed = source.startswith("assumed") and not has_iso
    tim = read_tim(t["waits"], t["adr"], fallback, zone_known=not assumed)
    if assumed and tim.inferred_zone_min is not None:
        fallback, source = tim.inferred_zone_min, f"inferred from epoch tim ({_offset_text(tim.inferred_zone_min)})"
    zone = "ISO ADR lines of the file" if has_iso else source
    events = to_utc(associate(t["messages"], t["krs"]), t["adr"], fallback)
    stream = _incarnations(t["header"], t["markers"])
    events = (
        events.with_columns(
            file=pl.lit(label),
            resolution_us=pl.lit(10, pl.Int64).pow(6 - pl.col("digits").cast(pl.Int64)),
            stream=stream,
            ord=pl.col("line"),
        )
        .select(EVENTS.names())
        .cast(EVENTS)
    )
    lgwr = to_utc(_lgwr_times(t["lgwr"], t["adr"]), t["adr"], fallback)
    times = pl.concat([t["adr"].select("local"), t["krs"].select("local")])["local"]
    first_at, last_at = _span(times, t["adr"], fallback)
    waits = wait_times(t["waits"], tim).with_columns(file=pl.lit(label, CAT), stream=stream, ord=pl.col("line"))
    return FileTables(info, events, waits, lgwr.with_columns(file=pl.lit(label)), zone, first_at, last_at, tim)


def _offset_text(minutes: int) -> str:
    sign = "-" if minutes < 0 else "+"
    return f"{sign}{abs(minutes) // 60:02d}:{abs(minutes) % 60:02d}"


def _incarnations(header: pl.DataFrame, markers: pl.DataFrame) -> pl.Expr:
    """The process incarnation of each line (1, 2, ...): a repeated header (OS pid reuse) or a
    recreated file starts a new one. It is the file's `stream`; `analyzer.api` gives every
    process its own range, and messages of different streams are never paired.
    """
    starts = pl.concat(
        [
            header.filter(pl.col("kind") == "trace_file").select("line"),
            markers.filter(pl.col("marker") == "recreated").select("line"),
        ]
    )["line"].sort()
    return _incarnation(starts) if len(starts) else pl.lit(1, pl.Int64)


def _incarnation(starts: pl.Series) -> pl.Expr:
    """1 + how many incarnation starts come before each line (a header at line 1 counts as the first)."""
    count = pl.lit(0, pl.Int64)
    for start in starts.to_list()[:64]:  # more than 64 restarts in one file would be noise
        count = count + (pl.col("line") > start).cast(pl.Int64)
    first_is_header = bool(starts.len() and starts[0] == 1)
    return count + (0 if first_is_header else 1)


def _lgwr_times(lgwr: pl.DataFrame, adr: pl.DataFrame) -> pl.DataFrame:
    """Each log writer line with the ADR wall-clock line before it (its only time)."""
    clock = adr.sort("line").select(stamp_line=pl.col("line"), local=pl.col("local"), digits=pl.col("digits"))
    return lgwr.sort("line").join_asof(clock, left_on="line", right_on="stamp_line", strategy="backward")


def _span(times: pl.Series, adr: pl.DataFrame, fallback: int) -> tuple[datetime | None, datetime | None]:
    if times.is_empty() or times.null_count() == len(times):
        return None, None
    offsets = adr["utc_offset_min"].drop_nulls()
    offset = int(offsets[0]) if len(offsets) else fallback
    frame = pl.DataFrame({"t": [times.min(), times.max()]}, schema={"t": pl.Datetime("us")})
    utc = frame.select((pl.col("t") - pl.duration(minutes=offset)).dt.replace_time_zone("UTC").cast(UTC))["t"]
    return utc[0], utc[1]


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
