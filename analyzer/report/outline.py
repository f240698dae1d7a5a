"""The one outline of the human reports: which sections, under which titles, in which order, and what each
holds (sentences, lists, tables, plots). The terminal, Markdown and HTML renderers only lay it out.

The answer comes first (the verdict after the assessment's word, the assessment with its numbers, the redo
transport destinations, the recommendations, the log switches, the caveats), then the links and
the comparisons, then the facts and the figures, then what was not matched, parsed or read. A section is in
the outline when it has something to say; a renderer shows every one under its title, in this order. A part a
medium cannot show (a plot in a terminal) is left out, and where a section holds nothing else the renderer
says so in its place (`Plot.instead`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

from analyzer.report.comparisons import comparison_blocks
from analyzer.report.configurations import (
    Advice,
    advice,
    assessments,
    async_table,
    destination_summary_table,
    links_table,
    shown,
    verdicts,
)
from analyzer.report.context import Context, Table
from analyzer.report.sections import (
    clock_table,
    coverage_table,
    destinations_table,
    events_table,
    facts_table,
    files_table,
    gaps_table,
    histogram_table,
    percentile_table,
    skipped_table,
    switch_list,
    switch_table,
    top_table,
    unmatched_table,
    unparsed_table,
    verdict_table,
    warnings_table,
)

#: the report's own title
TITLE = "dgtrace: Data Guard SYNC remote writes"


@dataclass(frozen=True)
class Paragraph:
    """A sentence or a few."""

    text: str
    #: our own words, which hold no trace text (Markdown writes them as they are; trace text is escaped)
    ours: bool = False


@dataclass(frozen=True)
class Bullets:
    """A list of sentences that may hold trace text (file and host names)."""

    items: tuple[str, ...]


@dataclass(frozen=True)
class Listing:
    """A long table a page may fold away under `summary` (an HTML `<details>`); shown whole elsewhere."""

    summary: str
    table: Table


@dataclass(frozen=True)
class Facts:
    """The facts as (name, value) pairs: a table, or names and values side by side in a terminal."""

    table: Table


@dataclass(frozen=True)
class Recommendations:
    """The recommendations with their evidence, per configuration when there are several."""

    groups: tuple[Advice, ...]


class PlotKind(StrEnum):
    """The plots of a report page (`report.plots`)."""

    TIMELINE = "timeline"
    HISTOGRAM = "histogram"
    TOP = "top"


@dataclass(frozen=True)
class Plot:
    """A plot, drawn where the medium can draw it (the HTML page)."""

    kind: PlotKind
    #: what a report that draws no plot says in its place; "" when the section's tables hold its figures
    instead: str = ""


Part = Paragraph | Bullets | Table | Listing | Facts | Recommendations | Plot


@dataclass(frozen=True)
class Section:
    """A titled section and its parts, in reading order."""

    title: str
    parts: tuple[Part, ...]


@dataclass(frozen=True)
class Outline:
    """A report: its title, the verdict (one line per configuration when there are several) and its sections."""

    title: str
    #: (configuration, sentence): the configuration is "" when the upload holds one
    verdicts: tuple[tuple[str, str], ...]
    sections: tuple[Section, ...]

    @property
    def titles(self) -> list[str]:
        return [s.title for s in self.sections]


#: what the terminal and Markdown reports say in place of the timeline
TIMELINE_ELSEWHERE = (
    "A plot of the remote writes over time, with the log switches and LGWR warnings marked: --format html draws"
    " it; --format csv gives every write, --format csv --table timeline the figures per minute."
)
#: the unmatched and unparsed sections when there is nothing to list
ALL_MATCHED = "Every message found its partner."
ALL_PARSED = "Every line was parsed or ignored."


def _assessment(c: Context) -> list[Section]:
    """Before anything else: per configuration its assessment with the numbers behind it (and, for a healthy
    or merely outlying commit path, what to watch), how the commit path pairs several SYNC destinations; then
    each redo transport destination as the uploads set it up."""
    parts: list[Part] = []
    for name, judged, path in assessments(c):
        parts.append(Paragraph(f"{name}: {judged.reason}" if name else judged.reason, ours=not name))
        if path:
            parts.append(Paragraph(path))
        if judged.watch and judged.word != "systemic":
            parts.append(Bullets(tuple(f"Watch {w}." for w in judged.watch)))
    out = [Section("Assessment", tuple(parts))] if parts else []
    table = destination_summary_table(c)
    out += [Section("Redo transport destinations", (table,))] if table.rows else []
    return out


def _answer(c: Context) -> list[Section]:
    """The recommendations, the log switches and the caveats."""
    switches: list[Part] = [Paragraph(c.switches.finding, ours=True)]
    if c.switches.switches.height:
        switches += [switch_table(c), Listing("Log switches", switch_list(c))]
    out = [
        Section("Recommendations", (Recommendations(tuple(advice(c))),)),
        Section("Log switches", tuple(switches)),
    ]
    if c.notes:
        out.append(Section("Notes and caveats", (Bullets(tuple(c.notes)),)))
    return out


def _links_and_comparisons(c: Context) -> list[Section]:
    """The configurations and links, the ASYNC links, the what-ifs and the comparisons with the companion files."""
    out = [Section("Configurations and links", (links_table(c),))] if shown(c) else []
    out += [Section("ASYNC links (not in the commit path)", (async_table(c),))] if c.shipping else []
    for block in comparison_blocks(c):
        out.append(Section(block.title, tuple(p if isinstance(p, Table) else Paragraph(p) for p in block.parts)))
    return out


def _figures(c: Context, top: int) -> list[Section]:
    """The facts, then the writes' figures (when there are writes), the clock and the LGWR warnings."""
    a = c.analysis
    out = [Section("Facts", (Facts(facts_table(c)),))]
    if a.writes.height:
        out += [
            Section("Timeline", (Plot(PlotKind.TIMELINE, TIMELINE_ELSEWHERE),)),
            Section("Percentiles (ms)", (percentile_table(c),)),
            Section(
                "Histogram (writes per bucket, as V$EVENT_HISTOGRAM)", (Plot(PlotKind.HISTOGRAM), histogram_table(c))
            ),
            Section("Verdicts", (verdict_table(c),)),
            Section(f"Top {top} slowest writes", (Plot(PlotKind.TOP), top_table(c, top))),
        ]
    if a.clock.height:
        out.append(Section("Clock offset (standby minus primary)", (clock_table(c),)))
    if a.warnings.height:
        out.append(Section("LGWR warnings (long writes, broadcast waits)", (warnings_table(c, top),)))
    return out


