"""Read, parse and reduce sources into `FileResult`s: files on both cores, small files parsed together.

A file is read chunk by chunk (`analyzer.parse.lines`), each chunk parsed (`analyzer.parse.families`) and reduced
(`analyzer.reduce.reducer`) in turn: split into line families on the file's thread, its families parsed on a
second thread while the chunk before it is reduced, so memory follows the chunk size (three chunks at
most: one read, one parsed, one reduced). A chunk costs a few
hundred polars queries however few lines it has: an upload of thousands of small traces would pay
them thousands of times. So the files that fit in one chunk are read one after the other, parsed
together (`parse.parse_files`) and reduced together (`analyzer.reduce.together`), a batch at a time:
each file's result is what reading it alone gives.
"""

from __future__ import annotations

import os
from collections import deque
from collections.abc import Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field

import polars as pl

from analyzer.base.errors import AnalyzerError
from analyzer.base.spill import IN_MEMORY, Spill
from analyzer.base.vocab import FileKind
from analyzer.base.zones import TimeZones
from analyzer.inputs.sources import Source
from analyzer.parse import families as parse
from analyzer.parse.identify import HEAD_LINES, file_identity, session_values, with_content
from analyzer.parse.lines import CHUNK_BYTES, CHUNK_LINES, ReadStats, read_lines
from analyzer.reduce.placement import PlacementTally
from analyzer.reduce.reduced import ReducedFile
from analyzer.reduce.reducer import reduce_file
from analyzer.reduce.results import FileResult, ProgressHook
from analyzer.reduce.together import reduce_files

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

    def lines(self) -> Iterator[pl.DataFrame]:
        """The source's chunks of numbered lines; an error ends them (the chunks before it stand)."""
        try:
            with self.source.opener() as stream:
                first = True
                for lines in read_lines(stream, self.stats):
                    if first:
                        self.session.update(session_values(lines["text"].head(HEAD_LINES)))
                        first = False
                    yield lines
        except (AnalyzerError, OSError) as err:  # the opener itself failed; read_lines handles the stream
            self.stats.error = str(err) if isinstance(err, AnalyzerError) else f"{type(err).__name__}: {err}"

    def parsed(self, chunks: Iterator[pl.DataFrame]) -> Iterator[parse.Parsed]:
        """Each chunk parsed (the header state carried from one to the next), its RFS I/O waits placed, in turn.

        A chunk is split into line families here, in turn, each with the header state the one before
        it ended in (`parse.split_chunk`); its families are parsed on a second thread (`parse.parse_groups`)
        while the next chunk is read and split and the one before it is reduced, so a file read alone (the
        last of a set, or the one big RFS trace of a single-instance primary) keeps both cores busy.
        """
        in_header = False
        ahead = ThreadPoolExecutor(max_workers=1)
        try:
            queued: deque[Future[parse.Parsed]] = deque()
            for lines in chunks:
                groups, in_header = parse.split_chunk(lines, in_header, alert=self.alert)
                queued.append(ahead.submit(parse.parse_groups, groups))
                del lines, groups  # the worker holds the families until they are parsed
                if len(queued) > 1:
                    yield self.placed(queued.popleft().result())
            while queued:
                yield self.placed(queued.popleft().result())
        finally:  # stopped early (an error, a stop signal): a chunk not yet parsed is not parsed
            ahead.shutdown(cancel_futures=True)

    def placed(self, part: parse.Parsed) -> parse.Parsed:
        self.tally.add(part.tables["messages"], part.tables["waits"])
        return part

    def result(self, parts: Iterator[parse.Parsed], zones: TimeZones, spill: Spill) -> FileResult:
        """The file reduced from its parsed chunks."""
        return self.finished(*reduce_file(self.source.label, self.source.name, parts, zones, spill))

    def finished(self, reduced: ReducedFile, parsed: parse.Parsed) -> FileResult:
        """The file's result from its reduction and the parse tables it keeps."""
        label, name = self.source.label, self.source.name
        identity = file_identity(label, name, parsed.tables["header"], self.session)
        return FileResult(
            source=self.source,
            reduced=reduced,
            parsed=parsed,
            stats=self.stats,
            identity=with_content(identity, reduced.info, reduced.messages),
            placement=self.tally.placement,
        )


def read_file(source: Source, zones: TimeZones, spill: Spill = IN_MEMORY) -> FileResult:
    """Read, parse and reduce one source, chunk by chunk; reading errors keep the lines read before them.

    The file's exchanges go to `spill` as they are found (a spill directory lives as long as
    the analysis needs it: `analyze` removes it before returning).
    """
    reading = _Reading(source)
    return reading.result(reading.parsed(reading.lines()), zones, spill)


def read_small(sources: Sequence[Source], zones: TimeZones, spill: Spill = IN_MEMORY) -> list[FileResult]:
    """`read_file` of each source, in order, for sources expected to fit in one chunk: those that do are
    parsed together, up to a chunk's worth of lines at a time; one that does not is read alone."""
    results: dict[int, FileResult] = {}
    waiting: list[tuple[int, _Reading, pl.DataFrame]] = []
    size = lines = 0

    def flush() -> None:
        nonlocal size, lines
        parts = parse.parse_files([chunk for _, _, chunk in waiting])
        files = [
            (r.source.label, r.source.name, r.placed(part)) for (_, r, _), part in zip(waiting, parts, strict=True)
        ]
        for (at, reading, _), done in zip(waiting, reduce_files(files, zones, spill), strict=True):
            results[at] = reading.finished(*done)
        waiting.clear()
        size = lines = 0

    for at, source in enumerate(sources):
        reading = _Reading(source)
        if reading.alert:
            results[at] = reading.result(reading.parsed(reading.lines()), zones, spill)
            continue
        chunks = reading.lines()
        first = next(chunks, None)
        second = next(chunks, None) if first is not None else None
        if first is None or second is not None:  # empty, or more than one chunk: read alone
            ahead = [chunk for chunk in (first, second) if chunk is not None]
            results[at] = reading.result(reading.parsed(_chain(ahead, chunks)), zones, spill)
            continue
        if lines + first.height > CHUNK_LINES or size + reading.stats.bytes > CHUNK_BYTES:
            flush()
        waiting.append((at, reading, first))
        size += reading.stats.bytes
        lines += first.height
    if waiting:
        flush()
    return [results[at] for at in range(len(sources))]


def _chain(ahead: list[pl.DataFrame], rest: Iterator[pl.DataFrame]) -> Iterator[pl.DataFrame]:
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
    """`read_file` for every source, in input order. Polars releases the GIL, so files are read in
    parallel threads (both cores), the biggest first so the threads finish together; small files
    in batches (`read_small`)."""
    workers = os.cpu_count() or 1
    big = sorted((source for source in sources if not _small(source)), key=lambda s: -(s.stored_bytes or 0))
    batches = _batches([source for source in sources if _small(source)], workers)
    with ThreadPoolExecutor(max_workers=max(1, min(len(big) + len(batches), workers))) as pool:
        slots: dict[int, tuple[Future[list[FileResult]], int]] = {}
        for source in big:
            slots[id(source)] = (pool.submit(lambda s: [read_file(s, zones, spill)], source), 0)
        for batch in batches:
            future = pool.submit(read_small, batch, zones, spill)
            slots.update((id(source), (future, at)) for at, source in enumerate(batch))
        files: list[FileResult] = []
        for source in sources:
            if progress:
                progress(source.label, len(files), len(sources))
            future, at = slots[id(source)]
            files.append(future.result()[at])
        if progress:
            progress("", len(files), len(sources))
    return files
