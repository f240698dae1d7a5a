"""Read, parse and reduce sources into `FileResult`s: files on both cores, small files parsed together.

A file is read chunk by chunk (`analyzer.parse.lines`), each chunk parsed (`analyzer.parse.chunks`: the compiled
scanner, or the pure path of `analyzer.parse.families`) and reduced (`analyzer.reduce.reducer`) in turn: parsed on a
second thread while the chunk before it is reduced, so memory follows the chunk size (three chunks at
most: one read, one parsed, one reduced). A chunk costs a few
hundred polars queries however few lines it has: an upload of thousands of small traces would pay
them thousands of times. So the files that fit in one chunk are read one after the other, parsed
together (`chunks.parse_small`) and reduced together (`analyzer.reduce.together`), a batch at a time:
each file's result is what reading it alone gives.

What leaves this stage is in UTC. A file whose stamps carry no zone (none given for it, none its
epoch tim tells) waits, reduced to its end, until every file is read: it then takes the zone the
other files agree on (`zones.assumed_zones`), and only then are its times converted.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections import deque
from collections.abc import Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field

from analyzer.base.errors import AnalyzerError, LimitExceeded
from analyzer.base.spill import IN_MEMORY, Spill
from analyzer.base.vocab import FileKind
from analyzer.base.zones import TimeZones, assumed_zones
from analyzer.inputs.sources import Source
from analyzer.parse import families as parse
from analyzer.parse.chunks import FileParser, parse_small
from analyzer.parse.identify import HEAD_LINES, file_identity, session_values, with_content
from analyzer.parse.lines import CHUNK_BYTES, CHUNK_LINES, Chunk, ReadStats, read_chunks
from analyzer.reduce.placement import PlacementTally
from analyzer.reduce.reduced import FileClock
from analyzer.reduce.reducer import EndedFile, end_file
from analyzer.reduce.results import FileResult, ProgressHook, known_zones
from analyzer.reduce.together import end_files

#: sources stored in fewer bytes than this are read in batches (a compressed one may still turn out
#: bigger than a chunk: it is then parsed chunk by chunk like any other)
SMALL_BYTES = 1024 * 1024
#: a batch of small sources holds at most this many stored bytes (two batches or more keep both cores busy)
BATCH_BYTES = 4 * 1024 * 1024


@dataclass
class _Reading:
    """What reading one source gathers on the way, besides its parsed chunks."""

    source: Source
    stats: ReadStats = field(default_factory=ReadStats)
    session: dict[str, str] = field(default_factory=dict)
    tally: PlacementTally = field(default_factory=PlacementTally)

    @property
    def alert(self) -> bool:
        return FileKind.of(self.source.name) is FileKind.ALERT_LOG

    def lines(self) -> Iterator[Chunk]:
        """The source's chunks of numbered lines; an error ends them (the chunks before it stand). The time
        spent on each chunk once handed on (parsing, reducing) is charged to the input's time budget."""
        try:
            with self.source.opener() as stream:
                first = True
                for chunk in read_chunks(stream, self.stats):
                    if first:
                        self.session.update(session_values(chunk.head(HEAD_LINES)))
                        first = False
                    handed = time.perf_counter()
                    yield chunk
                    self.source.spend(time.perf_counter() - handed)
        except (AnalyzerError, OSError) as err:  # the opener itself failed; read_chunks handles the stream
            self.stats.error = str(err) if isinstance(err, AnalyzerError) else f"{type(err).__name__}: {err}"

    def parsed(self, chunks: Iterator[Chunk]) -> Iterator[parse.Parsed]:
        """Each chunk parsed (the header state carried from one to the next), its RFS I/O waits placed, in turn.

        A chunk goes through the two steps of a `FileParser`: the first here, in turn (the pure path
        splits the lines into families there, each chunk with the header state the one before it ended
        in); the second on a second thread (the compiled scanner, or the pure path's parse of the
        families) while the next chunk is read and the one before it is reduced, so a file read alone (the
        last of a set, or the one big RFS trace of a single-instance primary) keeps both cores busy.
        """
        chunk_parser = FileParser(self.stats, alert=self.alert)
        ahead = ThreadPoolExecutor(max_workers=1)
        try:
            queued: deque[Future[parse.Parsed]] = deque()
            for chunk in chunks:
                job = chunk_parser.split(chunk)
                queued.append(ahead.submit(chunk_parser.parse, job))
                del chunk, job  # the worker holds the chunk until it is parsed
                if len(queued) > 1:
                    yield self.placed(queued.popleft().result())
            while queued:
                yield self.placed(queued.popleft().result())
        finally:  # stopped early (an error, a stop signal): a chunk not yet parsed is not parsed
            ahead.shutdown(cancel_futures=True)

    def placed(self, part: parse.Parsed) -> parse.Parsed:
        self.tally.add(part.tables["messages"], part.tables["waits"])
        return part

    def ended(self, parts: Iterator[parse.Parsed], zones: TimeZones, spill: Spill) -> Ended:
        """The file reduced from its parsed chunks, to its end."""
        return Ended(self, end_file(self.source.label, self.source.name, parts, zones, spill))


