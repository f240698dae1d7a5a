"""A source's chunks to parse results: through the compiled scanner when it is there, else the pure path.

The reading stage (`analyzer.reduce.ingest`) hands each chunk of a file to a `FileParser` in two steps:
`split`, on the file's thread, and `parse`, on a second thread, both in chunk order. The pure path sorts
the chunk's lines into families in the first step (`families.split_chunk`, the header region carried from
chunk to chunk) and parses them in the second (`families.parse_groups`). The compiled scanner does both
in the second step (`scanner.scan`, the header region carried there), so the file's thread only reads
and reduces. Small files, each whole in one chunk, are parsed together (`parse_small`): each is scanned
alone and the lines the scanner hands back are parsed in one batch, as `families.parse_files` does with
the lines of a batch. Either way every file gets the tables and line accounting of the pure path.
"""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

from analyzer.parse import families as fam
from analyzer.parse import scanner
from analyzer.parse.lines import Chunk, ReadStats

#: what `FileParser.split` hands to `FileParser.parse`: a chunk to scan, or its lines sorted into families
Job = Chunk | dict[str, pl.DataFrame]


class FileParser:
    """The chunks of one file, parsed in turn (`alert`: an alert log's, which the pure path reads)."""

    def __init__(self, stats: ReadStats, *, alert: bool = False) -> None:
        self.stats = stats
        self.alert = alert
        self.scanned = scanner.enabled() and not alert
        self.in_header = False

    def split(self, chunk: Chunk) -> Job:
        """The first step, in chunk order: the pure path's family split (the scanner's chunk passes as it is)."""
        if self.scanned:
            return chunk
        groups, self.in_header = fam.split_chunk(chunk.frame(self.stats), self.in_header, alert=self.alert)
        return groups

    def parse(self, job: Job) -> fam.Parsed:
        """The second step, in chunk order, one chunk at a time: the chunk's tables and line accounting."""
        if not isinstance(job, Chunk):
            return fam.parse_groups(job)
        scanned = scanner.scan(job, self.in_header, self.stats)
        if scanned is None:  # a line too long for the scanner: this chunk by the pure path
            groups, self.in_header = fam.split_chunk(job.frame(self.stats), self.in_header)
            return fam.parse_groups(groups)
        self.in_header = scanned.in_header
        return scanner.parse_scanned(scanned)


def parse_small(chunks: Sequence[Chunk], stats: Sequence[ReadStats]) -> list[fam.Parsed]:
    """Several trace files, each whole in one chunk (`stats`: each one's), parsed together: for each, what a
    `FileParser` gives it, for about the fixed cost of one chunk."""
    if not scanner.enabled():
        return fam.parse_files([chunk.frame(each) for chunk, each in zip(chunks, stats, strict=True)])
    out: dict[int, fam.Parsed] = {}
    scans = {k: scanner.scan(chunk, False, stats[k]) for k, chunk in enumerate(chunks)}
    declined = [k for k, scan in scans.items() if scan is None]
    if declined:  # a line too long for the scanner: those files by the pure path, together
        out.update(zip(declined, fam.parse_files([chunks[k].frame(stats[k]) for k in declined]), strict=True))
    done = {k: scan for k, scan in scans.items() if scan is not None}
    rests = _rests([chunks[k] for k in done], [scan.rest for scan in done.values()])
    out.update((k, scanner.combined(scan, rest)) for (k, scan), rest in zip(done.items(), rests, strict=True))
    return [out[k] for k in range(len(chunks))]


def _rests(chunks: Sequence[Chunk], rests: Sequence[pl.DataFrame]) -> list[fam.Parsed]:
    """The lines the scanner handed back from several files, parsed together and cut back per file
    (`families.parse_grouped`): each file's lines numbered on after the one before it, a free number between."""
    if not any(rest.height for rest in rests):  # one empty result for all (`scanner.combined` copies what it takes)
        return [fam.empty_parsed()] * len(rests)
    if len(rests) == 1:
        return [fam.parse_groups(scanner.groups_of(rests[0]))]
    starts = [0]
    for chunk in chunks[:-1]:
        starts.append(starts[-1] + chunk.first + chunk.count)  # past the file's last line, by one
    bounds = pl.Series("_off", starts, dtype=pl.Int64)
    shifted = pl.concat([rest.with_columns(pl.col("line") + start) for rest, start in zip(rests, starts, strict=True)])
    return fam.parse_grouped(scanner.groups_of(shifted), bounds)
