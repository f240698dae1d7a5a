"""`dgtrace report DIR`: the daily trend of a batch dataset, per configuration, the worst days first.

One row per configuration (primary -> standby databases) and day: writes, slow writes, p50 / p99 /
max of the total, beside the p99 the same day would have had with Fast Sync where standby I/O
matters (at least `STANDBY_IO_MATTERS` of the matched writes' time), and the share of the matched
writes' time spent on the network, in standby I/O and in other RFS time. Text, Markdown, JSON, and
HTML with one plot per configuration (daily p99, with Fast Sync where it matters, and shares; plotly
inlined as in the analyze report, no request leaves the page).
"""

from __future__ import annotations

import json
import textwrap
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date
from enum import StrEnum
from html import escape
from typing import Any, TextIO

import polars as pl

from analyzer.base.errors import UsageError
from analyzer.batch.schemas import SCHEMA_VERSION
from analyzer.report.fmt import escape_markdown, printable, terminal_width

MISSING_PLOTLY = "--format html needs plotly: pip install 'dgtrace[html]'"
#: the page may run its own inline script and nothing else
CSP = (
    "default-src 'none'; script-src 'unsafe-inline' 'unsafe-eval'; style-src 'unsafe-inline';"
    " img-src data: blob:; font-src data:"
)
STYLE = """
body { font: 14px/1.45 system-ui, sans-serif; margin: 1.5em auto; max-width: 1400px; padding: 0 1em; color: #222; }
h1 { font-size: 1.5em; } h2 { font-size: 1.2em; border-bottom: 1px solid #ddd; padding-bottom: .2em; margin-top: 2em; }
table { border-collapse: collapse; margin: .5em 0; } th, td { padding: .2em .6em; border-bottom: 1px solid #eee; }
th { text-align: left; background: #fafafa; } .num { text-align: right; font-variant-numeric: tabular-nums; }
"""
COLORS = {"network": "#e69f00", "rfs_io": "#d62728", "rfs_other": "#9467bd", "p99": "#4c72b0"}
CONFIG = {"displaylogo": False, "showSendToCloud": False, "responsive": True}
#: the Fast Sync what-if is shown for a day whose matched writes spent at least this share of their time in standby I/O
STANDBY_IO_MATTERS = 0.1
#: what the Fast Sync column is, under the table
FAST_SYNC_NOTE = (
    f"Fast Sync p99: the p99 of the writes seen on both sides without their standby I/O (SYNC NOAFFIRM), shown"
    f" where standby I/O took at least {STANDBY_IO_MATTERS:.0%} of their time"
)


class TrendFormat(StrEnum):
    """Values of `dgtrace report --format`."""

    TEXT = "text"
    MARKDOWN = "markdown"
    JSON = "json"
    HTML = "html"


@dataclass(frozen=True)
class TrendReport:
    """The trend rows (schema `analyzer.batch.schemas.TREND`) and what was asked."""

    dataset: str
    rows: pl.DataFrame
    since: date | None = None
    until: date | None = None
    dbs: tuple[str, ...] = ()


#: header, column, how a value is written
_COLUMNS: tuple[tuple[str, str, Callable[[Any], str]], ...] = (
    ("configuration", "configuration", str),
    ("day", "day", str),
    ("writes", "writes", lambda v: f"{v:,}"),
    ("slow", "slow_writes", lambda v: f"{v:,}"),
    ("slow %", "slow_pct", lambda v: "-" if v is None else f"{v:.1f}%"),
    ("p50 ms", "total_p50_ms", lambda v: "-" if v is None else f"{v:.2f}"),
    ("p99 ms", "total_p99_ms", lambda v: "-" if v is None else f"{v:.2f}"),
    ("Fast Sync p99", "fastsync_shown", lambda v: "-" if v is None else f"{v:.2f}"),
    ("max ms", "total_max_ms", lambda v: "-" if v is None else f"{v:.2f}"),
    ("network", "network_share", lambda v: "-" if v is None else f"{100 * v:.0f}%"),
    ("standby I/O", "rfs_io_share", lambda v: "-" if v is None else f"{100 * v:.0f}%"),
    ("other RFS", "rfs_other_share", lambda v: "-" if v is None else f"{100 * v:.0f}%"),
)


