"""Markdown report (GitHub-flavoured) for a ticket."""

from __future__ import annotations

from typing import TextIO

from analyzer import insights
from analyzer.report.context import Context, Table
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


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", "<br>")


def markdown_table(t: Table) -> list[str]:
    """GitHub-flavoured Markdown lines of a table (its note first); `|` escaped, line breaks as <br>."""
    align = ["---:" if n else "---" for n in t.numeric()]
    lines = [t.note, ""] if t.note else []
    lines += ["| " + " | ".join(t.headers) + " |", "|" + "|".join(align) + "|"]
    return lines + ["| " + " | ".join(_cell(x) for x in row) + " |" for row in t.rows]


def _recommendations(c: Context) -> list[str]:
    recs = c.summary["recommendations"]
    if not recs:
        return [no_recommendation(c)]
    out = []
    for r in recs:
        out += [f"### {r['title']}", "", f"**Evidence:** {r['evidence']}", "", f"**Advice:** {r['advice']}", ""]
    return out[:-1]


def _section(title: str, body: list[str]) -> list[str]:
    return ["", f"## {title}", "", *body]


def render_markdown(a: Analysis, out: TextIO, top: int) -> None:
    """Write the report as GitHub-flavoured Markdown (deterministic: no clock, no absolute paths)."""
    c = Context.of(a, top)
    lines = [
        "# dgtrace: Data Guard SYNC remote writes",
        "",
        f"**{insights.verdict_sentence(a.writes, a.options.threshold_ms)}**",
    ]
    lines += _section("Facts", markdown_table(facts_table(c)))
    lines += _section("Recommendations", _recommendations(c))
    switch_body = [c.switches.finding]
    if c.switches.switches.height:
        switch_body += ["", *markdown_table(switch_table(c))]
    lines += _section("Log switches", switch_body)
    if a.writes.height:
        lines += _section(f"Top {top} slowest writes", markdown_table(top_table(c, top)))
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
    if c.summary["unparsed_lines"]:
        lines += _section("Unparsed lines", markdown_table(unparsed_table(c)))
    if c.summary["notes"]:
        lines += _section("Notes", [f"- {note}" for note in c.summary["notes"]])
    out.write("\n".join(lines) + "\n")
