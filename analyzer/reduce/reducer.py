"""Reduce stage: a parsed file, chunk by chunk -> the writes it saw on its host (exchanges), in UTC.

Per chunk, each 16410 message gets its transport stamp (the MAA paper's rule: `Client
sending`, `Server received` and `Server finished` take the krs stamp that follows them,
`Client received` the one before it; a stamp is only taken if no other message stands between,
and a stamp two messages would take goes to neither, both reported). Then the two messages of
each write in one process are paired (`analyzer.reduce.pairing.pair_events`) and the RFS waits between
a `Server received` and its `Server finished` are summed (`analyzer.reduce.pairing.wait_sums`).
Only the exchanges and the few messages still waiting for their partner are kept: the per-line
tables of a chunk are dropped once it is reduced, so memory follows the number of writes, not
the number of lines. The reader cuts chunks just before a message that opens a write
(`analyzer.parse.lines`), so in a well-formed trace no write spans two chunks.

What is only known at the end of the file is decided then (`FileReducer.end`): the time zone (the
offset of the file's own ISO ADR lines from 12.2 on, else the `--tz` offset for its host, else one
inferred from epoch `tim`, else UTC assumed) and the file's `tim` clock (`analyzer.parse.tim`); then
its times are converted to UTC, once (`EndedFile.in_utc`). A file whose zone is only assumed waits for
the zone the other files agree on (`analyzer.reduce.ingest.read_files`) before it is converted.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime

import polars as pl

from analyzer.base.schemas import (
    ADR,
    ALERT,
    ANCHORS,
    BOUNDARY_WAITS,
    CAT,
    KRS,
    LAZY_ENGINE,
    MESSAGES,
    PENDING,
    STAMPED,
    UNMATCHED,
    WAITS,
    collect_rows,
    empty,
)
from analyzer.base.spill import IN_MEMORY, Piece, Spill
from analyzer.base.units import format_offset
from analyzer.base.vocab import BACKWARD_KINDS, OPENING_KINDS, SERVER_KINDS, MessageKind
from analyzer.base.zones import TimeZones, Zone, to_utc, utc_columns, value_to_utc, zone_lines
from analyzer.parse.families import TABLES, Parsed, empty_parsed
from analyzer.parse.identify import FileInfo, identify_file
from analyzer.parse.processes import Streams
from analyzer.parse.tim import TimClock, anchor_rows, read_tim
from analyzer.reduce.pairing import Paired, no_sums, pair_events, span_sums, wait_sums
from analyzer.reduce.reduced import Exchanges, FileClock, ReducedFile
from analyzer.reduce.stamping import associated

#: columns of a message that its exchange keeps, as a_<column> (opening) and b_<column> (closing)
PAYLOAD = ["line", "ord", "zkey", "local", "res_us"]
#: parse tables a file keeps whole (small: header, markers, rejected lines, log writer lines)
KEPT_TABLES = ("unparsed", "header", "markers", "lgwr", "alert")
#: at most this many waits before a file's first message are kept for a write spanning two segments
HEAD_WAITS = 10_000
#: at most this many waits are carried for a write left open at the end of a chunk
CARRY_WAITS = 100_000


def stamped_events(
    messages: pl.DataFrame, krs: pl.DataFrame, stream: pl.Expr, by: str | None = None, moved: str | None = None
) -> pl.DataFrame:
    """Messages with their stamps as events (schema STAMPED, `problem` saying why one has none);
    `by`, `moved`: files stamped together (`stamping.associated`), `by` kept after STAMPED's columns."""
    query = associated(messages, krs, by, moved).select(
        "line",
        ord="line",
        stream=stream,
        kind="kind",
        oper="oper",
        thread="thread",
        seq="seq",
        msgid="msgid",
        zkey=pl.col("stamp_line").fill_null(pl.col("line")),
        local="local",
        res_us=pl.lit(10, pl.Int64).pow(6 - pl.col("digits").cast(pl.Int64)),
        problem="problem",
        **({} if by is None else {by: pl.col(by)}),
    )
    return query.cast(STAMPED).collect(engine=LAZY_ENGINE)


