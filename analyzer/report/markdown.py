"""Markdown report (GitHub-flavoured) for a ticket.

Text taken from the traces (file names, host names, reasons) goes through `escape`: it can open no
HTML tag, link, image or code span, and break no table.
"""

from __future__ import annotations

from typing import TextIO

from analyzer.match.analysis import Analysis
from analyzer.report.comparisons import comparison_blocks
from analyzer.report.configurations import advice, async_table, links_table, shown, verdicts
from analyzer.report.context import Context, Table
from analyzer.report.fmt import escape_markdown
from analyzer.report.sections import (
    clock_table,
    destinations_table,
    events_table,
    facts_table,
    files_table,
    gaps_table,
    histogram_table,
    percentile_table,
    skipped_table,
    switch_table,
    top_table,
    unmatched_table,
    unparsed_table,
    warnings_table,
)

#: text from the traces as it is: it can open no HTML tag, link, image or code span, and break no table
escape = escape_markdown


def markdown_table(t: Table) -> list[str]:
    """GitHub-flavoured Markdown lines of a table (its note first), every cell escaped, numbers right-aligned."""
    t = t.trimmed()
    align = ["---:" if n else "---" for n in t.numeric()]
    lines = [escape(t.note), ""] if t.note else []
    lines += ["| " + " | ".join(escape(h) for h in t.headers) + " |", "|" + "|".join(align) + "|"]
    return lines + ["| " + " | ".join(escape(x) for x in row) + " |" for row in t.rows]


def _recommendations(c: Context) -> list[str]:
    """The recommendations, under a heading per configuration when there are several."""
    out: list[str] = []
    for group in advice(c):
        level = "###"
        if group.name:
            out += [f"### {escape(group.name)}", ""]
            level = "####"
        out += [group.none, ""] if group.none else []
        for r in group.recommendations:
            out += [f"{level} {r.title}", "", f"**Evidence:** {r.evidence}", "", f"**Advice:** {r.advice}", ""]
    return out[:-1]


def _section(title: str, body: list[str]) -> list[str]:
    return ["", f"## {title}", "", *body]


def render_markdown(a: Analysis, out: TextIO, top: int) -> None:
    """Write the report as GitHub-flavoured Markdown (deterministic: no clock, no absolute paths).

    The sentences of our own (verdict, recommendations, log-switch finding) hold no trace text; the
    notes and every table cell do, and are escaped.
    """
    c = Context.of(a)
    lines = ["# dgtrace: Data Guard SYNC remote writes"]
    for name, verdict in verdicts(c):  # a configuration's name is trace text
        lines += ["", f"**{escape(name)}: {verdict}**" if name else f"**{verdict}**"]
    lines += _section("Recommendations", _recommendations(c))
    switch_body = [c.switches.finding]
    if c.switches.switches.height:
        switch_body += ["", *markdown_table(switch_table(c))]
    lines += _section("Log switches", switch_body)
    if c.notes:
        lines += _section("Notes", [f"- {escape(note)}" for note in c.notes])
    if shown(c):
        lines += _section("Configurations and links", markdown_table(links_table(c)))
    if c.shipping:
        lines += _section("ASYNC links (not in the commit path)", markdown_table(async_table(c)))
    for block in comparison_blocks(c):
        body: list[str] = []
        for part in block.parts:
            body += [*(markdown_table(part) if isinstance(part, Table) else [escape(part)]), ""]
        lines += _section(block.title, body[:-1])
    lines += _section("Facts", markdown_table(facts_table(c)))
    if a.writes.height:
        lines += _section("Percentiles (ms)", markdown_table(percentile_table(c)))
        lines += _section(f"Top {top} slowest writes", markdown_table(top_table(c, top)))
        lines += _section("Histogram (writes per bucket, as V$EVENT_HISTOGRAM)", markdown_table(histogram_table(c)))
    if a.clock.height:
        lines += _section("Clock offset (standby minus primary)", markdown_table(clock_table(c)))
    if a.warnings.height:
        lines += _section("LGWR warnings (long writes, broadcast waits)", markdown_table(warnings_table(c, top)))
    around = events_table(c)
    if around.rows:
        lines += _section("Log writer and alert-log events", markdown_table(around))
    if a.gaps.height:
        lines += _section("Missing segments", markdown_table(gaps_table(c)))
    if a.destinations.height:
        lines += _section("Redo transport destinations (alert logs)", markdown_table(destinations_table(c)))
    if a.unmatched.height:
        lines += _section("Unmatched messages", markdown_table(unmatched_table(c)))
    if c.counts.unparsed_lines:
        lines += _section("Unparsed lines", markdown_table(unparsed_table(c)))
    lines += _section("Files", markdown_table(files_table(c)))
    if a.skipped:
        lines += _section(f"Inputs not read ({len(a.skipped):,})", markdown_table(skipped_table(c)))
    out.write("\n".join(lines) + "\n")
