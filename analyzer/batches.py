"""Matching in batches of log sequences: memory holds one batch, not every write.

A write's messages share their (thread, seq), so batches of (thread, seq) keys match as the
whole would, provided every batch uses the same typical send->receive gap per host pair: with
several batches, a first pass over the narrow columns of every candidate collects the gaps.
Each batch is matched (`analyzer.match`) and attributed (`analyzer.attribute`) as it comes.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import polars as pl

from analyzer.attribute import attribute
from analyzer.match import gaps, match, typical_gaps
from analyzer.schemas import UNMATCHED, empty
from analyzer.segments import Side
from analyzer.spill import INDEX

#: exchanges (rows of one side) matched at once: a batch of (thread, seq) keys stops growing past this
BATCH_ROWS = 250_000


@dataclass(frozen=True)
class Batched:
    """The writes of every batch (parts, in batch order), what stayed unmatched, and the exchanges seen."""

    parts: list[pl.DataFrame]
    unmatched: pl.DataFrame
    primary_exchanges: int
    standby_exchanges: int


def key_batches(primary: pl.DataFrame, standby: pl.DataFrame) -> list[pl.DataFrame]:
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


def match_in_batches(
    primary: Side, standby: Side, hosts: dict[str, str], threshold_ms: float, window_s: float
) -> Batched:
    """Match and attribute the two sides batch by batch (see the module docstring)."""
    p_index, s_index = primary.index(), standby.index()
    batches = key_batches(p_index, s_index)

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
            matched = match(p_rows, s_rows, hosts, window_s, typical)
            del p_rows, s_rows
            counts = (counts[0] + matched.primary_exchanges, counts[1] + matched.standby_exchanges)
            unmatched.append(matched.unmatched)
            if matched.exchanges.height:
                parts.append(attribute(matched.exchanges, threshold_ms))
    return Batched(parts, pl.concat(unmatched) if unmatched else empty(UNMATCHED), *counts)
