"""HTML report: one self-contained page (plotly.js inlined, no request to any host) with the plots and tables."""

from __future__ import annotations

from html import escape
from typing import Any, TextIO

import polars as pl

from analyzer import events, insights
from analyzer.errors import UsageError
from analyzer.report import model as doc
from analyzer.report.context import Context, Table
from analyzer.report.fmt import fmt_ms, short_label
from analyzer.report.sections import (
    destinations_table,
    events_table,
    facts_table,
    gaps_table,
    no_recommendation,
    switch_table,
    top_table,
    unmatched_table,
    unparsed_table,
    warnings_table,
)
from analyzer.results import Analysis
from analyzer.summary import histogram, matched_only
from analyzer.vocab import COMPONENTS, TOTAL_AND_COMPONENTS, Component, ms_column

MISSING_PLOTLY = "--format html needs plotly: pip install 'dgtrace[html]'"
#: above this many writes the timeline shows the slowest write of each time bin, not every write
MAX_BARS = 2500
#: bin widths (polars durations, seconds) tried in order for large inputs
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
#: no plotly logo link and no "Share chart" button (it would upload the data to Plotly Cloud)
CONFIG = {"displaylogo": False, "showSendToCloud": False, "responsive": True}
#: the page may run its own inline script and nothing else: no request leaves the file
CSP = (
    "default-src 'none'; script-src 'unsafe-inline' 'unsafe-eval'; style-src 'unsafe-inline';"
    " img-src data: blob:; font-src data:"
)
STYLE = """
body { font: 14px/1.45 system-ui, sans-serif; margin: 1.5em auto; max-width: 1400px; padding: 0 1em; color: #222; }
h1 { font-size: 1.5em; } h2 { font-size: 1.2em; border-bottom: 1px solid #ddd; padding-bottom: .2em; margin-top: 2em; }
.verdict { font-size: 1.2em; font-weight: 600; background: #f4f6fa; border-left: 4px solid #4c72b0; padding: .6em 1em; }
table { border-collapse: collapse; margin: .5em 0; } th, td { padding: .2em .6em; border-bottom: 1px solid #eee; }
th { text-align: left; background: #fafafa; } .num { text-align: right; font-variant-numeric: tabular-nums; }
td { vertical-align: top; } td:first-child, .num { white-space: nowrap; }
.rec { margin: 1em 0; } .rec h3 { font-size: 1.05em; margin-bottom: .3em; }
"""
HOVER = (
    "thread %{customdata[0]}, seq %{customdata[1]}, msgid %{customdata[2]}<br>%{customdata[6]} UTC<br>"
    "total %{customdata[3]:.3f} ms (%{customdata[4]})<br>"
)


def _plotly_js() -> str:
    """plotly.min.js, to inline in the page."""
    try:
        from plotly.offline import get_plotlyjs
    except ImportError as err:
        raise UsageError(MISSING_PLOTLY) from err
    return str(get_plotlyjs())


def _plot(fig: Any, div_id: str) -> str:
    import plotly.io as pio

    return str(pio.to_html(fig, include_plotlyjs=False, full_html=False, div_id=div_id, config=CONFIG))


def _styled(fig: Any, title: str, height: int, **layout: Any) -> Any:
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


def _x(column: str) -> pl.Expr:
    """A UTC datetime as plotly's naive date string (plotly.js ignores zones)."""
    return pl.col(column).dt.strftime("%Y-%m-%d %H:%M:%S%.6f")


def timeline_points(writes: pl.DataFrame) -> tuple[pl.DataFrame, str]:
    """Bars at `bar` standing for `in_bin` writes: every write, else the slowest of each time bin; and a caption."""
    if writes.height <= MAX_BARS:
        return writes.with_columns(bar="sent_at", in_bin=pl.lit(1)), f"every matched write ({writes.height:,})"
    span = float(writes.select((pl.col("sent_at").max() - pl.col("sent_at").min()).dt.total_seconds()).item())
    every = next((name for name, seconds in BINS if span / seconds < MAX_BARS), BINS[-1][0])
    points = (
        writes.group_by(pl.col("sent_at").dt.truncate(every).alias("bar"))
        .agg(pl.all().sort_by("total_ms", descending=True).first(), in_bin=pl.len())
        .sort("bar")
    )
    return points, f"the slowest write of each {every} ({writes.height:,} writes)"


