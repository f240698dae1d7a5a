"""The one outline of the human reports (`report.outline`): its sections, their titles and order, and the
terminal, Markdown and HTML reports showing every section under the same title in the same order, on the MAA
paper's traces and on a simulated set that has every kind of section."""

from __future__ import annotations

import ast
import html
import io
import itertools
import re

import pytest

from analyzer.api import Analysis, Options, analyze
from analyzer.report.context import Context, Table
from analyzer.report.html import render_html
from analyzer.report.markdown import render_markdown
from analyzer.report.outline import (
    ALL_MATCHED,
    ALL_PARSED,
    TIMELINE_ELSEWHERE,
    TITLE,
    Bullets,
    Facts,
    Listing,
    Paragraph,
    Plot,
    PlotKind,
    Recommendations,
    outline,
    without_plots,
)
from analyzer.report.text import render_text
from analyzer.simulate import SimOptions, simulate
from tests.conftest import ROOT

PAPER = "samples/paper-2014"
#: a line of a known family that does not parse (a thread that is not a number)
DAMAGED = "Client sending SQLNET request data [kpurcs] oper='Write' flag=67111042 thrd=x seq=1 msgid=2"


@pytest.fixture(scope="module")
def everything(tmp_path_factory: pytest.TempPathFactory) -> Analysis:
    """Two SYNC standbys and an ASYNC one, log switches, a missing segment, alert logs and trace maps, a
    damaged line, an oratcptest baseline, an AWR report and the distance: every kind of section."""
    out = tmp_path_factory.mktemp("outline") / "set"
    options = SimOptions(
        topology="two-sync",
        async_sender=True,
        scenario="log-switch",
        writes=120,
        seed=7,
        log_switch_every=30,
        segment_bytes=8192,
        drop_segment=1,
        extras=True,
        lgwr_broadcast_rate=0.05,
        lgwr_mode_switch_every=20,
    )
    simulate(out, options)
    nss = sorted(out.rglob("*_nss2_*.trc"))[-1]
    with nss.open("a", encoding="utf-8") as f:
        f.write(DAMAGED + "\n")
    companions = Options(
        baselines=("tests/fixtures/oratcptest/sync-disk-write.txt",),
        awr=("tests/fixtures/awr/awr-19c-sim-primary.txt",),
        distance_km=120.0,
    )
    return analyze([str(out)], companions)


