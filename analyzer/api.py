"""The pipeline as one call, and its stages as public functions to call one by one.

    discover -> read_files (read, parse, reduce: `analyzer.reduce.ingest`) -> link_topology (configurations and
    who sends to whom) -> match_sides (match and attribute link by link, in batches) -> finish
    (clock, one-way delays, LGWR warnings, --since/--until)

`analyze(paths, options)` runs them all and returns the `Analysis` every renderer takes; a
script or the batch engine can stop after any stage. Nothing here prints.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import polars as pl

from analyzer.base.errors import NoInputError
from analyzer.base.schemas import LINKED, empty, narrowed
from analyzer.base.spill import spill_directory
from analyzer.base.vocab import Role
from analyzer.companions.awr import AwrReport, read_awr
from analyzer.companions.oratcptest import BaselineRun, read_baseline
from analyzer.inputs.limits import Limits
from analyzer.inputs.sources import Skipped, Source, discover
from analyzer.match import alerts, links
from analyzer.match.analysis import Analysis
from analyzer.match.attribute import fast_sync_ms, tie_warnings
from analyzer.match.by_link import Batched, Matching, candidate_scores, match_links
from analyzer.match.clock import estimate_offsets, one_way
from analyzer.match.gaps import find as find_gaps
from analyzer.match.gaps import place as place_in_gaps
from analyzer.match.links import Topology
from analyzer.match.segments import Side, join_segments, lgwr_lines, side
from analyzer.match.transport import Destination
from analyzer.parse.identify import read_identity
from analyzer.reduce.ingest import read_file, read_files
from analyzer.reduce.results import FileResult, Options, ProgressHook, assume_common_zones

__all__ = [
    "Analysis",
    "FileResult",
    "Limits",
    "Options",
    "ProgressHook",
    "analyze",
    "analyze_files",
    "companions",
    "configurations",
    "discover",
    "fast_sync_ms",
    "finish",
    "link_topology",
    "match_sides",
    "read_file",
    "read_files",
    "read_identity",
    "sides",
]


def sides(files: list[FileResult]) -> tuple[Side, Side]:
    """The primary and the standby exchanges of the files (every link together), segments of a process joined."""
    segments = join_segments(files)
    return side(files, Role.PRIMARY, segments), side(files, Role.STANDBY, segments)


def configurations(sources: Sequence[Source], destinations: Sequence[Destination] = ()) -> list[links.Configuration]:
    """The Data Guard configurations of the sources from each one's path and head only (`read_identity`):
    what to read together, decided before any file is read whole."""
    return links.configurations([read_identity(source) for source in sources], destinations)


def link_topology(files: list[FileResult], destinations: Sequence[Destination] = ()) -> Topology:
    """The configurations and links of the files: their identities decide, and where they leave a
    receiver several candidate senders, the match rate of each (`analyzer.match.links`)."""
    identities = [f.identity for f in files]
    pairs = links.undecided(links.assign(identities, destinations))
    scores = candidate_scores(files, pairs) if pairs else {}
    placements = {f.source.label: f.placement for f in files}
    return links.decide(identities, destinations, scores, placements)


def match_sides(files: list[FileResult], options: Options, topology: Topology | None = None) -> Matching:
    """Every link of the files (`link_topology` unless given) matched and attributed in batches."""
    hosts = {f.source.label: f.reduced.info.host or f.source.label for f in files}
    if topology is None:  # the alert logs' destinations decide where they name the standby
        topology = link_topology(files, alerts.transport_destinations(alerts.destinations(alerts.entries(files))))
    return match_links(files, topology, hosts, options.threshold_ms, options.window_s)


def finish(files: list[FileResult], skipped: list[Skipped], options: Options, matching: Matching) -> Analysis:
    """The analysis from the matched links: commit-path writes and ASYNC shipments apart, each in send
    order with its clock offsets and one-way delays; LGWR warnings tied to the writes; everything
    limited to --since/--until."""
    writes, clock = _timed(matching.commit, options)
    shipments, shipment_clock = _timed(matching.shipments, options)
    warnings = _in_window(tie_warnings(lgwr_lines(files), writes), options, "at")
    unmatched = pl.concat([matching.unpairable, matching.commit.unmatched]).sort("file", "line")
    unmatched, gaps = place_in_gaps(unmatched, find_gaps(files), clock)
    counts = (matching.commit.primary_exchanges, matching.commit.standby_exchanges)
    if options.since is not None or options.until is not None:  # writes seen on each side inside the window
        counts = (int(writes["primary_file"].is_not_null().sum()), int(writes["standby_file"].is_not_null().sum()))
    return Analysis(
        options,
        files,
        skipped,
        writes,
        _in_window(unmatched, options, "at"),
        warnings,
        clock,
        *counts,
        topology=matching.topology,
        shipments=shipments,
        shipment_clock=shipment_clock,
        link_counts=matching.counts,
        gaps=gaps,
        destinations=alerts.destinations(alerts.entries(files)),
    )


def _timed(batched: Batched, options: Options) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Writes in send order with one-way delays, inside --since/--until, and the clock offsets they gave."""
    writes = _sorted(_concat(batched.parts), ["sent_at", "thread"]) if batched.parts else narrowed(empty(LINKED))
    clock = estimate_offsets(writes, options.clock_offsets)
    return _in_window(one_way(writes, clock), options, "sent_at"), clock


