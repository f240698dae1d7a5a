"""HTML report: one self-contained page (plotly.js inlined, no request to any host): the outline of every
report (`report.outline`), each section under its heading, with the plots.

The plots come from `report.plots` (light at any size: per time bucket above a few thousand
writes), the tables from `report.sections` (bounded, as in every report); a wide table scrolls
inside the page and long file names wrap, so nothing is clipped at 1400 px.
"""

from __future__ import annotations

from html import escape
from typing import Any, TextIO

from analyzer.base.errors import UsageError
from analyzer.match.analysis import Analysis
from analyzer.report.context import Context, Table
from analyzer.report.outline import (
    Bullets,
    Facts,
    Listing,
    Paragraph,
    Part,
    PlotKind,
    Recommendations,
    outline,
)
from analyzer.report.plots import histogram_figure, timeline_figure, top_figure

MISSING_PLOTLY = "--format html needs plotly: pip install 'dgtrace[html]'"
#: no plotly logo link and no "Share chart" button (it would upload the data to Plotly Cloud)
CONFIG = {"displaylogo": False, "showSendToCloud": False, "responsive": True}
#: the page may run its own inline script and nothing else: no request leaves the file
CSP = (
    "default-src 'none'; script-src 'unsafe-inline' 'unsafe-eval'; style-src 'unsafe-inline';"
    " img-src data: blob:; font-src data:"
)
STYLE = """
html { overflow-y: scroll; } /* the scroll bar from the start: plots are sized once, to the width they keep */
body { font: 14px/1.45 system-ui, sans-serif; margin: 1.5em auto; max-width: 1400px; padding: 0 1em; color: #222;
  box-sizing: border-box; }
h1 { font-size: 1.5em; } h2 { font-size: 1.2em; border-bottom: 1px solid #ddd; padding-bottom: .2em; margin-top: 2em; }
.verdict { font-size: 1.2em; font-weight: 600; background: #f4f6fa; border-left: 4px solid #4c72b0; padding: .6em 1em; }
.scroll { overflow-x: auto; max-width: 100%; } .plotly-graph-div { max-width: 100%; }
table { border-collapse: collapse; margin: .5em 0; font-size: 13px; }
th, td { padding: .2em .5em; border-bottom: 1px solid #eee; }
th { text-align: left; background: #fafafa; vertical-align: bottom; }
.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; } td { vertical-align: top; }

.note { color: #555; } .caption { color: #555; margin: 0; }
.rec { margin: 1em 0; } .rec h3, .rec h4 { font-size: 1.05em; margin-bottom: .3em; }
"""


def _plotly_js() -> str:
    """plotly.min.js, to inline in the page."""
    try:
        from plotly.offline import get_plotlyjs
    except ImportError as err:
        raise UsageError(MISSING_PLOTLY) from err
    return str(get_plotlyjs())


def _plot(fig: Any, div_id: str) -> str:
    import plotly.io as pio

    html = pio.to_html(fig, include_plotlyjs=False, full_html=False, div_id=div_id, config=CONFIG)
    return f'<div class="scroll">{html}</div>'


def _table(t: Table) -> str:
    """A table (its note first) inside a box that scrolls sideways when the table is wider than the page."""
    t = t.trimmed()
    numeric = t.numeric()
    classes = [
        ' class="num"' if n else ' class="path"' if h in t.paths else ""
        for n, h in zip(numeric, t.headers, strict=True)
    ]

    def cell(tag: str, text: str, i: int) -> str:
        shown = escape(text).replace("\n", "<br>")
        if tag == "td" and classes[i] == ' class="path"':  # a long file name may break after a folder
            shown = shown.replace("/", "/<wbr>").replace("!", "!<wbr>")
        return f"<{tag}{classes[i]}>{shown}</{tag}>"

    head = "".join(cell("th", h, i) for i, h in enumerate(t.headers))
    body = "".join("<tr>" + "".join(cell("td", x, i) for i, x in enumerate(r)) + "</tr>" for r in t.rows)
    note = f'<p class="note">{escape(t.note)}</p>' if t.note else ""
    return f'{note}<div class="scroll"><table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table></div>'


def _recommendations(part: Recommendations) -> str:
    """The recommendations, under a heading per configuration when there are several."""
    out = ""
    for group in part.groups:
        tag, prefix = ("h4", f"{group.name}-") if group.name else ("h3", "")
        out += f"<h3>{escape(group.name)}</h3>" if group.name else ""
        out += f"<p>{escape(group.none)}</p>" if group.none else ""
        out += "".join(
            f'<div class="rec" id="rec-{escape(prefix + r.id)}"><{tag}>{escape(r.title)}</{tag}>'
            f"<p><b>Evidence:</b> {escape(r.evidence)}</p><p><b>Advice:</b> {escape(r.advice)}</p></div>"
            for r in group.recommendations
        )
    return out


def _plot_of(c: Context, top: int, kind: PlotKind) -> str:
    """A plot of the page (the timeline with its caption above it)."""
    if kind == PlotKind.TIMELINE:
        figure, caption = timeline_figure(c)
        return f'<p class="caption">{escape(caption)}</p>' + _plot(figure, "timeline")
    if kind == PlotKind.HISTOGRAM:
        return _plot(histogram_figure(c.analysis.writes), "histogram")
    return _plot(top_figure(c, top), "top")


def _part(c: Context, top: int, part: Part) -> str:
    """The HTML of one part of a section."""
    if isinstance(part, Paragraph):
        return f"<p>{escape(part.text)}</p>"
    if isinstance(part, Bullets):
        return "<ul>" + "".join(f"<li>{escape(item)}</li>" for item in part.items) + "</ul>"
    if isinstance(part, Table):
        return _table(part)
    if isinstance(part, Listing):
        return f"<details><summary>{escape(part.summary)}</summary>{_table(part.table)}</details>"
    if isinstance(part, Facts):
        return _table(part.table)
    if isinstance(part, Recommendations):
        return _recommendations(part)
    return _plot_of(c, top, part.kind)


def render_html(a: Analysis, out: TextIO, top: int) -> None:
    """Write the report as one self-contained HTML page.

    Raises:
        UsageError: plotly (the optional `html` extra) is not installed.
    """
    js = _plotly_js()
    c = Context.of(a)
    report = outline(c, top)
    verdict = "".join(f'<p class="verdict">{escape(f"{n}: {v}" if n else v)}</p>' for n, v in report.verdicts)
    body = "".join(
        f"<section><h2>{escape(s.title)}</h2>{''.join(_part(c, top, p) for p in s.parts)}</section>"
        for s in report.sections
    )
    out.write(
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>dgtrace report</title><style>{STYLE}</style><script>{js}</script></head><body>"
        f"<h1>{escape(report.title)}</h1>{verdict}{body}"
        "</body></html>\n"
    )
