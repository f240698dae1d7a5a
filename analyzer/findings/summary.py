"""Summary statistics of the writes table: percentiles, Oracle-style histograms, verdict totals.

Pure functions from frames to frames/dicts; every renderer (terminal, JSON) uses these.
"""

from __future__ import annotations

import functools
import itertools
import weakref
from collections.abc import Callable
from typing import TypeVar

import polars as pl

from analyzer.base.schemas import HISTOGRAM, STATS, matched_only
from analyzer.base.vocab import COMPONENTS, MEASURES, ms_column

#: the writes-table columns the statistics describe, in report order
STAT_COLUMNS = tuple(ms_column(m) for m in MEASURES)
#: V$EVENT_HISTOGRAM buckets: a wait of x ms falls in the first "< 2^k ms" bucket above it
HISTOGRAM_LIMITS_MS = tuple(2**k for k in range(0, 17))  # < 1 ms ... < 65536 ms


T = TypeVar("T")
F = TypeVar("F", pl.DataFrame, pl.DataFrame | pl.LazyFrame)
#: figures remembered per function: a frame asked about again soon (few frames are alive at once)
REMEMBERED = 4


def per_frame(compute: Callable[[F], T]) -> Callable[[F], T]:
    """`compute` once per frame while the frame lives: a report asks for the same figures of the same
    writes more than once (the whole analysis, its one configuration, its one link), each time a pass
    over every write. Only the figures of the last few frames are kept."""
    kept: dict[int, tuple[weakref.ref[pl.DataFrame], T]] = {}

    @functools.wraps(compute)
    def remembered(frame: F) -> T:
        if not isinstance(frame, pl.DataFrame):  # a query, not figures of a frame: computed each time
            return compute(frame)
        hit = kept.get(id(frame))
        if hit is not None and hit[0]() is frame:
            return hit[1]
        value = compute(frame)
        if len(kept) >= REMEMBERED:
            kept.pop(next(iter(kept)))
        kept[id(frame)] = (weakref.ref(frame), value)
        return value

    return remembered


def stamp_resolution(writes: pl.DataFrame) -> float | None:
    """The coarsest stamp resolution of the writes (ms): how fine any figure drawn from their stamps (a total,
    its network part, a percentile or a sum of them) can be told; None without any write."""
    if "resolution_ms" not in writes.columns:
        return None
    found = writes["resolution_ms"].max()
    return float(found) if isinstance(found, int | float) else None


#: the measures that come from 10046 `ela` (microseconds), not from the transport stamps
ELA_MEASURES = ("rfs_io", "rfs_io_ms")


def resolution_of(measure: str, stamps_ms: float | None) -> float | None:
    """The resolution of a measure (`total`, `rfs_io_ms`, ...) of writes whose stamps have `stamps_ms`:
    RFS I/O time is summed from `ela` (microseconds); every other measure is a difference of stamps."""
    return None if measure in ELA_MEASURES else stamps_ms


@per_frame
def component_stats(writes: pl.DataFrame | pl.LazyFrame) -> pl.DataFrame:
    """count, mean, p50, p90, p99, max for each measure; a percentile is the observed value at index
    round(q x (n - 1)) of the sorted values (polars' "nearest"), never an interpolated one."""
    rows = []
    for name in STAT_COLUMNS:
        col = pl.col(name)
        row = writes.select(
            component=pl.lit(name.removesuffix("_ms")),
            count=col.count().cast(pl.Int64),
            mean=col.mean(),
            p50=col.quantile(0.5, "nearest"),
            p90=col.quantile(0.9, "nearest"),
            p99=col.quantile(0.99, "nearest"),
            max=col.max(),
        )
        # a LazyFrame reads one column at a time; a DataFrame is summed eagerly (the means' last digit
        # depends on the order of summation, and the report's means come from DataFrames)
        rows.append((row.collect() if isinstance(row, pl.LazyFrame) else row).cast(STATS))
    return pl.concat(rows)


def bucket_label(limit_ms: int | None) -> str:
    """`<1`, `<2`, ... and `>=65536` for the open last bucket."""
    return f">={HISTOGRAM_LIMITS_MS[-1]}" if limit_ms is None else f"<{limit_ms}"


def histogram(writes: pl.DataFrame, column: str = "total_ms") -> pl.DataFrame:
    """Counts per power-of-two millisecond bucket, in order; negative values count in `<1`, nulls in none.

    One pass of comparisons: how many values lie below each limit, and how many at or above the last;
    a bucket's count is the difference of two of them (no logarithm, whose rounding could put a value
    just below a power of two in the bucket above it, and no group-by)."""
    limits = list(HISTOGRAM_LIMITS_MS)
    col = pl.col(column)
    below = [(col < limit).sum().alias(f"<{limit}") for limit in limits]
    found = writes.select(*below, top=(col >= limits[-1]).sum()).row(0)
    cumulative = [int(n) for n in found[:-1]]
    counts = [cumulative[0], *(b - a for a, b in itertools.pairwise(cumulative)), int(found[-1])]
    labels = [bucket_label(limit) for limit in limits] + [bucket_label(None)]
    last = max((i for i, c in enumerate(counts) if c), default=-1)
    return pl.DataFrame({"bucket": labels[: last + 1], "count": counts[: last + 1]}, schema=HISTOGRAM)


@per_frame
def verdict_totals(writes: pl.DataFrame) -> pl.DataFrame:
    """Writes and summed total time per verdict, for all writes and for slow ones."""
    return (
        writes.select("verdict", "total_ms", "slow")
        .filter(pl.col("verdict").is_not_null())
        .group_by("verdict")
        .agg(
            writes=pl.len().cast(pl.Int64),
            total_ms=pl.col("total_ms").sum(),
            slow_writes=pl.col("slow").sum().cast(pl.Int64),
            slow_total_ms=pl.col("total_ms").filter(pl.col("slow")).sum(),
        )
        .sort("slow_total_ms", "total_ms", descending=True)
    )


def time_shares(writes: pl.DataFrame) -> dict[str, float]:
    """Share of summed slow-write time spent in each component (all writes if none is slow)."""
    both = matched_only(writes, "slow", "total_ms", *(c.column for c in COMPONENTS))
    chosen = both.filter(pl.col("slow")) if both["slow"].any() else both
    total = chosen["total_ms"].sum()
    if not chosen.height or not total:
        return {}
    return {str(c): float(chosen[c.column].sum()) / float(total) for c in COMPONENTS}


#: the order of "slowest": the largest total first; ties by send time, then msgid
SLOWEST_ORDER = (["total_ms", "sent_at", "msgid"], [True, False, False])


def slowest(writes: pl.DataFrame, top: int) -> pl.DataFrame:
    """The `top` writes with the largest total_ms (nulls last; SLOWEST_ORDER), sorting row numbers, not the table.

    Only the rows whose total reaches the `top`-th largest are sorted (a partial selection finds
    it): ties on it stay candidates, so the order is that of sorting every row.
    """
    keys, descending = SLOWEST_ORDER
    candidates = writes.select(*keys, _row=pl.int_range(pl.len(), dtype=pl.UInt32))
    total = writes["total_ms"]
    if 0 < top <= total.len() - total.null_count():
        candidates = candidates.filter(pl.col("total_ms") >= total.top_k(top).min())
    order = candidates.sort(keys, descending=descending, nulls_last=True).head(top)["_row"]
    return writes[order]