@dataclass
class _HeldBack:
    """A chunk's last message when it takes the stamp after it, and the stamps after the last message:
    they are stamped with the next chunk (`_hold_back`)."""

    messages: pl.DataFrame = field(default_factory=lambda: empty(MESSAGES))
    krs: pl.DataFrame = field(default_factory=lambda: empty(KRS))

    def settled(self, messages: pl.DataFrame, krs: pl.DataFrame, *, last: bool) -> tuple[pl.DataFrame, pl.DataFrame]:
        """A chunk's (messages, stamps) after those held back: what can be stamped now; the rest is
        held back again (nothing when `last`)."""
        messages, krs = pl.concat([self.messages, messages]), pl.concat([self.krs, krs])
        if last:
            self.messages, self.krs = self.messages.clear(), self.krs.clear()
            return messages, krs
        messages, krs, self.messages, self.krs = _hold_back(messages, krs)
        return messages, krs

    def release(self) -> tuple[pl.DataFrame, pl.DataFrame] | None:
        """What is held back, now that no chunk follows (None when nothing is)."""
        if not self.messages.height and not self.krs.height:
            return None
        held = self.messages, self.krs
        self.messages, self.krs = self.messages.clear(), self.krs.clear()
        return held


@dataclass
class _Seen:
    """What a file's messages and waits tell as they come: the kinds of its messages (its role), its
    redo threads in order of appearance, how many messages and waits."""

    kinds: set[str] = field(default_factory=set)
    threads: dict[int, None] = field(default_factory=dict)
    messages: int = 0
    waits: int = 0

    def kinds_frame(self) -> pl.DataFrame:
        return pl.DataFrame({"kind": sorted(self.kinds)}, schema={"kind": pl.String})


@dataclass
class _ClockEvidence:
    """What a file's stamps tell of its clock, chunk by chunk: their span (local times), the tim anchors
    (`anchor_rows`) and the ADR line still waiting for its anchor in the next chunk."""

    anchors: list[pl.DataFrame] = field(default_factory=list)
    pending_adr: pl.DataFrame = field(default_factory=lambda: empty(ADR).drop("digits"))
    low: datetime | None = None
    high: datetime | None = None

    def add(self, adr: pl.DataFrame, krs: pl.DataFrame, waits: pl.DataFrame) -> None:
        for times in (adr["local"], krs["local"]):
            low, high = times.min(), times.max()
            if isinstance(low, datetime) and (self.low is None or low < self.low):
                self.low = low
            if isinstance(high, datetime) and (self.high is None or high > self.high):
                self.high = high
        anchors, self.pending_adr = anchor_rows(
            waits, pl.concat([self.pending_adr, adr.select(self.pending_adr.columns)])
        )
        self.anchors.append(anchors)

    def clock(self, host: str | None, adr: pl.DataFrame, zones: TimeZones, has_waits: bool) -> FileClock:
        """The file's clock: its ISO ADR lines, else `--tz` for its host, else the zone its epoch tim
        tells (`read_tim`), else UTC assumed; its tim anchored in that zone."""
        lines = zone_lines(adr)
        fallback, source = zones.for_host(host)
        assumed = source.startswith("assumed") and not lines.height
        anchors = pl.concat(self.anchors) if self.anchors else empty(ANCHORS)
        tim = read_tim(anchors, has_waits, fallback, zone_known=not assumed)
        if assumed and tim.inferred_zone_min is not None:
            fallback, source = (
                tim.inferred_zone_min,
                f"inferred from epoch tim ({format_offset(tim.inferred_zone_min)})",
            )
        return FileClock(lines, fallback, "ISO ADR lines of the file" if lines.height else source, tim)


