"""The pipeline: read -> parse -> tables -> match -> attribute, as one call or stage by stage.

`analyze(paths, options)` returns an `Analysis` that every renderer takes. Nothing here prints.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime

import polars as pl

from analyzer import parse
from analyzer.archives import Limits
from analyzer.attribute import ATTRIBUTED, DEFAULT_THRESHOLD_MS, attribute, tie_warnings, wait_columns, wait_sums
from analyzer.clock import estimate_offsets, one_way
from analyzer.errors import AnalyzerError, ExitCode, NoInputError
from analyzer.match import DEFAULT_WINDOW_S, gaps, lonely_reason, match, pair_events, typical_gaps
from analyzer.read import ReadStats, read_lines
from analyzer.schemas import EXCHANGES, UNMATCHED, UNPARSED, WARNINGS, empty
from analyzer.sources import Skipped, Source, discover
from analyzer.spill import IN_MEMORY, INDEX, Spill, spill_directory
from analyzer.tables import NARROW, Exchanges, FileTables, TimeZones, tabulate


@dataclass(frozen=True)
class Options:
    """What the user can set for one analysis."""

    #: a write is slow when total_ms >= this (ms)
    threshold_ms: float = DEFAULT_THRESHOLD_MS
    #: UTC offsets for files whose timestamps carry no zone
    zones: TimeZones = field(default_factory=TimeZones)
    #: how far (s) a msgid match may stray from the host pair's typical send->receive gap
    window_s: float = DEFAULT_WINDOW_S
    #: `--clock-offset HOST=MS`: a standby host's clock minus the primary's, instead of the estimate
    clock_offsets: dict[str, float] = field(default_factory=dict)
    #: only writes sent in [since, until) (UTC); None means open
    since: datetime | None = None
    until: datetime | None = None
    #: safety limits for archives and compressed inputs
    limits: Limits = field(default_factory=Limits)


@dataclass(frozen=True)
class FileResult:
    """One input file after reading, parsing and the tables stage."""

    source: Source
    tables: FileTables
    parsed: parse.Parsed
    stats: ReadStats


@dataclass(frozen=True)
class Analysis:
    """Everything the renderers need."""

    options: Options
    files: list[FileResult]
    skipped: list[Skipped]
    writes: pl.DataFrame
    unmatched: pl.DataFrame
    warnings: pl.DataFrame
    #: clock offset per (primary host, standby host), schema CLOCK
    clock: pl.DataFrame
    primary_exchanges: int
    standby_exchanges: int

    @property
    def exit_code(self) -> ExitCode:
        """PARTIAL when some input could not be read to its end, or was lost to a limit."""
        lost = any(f.stats.error for f in self.files) or any(s.partial for s in self.skipped)
        return ExitCode.PARTIAL if lost else ExitCode.OK


#: called as (label of the file being read, files done, files in all)
ProgressHook = Callable[[str, int, int], None]


def read_file(source: Source, zones: TimeZones, spill: Spill = IN_MEMORY) -> FileResult:
    """Read, parse and tabulate one source, chunk by chunk; reading errors keep the lines read before them.

    The file's exchanges go to `spill` as they are found (a spill directory lives as long as
    the analysis needs it: `analyze` removes it before returning).
    """
    stats = ReadStats()
    tables, parsed = tabulate(source.label, source.name, _chunks(source, stats), zones, spill)
    return FileResult(source, tables, parsed, stats)


def _chunks(source: Source, stats: ReadStats) -> Iterator[parse.Parsed]:
    """The parsed chunks of a source; an error ends them (the chunks before it stand)."""
    in_header = False
    try:
        with source.opener() as stream:
            for lines in read_lines(stream, stats):
                part, in_header = parse.parse_chunk(lines, in_header)
                yield part
    except (AnalyzerError, OSError) as err:  # the opener itself failed; read_lines handles the stream
        stats.error = str(err) if isinstance(err, AnalyzerError) else f"{type(err).__name__}: {err}"


def analyze_files(files: list[FileResult], skipped: list[Skipped], options: Options) -> Analysis:
    """Match and attribute the exchanges of already-read files."""
    hosts = {f.source.label: f.tables.info.host or f.source.label for f in files}
    segments = join_segments(files)
    primary, standby = _side(files, "primary", segments), _side(files, "standby", segments)
    parts, unmatched, counts = _match_in_batches(primary, standby, hosts, options)
    writes = _sorted(_concat(parts), ["sent_at", "thread"]) if parts else empty(ATTRIBUTED)
    clock = estimate_offsets(writes, options.clock_offsets)
    writes = _in_window(one_way(writes, clock), options, "sent_at")
    warnings = _in_window(tie_warnings(_lgwr(files), writes), options, "at")
    return Analysis(
        options,
        files,
        skipped,
        writes,
        _in_window(pl.concat([primary.unmatched, standby.unmatched, unmatched]).sort("file", "line"), options, "at"),
        warnings,
        clock,
        *_exchange_counts(counts, writes, options),
    )


#: exchanges (rows of one side) matched at once: a batch of (thread, seq) keys stops growing past this
BATCH_ROWS = 250_000


@dataclass(frozen=True)
class Side:
    """The exchanges of one side: each file's store with its stream offset (segments of one
    process share a range), and the side's messages that can never pair."""

    client: bool
    stores: list[tuple[Exchanges, int]]
    unmatched: pl.DataFrame

    def index(self) -> pl.DataFrame:
        """(store, piece, thread, seq, len) for every (thread, seq) each piece holds."""
        frames = [
            piece.keys.with_columns(store=pl.lit(i, pl.UInt32), piece=pl.lit(j, pl.UInt32))
            for i, (store, _) in enumerate(self.stores)
            for j, piece in enumerate(store.pieces)
            if piece.rows
        ]
        schema = {"thread": pl.Int64, "seq": pl.Int64, "len": pl.UInt32, "store": pl.UInt32, "piece": pl.UInt32}
        return pl.concat(frames).cast(schema) if frames else pl.DataFrame(schema=schema)  # type: ignore[arg-type]

    def load(self, index: pl.DataFrame, keys: pl.DataFrame, *, narrow: bool = False) -> pl.DataFrame:
        """This side's exchanges of the (thread, seq) in `keys`, from the pieces that hold them
        (`narrow`: only the columns that find candidates)."""
        wanted = index.join(keys, on=INDEX, how="semi", nulls_equal=True).select("store", "piece").unique()
        frames: list[pl.DataFrame] = []
        for i, j in wanted.sort("store", "piece").iter_rows():
            store, offset = self.stores[i]
            rows = store.load(store.pieces[j], keys, narrow=narrow).filter(pl.col("client") == self.client)
            frames.append(rows.with_columns(stream=pl.col("stream") + offset))
        if frames:
            return pl.concat(frames)
        return empty(EXCHANGES).select(NARROW) if narrow else empty(EXCHANGES)


