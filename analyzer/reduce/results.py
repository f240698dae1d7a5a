"""What an analysis is given and what it gives: options, per-file results, the analysis.

Shared by the pipeline's later stages, the facade (`analyzer.api`), the findings and the
renderers: none of them needs the pipeline itself to know these types.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime

import polars as pl

from analyzer.base.schemas import UNPARSED, empty
from analyzer.base.zones import TimeZones, Zone
from analyzer.inputs.limits import Limits
from analyzer.inputs.sources import Source
from analyzer.parse.families import FAMILIES, Parsed
from analyzer.parse.identify import FileIdentity
from analyzer.parse.lines import ReadStats
from analyzer.reduce.placement import WaitPlacement
from analyzer.reduce.reduced import FileClock, ReducedFile

#: a write is slow when its total reaches this (ms)
DEFAULT_THRESHOLD_MS = 100.0
#: how far (s) a msgid match may stray from the host pair's typical send->receive gap
DEFAULT_WINDOW_S = 60.0


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
    #: `--baseline FILE`: oratcptest client outputs to set the writes beside
    baselines: tuple[str, ...] = ()
    #: `--awr FILE`: AWR (primary, standby) or Statspack reports of the same hours
    awr: tuple[str, ...] = ()
    #: `--distance-km`: fibre distance between the primary and the standby
    distance_km: float | None = None


@dataclass(frozen=True)
class FileResult:
    """One input file after reading, parsing and the reduce stage."""

    source: Source
    reduced: ReducedFile
    parsed: Parsed
    stats: ReadStats
    #: what its path, head and messages say it is (database, process, client; `analyzer.match.links`)
    identity: FileIdentity
    #: where its RFS I/O waits fall: before or after `Server finished` (tells Fast Sync)
    placement: WaitPlacement = field(default_factory=WaitPlacement)


#: called as (label of the file being read, files done, files in all)
ProgressHook = Callable[[str, int, int], None]


#: the keys of `parsed_by_family` and `ignored_by_category` in the coverage rows (every one, 0 when none)
PARSED_FAMILIES = tuple(sorted(name for name in FAMILIES if not name.startswith("ignored:")))
IGNORED_CATEGORIES = tuple(sorted(name.removeprefix("ignored:") for name in FAMILIES if name.startswith("ignored:")))


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
                "parsed_by_family": {name: p.parsed[name] for name in PARSED_FAMILIES},
                "ignored_by_category": {name: p.ignored[name] for name in IGNORED_CATEGORIES},
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


def known_zones(f: FileResult) -> frozenset[Zone] | None:
    """The zones a file's stamps were read in: its ISO lines' offsets, else its zone from --tz, from
    epoch tim or the one the other files agree on; None when UTC was only assumed (`FileClock.known`)."""
    r = f.reduced
    return FileClock(r.exchanges.zones, r.exchanges.fallback_min, r.zone, r.tim).known
