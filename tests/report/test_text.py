"""The terminal report: files, warnings of both kinds, the events around the writes, gaps, destinations."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from analyzer.api import Analysis, Options, analyze, analyze_files
from analyzer.report.html import render_html
from analyzer.report.markdown import render_markdown
from analyzer.report.text import render_text
from analyzer.simulate.options import SimOptions
from analyzer.simulate.runner import simulate
from tests.builders import primary_lines, read_trace, standby_lines


def _text(a: Analysis) -> str:
    out = io.StringIO()
    render_text(a, out, 5)
    return out.getvalue()


@pytest.fixture(scope="module")
def rich_set(tmp_path_factory: pytest.TempPathFactory) -> Analysis:
    """19c: broadcast waits, log file sync switches, alert logs, segments with one deleted."""
    out = tmp_path_factory.mktemp("report") / "set"
    options = SimOptions(
        writes=1500,
        threads=1,
        format_version="19c",
        lgwr_broadcast_rate=0.05,
        lgwr_mode_switch_every=300,
        log_switch_every=400,
        extras=True,
        segment_bytes=64 * 1024,
        drop_segment=1,
        seed=3,
    )
    simulate(out, options)
    return analyze([str(out)], Options())


def test_the_sections_of_every_human_report(rich_set: Analysis) -> None:
    text = _text(rich_set)
    markdown, html = io.StringIO(), io.StringIO()
    render_markdown(rich_set, markdown, 5)
    render_html(rich_set, html, 5)
    for report in (text, markdown.getvalue(), html.getvalue()):
        assert "LGWR warnings (long writes, broadcast waits)" in report
        assert "broadcast wait" in report and "sync_switch" in report and "log_switch" in report
        assert "Missing segments" in report and "_1.trc" in report
        assert "Redo transport destinations (alert logs)" in report and "LOG_ARCHIVE_DEST_2" in report
    assert "missing segment(s): see below." in text


def test_the_last_stamp_keeps_its_date_and_zero_kb_shows() -> None:
    """A file from one day to the next: its last stamp has its own date; a 0 KB write prints 0."""
    p = primary_lines(
        [
            (1, "2014-12-31 23:59:59.100000", "2014-12-31 23:59:59.103000"),
            (2, "2015-01-01 00:00:01.100000", "2015-01-01 00:00:01.103000"),
        ]
    )
    s = standby_lines(
        [
            (1, "2014-12-31 23:59:59.101000", "2014-12-31 23:59:59.102000", [("RFS write", 500)]),
            (2, "2015-01-01 00:00:01.101000", "2015-01-01 00:00:01.102000", [("RFS write", 500)]),
        ]
    )
    lgwr = ["*** 2015-01-01 00:00:01.150", "Warning: log write elapsed time 120ms, size 0KB"]
    files = [read_trace(p, "db1_nss2_5.trc"), read_trace(s, "sb1_rfs_6.trc"), read_trace(lgwr, "db1_lgwr_1.trc")]
    text = _text(analyze_files(files, [], Options()))
    nss = next(line for line in text.splitlines() if line.startswith(" db1_nss2_5.trc"))
    assert "2014-12-31 23:59:59" in nss and "2015-01-01 00:00:01" in nss
    warning = next(line for line in text.splitlines() if line.startswith(" 2015-01-01 00:00:01.150"))
    assert [cell.strip() for cell in warning.split("|")][3:5] == ["120", "0"]


def test_a_file_of_bytes_that_are_not_text_is_said(tmp_path: Path) -> None:
    binary = tmp_path / "lobread.trc.lzma"
    binary.write_bytes(bytes(range(128, 256)) * 8 + b"\n" + bytes(range(200, 256)) * 3)
    text = _text(analyze([str(binary)], Options()))
    assert "hold bytes that are not text: it looks like binary data" in text