def analyze_files(files: list[FileResult], skipped: list[Skipped], options: Options) -> Analysis:
    """Match and attribute the exchanges of already-read files (files without a zone first take the
    zone the others agree on)."""
    files = assume_common_zones(files)
    return finish(files, skipped, options, match_sides(files, options))


def companions(options: Options) -> tuple[tuple[BaselineRun, ...], tuple[AwrReport, ...]]:
    """The runs of every `--baseline` file and every `--awr` report, in the order given.

    Raises:
        UsageError: a file that cannot be read, or is not what its option asks for (the message names it).
    """
    runs = tuple(run for path in options.baselines for run in read_baseline(path))
    return runs, tuple(read_awr(path) for path in options.awr)


def analyze(paths: Sequence[str], options: Options | None = None, progress: ProgressHook | None = None) -> Analysis:
    """Run the whole pipeline over files, directories and globs; the companion files first (`companions`).

    Raises:
        UsageError: a path names nothing, or a `--baseline` / `--awr` file cannot be read.
        NoInputError: no trace file was found.
    """
    options = options or Options()
    baselines, reports = companions(options)  # before the traces: a wrong file name fails at once
    sources, skipped = discover(paths, limits=options.limits)
    if not sources:
        lost = [f"{s.label}: {s.reason}" for s in skipped if s.partial]
        why = f" ({len(lost)} input(s) could not be read; first: {lost[0]})" if lost else ""
        if skipped and not lost:
            why = f" ({len(skipped)} input(s) skipped; first: {skipped[0].label}: {skipped[0].reason})"
        raise NoInputError("no trace files found in " + ", ".join(paths) + why)
    # exchanges wait on disk between reading and matching: memory holds a batch, not the input
    with spill_directory() as spill:
        files = read_files(sources, options.zones, spill, progress)
        return replace(analyze_files(files, skipped, options), baselines=baselines, awr_reports=reports)


def _concat(parts: list[pl.DataFrame]) -> pl.DataFrame:
    """The parts as one frame (chunks kept as they are); the list lets go of them. A column narrow in
    some parts and wide in others (`schemas.narrowed`: values beyond Int32 in one batch) is wide."""
    frame = pl.concat(parts, rechunk=False, how="vertical_relaxed")
    parts.clear()
    return frame


def _sorted(frame: pl.DataFrame, by: list[str]) -> pl.DataFrame:
    """The frame sorted (stable), one column at a time: the peak is one column more than the frame."""
    order = frame.select(pl.arg_sort_by(by, maintain_order=True)).to_series()
    for name in frame.columns:
        frame = frame.with_columns(frame[name].gather(order))
    return frame


def _in_window(frame: pl.DataFrame, options: Options, column: str) -> pl.DataFrame:
    """The rows inside --since / --until (rows without a time are kept; the frame itself when neither is given)."""
    if options.since is None and options.until is None:
        return frame
    keep = pl.lit(True)
    if options.since is not None:
        keep = keep & (pl.col(column) >= options.since).fill_null(True)
    if options.until is not None:
        keep = keep & (pl.col(column) < options.until).fill_null(True)
    return frame.filter(keep)
