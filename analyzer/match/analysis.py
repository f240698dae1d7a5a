"""What an analysis gives: the matched writes and everything the findings and the renderers need."""

from __future__ import annotations

from dataclasses import dataclass, field

import polars as pl

from analyzer.base.errors import ExitCode
from analyzer.base.schemas import CLOCK, DESTINATIONS, GAPS, WRITES, empty
from analyzer.companions.awr import AwrReport
from analyzer.companions.oratcptest import BaselineRun
from analyzer.inputs.sources import Skipped
from analyzer.match.links import Topology
from analyzer.reduce.results import FileResult, Options


@dataclass(frozen=True, kw_only=True)
class Analysis:
    """Everything the renderers need (built with keywords only: thirteen of its fields are frames or counts)."""

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
    #: the configurations and links the writes were matched within (`analyzer.match.links`)
    topology: Topology = field(default_factory=lambda: Topology((), ()))
    #: the remote writes of ASYNC links (schema WRITES): never in `writes`, nor in its figures
    shipments: pl.DataFrame = field(default_factory=lambda: empty(WRITES))
    #: clock offsets of the ASYNC links' host pairs (schema CLOCK)
    shipment_clock: pl.DataFrame = field(default_factory=lambda: empty(CLOCK))
    #: per link (`Link.name`): the sender's and the receiver's exchanges
    link_counts: dict[str, tuple[int, int]] = field(default_factory=dict)
    #: the runs of every `--baseline` file, in the order given (`analyzer.companions.oratcptest`)
    baselines: tuple[BaselineRun, ...] = ()
    #: every `--awr` report, in the order given (`analyzer.companions.awr`)
    awr_reports: tuple[AwrReport, ...] = ()
    #: segments named by a marker and missing from the upload, with the messages that fall in them
    #: (schema GAPS; those messages are not in `unmatched`)
    gaps: pl.DataFrame = field(default_factory=lambda: empty(GAPS))
    #: the redo transport destinations the alert logs set, per database and instance (schema DESTINATIONS)
    destinations: pl.DataFrame = field(default_factory=lambda: empty(DESTINATIONS))

    @property
    def exit_code(self) -> ExitCode:
        """PARTIAL when some input could not be read to its end, or was lost to a limit."""
        lost = any(f.stats.error for f in self.files) or any(s.partial for s in self.skipped)
        return ExitCode.PARTIAL if lost else ExitCode.OK
