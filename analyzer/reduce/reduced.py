"""What the reduce stage gives for a file: its clock, its exchanges (pieces converted to UTC as they are
loaded) and the rest of `ReducedFile`.

A file's pieces are spilled chunk by chunk, before its end tells its zone and its tim clock: they keep
each message's local time and the line whose zone applies, and `Exchanges.load` turns them into rows
of schema EXCHANGES, in UTC, with the file's `FileClock`. Everything else a `ReducedFile` holds is in
UTC already.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import datetime

import polars as pl

from analyzer.base.schemas import ALERT, CAT, EXCHANGES, UTC, ZONE_LINES, empty
from analyzer.base.spill import INDEX, Piece
from analyzer.base.zones import ASSUMED_UTC, Zone, offset_at, utc_columns
from analyzer.parse.identify import FileInfo
from analyzer.parse.tim import TimClock
from analyzer.reduce.pairing import converted

#: the exchange columns that find match candidates (`Exchanges.load(narrow=True)`)
NARROW = ["file", "stream", "thread", "seq", "msgid", "oper", "client", "a_at"]
#: the columns of a piece NARROW is made of
RAW_NARROW = ["stream", "thread", "seq", "msgid", "oper", "client", "a_local", "a_zkey"]


@dataclass(frozen=True)
class FileClock:
    """How a file's times turn into UTC, decided at its end: the offsets of its ISO ADR lines (a line
    takes that of the nearest one before it), else its zone (`--tz` for its host, else the one its epoch
    tim tells, else UTC assumed), and its tim clock."""

    #: the file's ISO ADR lines (schema ZONE_LINES, `zones.zone_lines`)
    zones: pl.DataFrame
    #: the zone of a file without ISO ADR lines
    fallback: Zone
    #: where the zone came from, in words (`ReducedFile.zone`)
    source: str
    tim: TimClock

    @property
    def assumed(self) -> bool:
        """No zone in the file's stamps, none given for it, none its epoch tim tells: UTC is only assumed."""
        return not self.zones.height and self.source == ASSUMED_UTC

    @property
    def known(self) -> frozenset[Zone] | None:
        """The zones the file's stamps are read in: its ISO lines' offsets, else its zone from --tz or
        from epoch tim; None when UTC is only assumed."""
        if self.zones.height:  # a handful of ISO lines at most in a small file: a set, not a query
            offsets = self.zones["utc_offset_min"]
            return frozenset(int(m) for m in (offsets.to_list() if offsets.len() <= 1000 else offsets.unique()))
        return None if self.assumed else frozenset([self.fallback])

    def taking(self, zone: Zone, source: str, first_local: datetime | None) -> FileClock:
        """The clock of a file without a zone (no ISO ADR line, none given, UTC assumed) that takes
        `zone` instead (`assumed_zones`: the zone the other files agree on); a counter tim, anchored
        to its stamps, moves with them (by the offset at its first stamp)."""
        tim = self.tim
        if tim.kind == "counter" and tim.offset_us is not None and first_local is not None:
            tim = replace(tim, offset_us=tim.offset_us - offset_at(zone, first_local) * 60_000_000)
        return FileClock(self.zones, zone, source, tim)


@dataclass(frozen=True)
class Exchanges:
    """A file's exchanges as its chunks left them (pieces, in memory or spilled), and what turns
    them into rows of schema EXCHANGES: the file's label, zones and tim clock."""

    pieces: tuple[Piece, ...]
    label: str = ""
    #: the file's ISO ADR lines (see `zone_lines`) and the offset used without them
    zones: pl.DataFrame = field(default_factory=lambda: pl.DataFrame(schema=ZONE_LINES))
    fallback_min: Zone = 0
    tim: TimClock = field(default_factory=lambda: TimClock("none"))

    @property
    def rows(self) -> int:
        """How many exchanges."""
        return sum(piece.rows for piece in self.pieces)

    def raw(self, piece: Piece, keys: pl.DataFrame | None = None, *, narrow: bool = False) -> pl.DataFrame:
        """One piece's rows as the chunks left them (see `load`), unconverted."""
        return of_keys(piece.load(RAW_NARROW if narrow else None), piece, keys)

    def load(self, piece: Piece, keys: pl.DataFrame | None = None, *, narrow: bool = False) -> pl.DataFrame:
        """One piece as EXCHANGES rows, only those of the (thread, seq) in `keys` when given;
        `narrow`: only the columns that find candidates (NARROW), the rest left unconverted."""
        raw = self.raw(piece, keys, narrow=narrow)
        if not raw.height:
            return empty(EXCHANGES).select(NARROW) if narrow else empty(EXCHANGES)
        times = {"a_at": ("a_local", "a_zkey")} | ({} if narrow else {"b_at": ("b_local", "b_zkey")})
        out = utc_columns(raw, times, self.zones, self.fallback_min).with_columns(file=pl.lit(self.label, CAT))
        return converted(out, NARROW if narrow else None, self.tim.factor, self.tim.offset_us)

    def collect(self) -> pl.DataFrame:
        """All the exchanges (schema EXCHANGES)."""
        frames = [self.load(piece) for piece in self.pieces]
        return pl.concat(frames) if frames else empty(EXCHANGES)


def of_keys(rows: pl.DataFrame, piece: Piece, keys: pl.DataFrame | None) -> pl.DataFrame:
    """A piece's rows of the (thread, seq) in `keys` (all of them when None, or when the piece holds no
    other: then without a join)."""
    if keys is None or piece.keys.join(keys, on=INDEX, how="anti", nulls_equal=True).height == 0:
        return rows
    return rows.join(keys, on=INDEX, how="semi", nulls_equal=True)


@dataclass(frozen=True, kw_only=True)
class ReducedFile:
    """A file after the reduce stage: what it is, and the writes it saw on its host."""

    info: FileInfo
    #: writes paired inside the file (`Exchanges.collect()` gives them with schema EXCHANGES;
    #: pieces spilled by `analyzer.api.analyze` are gone once it returns)
    exchanges: Exchanges
    #: messages whose partner may be in another segment of the process (schema PENDING)
    pending: pl.DataFrame
    #: RFS waits no write of the file took (schema BOUNDARY_WAITS)
    boundary_waits: pl.DataFrame
    #: messages that can never pair, with the reason (schema UNMATCHED, `side` still null)
    unmatched: pl.DataFrame
    lgwr: pl.DataFrame
    zone: str
    first_at: datetime | None
    last_at: datetime | None
    #: how the file's 10046 tim maps to UTC
    tim: TimClock = field(default_factory=lambda: TimClock("none"))
    #: 16410 messages and WAIT lines read
    messages: int = 0
    waits: int = 0
    #: redo threads of the file's messages, in order of appearance
    threads: tuple[int, ...] = ()
    #: pids of the processes of a trcsess file, each its own stream (empty for one process's trace)
    processes: tuple[int, ...] = ()
    #: an alert log's entries with their UTC time `at` (schema ALERT plus `at`; empty for a trace)
    alert: pl.DataFrame = field(default_factory=lambda: empty(ALERT).with_columns(at=pl.lit(None, UTC)))