def timeline_figure(c: Context) -> Any:
    """Every remote write (or the slowest per bin) with its components stacked, log switches and LGWR warnings."""
    import plotly.graph_objects as go

    points, caption = timeline_points(matched_only(c.analysis.writes))
    custom = points.select("thread", "seq", "msgid", "total_ms", "verdict", "in_bin", _x("sent_at")).rows()
    binned = "slowest of %{customdata[5]} writes<br>" if points["in_bin"].max() != 1 else ""
    bars = points.select(_x("bar")).to_series().to_list()
    fig = go.Figure()
    for comp in COMPONENTS:
        fig.add_bar(
            x=bars,
            y=points[comp.column].to_list(),
            name=comp.label,
            marker={"color": COLORS[comp], "line": {"width": 0}},
            customdata=custom,
            hovertemplate=HOVER + binned + comp.label + ": %{y:.3f} ms<extra></extra>",
        )
    _add_switches(fig, c.switches.switches, float(points.select(pl.col("total_ms").max()).item() or 1.0))
    _add_warnings(fig, c)
    title = f"Remote writes: {caption}, components stacked; drag to zoom, double-click to reset"
    return _styled(fig, title, 540, barmode="relative", bargap=0.0, xaxis_title="sent (UTC)", yaxis_title="ms")


def _add_switches(fig: Any, switches: pl.DataFrame, ceiling: float) -> None:
    """Log switches as dotted vertical lines (one trace, so thousands stay light)."""
    if not switches.height:
        return
    xs: list[str | None] = []
    texts: list[str | None] = []
    for at, thread, old, new in switches.select(_x("at"), "thread", "from_seq", "to_seq").iter_rows():
        label = f"log switch, thread {thread}: seq {old} -> {new}<br>{at} UTC"
        xs += [at, at, None]
        texts += [label, label, None]
    ys = [0.0, ceiling, None] * switches.height
    fig.add_scatter(
        x=xs,
        y=ys,
        mode="lines",
        name="log switch",
        line={"color": "#555", "dash": "dot", "width": 1},
        hovertext=texts,
        hoverinfo="text",
    )


