"""HTML report: one self-contained page (plotly.js inlined, no request to any host) with the plots and tables.

The plots come from `report.plots` (light at any size: per time bucket above a few thousand
writes), the tables from `report.sections` (bounded, as in every report); a wide table scrolls
inside the page and long file names wrap, so nothing is clipped at 1400 px.
"""

from __future__ import annotations

from html import escape
from typing import Any, TextIO

from analyzer.base.errors import UsageError
from analyzer.match.analysis import Analysis
from analyzer.report.comparisons import comparison_blocks
from analyzer.report.configurations import advice, async_table, links_table, shown, verdicts
from analyzer.report.context import Context, Table
from analyzer.report.plots import histogram_figure, timeline_figure, top_figure
from analyzer.report.sections import (
    clock_table,
    destinations_table,
    events_table,
    facts_table,
    files_table,
    gaps_table,
    percentile_table,
    skipped_table,
    switch_list,
    switch_table,
    top_table,
    unmatched_table,
    unparsed_table,
    warnings_table,
)

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


def _recommendations(c: Context) -> str:
    """The recommendations, under a heading per configuration when there are several."""
    out = ""
    for group in advice(c):
        tag, prefix = ("h4", f"{group.name}-") if group.name else ("h3", "")
        out += f"<h3>{escape(group.name)}</h3>" if group.name else ""
        out += f"<p>{escape(group.none)}</p>" if group.none else ""
        out += "".join(
            f'<div class="rec" id="rec-{escape(prefix + r.id)}"><{tag}>{escape(r.title)}</{tag}>'
            f"<p><b>Evidence:</b> {escape(r.evidence)}</p><p><b>Advice:</b> {escape(r.advice)}</p></div>"
            for r in group.recommendations
        )
    return out


def _sections(c: Context, top: int) -> list[tuple[str, str]]:
    """(title, HTML body) of every section, in reading order: the answer and the caveats first."""
    a = c.analysis
    switches = f"<p>{escape(c.switches.finding)}</p>"
    if c.switches.switches.height:
        switches += _table(switch_table(c))
        switches += f"<details><summary>Log switches</summary>{_table(switch_list(c))}</details>"
    out = [("Recommendations", _recommendations(c)), ("Log switches", switches)]
    notes = "".join(f"<li>{escape(n)}</li>" for n in c.notes)
    out += [("Notes and caveats", f"<ul>{notes}</ul>")] if notes else []
    out += [("Configurations and links", _table(links_table(c)))] if shown(c) else []
    out += [("ASYNC links (not in the commit path)", _table(async_table(c)))] if c.shipping else []
    for block in comparison_blocks(c):
        body = "".join(_table(p) if isinstance(p, Table) else f"<p>{escape(p)}</p>" for p in block.parts)
        out.append((block.title, body))
    out.append(("Facts", _table(facts_table(c))))
    if a.writes.height:
        figure, caption = timeline_figure(c)
        out += [
            ("Timeline", f'<p class="caption">{escape(caption)}</p>' + _plot(figure, "timeline")),
            ("Percentiles (ms)", _table(percentile_table(c))),
            ("Histogram", _plot(histogram_figure(a.writes), "histogram")),
            (f"Top {top} slowest writes", _plot(top_figure(c, top), "top") + _table(top_table(c, top))),
        ]
    if a.clock.height:
        out.append(("Clock offset (standby minus primary)", _table(clock_table(c))))
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
    unparsed = _table(unparsed_table(c)) if c.counts.unparsed_lines else "<p>Every line was parsed or ignored.</p>"
    out += [("Unmatched messages", unmatched), ("Unparsed lines", unparsed), ("Files", _table(files_table(c)))]
    if a.skipped:
        out.append((f"Inputs not read ({len(a.skipped):,}), by reason", _table(skipped_table(c))))
    return out


def render_html(a: Analysis, out: TextIO, top: int) -> None:
    """Write the report as one self-contained HTML page.

    Raises:
        UsageError: plotly (the optional `html` extra) is not installed.
    """
    js = _plotly_js()
    c = Context.of(a)
    verdict = "".join(f'<p class="verdict">{escape(f"{n}: {v}" if n else v)}</p>' for n, v in verdicts(c))
    body = "".join(f"<section><h2>{escape(title)}</h2>{part}</section>" for title, part in _sections(c, top))
    out.write(
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>dgtrace report</title><style>{STYLE}</style><script>{js}</script></head><body>"
        f"<h1>dgtrace: Data Guard SYNC remote writes</h1>{verdict}{body}"
        "</body></html>\n"
    )
