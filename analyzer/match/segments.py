"""Segments of one process joined, and each side's exchanges assembled for matching.

A process's trace can be cut into several files (ADR segments, `TRACE CONTINUED FROM FILE`
after a tracefile_identifier change). Files of one process (same host, instance, process and
pid) form one stream, in time order: a write whose two messages fall into two segments is paired
here from the messages each file left pending, with the RFS waits at the files' boundaries.
"""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl

from analyzer.base.schemas import CAT, EXCHANGES, LGWR_LINES, PIECE_KEYS, UNMATCHED, empty, per_row
from analyzer.base.spill import IN_MEMORY, INDEX, STREAM_ROWS, Piece
from analyzer.base.vocab import Role
from analyzer.base.zones import local_to_utc
from analyzer.reduce.pairing import converted, pair_events, unpaired_reason, wait_columns, wait_sums
from analyzer.reduce.reduced import NARROW, Exchanges, of_keys
from analyzer.reduce.results import FileResult

#: a file's place in its process: (process number, rank of the file among that process's segments)
Segment = tuple[int, int]
_SEGMENT_SPAN = 1 << 40  # ord = rank * span + line: lines of later segments sort after earlier ones
_INCARNATIONS = 1 << 10  # stream = process number * this + incarnation within the file


def join_segments(files: list[FileResult]) -> dict[str, Segment]:
    """The segment of every file (by label): files of one process form one stream, in time order."""
    groups: dict[tuple[object, ...], list[FileResult]] = {}
    for f in files:
        i = f.reduced.info
        key: tuple[object, ...] = (i.host, i.instance, i.process, i.pid) if i.pid and i.process else (f.source.label,)
        groups.setdefault(key, []).append(f)
    out: dict[str, Segment] = {}
    for number, members in enumerate(groups.values()):
        members.sort(key=lambda f: (f.reduced.first_at is None, f.reduced.first_at or 0, f.source.label))
        out.update({f.source.label: (number, rank) for rank, f in enumerate(members)})
    return out


def _in_stream(frame: pl.DataFrame, segment: Segment) -> pl.DataFrame:
    """Re-key a file's rows (stream = incarnation within the file) to its process stream and
    order (`ord`, when the rows have one: lines of later segments sort after earlier ones)."""
    number, rank = segment
    rekeyed = frame.with_columns(stream=pl.col("stream") + number * _INCARNATIONS)
    return rekeyed.with_columns(ord=pl.col("ord") + rank * _SEGMENT_SPAN) if "ord" in frame.columns else rekeyed


#: how a file's rows convert: UTC offset in minutes, tim factor and tim offset (None: not anchored)
Constants = tuple[int, float, float | None]


@dataclass(frozen=True)
class Spanning:
    """The writes paired across the segments of a process (`side`): one piece in memory of EXCHANGES
    rows, in UTC already (they were paired from the files' pending messages, in UTC)."""

    pieces: tuple[Piece, ...]

    def load(self, piece: Piece, keys: pl.DataFrame | None = None, *, narrow: bool = False) -> pl.DataFrame:
        """The piece's rows, only those of the (thread, seq) in `keys` when given (`narrow`: NARROW columns)."""
        rows = of_keys(piece.load(), piece, keys)
        return rows.select(NARROW) if narrow else rows


#: where a side's exchanges are: a file's, or those paired across segments
Store = Exchanges | Spanning


def _constants(store: Store) -> Constants | None:
    """(UTC offset in minutes, tim factor, tim offset) when every row of a file's pieces converts with
    these constants (one offset: at most one among its ISO ADR lines, else a fixed one for its host),
    else None (an IANA zone, or offsets that change within the file: `Exchanges.load` then; rows in
    UTC already)."""
    if not isinstance(store, Exchanges):
        return None
    offsets = store.zones["utc_offset_min"].unique()
    if len(offsets) > 1 or (not len(offsets) and not isinstance(store.fallback_min, int)):
        return None
    minutes = int(offsets[0]) if len(offsets) else store.fallback_min
    return int(minutes), store.tim.factor, store.tim.offset_us