@dataclass
class FileReducer:
    """Reduces the parsed chunks of one file, in order, to its exchanges (see `reduce_file`)."""

    #: the line accounting, and the parse tables kept whole (KEPT_TABLES, and the ADR lines until the end)
    parsed: Parsed = field(default_factory=empty_parsed)
    kept: dict[str, list[pl.DataFrame]] = field(default_factory=lambda: {name: [] for name in (*KEPT_TABLES, "adr")})
    streams: Streams = field(default_factory=Streams)
    held: _HeldBack = field(default_factory=_HeldBack)
    #: opening messages still waiting for their closing one (STAMPED)
    carry: pl.DataFrame = field(default_factory=lambda: empty(STAMPED))
    #: waits after the last, still open, `Server received`; and those before the file's first message
    carry_waits: pl.DataFrame = field(default_factory=lambda: _stream_waits(empty(WAITS), pl.lit(1, pl.Int64)))
    head_waits: pl.DataFrame | None = None
    #: what pairing gave: the exchanges (pieces in `spill`), closing messages waiting for an opening
    #: one of another segment, and the messages that can never pair
    spill: Spill = IN_MEMORY
    exchanges: list[Piece] = field(default_factory=list)
    closes: list[pl.DataFrame] = field(default_factory=list)
    unpairable: list[pl.DataFrame] = field(default_factory=list)
    seen: _Seen = field(default_factory=_Seen)
    evidence: _ClockEvidence = field(default_factory=_ClockEvidence)

    def add(self, part: Parsed, *, last: bool = False) -> None:
        """Reduce one chunk: keep its small tables, pair its messages, sum its RFS waits.

        `last`: no chunk follows, so nothing is held back for one (a small file is reduced in one pass).
        """
        self.reduce_chunk(*self.take(part, last=last), self.streams.expr())

    def take(self, part: Parsed, *, last: bool = False) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame]:
        """Keep a chunk's small tables and what it tells of the file (stream breaks, span, tim
        anchors, counts); return its (messages, stamps, waits) to stamp, pair and sum now."""
        t = part.tables
        self.parsed.parsed.update(part.parsed)
        self.parsed.ignored.update(part.ignored)
        for name, frames in self.kept.items():
            if t[name].height:
                frames.append(t[name])
        self.streams.add(t["header"], t["markers"])
        stream = self.streams.expr()
        self.evidence.add(t["adr"], t["krs"], t["waits"])
        self.seen.waits += t["waits"].height
        messages, krs = self.held.settled(t["messages"], t["krs"], last=last)
        return messages, krs, pl.concat([self.carry_waits, _stream_waits(t["waits"], stream)])

    def reduce_chunk(self, messages: pl.DataFrame, krs: pl.DataFrame, waits: pl.DataFrame, stream: pl.Expr) -> None:
        """Stamp, pair and sum the messages settled so far (what `_hold_back` left)."""
        events = self.note(stamped_events(messages, krs, stream) if messages.height else empty(STAMPED))
        if self.opening(waits, events):
            paired = pair_events(pl.concat([self.carry, events.filter(pl.col("problem").is_null())]), PAYLOAD)
            self.settle(waits, events, paired, with_sums(paired.exchanges, waits))

    def opening(self, waits: pl.DataFrame, events: pl.DataFrame) -> bool:
        """Keep the waits before the file's first message; whether there is anything to pair (else
        the waits to carry are kept, for a foreground trace or a quiet chunk)."""
        if self.head_waits is None or not self.seen.messages:
            self._head(waits, events)
        if not events.height and not self.carry.height:
            self.carry_waits = self._tail(waits, events)
            return False
        return True

    def settle(self, waits: pl.DataFrame, events: pl.DataFrame, paired: Paired, joined: pl.DataFrame) -> None:
        """Keep what pairing the events gave: the exchanges with their wait sums (`joined`, spilled),
        the messages that cannot pair, and those still waiting for a partner; the waits to carry."""
        self.seen.messages += events.height
        self.unpairable.append(paired.unpairable)
        opens = pl.col("kind").is_in(OPENING_KINDS)
        self.carry = paired.pending.filter(opens)
        self.closes.append(paired.pending.filter(~opens))
        self.exchanges.append(self.spill.put(joined.drop("a_ord", "b_ord")))
        self.carry_waits = self._tail(waits, events)

    def note(self, events: pl.DataFrame) -> pl.DataFrame:
        """Note the kinds and threads of a chunk's stamped messages and set aside those without a stamp."""
        if not events.height:
            return events
        # the distinct kinds of the categorical column, then their names: not a name per message
        self.seen.kinds.update(events["kind"].unique().cast(pl.String).to_list())
        self.seen.threads.update(dict.fromkeys(events["thread"].unique(maintain_order=True).drop_nulls().to_list()))
        if events["problem"].null_count() < events.height:  # a message without its stamp (rare): set aside
            problems = events.filter(pl.col("problem").is_not_null())
            self.unpairable.append(problems.rename({"problem": "reason"}))
        return events

    def _head(self, waits: pl.DataFrame, events: pl.DataFrame) -> None:
        """Waits before the file's first message (the last HEAD_WAITS of them)."""
        first = events["line"].min() if events.height else None
        head = waits.filter(pl.col("ord") < first) if first is not None else waits
        before = self.head_waits if self.head_waits is not None else head.clear()
        self.head_waits = pl.concat([before, head]).tail(HEAD_WAITS)

    def _tail(self, waits: pl.DataFrame, events: pl.DataFrame) -> pl.DataFrame:
        """Waits to carry (at most CARRY_WAITS): those after a message held back for the next
        chunk, and those after the chunk's last server message when it is a `Server received`
        still waiting for its `Server finished`."""
        edges: list[int] = [int(self.held.messages["line"][0])] if self.held.messages.height else []
        open_recv = self.carry.filter(pl.col("kind") == MessageKind.SERVER_RECV)["ord"].max()
        last = events.filter(pl.col("kind").is_in(SERVER_KINDS))["ord"].max()
        if open_recv is not None and (last is None or open_recv >= last):  # type: ignore[operator]
            edges.append(open_recv)  # type: ignore[arg-type]
        if not edges:
            return waits.clear()
        return waits.filter(pl.col("ord") > min(edges)).head(CARRY_WAITS)

    def finish(self, label: str, name: str, zones: TimeZones) -> tuple[ReducedFile, Parsed]:
        """The file in UTC by its own clock (`end`, then `EndedFile.in_utc`), and the parse tables kept
        whole (KEPT_TABLES) with the line accounting."""
        ended = self.end(label, name, zones)
        return ended.in_utc(), ended.parsed

    def end(self, label: str, name: str, zones: TimeZones) -> EndedFile:
        """Decide what the whole file tells: its classification, time zone and tim clock; nothing is
        converted to UTC yet."""
        held = self.held.release()
        if held is not None:  # the last chunk's last message, and its stamps
            self.reduce_chunk(*held, self.carry_waits, self.streams.expr())
        blank = empty_parsed().tables
        kept = {n: pl.concat(frames) if frames else blank[n] for n, frames in self.kept.items()}
        info = identify_file(label, name, kept["header"], self.seen.kinds_frame())
        clock = self.evidence.clock(info.host, kept["adr"], zones, self.seen.waits > 0)
        slim = Parsed(
            {n: kept[n] if n in KEPT_TABLES else blank[n] for n in TABLES}, self.parsed.parsed, self.parsed.ignored
        )
        return EndedFile(self, label, info, kept, clock, slim)

    def in_utc(self, label: str, info: FileInfo, kept: dict[str, pl.DataFrame], clock: FileClock) -> ReducedFile:
        """The file in UTC by its clock: exchanges (converted as they are loaded), pending and
        unpairable messages, boundary waits, log writer lines and alert-log entries, span."""
        adr, zl, fallback = kept["adr"], clock.zones, clock.fallback
        lgwr = to_utc(_lgwr_times(kept["lgwr"], adr), adr, fallback).with_columns(file=pl.lit(label))
        alert = to_utc(_lgwr_times(kept["alert"], adr), adr, fallback).select(*ALERT.names(), "at")
        first_at, last_at = _span(self.evidence.low, self.evidence.high, zl, fallback)
        return ReducedFile(
            info=info,
            exchanges=Exchanges(tuple(self.exchanges), label, zl, fallback, clock.tim),
            pending=self._pending(label, clock),
            boundary_waits=_boundary_waits(self._boundary(), clock.tim),
            unmatched=self._unmatched(label, clock),
            lgwr=lgwr,
            zone=clock.source,
            first_at=first_at,
            last_at=last_at,
            tim=clock.tim,
            messages=self.seen.messages,
            waits=self.seen.waits,
            threads=tuple(self.seen.threads),
            processes=self.streams.processes,
            alert=alert,
        )

    def _pending(self, label: str, clock: FileClock) -> pl.DataFrame:
        """The messages whose partner may be in another segment of the process (schema PENDING)."""
        pending = utc_columns(
            pl.concat([self.carry, *self.closes]), {"at": ("local", "zkey")}, clock.zones, clock.fallback
        )
        if not pending.height:
            return empty(PENDING)
        return pending.with_columns(file=pl.lit(label, CAT)).select(*PENDING).cast(PENDING)

    def _unmatched(self, label: str, clock: FileClock) -> pl.DataFrame:
        """The messages that can never pair, with the reason (schema UNMATCHED, `side` null)."""
        if not self.unpairable:
            return empty(UNMATCHED)
        alone = pl.concat([frame.select(*STAMPED.names()[:-1], "reason") for frame in self.unpairable])
        if not alone.height:
            return empty(UNMATCHED)
        alone = utc_columns(alone, {"at": ("local", "zkey")}, clock.zones, clock.fallback).with_columns(
            file=pl.lit(label, CAT), side=pl.lit(None, pl.String)
        )
        return alone.select(UNMATCHED.names()).cast(UNMATCHED).sort("line")

    def _boundary(self) -> pl.DataFrame:
        """The waits no write of the file took: before its first message, after its last open one."""
        head = self.head_waits if self.head_waits is not None else self.carry_waits.clear()
        return pl.concat([head, self.carry_waits])