def _add_warnings(fig: Any, c: Context) -> None:
    """LGWR warnings (long writes, broadcast waits) as markers at their elapsed time, and the other log
    writer and alert-log events (sync mode switches, transport errors, parameter changes) on the axis."""
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
    shown = ("sync_switch", "transport_error", "parameter_change", "startup", "protection")
    others = events.around_writes(c.analysis).filter(pl.col("event").is_in(shown) & pl.col("at").is_not_null())
    if others.height:
        rows = others.select(_x("at"), "event", "detail", "file", "line").rows()
        fig.add_scatter(
            x=[r[0] for r in rows],
            y=[0.0] * len(rows),
            mode="markers",
            name="LGWR / alert log event",
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
    return _styled(
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

    rows = insights.top_writes(c.analysis.writes, top, c.switches)
    labels = [f"{i}. msgid {m} (thread {t})" for i, (m, t) in enumerate(rows.select("msgid", "thread").iter_rows(), 1)]
    fig = go.Figure()
    for comp in COMPONENTS:
        values = rows[comp.column].to_list()
        fig.add_bar(y=labels, x=values, orientation="h", name=comp.label, marker_color=COLORS[comp])
    return _styled(
        fig,
        f"Top {top} slowest writes: breakdown",
        180 + 26 * rows.height,
        barmode="relative",
        yaxis={"autorange": "reversed", "type": "category"},
        xaxis_title="ms",
    )


def _table(t: Table) -> str:
    numeric = t.numeric()

    def cell(tag: str, text: str, i: int) -> str:
        attr = ' class="num"' if numeric[i] else ""
        return f"<{tag}{attr}>{escape(text).replace(chr(10), '<br>')}</{tag}>"

    head = "".join(cell("th", h, i) for i, h in enumerate(t.headers))
    body = "".join("<tr>" + "".join(cell("td", x, i) for i, x in enumerate(r)) + "</tr>" for r in t.rows)
    note = f"<p>{escape(t.note)}</p>" if t.note else ""
    return f"{note}<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _files_table(c: Context) -> Table:
    keys = ("role", "process", "instance", "host", "thread", "version", "first_at", "last_at", "time_zone")
    rows = [(short_label(f["file"], c.labels), *(str(f.get(k) or "") for k in keys)) for f in doc.files(c.analysis)]
    return Table(("file", *keys), rows)


def _switch_list(c: Context) -> Table:
    frame = c.switches.switches.select(
        "thread", "from_seq", "to_seq", _x("at"), "source", "writes_near", "slow_near", "max_total_ms"
    )
    rows = [(*("" if v is None else str(v) for v in r[:-1]), fmt_ms(r[-1])) for r in frame.iter_rows()]
    headers = ("thread", "from seq", "to seq", "at (UTC)", "from", "writes near", "slow near", "max total ms")
    return Table(headers, rows)


def _recommendations(c: Context) -> str:
    recs = c.summary["recommendations"]
    if not recs:
        return f"<p>{escape(no_recommendation(c))}</p>"
    return "".join(
        f'<div class="rec" id="rec-{escape(r["id"])}"><h3>{escape(r["title"])}</h3>'
        f"<p><b>Evidence:</b> {escape(r['evidence'])}</p><p><b>Advice:</b> {escape(r['advice'])}</p></div>"
        for r in recs
    )


def _sections(c: Context, top: int) -> list[tuple[str, str]]:
    """(title, HTML body) of every section, in reading order."""
    a = c.analysis
    switches = f"<p>{escape(c.switches.finding)}</p>"
    if c.switches.switches.height:
        switches += _table(switch_table(c))
        switches += f"<details><summary>Every log switch</summary>{_table(_switch_list(c))}</details>"
    out = [("Facts", _table(facts_table(c))), ("Recommendations", _recommendations(c))]
    if a.writes.height:
        out.append(("Timeline", _plot(timeline_figure(c), "timeline")))
    out.append(("Log switches", switches))
    if a.writes.height:
        out += [
            ("Histogram", _plot(histogram_figure(a.writes), "histogram")),
            (f"Top {top} slowest writes", _plot(top_figure(c, top), "top") + _table(top_table(c, top))),
        ]
    if a.warnings.height:
        out.append(("LGWR warnings (long writes, broadcast waits)", _table(warnings_table(c, top))))
    around = events_table(c)
    if around.rows:
        out.append(("Log writer and alert-log events", _table(around)))
    if a.gaps.height:
        out.append(("Missing segments", _table(gaps_table(c))))
    if a.destinations.height:
        out.append(("Redo transport destinations (alert logs)", _table(destinations_table(c))))
    unmatched = _table(unmatched_table(c)) if a.unmatched.height else "<p>Every message found its partner.</p>"
    unparsed = _table(unparsed_table(c)) if c.summary["unparsed_lines"] else "<p>Every line was parsed or ignored.</p>"
    notes = "".join(f"<li>{escape(n)}</li>" for n in c.summary["notes"])
    out += [("Unmatched messages", unmatched), ("Unparsed lines", unparsed)]
    out += [("Notes", f"<ul>{notes}</ul>")] if notes else []
    return [*out, ("Files", _table(_files_table(c)))]


def render_html(a: Analysis, out: TextIO, top: int) -> None:
    """Write the report as one self-contained HTML page.

    Raises:
        UsageError: plotly (the optional `html` extra) is not installed.
    """
    js = _plotly_js()
    c = Context.of(a, top)
    verdict = insights.verdict_sentence(a.writes, a.options.threshold_ms)
    body = "".join(f"<section><h2>{escape(title)}</h2>{part}</section>" for title, part in _sections(c, top))
    out.write(
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>dgtrace report</title><style>{STYLE}</style><script>{js}</script></head><body>"
        f'<h1>dgtrace: Data Guard SYNC remote writes</h1><p class="verdict">{escape(verdict)}</p>{body}'
        "</body></html>\n"
    )