@dataclass(frozen=True)
class Side:
    """The exchanges of one side: each file's store with its stream offset (segments of one
    process share a range), and the side's messages that can never pair."""

    client: bool
    stores: list[tuple[Store, int]]
    unmatched: pl.DataFrame

    def index(self) -> pl.DataFrame:
        """Where each (thread, seq) is: (thread, seq, len, store, piece) for every piece (schema PIECE_KEYS)."""
        frames = [
            piece.keys.with_columns(store=pl.lit(i, pl.UInt32), piece=pl.lit(j, pl.UInt32))
            for i, (store, _) in enumerate(self.stores)
            for j, piece in enumerate(store.pieces)
            if piece.rows
        ]
        return pl.concat(frames).cast(PIECE_KEYS) if frames else empty(PIECE_KEYS)

    def load(self, index: pl.DataFrame, keys: pl.DataFrame, *, narrow: bool = False) -> pl.DataFrame:
        """This side's exchanges of the (thread, seq) in `keys`, from the pieces that hold them
        (`narrow`: only the columns that find candidates)."""
        wanted = index.join(keys, on=INDEX, how="semi", nulls_equal=True).select("store", "piece").unique()
        pieces = [(*self.stores[i], j) for i, j in wanted.sort("store", "piece").iter_rows()]
        constants = [_constants(store) if store.pieces[j].rows < STREAM_ROWS else None for store, _, j in pieces]
        files = [(store, offset, j) for store, offset, j in pieces if isinstance(store, Exchanges)]
        if len(pieces) > 1 and all(constants) and len(files) == len(pieces):
            return self._together(files, constants, keys, narrow)
        frames: list[pl.DataFrame] = []
        for store, offset, j in pieces:
            rows = store.load(store.pieces[j], keys, narrow=narrow).filter(pl.col("client") == self.client)
            frames.append(rows.with_columns(stream=pl.col("stream") + offset))
        if frames:
            return pl.concat(frames)
        return empty(EXCHANGES).select(NARROW) if narrow else empty(EXCHANGES)

    def _together(
        self,
        pieces: list[tuple[Exchanges, int, int]],
        constants: list[Constants | None],
        keys: pl.DataFrame,
        narrow: bool,
    ) -> pl.DataFrame:
        """`load` of small pieces (a small file's, under STREAM_ROWS rows) whose files convert with
        constants (`_constants`): a few queries for all of them instead of several per piece, each
        row taking its file's constants as columns."""
        raws = [store.raw(store.pieces[j], narrow=narrow) for store, _, j in pieces]  # the keys: below, at once
        values = [
            (store.label, offset, *(found or ())) for (store, offset, _), found in zip(pieces, constants, strict=True)
        ]
        names = ["_file", "_stream", "_minutes", "_factor", "_offset_us"]
        types = [pl.String, pl.Int64, pl.Int64, pl.Float64, pl.Float64]
        per_file = pl.DataFrame(values, schema=dict(zip(names, types, strict=True)), orient="row")
        beside = per_row(per_file, [raw.height for raw in raws])
        rows = pl.concat(raws, how="vertical_relaxed").hstack(beside).filter(pl.col("client") == self.client)
        rows = rows.join(keys, on=INDEX, how="semi", nulls_equal=True, maintain_order="left")

        minutes = pl.col("_minutes")
        times = {"a_at": local_to_utc(pl.col("a_local"), minutes)}
        if not narrow:
            times["b_at"] = local_to_utc(pl.col("b_local"), minutes)
        out = rows.with_columns(**times, file=pl.col("_file").cast(CAT), stream=pl.col("stream") + pl.col("_stream"))
        return converted(out, NARROW if narrow else None, pl.col("_factor"), pl.col("_offset_us"))


def sides(files: list[FileResult]) -> tuple[Side, Side]:
    """The primary and the standby exchanges of the files (every link together), segments of a process joined."""
    segments = join_segments(files)
    return side(files, Role.PRIMARY, segments), side(files, Role.STANDBY, segments)


def side(files: list[FileResult], role: Role, segments: dict[str, Segment]) -> Side:
    """The exchanges of one side (files of that role), with the writes that span two segments of
    a process paired from the files' pending messages, and that side's unmatched messages."""
    client = role is Role.PRIMARY
    members = [f for f in files if f.reduced.info.role == role]
    stores: list[tuple[Store, int]] = [
        (f.reduced.exchanges, segments[f.source.label][0] * _INCARNATIONS) for f in members
    ]
    # the files with rows only (most files of a big upload have none: a query each is their main cost)
    pending = [_in_stream(f.reduced.pending, segments[f.source.label]) for f in members if f.reduced.pending.height]
    waiting = [f for f in members if f.reduced.boundary_waits.height] or members[:1]
    boundary = [_in_stream(f.reduced.boundary_waits, segments[f.source.label]) for f in waiting]
    unmatched = [f.reduced.unmatched for f in members]
    if pending:
        spanning = pair_events(pl.concat(pending), ["file", "line", "ord", "at", "res_us"])
        pairs = spanning.exchanges.filter(pl.col("client") == client)
        if pairs.height:
            sums = wait_sums(pairs.select("stream", "a_ord", "b_ord"), pl.concat(boundary))
            pairs = wait_columns(pairs.join(sums, on=["stream", "a_ord"], how="left"), 1.0, 0.0)
            pairs = pairs.rename({"a_file": "file"}).select(EXCHANGES.names()).cast(EXCHANGES)
            stores.append((Spanning((IN_MEMORY.put(pairs),)), 0))
        alone = pl.concat([spanning.unpairable, spanning.pending.with_columns(reason=unpaired_reason())])
        unmatched.append(alone.with_columns(side=pl.lit(None, pl.String)).select(UNMATCHED.names()).cast(UNMATCHED))
    label = pl.lit(str(role), pl.String)
    return Side(client, stores, pl.concat(unmatched).with_columns(side=label) if unmatched else empty(UNMATCHED))


def lgwr_lines(files: list[FileResult]) -> pl.DataFrame:
    """Log writer lines of every file with their host and redo thread (schema LGWR_LINES)."""
    threads: dict[str, int] = {}
    for f in files:  # an instance's thread, from its header or from the messages its NSS sent
        info = f.reduced.info
        if info.instance and info.role == Role.PRIMARY and f.reduced.threads:
            threads.setdefault(info.instance, f.reduced.threads[0])
    frames = []
    for f in files:
        info = f.reduced.info
        if not f.reduced.lgwr.height:
            continue
        thread = info.thread or threads.get(info.instance or "")
        frames.append(
            f.reduced.lgwr.with_columns(host=pl.lit(info.host, pl.String), wthread=pl.lit(thread, pl.Int64)).select(
                LGWR_LINES.names()
            )
        )
    return pl.concat(frames).cast(LGWR_LINES) if frames else empty(LGWR_LINES)