@dataclass(frozen=True)
class EndedFile:
    """A file reduced to its end, its clock decided, nothing converted to UTC yet; and the parse tables
    it keeps whole (KEPT_TABLES) with its line accounting."""

    reducer: FileReducer
    label: str
    info: FileInfo
    kept: dict[str, pl.DataFrame]
    clock: FileClock
    parsed: Parsed

    def in_utc(self, clock: FileClock | None = None) -> ReducedFile:
        """The file in UTC by its clock, or by `clock` (a zone the other files agree on: `FileClock.taking`)."""
        return self.reducer.in_utc(self.label, self.info, self.kept, self.clock if clock is None else clock)

    @property
    def first_local(self) -> datetime | None:
        """Its first stamp, as written."""
        return self.reducer.evidence.low


def end_file(label: str, name: str, chunks: Iterable[Parsed], zones: TimeZones, spill: Spill = IN_MEMORY) -> EndedFile:
    """One file from its parsed chunks in order, to its end (`FileReducer.end`). Exchanges go to
    `spill` chunk by chunk."""
    reducer = FileReducer(spill=spill)
    parts = iter(chunks)
    part = next(parts, None)
    while part is not None:  # one chunk ahead: the last one is reduced without holding anything back
        following = next(parts, None)
        reducer.add(part, last=following is None)
        part = following
    return reducer.end(label, name, zones)


