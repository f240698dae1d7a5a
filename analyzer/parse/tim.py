"""10046 `tim` of a trace file: epoch or counter, anchored to the ADR wall-clock lines.

`tim` is Unix-epoch microseconds on Linux up to 12.1 and a non-epoch counter from 12.2 on
(docs/formats.md, "tim"). Each ADR `***` line is paired with the first
WAIT line after it (both are written at about the same moment); from those anchors we tell the
kind, the offset to UTC, and whether `tim` runs 1000/1024 slow against the wall clock (the known
`ns >> 10` unit bug), in which case `tim` deltas and `ela` are scaled back. With epoch `tim` and no
zone in the file, the anchors also give the file's UTC offset (to the quarter hour).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import polars as pl

from analyzer.base.schemas import ANCHORS, LAZY_ENGINE
from analyzer.base.zones import Zone, local_to_utc

#: a tim within this much of the ADR wall clock (any zone) is Unix-epoch microseconds
EPOCH_WINDOW_US = 26 * 3600 * 1_000_000
#: the unit bug: tim and ela count units of 1024 ns
BUG_FACTOR = 1.024
#: slope tolerance when telling 1.0 from 1.024 (needs anchors spread over `MIN_SPAN_US`)
SLOPE_TOLERANCE = 0.004
MIN_SPAN_US = 2 * 1_000_000


@dataclass(frozen=True)
class TimClock:
    """How to turn a file's `tim` into UTC: utc_us = tim * factor + offset_us."""

    kind: str
    offset_us: float | None = None
    factor: float = 1.0
    anchors: int = 0
    #: the file's UTC offset found from epoch tim (minutes), when its lines carry no zone
    inferred_zone_min: int | None = None
    warning: str | None = None


