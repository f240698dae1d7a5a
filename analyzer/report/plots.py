"""The plots of the HTML report (plotly figures), drawn so that they stay readable and light at any size.

Up to PER_WRITE writes the timeline shows every write, its components stacked. Above that it shows
the writes per time bucket: p50, p99 and max of the total (and, in the legend, of each component),
each slow write as a point (the slowest SLOW_POINTS of them), and under it the count of slow
writes, LGWR warnings and log switches per bucket. So the page holds a few thousand points, not
one per write, whatever the input.
"""

from __future__ import annotations

from html import escape
from typing import Any

import polars as pl

from analyzer.base.oracodes import ERROR_EVENTS
from analyzer.base.schemas import matched_only
from analyzer.base.vocab import COMPONENTS, TOTAL_AND_COMPONENTS, Component, ms_column
from analyzer.findings import events, switching
from analyzer.findings.summary import histogram
from analyzer.report.context import Context

#: up to this many matched writes the timeline shows each one
PER_WRITE = 3000
#: about this many time buckets above PER_WRITE
BUCKETS = 400
#: at most this many slow writes are drawn as points (the slowest)
SLOW_POINTS = 2000
#: at most this many log switches are drawn as lines on the per-write timeline (else as counts)
SWITCH_LINES = 150
#: bucket widths (polars durations, seconds) tried in order
BINS: tuple[tuple[str, float], ...] = (
    ("10ms", 0.01),
    ("20ms", 0.02),
    ("50ms", 0.05),
    ("100ms", 0.1),
    ("200ms", 0.2),
    ("500ms", 0.5),
    ("1s", 1),
    ("2s", 2),
    ("5s", 5),
    ("10s", 10),
    ("30s", 30),
    ("1m", 60),
    ("2m", 120),
    ("5m", 300),
    ("10m", 600),
    ("30m", 1800),
    ("1h", 3600),
    ("6h", 21600),
    ("1d", 86400),
)
COLORS = {
    "total": "#4c72b0",
    Component.NETWORK: "#e69f00",
    Component.RFS_IO: "#d62728",
    Component.RFS_OTHER: "#9467bd",
}
HOVER = (
    "thread %{customdata[0]}, seq %{customdata[1]}, msgid %{customdata[2]}<br>%{customdata[4]} UTC<br>"
    "total %{customdata[3]:.3f} ms<br>"
)


def _x(column: str) -> pl.Expr:
    """A UTC datetime as plotly's naive date string (plotly.js ignores zones)."""
    return pl.col(column).dt.strftime("%Y-%m-%d %H:%M:%S%.6f")


def styled(fig: Any, title: str, height: int, **layout: Any) -> Any:
    """The common look: white template, legend in a row above the plot."""
    fig.update_layout(
        title=title,
        height=height,
        template="plotly_white",
        hovermode="closest",
        legend={"orientation": "h", "x": 0, "y": 1.0, "yanchor": "bottom"},
        margin={"t": 100},
        **layout,
    )
    return fig


def bucket_width(writes: pl.DataFrame) -> str:
    """The narrowest bucket (of BINS) that cuts the writes' time span into at most BUCKETS."""
    span = float(writes.select((pl.col("sent_at").max() - pl.col("sent_at").min()).dt.total_seconds()).item() or 0)
    return next((name for name, seconds in BINS if span / seconds <= BUCKETS), BINS[-1][0])


def bucket_stats(writes: pl.DataFrame, every: str) -> pl.DataFrame:
    """Per time bucket: writes, slow writes, and p50 / p99 / max of the total and of each component."""
    stats = [
        pl.col(ms_column(m)).quantile(q, "nearest").alias(f"{m}_{name}")
        for m in TOTAL_AND_COMPONENTS
        for name, q in (("p50", 0.5), ("p99", 0.99))
    ] + [pl.col(ms_column(m)).max().alias(f"{m}_max") for m in TOTAL_AND_COMPONENTS]
    return (
        writes.group_by(pl.col("sent_at").dt.truncate(every).alias("bucket"))
        .agg(*stats, writes=pl.len(), slow=pl.col("slow").sum())
        .sort("bucket")
    )


def _counts(frame: pl.DataFrame, column: str, every: str) -> dict[str, int]:
    """How many rows fall in each bucket, by the bucket's plotly date string."""
    if not frame.height:
        return {}
    counted = (
        frame.filter(pl.col(column).is_not_null())
        .group_by(pl.col(column).dt.truncate(every).alias("bucket"))
        .len()
        .select(_x("bucket"), "len")
    )
    return dict(counted.iter_rows())


