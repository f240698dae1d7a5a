"""Markdown report (GitHub-flavoured) for a ticket: the outline of every report (`report.outline`), a `##`
heading per section; a plot is said in words.

Text taken from the traces (file names, host names, reasons) goes through `escape`: it can open no
HTML tag, link, image or code span, and break no table.
"""

from __future__ import annotations

from typing import TextIO

from analyzer.match.analysis import Analysis
from analyzer.report.context import Context, Table
from analyzer.report.fmt import escape_markdown
from analyzer.report.outline import (
    Bullets,
    Facts,
    Listing,
    Paragraph,
    Part,
    Recommendations,
    Section,
    outline,
    without_plots,
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


def _recommendations(part: Recommendations) -> list[str]:
    """The recommendations, under a heading per configuration when there are several."""
    out: list[str] = []
    for group in part.groups:
        level = "###"
        if group.name:
            out += [f"### {escape(group.name)}", ""]
            level = "####"
        out += [group.none, ""] if group.none else []
        for r in group.recommendations:
            out += [f"{level} {r.title}", "", f"**Evidence:** {r.evidence}", "", f"**Advice:** {r.advice}", ""]
    return out[:-1]


def _part(part: Part) -> list[str]:
    """The lines of one part of a section (a plot is never one: `without_plots`)."""
    if isinstance(part, Paragraph):
        return [part.text if part.ours else escape(part.text)]
    if isinstance(part, Bullets):
        return [f"- {escape(item)}" for item in part.items]
    if isinstance(part, Table):
        return markdown_table(part)
    if isinstance(part, Listing):
        return markdown_table(part.table)
    if isinstance(part, Facts):
        return markdown_table(part.table)
    if isinstance(part, Recommendations):
        return _recommendations(part)
    return []


def _section(section: Section) -> list[str]:
    """A section under its `##` heading, its parts apart by a blank line."""
    body: list[str] = []
    for part in without_plots(section.parts):
        body += ["", *_part(part)] if body else _part(part)
    return ["", f"## {section.title}", "", *body]


def render_markdown(a: Analysis, out: TextIO, top: int) -> None:
    """Write the report as GitHub-flavoured Markdown (deterministic: no clock, no absolute paths): the outline
    of every report (`report.outline`), each section under its heading.

    The sentences of our own (verdict, recommendations, log-switch finding) hold no trace text; the
    notes and every table cell do, and are escaped.
    """
    report = outline(Context.of(a), top)
    lines = [f"# {report.title}"]
    for name, verdict in report.verdicts:  # a configuration's name is trace text
        lines += ["", f"**{escape(name)}: {verdict}**" if name else f"**{verdict}**"]
    for section in report.sections:
        lines += _section(section)
    out.write("\n".join(lines) + "\n")
