"""Summary statistics: nearest-rank percentiles, V$EVENT_HISTOGRAM buckets, verdict totals, the slowest writes."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import polars as pl
from hypothesis import given
from hypothesis import strategies as st
from polars.testing import assert_frame_equal

from analyzer.base.schemas import WRITES
from analyzer.findings.summary import (
    REMEMBERED,
    SLOWEST_ORDER,
    component_stats,
    histogram,
    per_frame,
    slowest,
    time_shares,
    verdict_totals,
)

T0 = datetime(2024, 5, 1, tzinfo=UTC)


def writes(totals: list[float], verdicts: list[str | None] | None = None, threshold: float = 100.0) -> pl.DataFrame:
    verdicts = verdicts or ["network"] * len(totals)
    return pl.from_dicts(
        [
            {
                "thread": 1 + i % 2,
                "msgid": 1000 - i,
                "sent_at": T0 + timedelta(seconds=i // 2),
                "total_ms": t,
                "network_ms": t * 0.25,
                "rfs_io_ms": t * 0.75,
                "rfs_other_ms": 0.0,
                "rfs_ms": t * 0.75,
                "verdict": v,
                "slow": t >= threshold,
                "matched": v is not None,
            }
            for i, (t, v) in enumerate(zip(totals, verdicts, strict=True))
        ],
        schema=WRITES | {"rfs_ms": pl.Float64},
    )


def test_percentiles_are_observed_values_at_the_nearest_index() -> None:
    """The value at index round(q x (n - 1)) of the sorted values (never an interpolated value)."""
    stats = component_stats(writes([float(x) for x in range(1, 101)])).row(0, named=True)
    assert stats["component"] == "total"
    assert (stats["count"], stats["p50"], stats["p90"], stats["p99"], stats["max"]) == (100, 51.0, 90.0, 99.0, 100.0)
    assert component_stats(writes([1.0])).get_column("component").to_list() == [
        "total",
        "network",
        "rfs_io",
        "rfs_other",
        "rfs",
    ]


def test_histogram_buckets_are_those_of_v_event_histogram() -> None:
    h = histogram(writes([-0.2, 0.9, 1.0, 3.99, 4.0, 70000.0]))
    counts = dict(h.iter_rows())
    assert counts["<1"] == 2  # a negative value (timestamp resolution) counts in the first bucket
    assert (counts["<2"], counts["<4"], counts["<8"]) == (1, 1, 1)
    assert h["bucket"][-1] == ">=65536" and counts[">=65536"] == 1


def test_histogram_puts_a_value_just_below_a_power_of_two_under_it_and_counts_no_null() -> None:
    """log2(65536 - 2**-37) rounds to 16.0 in floating point: a bucket by logarithm would put it in `>=65536`."""
    values = pl.DataFrame({"total_ms": [4 - 2**-51, 65536 - 2**-37, 65536.0, None, 2.0]})
    counts = dict(histogram(values).iter_rows())
    assert (counts["<4"], counts["<65536"], counts[">=65536"]) == (2, 1, 1)
    assert sum(counts.values()) == 4


def test_verdict_totals_and_shares_look_at_slow_writes() -> None:
    w = writes([150.0, 50.0, 300.0], ["network", "network", "rfs_io"])
    totals = {r["verdict"]: r for r in verdict_totals(w).iter_rows(named=True)}
    assert (totals["network"]["writes"], totals["network"]["slow_writes"]) == (2, 1)
    assert totals["rfs_io"]["slow_total_ms"] == 300.0
    assert time_shares(w) == {"network": 0.25, "rfs_io": 0.75, "rfs_other": 0.0}


def test_slowest_breaks_ties_by_send_time_then_msgid() -> None:
    w = writes([5.0, 9.0, 9.0, 9.0, 1.0])  # rows 2 and 3 were sent in the same second, row 1 before
    top = slowest(w, 3)
    assert top["total_ms"].to_list() == [9.0, 9.0, 9.0]
    assert top["msgid"].to_list() == [999, 997, 998]  # earliest first; the same send time: lower msgid first
    assert slowest(w, 0).height == 0


@given(
    st.lists(st.one_of(st.none(), st.sampled_from([0.0, 1.0, 2.5, 9.0, 120.0])), max_size=40),
    st.integers(min_value=0, max_value=45),
)
def test_slowest_is_the_head_of_the_whole_table_sorted(totals: list[float | None], top: int) -> None:
    """Only rows reaching the top-th total are sorted: ties on it and null totals come out as a full sort gives them."""
    w = writes([0.0] * len(totals)).with_columns(total_ms=pl.Series(totals, dtype=pl.Float64))
    keys, descending = SLOWEST_ORDER
    expected = w.sort(keys, descending=descending, nulls_last=True, maintain_order=True).head(top)
    assert slowest(w, top).select(keys).rows() == expected.select(keys).rows()


def test_figures_of_one_frame_are_computed_once() -> None:
    """A report asks for the figures of the same writes several times: computed once per frame, anew for
    another frame (even an equal one), and each time for a query."""
    calls: list[int] = []

    @per_frame
    def height(frame: pl.DataFrame | pl.LazyFrame) -> int:
        calls.append(1)
        return frame.height if isinstance(frame, pl.DataFrame) else int(frame.select(pl.len()).collect().item())

    first, second = writes([1.0, 2.0]), writes([1.0, 2.0])
    assert [height(first), height(first), height(second), height(first)] == [2, 2, 2, 2]
    assert len(calls) == 2
    assert height(first.lazy()) == height(first.lazy()) == 2
    assert len(calls) == 4
    many = [writes([float(n)]) for n in range(REMEMBERED + 1)]
    for frame in many:
        height(frame)
    height(many[0])  # forgotten: only the last REMEMBERED frames are kept
    assert len(calls) == 4 + REMEMBERED + 2
    assert_frame_equal(component_stats(first), component_stats(second))
    assert component_stats(first) is component_stats(first)