def _table(report: TrendReport) -> pl.DataFrame:
    rows = report.rows
    return rows.with_columns(
        configuration=pl.col("primary_db").fill_null("?") + pl.lit(" -> ") + pl.col("standby_db").fill_null("?"),
        slow_pct=pl.when(pl.col("writes") > 0).then(100 * pl.col("slow_writes") / pl.col("writes")),
        fastsync_shown=pl.when(pl.col("rfs_io_share") >= STANDBY_IO_MATTERS).then(pl.col("fastsync_p99_ms")),
    )


def _cells(report: TrendReport) -> tuple[list[str], list[list[str]]]:
    table = _table(report)
    header = [h for h, _, _ in _COLUMNS]
    body = [[fmt(row[col]) for _, col, fmt in _COLUMNS] for row in table.iter_rows(named=True)]
    return header, body


def _title(report: TrendReport) -> str:
    rows = report.rows
    if not rows.height:
        return f"dgtrace report {report.dataset}: no configuration-day matches"
    days = sorted(str(d) for d in rows["day"])
    span = f"{days[0]} .. {days[-1]}"
    top = rows["threshold_ms"].max()
    threshold = float(top) if isinstance(top, int | float) else 0.0
    return (
        f"dgtrace report {report.dataset}: {rows.height} configuration-days, {span}, the worst p99 first"
        f" (slow: total >= {threshold:g} ms; shares of the matched writes' time)"
    )


#: the columns left out first when the table is wider than the terminal
_LEAVE_OUT = ("other RFS", "slow", "max ms", "p50 ms", "Fast Sync p99", "standby I/O", "network", "writes", "slow %")


def render_trend_text(report: TrendReport, out: TextIO) -> None:
    """A fixed-width table; database names and the dataset's path with their control characters (ANSI
    escapes) written as `\\xNN`, as the terminal report does. On a terminal (or with COLUMNS) it fits
    the width as the analyze report does: the columns that do not fit are left out and named; in a
    pipe or a file every column is written."""
    header, rows = _cells(report)
    body = [[printable(c) for c in row] for row in rows]
    widths = [max(len(r[i]) for r in [header, *body]) for i in range(len(header))]
    shown, left_out = _fitting(header, widths, terminal_width(out))
    left = {0, 1}

    def line(cells: list[str]) -> str:
        return "  ".join(cells[i].ljust(widths[i]) if i in left else cells[i].rjust(widths[i]) for i in shown)

    width = terminal_width(out)

    def said(text: str) -> str:
        return (textwrap.fill(text, width, break_long_words=False) if width else text) + "\n"

    out.write(said(printable(_title(report))) + "\n")
    out.write(line(header).rstrip() + "\n")
    for row in body:
        out.write(line(row).rstrip() + "\n")
    if left_out:
        out.write(
            said(f"Left out at this width: {', '.join(left_out)} (a wider terminal or --format markdown shows them).")
        )
    if body:
        out.write("\n" + said(f"{FAST_SYNC_NOTE}."))


def _fitting(header: list[str], widths: list[int], width: int | None) -> tuple[list[int], list[str]]:
    """The columns shown within `width` (None: all), and the headers of those left out."""
    shown = list(range(len(header)))
    left_out: list[str] = []
    for name in _LEAVE_OUT:
        if width is None or sum(widths[i] for i in shown) + 2 * (len(shown) - 1) <= width:
            break
        shown.remove(header.index(name))
        left_out.append(name)
    return shown, left_out


def render_trend_markdown(report: TrendReport, out: TextIO) -> None:
    """A GitHub-flavoured table under a heading; the title and every cell escaped as in the analyze
    report (`escape_markdown`: a database name opens no tag, link or image and breaks no table)."""
    header, body = _cells(report)
    out.write(f"# {escape_markdown(_title(report))}\n\n")
    out.write("| " + " | ".join(escape_markdown(h) for h in header) + " |\n")
    out.write("|" + "|".join("---" if i < 2 else "---:" for i in range(len(header))) + "|\n")
    for row in body:
        out.write("| " + " | ".join(escape_markdown(c) for c in row) + " |\n")
    if body:
        out.write(f"\n{escape_markdown(FAST_SYNC_NOTE)}.\n")