@dataclass(frozen=True)
class Ended:
    """A source read, parsed and reduced to its end, its times not yet in UTC (`EndedFile`)."""

    reading: _Reading
    ended: EndedFile

    def result(self, clock: FileClock | None = None) -> FileResult:
        """The file's result, in UTC by its own clock or by `clock`, with the parse tables it keeps."""
        reduced, parsed = self.ended.in_utc(clock), self.ended.parsed
        source = self.reading.source
        identity = file_identity(source.label, source.name, parsed.tables["header"], self.reading.session)
        return FileResult(
            source=source,
            reduced=reduced,
            parsed=parsed,
            stats=self.reading.stats,
            identity=with_content(identity, reduced.info, reduced.messages),
            placement=self.reading.tally.placement,
        )


def read_file(source: Source, zones: TimeZones, spill: Spill = IN_MEMORY) -> FileResult:
    """Read, parse and reduce one source, chunk by chunk; reading errors keep the lines read before them.

    The file's exchanges go to `spill` as they are found (a spill directory lives as long as
    the analysis needs it: `analyze` removes it before returning). A file without a zone is read in
    UTC (`read_files` gives it the zone the other files agree on).
    """
    return read_ended(source, zones, spill).result()


def read_ended(source: Source, zones: TimeZones, spill: Spill = IN_MEMORY) -> Ended:
    """`read_file`, to the file's end: nothing converted to UTC yet."""
    reading = _Reading(source)
    return reading.ended(reading.parsed(reading.lines()), zones, spill)


def read_small(sources: Sequence[Source], zones: TimeZones, spill: Spill = IN_MEMORY) -> list[FileResult]:
    """`read_file` of each source, in order, for sources expected to fit in one chunk (`read_small_ended`)."""
    return [ended.result() for ended in read_small_ended(sources, zones, spill)]


def read_small_ended(sources: Sequence[Source], zones: TimeZones, spill: Spill = IN_MEMORY) -> list[Ended]:
    """`read_ended` of each source, in order, for sources expected to fit in one chunk: those that do are
    parsed together, up to a chunk's worth of lines at a time; one that does not is read alone."""
    results: dict[int, Ended] = {}
    waiting: list[tuple[int, _Reading, Chunk]] = []
    size = lines = 0

    def flush() -> None:
        nonlocal size, lines
        started = time.perf_counter()
        parts = parse_small([chunk for _, _, chunk in waiting], [r.stats for _, r, _ in waiting])
        files = [
            (r.source.label, r.source.name, r.placed(part)) for (_, r, _), part in zip(waiting, parts, strict=True)
        ]
        for (at, reading, _), done in zip(waiting, end_files(files, zones, spill), strict=True):
            results[at] = Ended(reading, done)
        share = (time.perf_counter() - started) / len(waiting)
        for _, reading, _ in waiting:  # each file's share of the batch's time; a spent input stops at its next read
            with contextlib.suppress(LimitExceeded):
                reading.source.spend(share)
        waiting.clear()
        size = lines = 0

    for at, source in enumerate(sources):
        reading = _Reading(source)
        if reading.alert:
            results[at] = reading.ended(reading.parsed(reading.lines()), zones, spill)
            continue
        chunks = reading.lines()
        first = next(chunks, None)
        second = next(chunks, None) if first is not None else None
        if first is None or second is not None:  # empty, or more than one chunk: read alone
            ahead = [chunk for chunk in (first, second) if chunk is not None]
            results[at] = reading.ended(reading.parsed(_chain(ahead, chunks)), zones, spill)
            continue
        if lines + first.count > CHUNK_LINES or size + reading.stats.bytes > CHUNK_BYTES:
            flush()
        waiting.append((at, reading, first))
        size += reading.stats.bytes
        lines += first.count
    if waiting:
        flush()
    return [results[at] for at in range(len(sources))]