def _evidence(c: Context) -> list[Section]:
    """The events around the writes, the missing segments, the destinations, then what was not matched,
    parsed or read, and the files."""
    a = c.analysis
    around = events_table(c)
    out = [Section("Log writer and alert-log events", (around,))] if around.rows else []
    out += [Section("Missing segments", (gaps_table(c),))] if a.gaps.height else []
    out += (
        [Section("Redo transport destinations (alert logs)", (destinations_table(c),))] if a.destinations.height else []
    )
    unmatched: Part = unmatched_table(c) if a.unmatched.height else Paragraph(ALL_MATCHED, ours=True)
    unparsed: Part = unparsed_table(c) if c.counts.unparsed_lines else Paragraph(ALL_PARSED, ours=True)
    out += [
        Section("Unmatched messages", (unmatched,)),
        Section("Unparsed lines", (unparsed,)),
        Section("Coverage (every line: parsed + ignored + unparsed)", (coverage_table(c),)),
        Section("Files", (files_table(c),)),
    ]
    if a.skipped:
        out.append(Section(f"Inputs not read ({len(a.skipped):,}), by reason", (skipped_table(c),)))
    return out


def outline(c: Context, top: int) -> Outline:
    """The report of an analysis: the verdict and every section with something to say, in reading order
    (`top`: the rows of the longest tables)."""
    sections = _assessment(c) + _answer(c) + _links_and_comparisons(c) + _figures(c, top) + _evidence(c)
    return Outline(TITLE, tuple(verdicts(c)), tuple(sections))


def without_plots(parts: Sequence[Part]) -> list[Part]:
    """The parts a medium that draws no plot shows: each plot left out, or its `instead` said in its place."""
    return [
        Paragraph(p.instead, ours=True) if isinstance(p, Plot) else p
        for p in parts
        if not isinstance(p, Plot) or p.instead
    ]