def _batches(primary: pl.DataFrame, standby: pl.DataFrame) -> list[pl.DataFrame]:
    """(thread, seq) keys in order, cut into batches of about BATCH_ROWS exchanges per side."""
    sizes = pl.concat([primary, standby]).group_by(INDEX).agg(rows=pl.col("len").sum()).sort(INDEX, nulls_last=False)
    batches, start, total = [], 0, 0
    for n, rows in enumerate(sizes["rows"].to_list()):
        if total and total + rows > 2 * BATCH_ROWS:
            batches.append(sizes.slice(start, n - start).select(INDEX))
            start, total = n, 0
        total += rows
    if sizes.height:
        batches.append(sizes.slice(start).select(INDEX))
    return batches


def _match_in_batches(
    primary: Side, standby: Side, hosts: dict[str, str], options: Options
) -> tuple[list[pl.DataFrame], pl.DataFrame, tuple[int, int]]:
    """Writes (in parts), unmatched exchanges and exchange counts, matched batch by batch.

    A write's messages share their (thread, seq), so batches of (thread, seq) keys match as
    the whole would, provided every batch uses the same typical send->receive gap per host
    pair: with several batches, a first pass collects the gaps of all candidates.
    """
    p_index, s_index = primary.index(), standby.index()
    batches = _batches(p_index, s_index)

    def load(keys: pl.DataFrame, narrow: bool = False) -> tuple[pl.DataFrame, pl.DataFrame]:
        return primary.load(p_index, keys, narrow=narrow), standby.load(s_index, keys, narrow=narrow)

    typical = None
    # polars releases the GIL: batches are read back on a second thread while one is matched
    with ThreadPoolExecutor(max_workers=2) as pool:
        if len(batches) > 1:
            narrow = pool.map(lambda keys: gaps(*load(keys, narrow=True), hosts), batches)
            typical = typical_gaps(pl.concat(list(narrow)))
        parts, unmatched, counts = [], [], (0, 0)
        ahead = pool.submit(load, batches[0]) if batches else None
        for n in range(len(batches)):
            assert ahead is not None
            p_rows, s_rows = ahead.result()
            ahead = pool.submit(load, batches[n + 1]) if n + 1 < len(batches) else None
            matched = match(p_rows, s_rows, hosts, options.window_s, typical)
            del p_rows, s_rows
            counts = (counts[0] + matched.primary_exchanges, counts[1] + matched.standby_exchanges)
            unmatched.append(matched.unmatched)
            if matched.exchanges.height:
                parts.append(attribute(matched.exchanges, options.threshold_ms))
    return parts, pl.concat(unmatched) if unmatched else empty(UNMATCHED), counts