def _text(a: Analysis, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("COLUMNS", "200")
    out = io.StringIO()
    render_text(a, out, 10)
    return out.getvalue()


def _text_titles(text: str) -> list[str]:
    """The first line of each block after a blank line, but the verdict's: the sections' titles."""
    lines = text.splitlines()
    assert lines[0] == TITLE and lines[1] == ""
    heads = [line for before, line in itertools.pairwise(lines) if not before and line]
    return heads[1:]


def _markdown_titles(a: Analysis) -> list[str]:
    out = io.StringIO()
    render_markdown(a, out, 10)
    lines = out.getvalue().splitlines()
    assert lines[0] == f"# {TITLE}"
    return [line.removeprefix("## ") for line in lines if line.startswith("## ")]


def _html_titles(a: Analysis) -> list[str]:
    out = io.StringIO()
    render_html(a, out, 10)
    return [html.unescape(t) for t in re.findall(r"<h2>(.*?)</h2>", out.getvalue())]


def test_the_outline_of_the_paper_s_example(paper: Analysis) -> None:
    report = outline(Context.of(paper), 10)
    assert report.title == TITLE and [name for name, _ in report.verdicts] == [""]
    assert report.titles == [
        "Assessment",
        "Redo transport destinations",
        "Recommendations",
        "Log switches",
        "Notes and caveats",
        "What if: Fast Sync",
        "Facts",
        "Timeline",
        "Percentiles (ms)",
        "Histogram (writes per bucket, as V$EVENT_HISTOGRAM)",
        "Verdicts",
        "Top 10 slowest writes",
        "Clock offset (standby minus primary)",
        "LGWR warnings (long writes, broadcast waits)",
        "Unmatched messages",
        "Unparsed lines",
        "Coverage (every line: parsed + ignored + unparsed)",
        "Files",
    ]
    parts = {s.title: s.parts for s in report.sections}
    judged, watch = parts["Assessment"]  # two scattered slow writes of 66: outliers, and what to watch
    assert isinstance(judged, Paragraph) and judged.text.startswith("Isolated outliers: p99 138 ms is 69 x the typical")
    assert isinstance(watch, Bullets) and watch.items[0].startswith("Watch the redo writes' p99 against 8 ms")
    (destinations,) = parts["Redo transport destinations"]  # the sample has no alert log: the link, not seen
    assert isinstance(destinations, Table) and destinations.rows[0][2:7] == (
        "LOG_ARCHIVE_DEST_2",
        "chicago",
        "not seen",
        "not seen",
        "not seen",
    )
    (recommendations,) = parts["Recommendations"]
    assert (
        isinstance(recommendations, Recommendations) and len(recommendations.groups[0].recommendations) == 2
    )  # 11.2: Fast Sync is a note
    assert parts["Log switches"] == (Paragraph("No log switch (change of seq on a thread) among the writes.", True),)
    assert isinstance(parts["Notes and caveats"][0], Bullets) and isinstance(parts["Facts"][0], Facts)
    assert parts["Timeline"] == (Plot(PlotKind.TIMELINE, TIMELINE_ELSEWHERE),)
    assert [type(p) for p in parts["Top 10 slowest writes"]] == [Plot, Table]
    assert parts["Unmatched messages"] == (Paragraph(ALL_MATCHED, True),)
    assert parts["Unparsed lines"] == (Paragraph(ALL_PARSED, True),)


def test_every_renderer_shows_the_outline_s_sections_in_its_order(
    paper: Analysis, monkeypatch: pytest.MonkeyPatch
) -> None:
    titles = outline(Context.of(paper), 10).titles
    assert _text_titles(_text(paper, monkeypatch)) == titles
    assert _markdown_titles(paper) == titles
    assert _html_titles(paper) == titles


def test_a_medium_without_plots_says_a_lone_plot_in_words_and_leaves_the_others_out() -> None:
    table = Table(("a",), [("1",)])
    parts = (Plot(PlotKind.TIMELINE, "drawn elsewhere"), Plot(PlotKind.TOP), table)
    assert without_plots(parts) == [Paragraph("drawn elsewhere", ours=True), table]


def test_the_terminal_and_markdown_say_where_the_timeline_is(paper: Analysis, monkeypatch: pytest.MonkeyPatch) -> None:
    text = _text(paper, monkeypatch)
    assert f"\nTimeline\n{TIMELINE_ELSEWHERE}\n" in text
    out = io.StringIO()
    render_markdown(paper, out, 10)
    assert f"\n## Timeline\n\n{TIMELINE_ELSEWHERE}\n" in out.getvalue()


@pytest.mark.slow
def test_every_renderer_shows_every_kind_of_section_in_the_outline_s_order(
    everything: Analysis, monkeypatch: pytest.MonkeyPatch
) -> None:
    report = outline(Context.of(everything), 10)
    titles = report.titles
    assert _text_titles(_text(everything, monkeypatch)) == titles
    assert _markdown_titles(everything) == titles
    assert _html_titles(everything) == titles
    expected = (
        "Configurations and links",
        "ASYNC links (not in the commit path)",
        "What if: Fast Sync, and the network at the oratcptest round trip",
        "Against the oratcptest baseline",
        "Against AWR and Statspack",
        "Distance and the physical floor",
        "Log writer and alert-log events",
        "Missing segments",
        "Redo transport destinations (alert logs)",
    )
    assert set(expected) <= set(titles)
    assert titles.index("Configurations and links") < titles.index("Facts") < titles.index("Missing segments")
    assert re.fullmatch(r"Inputs not read \([\d,]+\), by reason", titles[-1])
    (unparsed,) = next(s.parts for s in report.sections if s.title == "Unparsed lines")
    assert isinstance(unparsed, Table) and [r[0] for r in unparsed.rows] == ["transport"]  # the damaged line


@pytest.mark.slow
def test_the_log_switches_section_holds_the_near_and_elsewhere_table_in_every_report(
    everything: Analysis, monkeypatch: pytest.MonkeyPatch
) -> None:
    (section,) = [s for s in outline(Context.of(everything), 10).sections if s.title == "Log switches"]
    finding, near, listed = section.parts
    assert isinstance(finding, Paragraph) and isinstance(near, Table) and isinstance(listed, Listing)
    assert [r[0] for r in near.rows] == ["near a log switch", "elsewhere"]
    assert listed.table.headers[:3] == ("thread", "from seq", "to seq")
    text = _text(everything, monkeypatch)
    part = text[text.index("\nLog switches\n") : text.index("\nNotes and caveats\n")]
    assert " near a log switch " in part and " elsewhere " in part and " from seq " in part
    out = io.StringIO()
    render_markdown(everything, out, 10)
    assert "| near a log switch |" in out.getvalue()


#: the fields of `FileResult` (the reduce stage's results) a report would read; `findings.files` reads them
_RESULT_FIELDS = {"reduced", "placement", "identity"}
#: the fields of `FileResult` whose own fields a report would read (`f.parsed.tables`, `f.stats.lines`)
_RESULT_PARTS = {"parsed", "stats", "source"}


def test_no_report_module_reads_the_reduce_stage_s_results() -> None:
    found = []
    for path in sorted((ROOT / "analyzer" / "report").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            inner = isinstance(node, ast.Attribute) and isinstance(node.value, ast.Attribute)
            if isinstance(node, ast.Attribute) and (
                node.attr in _RESULT_FIELDS or (inner and node.value.attr in _RESULT_PARTS)
            ):
                found.append(f"{path.name}:{node.lineno} .{node.attr}")
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("analyzer.reduce"):
                found.append(f"{path.name}:{node.lineno} imports {node.module}")
    assert found == []
