"""The pipeline as one call, and its stages as public functions to call one by one.

    discover -> read_files (read, parse, reduce: `analyzer.reduce.ingest`) -> link_topology (configurations and
    who sends to whom) -> match_sides (match and attribute link by link, in batches: `analyzer.match.by_link`)
    -> finish (clock, one-way delays, LGWR warnings, --since/--until: `analyzer.match.finish`)

`analyze(paths, options)` runs them all and returns the `Analysis` every renderer takes; a
script or the batch engine can stop after any stage. Nothing here prints.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from analyzer.base.errors import NoInputError
from analyzer.base.spill import spill_directory
from analyzer.companions.awr import AwrReport, read_awr
from analyzer.companions.oratcptest import BaselineRun, read_baseline
from analyzer.findings.summary import component_stats
from analyzer.inputs.limits import Limits
from analyzer.inputs.sources import Skipped, Source, discover
from analyzer.match.analysis import Analysis
from analyzer.match.attribute import fast_sync_ms
from analyzer.match.by_link import link_topology, match_sides
from analyzer.match.finish import finish
from analyzer.match.links import Assignment, Configuration, with_databases
from analyzer.match.links import assign as assign_senders
from analyzer.match.links import configurations as configurations_of
from analyzer.match.segments import sides
from analyzer.match.transport import Destination
from analyzer.parse.identify import EndsIdentity, FileIdentity, adr_location, identify_ends, read_identity
from analyzer.reduce.ingest import read_file, read_files
from analyzer.reduce.results import (
    DEFAULT_THRESHOLD_MS,
    DEFAULT_WINDOW_S,
    FileResult,
    Options,
    ProgressHook,
)

# the stage functions and types a script or the batch engine uses, whatever stage package holds them
__all__ = [
    "DEFAULT_THRESHOLD_MS",
    "DEFAULT_WINDOW_S",
    "Analysis",
    "Assignment",
    "Configuration",
    "EndsIdentity",
    "FileIdentity",
    "FileResult",
    "Limits",
    "Options",
    "ProgressHook",
    "Skipped",
    "Source",
    "adr_location",
    "analyze",
    "analyze_files",
    "assign_senders",
    "companions",
    "component_stats",
    "configurations",
    "configurations_of",
    "discover",
    "fast_sync_ms",
    "finish",
    "identify_ends",
    "link_topology",
    "match_sides",
    "read_file",
    "read_files",
    "read_identity",
    "sides",
    "with_databases",
]


def configurations(sources: Sequence[Source], destinations: Sequence[Destination] = ()) -> list[Configuration]:
    """The Data Guard configurations of the sources from each one's path and head only (`read_identity`):
    what to read together, decided before any file is read whole (`configurations_of` their identities)."""
    return configurations_of([read_identity(source) for source in sources], destinations)


def analyze_files(files: list[FileResult], skipped: list[Skipped], options: Options) -> Analysis:
    """Match and attribute the exchanges of already-read files (`read_files`: in UTC, files without a
    zone in the one the others agree on)."""
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
