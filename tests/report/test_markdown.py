"""The Markdown report: golden output of the paper sample, its sections, and inputs with nothing to report."""

from __future__ import annotations

import io
import re
from pathlib import Path

import pytest

from analyzer.api import analyze
from analyzer.report.markdown import Table, escape, markdown_table, render_markdown
from scripts.regen_golden import SAMPLES, sample_markdown
from tests.builders import ack, krs, send
from tests.conftest import ROOT, invoke, write

GOLDEN = ROOT / "tests" / "golden"


def test_paper_markdown_matches_golden() -> None:
    """tests/golden/paper-2014.md is written by scripts/regen_golden.py (`make golden`), never by hand."""
    expected = (GOLDEN / "paper-2014.md").read_text(encoding="utf-8")
    assert sample_markdown("paper-2014", SAMPLES["paper-2014"]) == expected


def test_paper_markdown_has_verdict_recommendations_and_evidence() -> None:
    out = invoke(["analyze", "samples/paper-2014", "--tz", "-07:00", "--format", "markdown", "--top", "2"]).stdout
    lines = out.splitlines()
    assert lines[2] == (
        "**Isolated outliers: 54% of slow-write time (2 writes >= 100 ms) was standby I/O (RFS write); network 46%,"
        " other RFS time 0%.**"
    )
    assert (
        "| Remote writes | 66 sent by the primary, 66 received by the standby, 66 matched (match rate 100.0%) |"
        in lines
    )
    headings = [line for line in lines if line.startswith("#")]
    assert headings == [
        "# dgtrace: Data Guard SYNC remote writes",
        "## Assessment",
        "## Redo transport destinations",
        "## Recommendations",
        "### Standby I/O outliers: the spikes of the standby storage",
        "### Network stalls: interface drops, retransmits and the path",
        "## Log switches",
        "## Notes and caveats",
        "## What if: Fast Sync",
        "## Facts",
        "## Timeline",
        "## Percentiles (ms)",
        "## Histogram (writes per bucket, as V$EVENT_HISTOGRAM)",
        "## Verdicts",
        "## Top 2 slowest writes",
        "## Clock offset (standby minus primary)",
        "## LGWR warnings (long writes, broadcast waits)",
        "## Unmatched messages",
        "## Unparsed lines",
        "## Coverage (every line: parsed + ignored + unparsed)",
        "## Files",
    ]
    assert "| rfs_io | 40 | 222 | 1 | 163 |" in lines  # the verdicts: writes and time by largest component
    assert "| prim01/diag/rdbms/boston/boston1/trace/boston1_nss2_4401.trc | 164 | 161 | 3 | 0 |" in lines
    assert "| rfs_io | 66 | 3.378 | 0.938 | 1.262 | 1.471 | 162.679 |" in lines  # p50, p90, p99, max per component
    assert "**Evidence:** From 2 slow writes only, treat as a hint: standby I/O (RFS write) was 54%" in out
    top = [line for line in lines if line.startswith("| 2014-12-02 15:46:")]
    assert top[0].startswith("| 2014-12-02 15:46:34.598000 | 1 | 1584 | 117468 | 163 | 0 | 162.679 | 0 | rfs_io |")
    assert "prim01/diag/rdbms/boston/boston1/trace/boston1_nss2_4401.trc:101<br>stby01/" in top[0]
    assert "Fast Sync is not an option here: these traces come from Oracle 11.2.0.4.0" in out  # 11.2: a note


def test_markdown_without_matched_writes() -> None:
    """Only the standby's traces: writes seen on one side, no breakdown, and why there is no recommendation."""
    out = io.StringIO()
    render_markdown(analyze(["samples/paper-2014/stby01"]), out, 10)
    text = out.getvalue()
    assert "**No remote write was matched: there is no breakdown to give.**" in text
    assert "No recommendation: no remote write was matched." in text
    assert "| 2014-12-02 15:46:29.211000 | 1 | 1584 | 117450 |  |  | 1.127 | 0 | one side only |" in text
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


@pytest.mark.parametrize(
    ("raw", "shown"),
    [
        ("prim02<script>alert(6)</script>", "prim02\\<script\\>alert(6)\\</script\\>"),
        ("![x](http://evil.example/p.png)", "!\\[x\\](http://evil.example/p.png)"),
        ("[click](javascript:alert(1))", "\\[click\\](javascript:alert(1))"),
        ("a|b`code`", "a\\|b\\`code\\`"),
        ("back\\slash", "back\\\\slash"),
    ],
)
def test_trace_text_opens_no_tag_link_image_or_code(raw: str, shown: str) -> None:
    assert escape(raw) == shown


def test_hostile_host_and_file_names_stay_text(tmp_path: Path) -> None:
    """A host name and a file name from the traces that look like HTML, an image or a link: the Markdown
    report holds them escaped in every table and sentence, and no raw `<script` or `](`."""
    host = "prim02<script>alert(6)</script>"
    lines = [
        "Trace file /u01/x/db1_nss2_1.trc",
        f"Node name:\t{host}",
        "Instance name: db1",
        "Unix process pid: 1, image: oracle@x (NSS2)",
        "",
        "*** 2014-12-02 08:46:34.000",
        send(1),
        krs("2014-12-02 08:46:34.598", "5837 krsu.c"),
        krs("2014-12-02 08:46:34.600", "6058 krsu.c"),
        ack(1),
    ]
    folder = tmp_path / "![x](http:" / "[click](javascript:alert(1))"
    write(folder / "db1_nss2_1.trc", lines)
    out = invoke(["analyze", str(tmp_path), "--format", "markdown"]).stdout
    assert re.search(r"(?<!\\)<(?!br>)", out) is None  # every < but our own <br> escaped
    assert re.search(r"(?<!\\)[\[\]]", out) is None  # no bracket that could open a link or an image
    assert "prim02\\<script\\>alert(6)\\</script\\>" in out