def anchor_rows(waits: pl.DataFrame, adr: pl.DataFrame) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Each ADR line with the first WAIT line after it and before the next ADR line (schema ANCHORS).

    For reading a file in chunks, also returns the last ADR line when no WAIT follows it in
    this chunk (the next chunk's first WAIT may still be its anchor: pass it back in `adr`).
    """
    # one lazy query for the pairs (a chunk's worth of eager steps would each cost a query)
    clock = adr.lazy().sort("line").select("line", "local", "utc_offset_min", next_adr=pl.col("line").shift(-1))
    first = waits.lazy().sort("line").select(wait_line="line", tim="tim")
    found = pl.col("wait_line").is_not_null() & (
        pl.col("next_adr").is_null() | (pl.col("wait_line") < pl.col("next_adr"))
    )
    paired = (
        clock.join_asof(first, left_on="line", right_on="wait_line", strategy="forward", check_sortedness=False)
        .with_columns(_found=found)
        .collect(engine=LAZY_ENGINE)
    )
    pending = paired.filter(~pl.col("_found") & pl.col("next_adr").is_null()).select("line", "local", "utc_offset_min")
    return paired.filter("_found").select(ANCHORS.names()).cast(ANCHORS), pending


def read_tim(anchors: pl.DataFrame, has_waits: bool, zone: Zone, zone_known: bool) -> TimClock:
    """Tell epoch from counter tim, fit the unit, and anchor it to UTC (`anchors`: see `anchor_rows`;
    `zone`: that of ADR lines without an offset)."""
    iso = pl.col("local").dt.epoch("us") - pl.col("utc_offset_min").cast(pl.Int64) * 60_000_000
    pairs = anchors.select(
        adr_utc_us=pl.when(pl.col("utc_offset_min").is_not_null())
        .then(iso)
        .otherwise(local_to_utc(pl.col("local"), zone).dt.epoch("us")),
        tim=pl.col("tim"),
        tight=pl.col("wait_line") == pl.col("line") + 1,
    )
    if not pairs.height:
        return TimClock("unanchored" if has_waits else "none")
    tight = pl.col("tim").filter("tight")
    stats = pairs.select(  # one query for what each step below needs (a file pays a query's fixed cost)
        gap=(pl.col("adr_utc_us") - pl.col("tim")).abs().median(),
        tight=pl.col("tight").sum(),
        tight_span=tight.max() - tight.min(),
        span=pl.col("tim").max() - pl.col("tim").min(),
    ).row(0, named=True)
    gap = stats["gap"]
    factor, warning = _unit(pairs, stats)
    if gap is not None and gap < EPOCH_WINDOW_US and factor == 1.0:
        inferred = None if zone_known else _zone(pairs)
        return TimClock("epoch", 0.0, 1.0, pairs.height, inferred, warning)
    offset = pairs.select((pl.col("adr_utc_us") - pl.col("tim") * factor).median()).item()
    return TimClock("counter", float(offset), factor, pairs.height, None, warning)


def _unit(pairs: pl.DataFrame, stats: dict[str, Any]) -> tuple[float, str | None]:
    """1.024 when tim runs 1000/1024 slow against the ADR lines, with a warning; else 1.0.

    The slope comes from the tight anchors (the WAIT line right after its ADR line, so both were
    written at the same moment) when there are enough of them, else from all anchors. `stats`:
    the count of tight anchors (`tight`), the tim span of those (`tight_span`) and of all (`span`).
    """
    count, span = pairs.height, stats["span"]
    if stats["tight"] >= 3 and stats["tight_span"] >= MIN_SPAN_US:
        pairs, count, span = pairs.filter("tight"), stats["tight"], stats["tight_span"]
    if count < 3 or span < MIN_SPAN_US:
        return 1.0, None
    slope = _robust_slope(pairs)
    if abs(slope - BUG_FACTOR) < SLOPE_TOLERANCE:
        return (
            BUG_FACTOR,
            "tim runs 1000/1024 slow against the wall clock (ns >> 10 unit bug): tim and ela scaled by 1.024",
        )
    if abs(slope - 1.0) > SLOPE_TOLERANCE:
        return 1.0, f"tim and the wall clock disagree: {slope:.4f} wall seconds per tim second"
    return 1.0, None


def _robust_slope(pairs: pl.DataFrame) -> float:
    """Wall seconds per tim second: the median slope between each anchor and the anchor half the
    anchors later (in tim order). A few biased anchors move only their own pairs: the session-start
    ADR line, written before the idle wait whose end is its anchor, is off by that whole wait."""
    ordered = pairs.sort("tim")
    half = ordered.height // 2
    early, late = ordered.head(ordered.height - half), ordered.tail(half)
    slopes = pl.DataFrame(
        {
            "d_adr": late["adr_utc_us"] - early["adr_utc_us"].head(half),
            "d_tim": late["tim"] - early["tim"].head(half),
        }
    ).filter(pl.col("d_tim") > 0)
    return float(slopes.select((pl.col("d_adr") / pl.col("d_tim")).median()).item())


def _zone(pairs: pl.DataFrame) -> int:
    """The UTC offset of ADR lines written without a zone, from epoch tim (to the quarter hour)."""
    local_minus_utc = pairs.select((pl.col("adr_utc_us") - pl.col("tim")).median()).item()
    return round(float(local_minus_utc) / 60_000_000 / 15) * 15


def wait_times(waits: pl.DataFrame, clock: TimClock) -> pl.DataFrame:
    """Add `end_at` (UTC) and scale `ela_us` by the clock's factor."""
    if clock.offset_us is None:
        return waits.with_columns(end_at=pl.lit(None, pl.Datetime("us", "UTC")))
    end_us = (pl.col("tim") * clock.factor + clock.offset_us).round().cast(pl.Int64)
    return waits.with_columns(
        end_at=pl.from_epoch(end_us, time_unit="us").dt.replace_time_zone("UTC"),
        ela_us=(pl.col("ela_us") * clock.factor).round().cast(pl.Int64),
    )