def timeline_figure(c: Context) -> tuple[Any, str]:
    """The timeline of the remote writes (every write, or per time bucket above PER_WRITE) and its caption."""
    writes = matched_only(c.analysis.writes)
    if writes.height <= PER_WRITE:
        return _per_write(c, writes)
    return _per_bucket(c, writes)


def _per_write(c: Context, writes: pl.DataFrame) -> tuple[Any, str]:
    import plotly.graph_objects as go

    custom = writes.select("thread", "seq", "msgid", "total_ms", _x("sent_at")).rows()
    x = writes.select(_x("sent_at")).to_series().to_list()
    fig = go.Figure()
    for comp in COMPONENTS:
        fig.add_bar(
            x=x,
            y=writes[comp.column].to_list(),
            name=comp.label,
            marker={"color": COLORS[comp], "line": {"width": 0}},
            customdata=custom,
            hovertemplate=HOVER + comp.label + ": %{y:.3f} ms<extra></extra>",
        )
    ceiling = float(writes.select(pl.col("total_ms").max()).item() or 1.0)
    switches = c.switches.switches
    if 0 < switches.height <= SWITCH_LINES:
        _switch_lines(fig, switches, ceiling)
    _warning_marks(fig, c)
    caption = f"every matched write ({writes.height:,}), components stacked; drag to zoom, double-click to reset"
    fig = styled(fig, f"Remote writes: {caption}", 540, barmode="relative", bargap=0.0)
    fig.update_layout(xaxis_title="sent (UTC)", yaxis_title="ms")
    return fig, caption


def _per_bucket(c: Context, writes: pl.DataFrame) -> tuple[Any, str]:
    from plotly.subplots import make_subplots

    every = bucket_width(writes)
    stats = bucket_stats(writes, every)
    x = stats.select(_x("bucket")).to_series().to_list()
    fig = make_subplots(rows=2, cols=1, shared_xaxes=True, row_heights=[0.74, 0.26], vertical_spacing=0.05)
    slow = writes.filter(pl.col("slow")).sort("total_ms", descending=True).head(SLOW_POINTS)
    for comp in COMPONENTS:  # first, so that the lines are drawn over them
        mine = slow.filter(pl.col("verdict") == comp.value)
        if not mine.height:
            continue
        fig.add_scatter(
            x=mine.select(_x("sent_at")).to_series().to_list(),
            y=mine["total_ms"].to_list(),
            mode="markers",
            marker={"color": COLORS[comp], "size": 4, "opacity": 0.55},
            name=f"slow write: {comp.label}",
            customdata=mine.select("thread", "seq", "msgid", "total_ms", _x("sent_at")).rows(),
            hovertemplate=HOVER + f"largest part: {comp.label}<extra></extra>",
            row=1,
            col=1,
        )
    shown = {"total_p99", "total_p50", "total_max"}
    for m in TOTAL_AND_COMPONENTS:
        label = "total" if m == "total" else Component(m).label
        for stat, dash, width in (("p50", "dot", 1.5), ("p99", "solid", 2.0), ("max", "dash", 1.0)):
            name = f"{m}_{stat}"
            fig.add_scatter(
                x=x,
                y=stats[name].to_list(),
                mode="lines",
                line={"color": COLORS[m], "dash": dash, "width": width, "shape": "hv"},
                name=f"{label} {stat}",
                visible=True if name in shown else "legendonly",
                hovertemplate=f"{label} {stat} %{{y:.3f}} ms<br>%{{x}} UTC<extra></extra>",
                row=1,
                col=1,
            )
    counts = {
        "slow writes": (dict(zip(x, stats["slow"].to_list(), strict=True)), "#d62728", "solid"),
        "LGWR warnings": (_counts(c.analysis.warnings, "at", every), "#111111", "dot"),
        "log switches": (_counts(c.switches.switches, "at", every), "#888888", "solid"),
    }
    for name, (per_bucket, color, dash) in counts.items():
        if per_bucket:
            fig.add_scatter(
                x=list(per_bucket),
                y=list(per_bucket.values()),
                mode="lines",
                line={"color": color, "dash": dash, "width": 1.2, "shape": "hv"},
                name=f"{name} per {every}",
                row=2,
                col=1,
            )
    points = f"the slowest {SLOW_POINTS:,}" if slow.height == SLOW_POINTS else "every one"
    caption = (
        f"{writes.height:,} matched writes per {every}: p50, p99 and max of the total (the components' in the"
        f" legend), slow writes as points ({points}); below, counts per {every}"
    )
    fig = styled(fig, "", 660)
    fig.update_layout(margin={"t": 110})
    fig.update_yaxes(type="log", title_text="ms (log scale)", row=1, col=1)
    fig.update_yaxes(title_text="count", row=2, col=1)
    fig.update_xaxes(title_text="sent (UTC)", row=2, col=1)
    return fig, caption