def reduce_file(
    label: str, name: str, chunks: Iterable[Parsed], zones: TimeZones, spill: Spill = IN_MEMORY
) -> tuple[ReducedFile, Parsed]:
    """One file from its parsed chunks in order, in UTC by its own clock, and the parse tables kept whole
    (KEPT_TABLES) with the file's line accounting. Exchanges go to `spill` chunk by chunk."""
    ended = end_file(label, name, chunks, zones, spill)
    return ended.in_utc(), ended.parsed


def reduce_parsed(label: str, name: str, parsed: Parsed, zones: TimeZones) -> ReducedFile:
    """A file parsed as one piece, reduced."""
    return reduce_file(label, name, [parsed], zones)[0]


def _hold_back(messages: pl.DataFrame, krs: pl.DataFrame) -> tuple[pl.DataFrame, ...]:
    """(messages, stamps) to settle now, and (messages, stamps) to hold for the next chunk.

    A stamp is never taken across a message, so what lies before the chunk's last message is
    settled; that message, when it takes the stamp after it, waits for the next chunk, and so
    do the first and last stamps after it (the next chunk's first message may take the last;
    two messages taking the same one is only possible when it is the only one between them).
    """
    if not messages.height:
        return messages, krs.clear(), messages, krs.sort("line").tail(1)
    if not messages["line"].is_sorted():
        messages = messages.sort("line")
    last = messages.row(messages.height - 1, named=True)
    after = krs.filter(pl.col("line") > last["line"]).sort("line")
    held_krs = pl.concat([after.head(1), after.tail(1)]).unique("line", maintain_order=True)
    if last["kind"] in BACKWARD_KINDS:
        return messages, krs.filter(pl.col("line") < last["line"]), messages.clear(), held_krs
    return messages.head(messages.height - 1), krs.filter(pl.col("line") < last["line"]), messages.tail(1), held_krs


