"""Finish stage: the analysis from the matched links.

Commit-path writes and ASYNC shipments apart, each in send order with its clock offsets and one-way
delays (`analyzer.match.clock`); LGWR warnings tied to the writes (`analyzer.match.attribute`);
messages that fall in a missing segment told apart (`analyzer.match.gaps`); everything limited to
--since/--until.
"""

from __future__ import annotations

import polars as pl

from analyzer.base.schemas import LINKED, empty, narrowed
from analyzer.inputs.sources import Skipped
from analyzer.match.analysis import Analysis
from analyzer.match.attribute import tie_warnings
from analyzer.match.by_link import Batched, Matching
from analyzer.match.clock import estimate_offsets, one_way
from analyzer.match.gaps import find as find_gaps
from analyzer.match.gaps import place as place_in_gaps
from analyzer.match.segments import lgwr_lines
from analyzer.reduce.results import FileResult, Options


def finish(files: list[FileResult], skipped: list[Skipped], options: Options, matching: Matching) -> Analysis:
    """The analysis from the matched links: commit-path writes and ASYNC shipments apart, each in send
    order with its clock offsets and one-way delays; LGWR warnings tied to the writes; everything
    limited to --since/--until."""
    writes, clock = _timed(matching.commit, options)
    shipments, shipment_clock = _timed(matching.shipments, options)
    warnings = in_window(tie_warnings(lgwr_lines(files), writes), options, "at")
    unmatched = pl.concat([matching.unpairable, matching.commit.unmatched]).sort("file", "line")
    unmatched, gaps = place_in_gaps(unmatched, find_gaps(files), clock)
    counts = (matching.commit.primary_exchanges, matching.commit.standby_exchanges)
    if options.since is not None or options.until is not None:  # writes seen on each side inside the window
        counts = (int(writes["primary_file"].is_not_null().sum()), int(writes["standby_file"].is_not_null().sum()))
    return Analysis(
        options=options,
        files=files,
        skipped=skipped,
        writes=writes,
        unmatched=in_window(unmatched, options, "at"),
        warnings=warnings,
        clock=clock,
        primary_exchanges=counts[0],
        standby_exchanges=counts[1],
        topology=matching.topology,
        shipments=shipments,
        shipment_clock=shipment_clock,
        link_counts=matching.counts,
        gaps=gaps,
        destinations=matching.destinations,
    )


def _timed(batched: Batched, options: Options) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Writes in send order with one-way delays, inside --since/--until, and the clock offsets they gave."""
    writes = _sorted(_concat(batched.parts), ["sent_at", "thread"]) if batched.parts else narrowed(empty(LINKED))
    clock = estimate_offsets(writes, options.clock_offsets)
    return in_window(one_way(writes, clock), options, "sent_at"), clock


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


def in_window(frame: pl.DataFrame, options: Options, column: str) -> pl.DataFrame:
    """The rows inside --since / --until (rows without a time are kept; the frame itself when neither is given)."""
    if options.since is None and options.until is None:
        return frame
    keep = pl.lit(True)
    if options.since is not None:
        keep = keep & (pl.col(column) >= options.since).fill_null(True)
    if options.until is not None:
        keep = keep & (pl.col(column) < options.until).fill_null(True)
    return frame.filter(keep)
