"""Small files reduced together: each gets what `reduce_file` gives it alone, for a fraction of the queries.

Small files are parsed together (`parse.parse_files`), each whole in one chunk. Reduced one by one,
each would still pay some sixty polars queries of a few rows, the bulk of a small file's time. Here
the steps that run over a chunk's messages (stamping, pairing, the RFS wait sums) run once over
the files of a batch: their tables are put end to end, each row with its file (`_FILE`), the
line numbers moved on from file to file so that they stay in order, and each file its own stream,
so that its messages never take another file's stamp (`stamping.associated` by file), never pair
with another file's and never take its waits. The results are cut back into files, their line
numbers and stream as the file alone gives them, and each file's reducer keeps them
(`FileReducer.note`, `opening`, `settle`) and finishes as usual. A file of several processes
(a trcsess output) is reduced alone.

Most files of a big upload have nothing to reduce (no 16410 message, no RFS wait, no log writer
line: foreground traces, other programs' traces): those files of a batch are finished together,
what each needs of its own (its ISO ADR lines, its first and last stamp) found in one query for the
batch, the rest taken from one file finished alone (`_inert`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from datetime import datetime

import polars as pl

from analyzer.base.schemas import STAMPED, empty, per_row
from analyzer.base.spill import IN_MEMORY, Spill
from analyzer.base.zones import TimeZones, value_to_utc, zone_lines
from analyzer.parse.families import TABLES, Parsed
from analyzer.parse.identify import identify_file
from analyzer.reduce.pairing import Paired, pair_events
from analyzer.reduce.reduced import Exchanges, FileClock, ReducedFile
from analyzer.reduce.reducer import KEPT_TABLES, PAYLOAD, EndedFile, FileReducer, stamped_events, with_sums

#: the column that tells the files of a batch apart (the file's place in it)
_FILE = "_file"
#: how far a row's line numbers were moved on
_MOVED = "_moved"
#: line-valued columns of the frames cut back into files
_STAMPED_LINES = ("line", "ord", "zkey")
_WAIT_LINES = ("line", "ord")
_EXCHANGE_LINES = tuple(f"{side}_{c}" for side in "ab" for c in ("line", "ord", "zkey"))


def reduce_files(
    files: Sequence[tuple[str, str, Parsed]], zones: TimeZones, spill: Spill = IN_MEMORY
) -> list[tuple[ReducedFile, Parsed]]:
    """`reduce_file(label, name, [parsed], zones, spill)` of each (label, name, parsed) file, each
    parsed whole in one chunk; the files of one process each are reduced together."""
    return [(ended.in_utc(), ended.parsed) for ended in end_files(files, zones, spill)]


def end_files(files: Sequence[tuple[str, str, Parsed]], zones: TimeZones, spill: Spill = IN_MEMORY) -> list[EndedFile]:
    """`end_file(label, name, [parsed], zones, spill)` of each (label, name, parsed) file, as `reduce_files`."""
    inert = [k for k, (_, _, parsed) in enumerate(files) if _nothing_to_reduce(parsed)]
    if len(inert) > 1:
        done: dict[int, EndedFile] = dict(zip(inert, _inert([files[k] for k in inert], zones), strict=True))
        rest = [k for k in range(len(files)) if k not in done]
        done.update(zip(rest, end_files([files[k] for k in rest], zones, spill), strict=True))
        return [done[k] for k in range(len(files))]
    reducers = [FileReducer(spill=spill) for _ in files]
    taken = [reducer.take(parsed, last=True) for reducer, (_, _, parsed) in zip(reducers, files, strict=True)]
    together = [k for k, reducer in enumerate(reducers) if reducer.streams.single]
    together = together if len(together) > 1 else []
    for k in sorted(set(range(len(files))) - set(together)):
        reducers[k].reduce_chunk(*taken[k], reducers[k].streams.expr())
    if together:
        _together([reducers[k] for k in together], [taken[k] for k in together])
    return [reducer.end(label, name, zones) for reducer, (label, name, _) in zip(reducers, files, strict=True)]


#: the tables a file with nothing to reduce has no row in
_INERT_EMPTY = ("messages", "waits", "lgwr", "alert", "markers")


def _nothing_to_reduce(parsed: Parsed) -> bool:
    return all(not parsed.tables[name].height for name in _INERT_EMPTY)


def _inert(files: Sequence[tuple[str, str, Parsed]], zones: TimeZones) -> list[EndedFile]:
    """What `end_file` gives files with nothing to reduce, together: each its identity, ISO ADR lines,
    clock and span of stamps; every other field is that of a file ended alone with nothing in it."""
    nothing = FileReducer()
    model, blank = FileReducer().finish("", "", zones)
    no_lines = zone_lines(blank.tables["adr"])
    spans, lines = _stamps([parsed for _, _, parsed in files])
    no_kinds = pl.DataFrame({"kind": []}, schema={"kind": pl.String})
    out: list[EndedFile] = []
    for k, (label, name, parsed) in enumerate(files):
        info = identify_file(label, name, parsed.tables["header"], no_kinds)
        fallback, source = zones.for_host(info.host)
        own = lines.get(k, no_lines)
        clock = FileClock(own, fallback, "ISO ADR lines of the file" if own.height else source, model.tim)
        tables = parsed.tables
        kept = {n: tables[n] if tables[n].height else blank.tables[n] for n in (*KEPT_TABLES, "adr")}
        slim = Parsed(
            {n: kept[n] if n in KEPT_TABLES else blank.tables[n] for n in TABLES},
            Counter(parsed.parsed),
            Counter(parsed.ignored),
        )
        low, high = spans.get(k, (None, None))
        out.append(_Inert(nothing, label, info, kept, clock, slim, model, low, high))
    return out


@dataclass(frozen=True)
class _Inert(EndedFile):
    """A file with nothing to reduce, ended: in UTC, it is `model` (a file with nothing in it) with its own
    identity, clock and span."""

    model: ReducedFile
    low: datetime | None
    high: datetime | None

    def in_utc(self, clock: FileClock | None = None) -> ReducedFile:
        clock = self.clock if clock is None else clock
        zone = int(clock.zones["utc_offset_min"][0]) if clock.zones.height else clock.fallback
        span = None if self.low is None or self.high is None else (self.low, self.high)
        return replace(
            self.model,
            info=self.info,
            exchanges=Exchanges((), self.label, clock.zones, clock.fallback, clock.tim),
            zone=clock.source,
            first_at=None if span is None else value_to_utc(span[0], zone),
            last_at=None if span is None else value_to_utc(span[1], zone),
            tim=clock.tim,
        )

    @property
    def first_local(self) -> datetime | None:
        return self.low


def _stamps(parsed: list[Parsed]) -> tuple[dict[int, tuple[datetime, datetime]], dict[int, pl.DataFrame]]:
    """Of each file (by its place): its first and last stamp (ADR and krs lines, local time) and its ISO
    ADR lines (as `zone_lines` gives them), in a few queries for all."""
    index = pl.DataFrame({_FILE: range(len(parsed))}, schema={_FILE: pl.Int64})

    def joined(table: str, columns: list[str]) -> pl.DataFrame:
        frames = [p.tables[table] for p in parsed]
        return pl.concat(frames).select(columns).hstack(per_row(index, [f.height for f in frames]))

    adr, krs = joined("adr", ["line", "local", "utc_offset_min"]), joined("krs", ["local"])
    times = pl.concat([adr.select(_FILE, "local"), krs.select(_FILE, "local")])
    ends = times.group_by(_FILE).agg(low=pl.col("local").min(), high=pl.col("local").max())
    spans = {k: (low, high) for k, low, high in ends.iter_rows() if low is not None and high is not None}
    iso = (
        adr.filter(pl.col("utc_offset_min").is_not_null())
        .sort(_FILE, "line")
        .select(_FILE, zone_line=pl.col("line"), utc_offset_min=pl.col("utc_offset_min"))
    )
    lines = {k: part for (k,), part in iso.partition_by(_FILE, as_dict=True, include_key=False).items()}
    return spans, lines


def _together(reducers: list[FileReducer], taken: list[tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame]]) -> None:
    """Stamp, pair and sum the (messages, stamps, waits) of several files at once (see the module docstring)."""
    tops = [max(_last(frame) for frame in frames) for frames in taken]
    offsets = [sum(tops[:k]) + k for k in range(len(taken))]  # a line number no line has between files
    messages, krs, waits = (_end_to_end([frames[n] for frames in taken], offsets) for n in range(3))
    krs, waits = krs.drop(_MOVED), waits.drop(_MOVED)
    stream = (pl.col(_FILE) + 1).cast(pl.Int64)
    waits = waits.with_columns(stream=stream.cast(waits.schema["stream"]), ord=pl.col("line"))
    if not messages.height:  # foreground traces: nothing to stamp or pair, only their waits to keep
        for reducer, (_, _, waits_k) in zip(reducers, taken, strict=True):
            reducer.opening(waits_k, reducer.note(empty(STAMPED)))
        return
    events = stamped_events(messages, krs, stream, by=_FILE, moved=_MOVED)
    paired = pair_events(events.filter(pl.col("problem").is_null()), PAYLOAD)
    joined = with_sums(paired.exchanges, waits).with_columns(**{_FILE: pl.col("stream").cast(pl.Int64) - 1})
    back = pl.Series(offsets, dtype=pl.Int64)
    events_of, waits_of, lonely_of, pending_of, joined_of = (
        _per_file(frame, columns, back)
        for frame, columns in (
            (events, _STAMPED_LINES),
            (waits, _WAIT_LINES),
            (paired.unpairable, _STAMPED_LINES),
            (paired.pending, _STAMPED_LINES),
            (joined, _EXCHANGE_LINES),
        )
    )
    for k, reducer in enumerate(reducers):
        events_k, waits_k = reducer.note(events_of(k)), waits_of(k)
        if reducer.opening(waits_k, events_k):
            reducer.settle(waits_k, events_k, Paired(joined_of(k), lonely_of(k), pending_of(k)), joined_of(k))


def _last(frame: pl.DataFrame) -> int:
    last = frame["line"].max()
    return int(last) if isinstance(last, int) else 0


def _end_to_end(frames: list[pl.DataFrame], offsets: list[int]) -> pl.DataFrame:
    """The files' frames one after the other, with `_FILE`, and their line numbers moved on by `offsets`
    (how far: `_MOVED`)."""
    files = pl.DataFrame({_FILE: range(len(frames)), _MOVED: offsets}, schema={_FILE: pl.Int64, _MOVED: pl.Int64})
    beside = per_row(files, [frame.height for frame in frames])
    return pl.concat(frames).hstack(beside).with_columns(line=pl.col("line") + pl.col(_MOVED))


def _per_file(frame: pl.DataFrame, columns: tuple[str, ...], offsets: pl.Series) -> Callable[[int], pl.DataFrame]:
    """The rows of each file (by its place in the batch; none: an empty frame of the columns), its line
    numbers and stream back to what the file alone gives."""
    moved = pl.lit(offsets).gather(pl.col(_FILE))
    present = [c for c in columns if c in frame.columns]
    alone = frame.with_columns(*(pl.col(c) - moved for c in present), stream=pl.lit(1).cast(frame.schema["stream"]))
    parts = {k: part for (k,), part in alone.partition_by(_FILE, as_dict=True, include_key=False).items()}
    none = alone.drop(_FILE).clear()
    return lambda k: parts.get(k, none)