def _concat(parts: list[pl.DataFrame]) -> pl.DataFrame:
    """The parts as one frame (chunks kept as they are); the list lets go of them."""
    frame = pl.concat(parts, rechunk=False)
    parts.clear()
    return frame


def _sorted(frame: pl.DataFrame, by: list[str]) -> pl.DataFrame:
    """The frame sorted (stable), one column at a time: the peak is one column more than the frame."""
    order = frame.select(pl.arg_sort_by(by, maintain_order=True)).to_series()
    for name in frame.columns:
        frame = frame.with_columns(frame[name].gather(order))
    return frame


def analyze(paths: Sequence[str], options: Options | None = None, progress: ProgressHook | None = None) -> Analysis:
    """Run the whole pipeline over files, directories and globs.

    Raises:
        UsageError: a path names nothing.
        NoInputError: no trace file was found.
    """
    options = options or Options()
    sources, skipped = discover(paths, limits=options.limits)
    if not sources:
        lost = [f"{s.label}: {s.reason}" for s in skipped if s.partial]
        why = f" ({len(lost)} input(s) could not be read; first: {lost[0]})" if lost else ""
        if skipped and not lost:
            why = f" ({len(skipped)} input(s) skipped; first: {skipped[0].label}: {skipped[0].reason})"
        raise NoInputError("no trace files found in " + ", ".join(paths) + why)
    # exchanges wait on disk between reading and matching: memory holds a batch, not the input
    with spill_directory() as spill:
        # polars releases the GIL, so files are read and parsed in parallel threads (both cores)
        with ThreadPoolExecutor(max_workers=max(1, min(len(sources), os.cpu_count() or 1))) as pool:
            # the biggest first, so that the threads finish together (results keep the input order)
            order = sorted(sources, key=lambda s: -(s.stored_bytes or 0))
            submitted = {id(source): pool.submit(read_file, source, options.zones, spill) for source in order}
            futures = [submitted[id(source)] for source in sources]
            files: list[FileResult] = []
            for source, future in zip(sources, futures, strict=True):
                if progress:
                    progress(source.label, len(files), len(sources))
                files.append(future.result())
            if progress:
                progress("", len(files), len(sources))
        return analyze_files(files, skipped, options)


def _exchange_counts(counts: tuple[int, int], writes: pl.DataFrame, options: Options) -> tuple[int, int]:
    """Writes seen on each side: all of them, or those inside --since/--until."""
    if options.since is None and options.until is None:
        return counts
    return int(writes["primary_file"].is_not_null().sum()), int(writes["standby_file"].is_not_null().sum())


def _in_window(frame: pl.DataFrame, options: Options, column: str) -> pl.DataFrame:
    """The rows inside --since / --until (the frame itself, not a copy, when neither is given)."""
    if options.since is None and options.until is None:
        return frame
    return frame.filter(_window(options, column))


def _window(options: Options, column: str) -> pl.Expr:
    """Rows inside --since / --until (rows without a time are kept)."""
    keep = pl.lit(True)
    if options.since is not None:
        keep = keep & (pl.col(column) >= options.since).fill_null(True)
    if options.until is not None:
        keep = keep & (pl.col(column) < options.until).fill_null(True)
    return keep


#: a file's place in its process: (process number, rank of the file among that process's segments)
Segment = tuple[int, int]
_SEGMENT_SPAN = 1 << 40  # ord = rank * span + line: lines of later segments sort after earlier ones
_INCARNATIONS = 1 << 10  # stream = process number * this + incarnation within the file


def join_segments(files: list[FileResult]) -> dict[str, Segment]:
    """Files of one process (same host, instance, process and pid: ADR segments, a
    `TRACE CONTINUED FROM FILE` after a tracefile_identifier change) form one stream, in time order."""
    groups: dict[tuple[object, ...], list[FileResult]] = {}
    for f in files:
        i = f.tables.info
        key: tuple[object, ...] = (i.host, i.instance, i.process, i.pid) if i.pid and i.process else (f.source.label,)
        groups.setdefault(key, []).append(f)
    out: dict[str, Segment] = {}
    for number, members in enumerate(groups.values()):
        members.sort(key=lambda f: (f.tables.first_at is None, f.tables.first_at or 0, f.source.label))
        out.update({f.source.label: (number, rank) for rank, f in enumerate(members)})
    return out