def _switch_lines(fig: Any, switches: pl.DataFrame, ceiling: float) -> None:
    """Log switches as dotted vertical lines (one trace)."""
    xs: list[str | None] = []
    texts: list[str | None] = []
    for at, thread, old, new in switches.select(_x("at"), "thread", "from_seq", "to_seq").iter_rows():
        label = f"log switch, thread {thread}: seq {old} -> {new}<br>{at} UTC"
        xs += [at, at, None]
        texts += [label, label, None]
    fig.add_scatter(
        x=xs,
        y=[0.0, ceiling, None] * switches.height,
        mode="lines",
        name="log switch",
        line={"color": "#555", "dash": "dot", "width": 1},
        hovertext=texts,
        hoverinfo="text",
    )


#: the log writer and alert-log events marked on the axis of the per-write timeline (at most EVENT_MARKS)
MARKED_EVENTS = ("sync_switch", *ERROR_EVENTS, "parameter_change", "startup", "protection")
EVENT_MARKS = 2000


def _warning_marks(fig: Any, c: Context) -> None:
    """LGWR warnings (long writes, broadcast waits) as markers at their elapsed time; log file sync mode
    switches, transport errors, parameter changes and startups as markers on the axis."""
    warnings = c.analysis.warnings.filter(pl.col("at").is_not_null())
    if warnings.height:
        rows = warnings.select(_x("at"), "elapsed_ms", "file", "line", "kind").rows()
        named = {"log_write": "log write elapsed", "broadcast_wait": "broadcast wait"}
        fig.add_scatter(
            x=[r[0] for r in rows],
            y=[r[1] for r in rows],
            mode="markers",
            name="LGWR warning",
            marker={"symbol": "x", "size": 8, "color": "#111", "opacity": 0.8},
            hovertext=[f"LGWR {named.get(r[4], r[4])} {r[1]} ms<br>{escape(c.where(r[2], r[3]))}" for r in rows],
            hoverinfo="text",
        )
    marked = events.around_writes(c.analysis).filter(pl.col("event").is_in(MARKED_EVENTS) & pl.col("at").is_not_null())
    if marked.height:
        rows = marked.head(EVENT_MARKS).select(_x("at"), "event", "detail", "file", "line").rows()
        fig.add_scatter(
            x=[r[0] for r in rows],
            y=[0.0] * len(rows),
            mode="markers",
            name="log writer / alert-log event",
            marker={"symbol": "triangle-up", "size": 9, "color": "#b00", "opacity": 0.8},
            hovertext=[f"{r[1]}: {escape(r[2] or '')}<br>{escape(c.where(r[3], r[4]))}" for r in rows],
            hoverinfo="text",
        )


def histogram_figure(writes: pl.DataFrame) -> Any:
    """Writes per V$EVENT_HISTOGRAM bucket for the total and each component."""
    import plotly.graph_objects as go

    fig = go.Figure()
    buckets: list[str] = []
    for name in TOTAL_AND_COMPONENTS:
        counts = histogram(writes, ms_column(name))
        buckets = max(buckets, counts["bucket"].to_list(), key=len)
        label = name.label if isinstance(name, Component) else name
        fig.add_bar(x=counts["bucket"].to_list(), y=counts["count"].to_list(), name=label, marker_color=COLORS[name])
    return styled(
        fig,
        "Histogram (writes per bucket, as V$EVENT_HISTOGRAM)",
        440,
        barmode="group",
        xaxis={"type": "category", "categoryorder": "array", "categoryarray": buckets, "title": "ms"},
        yaxis={"type": "log", "title": "writes (log scale)"},
    )


def top_figure(c: Context, top: int) -> Any:
    """The slowest writes as horizontal bars, components stacked."""
    import plotly.graph_objects as go

    rows = switching.top_writes(c.analysis.writes, top, c.switches)
    labels = [f"{i}. msgid {m} (thread {t})" for i, (m, t) in enumerate(rows.select("msgid", "thread").iter_rows(), 1)]
    fig = go.Figure()
    for comp in COMPONENTS:
        fig.add_bar(
            y=labels, x=rows[comp.column].to_list(), orientation="h", name=comp.label, marker_color=COLORS[comp]
        )
    return styled(
        fig,
        f"Top {top} slowest writes: breakdown",
        180 + 26 * rows.height,
        barmode="relative",
        yaxis={"autorange": "reversed", "type": "category"},
        xaxis_title="ms",
    )
