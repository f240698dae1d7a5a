"""The plotly figures of the HTML report: the timeline (every write, or per time bucket at scale), the histogram,
the slowest writes."""

from __future__ import annotations

import dataclasses

import pytest

from analyzer.api import Analysis
from analyzer.base.vocab import COMPONENTS
from analyzer.report.context import Context
from analyzer.report.plots import BUCKETS, bucket_stats, bucket_width, histogram_figure, timeline_figure, top_figure
from tests.write_rows import many


def test_large_timelines_are_drawn_per_time_bucket() -> None:
    writes = many(20_000, 3_600.0)
    every = bucket_width(writes)
    stats = bucket_stats(writes, every)
    assert every == "10s" and stats.height <= BUCKETS
    assert stats["writes"].sum() == 20_000 and stats["slow"].sum() == 1
    assert stats["total_max"].max() == 500.0 and stats["total_p50"].max() == 2.0


def test_small_timelines_show_every_write(paper: Analysis) -> None:
    small = dataclasses.replace(paper, writes=many(100, 60.0))
    figure, caption = timeline_figure(Context.of(small))
    assert caption.startswith("every matched write (100)")
    assert [len(bar.x) for bar in figure.data[:3]] == [100, 100, 100]


@pytest.mark.parametrize(("seconds", "width"), [(60.0, "200ms"), (3_600.0, "10s"), (7_200.0, "30s"), (86_400.0, "5m")])
def test_the_bucket_is_the_narrowest_that_keeps_the_timeline_within_its_buckets(seconds: float, width: str) -> None:
    writes = many(1_000, seconds)
    assert bucket_width(writes) == width
    assert bucket_stats(writes, width).height <= BUCKETS


def test_the_histogram_has_a_bar_series_for_the_total_and_each_component(paper: Analysis) -> None:
    figure = histogram_figure(paper.writes)
    assert [bar.name for bar in figure.data] == ["total", *(c.label for c in COMPONENTS)]
    assert sum(figure.data[0].y) == paper.writes.height  # every write in one bucket of the total
    assert figure.layout.yaxis.type == "log"


def test_the_slowest_writes_are_stacked_by_component_slowest_first(paper: Analysis) -> None:
    figure = top_figure(Context.of(paper), 3)
    assert [bar.name for bar in figure.data] == [c.label for c in COMPONENTS]
    labels = list(figure.data[0].y)
    assert len(labels) == 3 and labels[0].startswith("1. msgid 117468 ")  # the paper's 163 ms write
    assert figure.layout.title.text == "Top 3 slowest writes: breakdown"