def render_trend_json(report: TrendReport, out: TextIO) -> None:
    """One document: what was asked and one object per configuration and day."""
    rows = report.rows.with_columns(pl.col("day").cast(pl.String))
    document = {
        "schema_version": SCHEMA_VERSION,
        "dataset": report.dataset,
        "since": report.since.isoformat() if report.since else None,
        "until": report.until.isoformat() if report.until else None,
        "dbs": list(report.dbs),
        "days": rows.to_dicts(),
    }
    out.write(json.dumps(document, indent=1) + "\n")


def trend_figure(rows: pl.DataFrame, title: str) -> Any:
    """One configuration's days: p99 of the total (line, left axis) and time shares (bars, right)."""
    import plotly.graph_objects as go
    from plotly.subplots import make_subplots

    days = rows.sort("day")
    x = [str(d) for d in days["day"]]
    fig = make_subplots(specs=[[{"secondary_y": True}]])
    for column, name in (
        ("network_share", "network"),
        ("rfs_io_share", "standby I/O"),
        ("rfs_other_share", "other RFS"),
    ):
        values = [None if v is None else 100 * v for v in days[column]]
        key = column.removesuffix("_share")
        fig.add_trace(go.Bar(x=x, y=values, name=f"{name} %", marker_color=COLORS[key], opacity=0.45), secondary_y=True)
    fig.add_trace(
        go.Scatter(
            x=x,
            y=days["total_p99_ms"].to_list(),
            name="p99 total (ms)",
            mode="lines+markers",
            line={"color": COLORS["p99"], "width": 3},
        ),
        secondary_y=False,
    )
    if "fastsync_shown" in days.columns and days["fastsync_shown"].is_not_null().any():
        fig.add_trace(
            go.Scatter(
                x=x,
                y=days["fastsync_shown"].to_list(),
                name="p99 with Fast Sync (ms)",
                mode="lines+markers",
                line={"color": COLORS["p99"], "width": 2, "dash": "dot"},
            ),
            secondary_y=False,
        )
    fig.update_layout(
        title=title,
        barmode="stack",
        height=420,
        template="plotly_white",
        legend={"orientation": "h", "x": 0, "y": 1.0, "yanchor": "bottom"},
        margin={"t": 100},
    )
    fig.update_yaxes(title_text="p99 of the total (ms)", rangemode="tozero", secondary_y=False)
    fig.update_yaxes(title_text="share of write time (%)", range=[0, 100], secondary_y=True, showgrid=False)
    fig.update_xaxes(type="category")
    return fig


def render_trend_html(report: TrendReport, out: TextIO) -> None:
    """One self-contained page: the table, then one plot per configuration.

    Raises:
        UsageError: plotly (the optional `html` extra) is not installed.
    """
    try:
        import plotly.io as pio
        from plotly.offline import get_plotlyjs
    except ImportError as err:
        raise UsageError(MISSING_PLOTLY) from err
    header, body = _cells(report)
    head = "".join(f"<th>{escape(h)}</th>" for h in header)
    cells = "".join(
        "<tr>" + "".join(f"<td{'' if i < 2 else ' class=num'}>{escape(c)}</td>" for i, c in enumerate(row)) + "</tr>"
        for row in body
    )
    plots = []
    table = _table(report)
    for n, ((config,), rows) in enumerate(table.group_by(["configuration"], maintain_order=True)):
        # plotly reads tags and entities in a title: escaped, a name is shown as it is
        fig = trend_figure(rows, escape(f"{config}: daily p99 and where the time went"))
        plots.append(pio.to_html(fig, include_plotlyjs=False, full_html=False, div_id=f"trend-{n}", config=CONFIG))
    out.write(
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>dgtrace trend</title><style>{STYLE}</style><script>{get_plotlyjs()}</script></head><body>"
        f"<h1>{escape(_title(report))}</h1><table><tr>{head}</tr>{cells}</table><p>{escape(FAST_SYNC_NOTE)}.</p>"
        f"<h2>Per configuration</h2>{''.join(plots)}</body></html>\n"
    )


TREND_RENDERERS: dict[TrendFormat, Callable[[TrendReport, TextIO], None]] = {
    TrendFormat.TEXT: render_trend_text,
    TrendFormat.MARKDOWN: render_trend_markdown,
    TrendFormat.JSON: render_trend_json,
    TrendFormat.HTML: render_trend_html,
}