def with_sums(exchanges: pl.DataFrame, waits: pl.DataFrame) -> pl.DataFrame:
    """The exchanges with the RFS wait sums of the server ones (`wait_sums`; null for a client exchange).

    A chunk holds one side's exchanges: all server (an RFS trace) or all client (a sender's): then
    the sums go beside the rows as they are (`span_sums`), without a join.
    """
    client = exchanges["client"]
    if client.all():
        return exchanges.hstack(no_sums(exchanges.height))
    if not client.any() and (quick := span_sums(exchanges.select("stream", "a_ord", "b_ord"), waits)) is not None:
        return exchanges.hstack(quick)
    server = exchanges.filter(~pl.col("client"))
    sums = wait_sums(server.select("stream", "a_ord", "b_ord"), waits)
    return exchanges.join(sums, on=["stream", "a_ord"], how="left")


def _stream_waits(waits: pl.DataFrame, stream: pl.Expr) -> pl.DataFrame:
    return waits.select("line", "event", "ela_us", "tim", stream=stream, ord="line")


def _boundary_waits(waits: pl.DataFrame, tim: TimClock) -> pl.DataFrame:
    """Boundary waits with tim as UTC microseconds and ela in microseconds (null tim when unanchored)."""
    utc = (
        (pl.col("tim") * tim.factor + tim.offset_us).round().cast(pl.Int64)
        if tim.offset_us is not None
        else pl.lit(None, pl.Int64)
    )
    ela = (pl.col("ela_us") * tim.factor).round().cast(pl.Int64)
    query = waits.lazy().select("stream", "ord", "event", ela_us=ela, tim=utc).cast(BOUNDARY_WAITS)
    return collect_rows(query, waits.height)


def _lgwr_times(lgwr: pl.DataFrame, adr: pl.DataFrame) -> pl.DataFrame:
    """Each log writer line (or alert-log entry) with the ADR wall-clock line (or the alert log's time
    line) before it: its only time."""
    clock = adr.lazy().sort("line").select(stamp_line=pl.col("line"), local=pl.col("local"), digits=pl.col("digits"))
    query = lgwr.lazy().sort("line").join_asof(clock, left_on="line", right_on="stamp_line", strategy="backward")
    return collect_rows(query, lgwr.height)  # most files have no log writer line: then no query


def _span(
    low: datetime | None, high: datetime | None, zones: pl.DataFrame, fallback: Zone
) -> tuple[datetime | None, datetime | None]:
    if low is None or high is None:
        return None, None
    zone = int(zones["utc_offset_min"][0]) if zones.height else fallback
    return value_to_utc(low, zone), value_to_utc(high, zone)
