"""The Markdown report: golden output of the paper sample, its sections, and inputs with nothing to report."""

from __future__ import annotations

import io

from analyzer.api import analyze
from analyzer.report.markdown import Table, markdown_table, render_markdown
from scripts.regen_golden import SAMPLES, sample_markdown
from tests.conftest import ROOT, invoke

GOLDEN = ROOT / "tests" / "golden"


def test_paper_markdown_matches_golden() -> None:
    """tests/golden/paper-2014.md is written by scripts/regen_golden.py (`make golden`), never by hand."""
    expected = (GOLDEN / "paper-2014.md").read_text(encoding="utf-8")
    assert sample_markdown("paper-2014", SAMPLES["paper-2014"]) == expected


def test_paper_markdown_has_verdict_recommendations_and_evidence() -> None:
    out = invoke(["analyze", "samples/paper-2014", "--tz", "-07:00", "--format", "markdown", "--top", "2"]).stdout
    lines = out.splitlines()
    assert lines[2] == (
        "**54% of slow-write time (2 writes >= 100 ms) was standby I/O (RFS write); network 46%, other RFS time 0%.**"
    )
    assert (
        "| Remote writes | 66 sent by the primary, 66 received by the standby, 66 matched (match rate 100.0%) |"
        in lines
    )
    headings = [line for line in lines if line.startswith("#")]
    assert headings == [
        "# dgtrace: Data Guard SYNC remote writes",
        "## Facts",
        "## Recommendations",
        "### Standby redo logs: a single member each, on the fastest disk group",
        "### Consider Fast Sync (SYNC NOAFFIRM)",
        "### Network: socket buffers at 3 x BDP, SDU 65535, and the network path",
        "## Log switches",
        "## Top 2 slowest writes",
        "## LGWR warnings (long writes, broadcast waits)",
        "## Notes",
    ]
    top = [line for line in lines if line.startswith("| 2014-12-02 15:46:")]
    assert top[0].startswith("| 2014-12-02 15:46:34.598000 | 1 | 1584 | 117468 | 163 | 0 | 162.679 | 0 |")
    assert "prim01/diag/rdbms/boston/boston1/trace/boston1_nss2_4401.trc:101<br>stby01/" in top[0]
    assert "Fast Sync is not available" in out  # the sample's traces are 11.2


def test_markdown_without_matched_writes() -> None:
    """Only the standby's traces: writes seen on one side, no breakdown, and why there is no recommendation."""
    out = io.StringIO()
    render_markdown(analyze(["samples/paper-2014/stby01"]), out, 10)
    text = out.getvalue()
    assert "**No remote write was matched: there is no breakdown to give.**" in text
    assert "No recommendation: no remote write was matched." in text
    assert "| 2014-12-02 15:46:29.211000 | 1 | 1584 | 117450 |  |  | 1.127 | 0 | one side only |  |" in text
    assert "| standby | no primary write with this thread/seq/msgid/oper in the time window | 66 |" in text


def test_table_cells_are_escaped_and_numbers_right_aligned() -> None:
    table = Table(("name", "ms", "empty"), [("a|b", "1,234.500", ""), ("two\nlines", "-0.5", "")], note="Some.")
    assert markdown_table(table) == [
        "Some.",
        "",
        "| name | ms | empty |",
        "|---|---:|---|",
        "| a\\|b | 1,234.500 |  |",
        "| two<br>lines | -0.5 |  |",
    ]