def _in_stream(frame: pl.DataFrame, segment: Segment) -> pl.DataFrame:
    """Re-key a file's rows (stream = incarnation within the file) to its process stream and
    order (`ord`, when the rows have one: lines of later segments sort after earlier ones)."""
    number, rank = segment
    rekeyed = frame.with_columns(stream=pl.col("stream") + number * _INCARNATIONS)
    return rekeyed.with_columns(ord=pl.col("ord") + rank * _SEGMENT_SPAN) if "ord" in frame.columns else rekeyed


def _side(files: list[FileResult], role: str, segments: dict[str, Segment]) -> Side:
    """The exchanges of one side (files of that role), with the writes that span two segments of
    a process paired from the files' loose messages, and that side's unmatched messages."""
    client = role == "primary"
    members = [f for f in files if f.tables.info.role == role]
    stores = [(f.tables.exchanges, segments[f.source.label][0] * _INCARNATIONS) for f in members]
    loose = [_in_stream(f.tables.loose, segments[f.source.label]) for f in members]
    edge = [_in_stream(f.tables.edge_waits, segments[f.source.label]) for f in members]
    unmatched = [f.tables.unmatched for f in members]
    if loose:
        spanning = pair_events(pl.concat(loose), ["file", "line", "ord", "at", "res_us"])
        pairs = spanning.exchanges.filter(pl.col("client") == client)
        if pairs.height:
            sums = wait_sums(pairs.select("stream", "a_ord", "b_ord"), pl.concat(edge))
            pairs = wait_columns(pairs.join(sums, on=["stream", "a_ord"], how="left"), 1.0, 0.0)
            pairs = pairs.rename({"a_file": "file"}).select(EXCHANGES.names()).cast(EXCHANGES)
            stores.append((Exchanges((IN_MEMORY.put(pairs),), finished=True), 0))
        alone = pl.concat([spanning.lonely, spanning.loose.with_columns(reason=lonely_reason())])
        unmatched.append(alone.with_columns(side=pl.lit(None, pl.String)).select(UNMATCHED.names()).cast(UNMATCHED))
    side = pl.lit(role, pl.String)
    return Side(client, stores, pl.concat(unmatched).with_columns(side=side) if unmatched else empty(UNMATCHED))


def _lgwr(files: list[FileResult]) -> pl.DataFrame:
    """Log writer lines of every file with their host and redo thread."""
    threads: dict[str, int] = {}
    for f in files:  # an instance's thread, from its header or from the messages its NSS sent
        info = f.tables.info
        if info.instance and info.role == "primary" and f.tables.threads:
            threads.setdefault(info.instance, f.tables.threads[0])
    frames = []
    for f in files:
        info = f.tables.info
        if not f.tables.lgwr.height:
            continue
        thread = info.thread or threads.get(info.instance or "")
        frames.append(
            f.tables.lgwr.with_columns(host=pl.lit(info.host, pl.String), wthread=pl.lit(thread, pl.Int64)).select(
                "file", "line", "kind", "at", "elapsed_ms", "size_kb", "host", "wthread"
            )
        )
    if frames:
        return pl.concat(frames)
    return pl.DataFrame(
        schema={
            "file": pl.String,
            "line": pl.Int64,
            "kind": pl.String,
            "at": WARNINGS["at"],
            "elapsed_ms": pl.Int64,
            "size_kb": pl.Int64,
            "host": pl.String,
            "wthread": pl.Int64,
        }
    )


def coverage(files: list[FileResult]) -> pl.DataFrame:
    """Per file: lines read = parsed + ignored + unparsed, with the breakdown and read problems."""
    rows = []
    for f in files:
        p = f.parsed
        rows.append(
            {
                "file": f.source.label,
                "lines": f.stats.lines,
                "parsed": sum(p.parsed.values()),
                "ignored": sum(p.ignored.values()),
                "unparsed": p.unparsed,
                "parsed_by_family": dict(sorted(p.parsed.items())),
                "ignored_by_category": dict(sorted(p.ignored.items())),
                "lines_with_bad_bytes": f.stats.lines_with_bad_bytes,
                "bad_byte_lines": f.stats.bad_lines,  # the first 100 line numbers
                "crlf_lines": f.stats.crlf_lines,
                "cut_lines": f.stats.cut_lines,
                "unterminated_last_line": f.stats.unterminated_last_line,
                "read_error": f.stats.error,
                **f.stats.details(),  # encoding, byte-order mark, CR line ends, NUL runs: what the reader repaired
            }
        )
    return pl.DataFrame(rows) if rows else pl.DataFrame()


def unparsed(files: list[FileResult]) -> pl.DataFrame:
    """Every unparsed line of every file, with its file label."""
    frames = [f.parsed.tables["unparsed"].with_columns(file=pl.lit(f.source.label)) for f in files]
    return pl.concat(frames) if frames else empty(UNPARSED).with_columns(file=pl.lit(None, pl.String))