def _chain(ahead: list[Chunk], rest: Iterator[Chunk]) -> Iterator[Chunk]:
    yield from ahead
    yield from rest


def _small(source: Source) -> bool:
    return source.stored_bytes is not None and source.stored_bytes < SMALL_BYTES


def _batches(small: Sequence[Source], workers: int) -> list[list[Source]]:
    """Small sources in input order, in batches of at most BATCH_BYTES stored bytes, at least one per worker."""
    total = sum(source.stored_bytes or 0 for source in small)
    limit = max(1, min(BATCH_BYTES, -(-total // workers)))
    batches: list[list[Source]] = []
    stored = limit
    for source in small:
        if stored >= limit:
            batches.append([])
            stored = 0
        batches[-1].append(source)
        stored += source.stored_bytes or 0
    return batches


def read_files(
    sources: Sequence[Source], zones: TimeZones, spill: Spill = IN_MEMORY, progress: ProgressHook | None = None
) -> list[FileResult]:
    """`read_file` for every source, in input order, each in UTC; a file without a zone (none in its
    stamps, none given, none its epoch tim tells) in the zone the other files agree on
    (`zones.assumed_zones`), else in UTC. Polars releases the GIL, so files are read in parallel threads
    (both cores), the biggest first so the threads finish together; small files in batches
    (`read_small`); a file whose zone is known is converted to UTC on its thread at once, one without
    waits for the others."""
    workers = os.cpu_count() or 1
    big = sorted((source for source in sources if not _small(source)), key=lambda s: -(s.stored_bytes or 0))
    batches = _batches([source for source in sources if _small(source)], workers)
    with ThreadPoolExecutor(max_workers=max(1, min(len(big) + len(batches), workers))) as pool:
        slots: dict[int, tuple[Future[list[FileResult | Ended]], int]] = {}
        for source in big:
            slots[id(source)] = (pool.submit(lambda s: _in_utc_if_known([read_ended(s, zones, spill)]), source), 0)
        for batch in batches:
            future = pool.submit(lambda b: _in_utc_if_known(read_small_ended(b, zones, spill)), batch)
            slots.update((id(source), (future, at)) for at, source in enumerate(batch))
        read: list[FileResult | Ended] = []
        for source in sources:
            if progress:
                progress(source.label, len(read), len(sources))
            future, at = slots[id(source)]
            read.append(future.result()[at])
        files = _in_common_zones(read, pool)
        if progress:
            progress("", len(files), len(sources))
    return files


def _in_utc_if_known(ended: list[Ended]) -> list[FileResult | Ended]:
    """The files whose zone is known, in UTC; those whose zone is only assumed, still to convert."""
    return [e if e.ended.clock.assumed else e.result() for e in ended]


def _in_common_zones(read: list[FileResult | Ended], pool: ThreadPoolExecutor) -> list[FileResult]:
    """Every file in UTC: those still to convert in the zone the others agree on (`zones.assumed_zones`,
    by host, then all files), else in UTC; converted on the pool."""
    decided = assumed_zones(
        [
            (f.reduced.info.host, known_zones(f)) if isinstance(f, FileResult) else (f.ended.info.host, None)
            for f in read
        ]
    )
    converted: dict[int, Future[FileResult]] = {}
    for k, (f, zone) in enumerate(zip(read, decided, strict=True)):
        if isinstance(f, Ended):
            clock = None if zone is None else f.ended.clock.taking(*zone, f.ended.first_local)
            converted[k] = pool.submit(f.result, clock)
    return [converted[k].result() if isinstance(f, Ended) else f for k, f in enumerate(read)]
