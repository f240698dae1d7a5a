"""The terminal report: the answer first, every table laid out for the width (no number cut), bounded,
from the shared sections; COLUMNS, pipes and a real terminal; trace text cannot drive the terminal."""

from __future__ import annotations

import fcntl
import functools
import io
import itertools
import json
import os
import pty
import re
import select
import shutil
import struct
import subprocess
import sys
import termios
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from typer.testing import CliRunner

from analyzer.api import Analysis, Options, analyze, analyze_files
from analyzer.cli import app
from analyzer.report.context import Context, Table
from analyzer.report.html import render_html
from analyzer.report.markdown import render_markdown
from analyzer.report.sections import files_table, warnings_table
from analyzer.report.text import PIPE_WIDTH, layout, render_text, tails
from analyzer.simulate.options import SimOptions
from analyzer.simulate.runner import simulate
from tests.builders import ack, krs, primary_lines, read_trace, send, standby_lines
from tests.conftest import PAPER, write

#: a unit at the start of a line: the number before it would be on the line above
UNIT = re.compile(r"(ms|s|min|KiB|MiB|GiB|km)\b")
#: an ANSI escape sequence (colour, cursor) as rich writes them on a terminal
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07]*\x07")


@pytest.fixture(scope="module")
def busy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A simulated 19c set with many slow writes, LGWR warnings, log switches and long file names."""
    out = tmp_path_factory.mktemp("busy") / "a-rather-long-folder-name-for-an-upload" / "set"
    simulate(out, SimOptions(scenario="mixed", format_version="19c", writes=4000, threads=3, seed=5))
    return out


def _text(args: list[str], columns: int | None) -> str:
    env = {"COLUMNS": None if columns is None else str(columns), "NO_COLOR": "1"}
    result = CliRunner(env=env).invoke(app, ["analyze", *args])
    assert result.exit_code == 0, result.output
    return result.stdout


@functools.cache
def _doc(args: tuple[str, ...]) -> dict[str, object]:
    result = CliRunner().invoke(app, ["analyze", *args, "--format", "json"])
    doc: dict[str, object] = json.loads(result.stdout)
    return doc


def _numbers(doc: dict[str, object]) -> list[str]:
    """Numbers the report must show whole: the top writes' msgids and their rfs_io (3 decimals)."""
    top = doc["summary"]["top"]  # type: ignore[index]
    return [str(w["msgid"]) for w in top] + [f"{w['rfs_io_ms']:,.3f}" for w in top if w["rfs_io_ms"] is not None]


@pytest.mark.parametrize("columns", [40, 60, 80, 100, 120, 160, 200, None])
def test_no_number_is_cut_at_any_width(busy: Path, columns: int | None) -> None:
    """COLUMNS 40 to 200, and a pipe without COLUMNS (PIPE_WIDTH): nothing is cut (no ellipsis), no
    line is longer than the width, and the numbers of the slowest writes appear whole."""
    for args in (["samples/paper-2014", "--tz", "-07:00"], [str(busy)]):
        text = _text(args, columns)
        width = columns or PIPE_WIDTH
        assert "…" not in text
        assert max(len(line) for line in text.splitlines()) <= width
        for number in _numbers(_doc(tuple(args))):
            assert re.search(rf"(?<![\d.,]){re.escape(number)}(?![\d])", text), (columns, number)
        lines = text.splitlines()
        parted = [(a, b) for a, b in itertools.pairwise(lines) if re.search(r"\d$", a) and UNIT.match(b.lstrip())]
        assert parted == [], (columns, parted[:3])


def test_the_readme_layout_at_120_columns() -> None:
    """At 120 columns (and in a pipe) the slowest writes keep every column, the evidence as file:line."""
    text = _text(["samples/paper-2014", "--tz", "-07:00"], 120)
    assert " sent (UTC)      |        |      |        | total | network |  rfs_io | rfs_other |" in text
    assert " 15:46:34.598000 |      1 | 1584 | 117468 |   163 |       0 | 162.679 |         0 | rfs_io  |" in text
    assert "boston1_nss2_4401.trc:101" in text and "chicago1_rfs_8801.trc:144" in text
    assert text == _text(["samples/paper-2014", "--tz", "-07:00"], None)  # a pipe gets the same


def test_at_80_columns_secondary_columns_go_with_a_note_and_the_evidence_moves_under_the_table() -> None:
    text = _text(["samples/paper-2014", "--tz", "-07:00"], 80)
    assert "  117468: boston1_nss2_4401.trc:101  chicago1_rfs_8801.trc:144" in text
    said = " ".join(text.split())
    assert "Left out at this width: seq, thread (a wider terminal or --format markdown shows them)." in said
    assert "Trace files in                    samples/paper-2014" in text  # the common folder, said once


def test_tables_are_bounded_with_where_to_find_the_rest(busy: Path) -> None:
    warnings = len(_doc((str(busy),))["summary"]["lgwr_warnings"])  # type: ignore[index]
    assert warnings > 10
    text = _text([str(busy), "--top", "5"], 120)
    assert f"5 of {warnings:,} warnings (the longest); {warnings - 5:,} more: --format csv --table warnings." in text
    assert "5 of 12,000 writes (the slowest); 11,995 more: --format csv." in text
    table = text[text.index("LGWR warnings (long writes, broadcast waits)\n") : text.index("Coverage (every line")]
    assert len([line for line in table.splitlines() if re.match(r"^ \d\d:\d\d:\d\d", line)]) == 5


def test_the_answer_comes_first(busy: Path) -> None:
    lines = _text([str(busy)], 120).splitlines()
    assert lines[2].endswith(".") and "of slow-write time" in lines[2]  # the verdict sentence
    first = {
        h: next(i for i, line in enumerate(lines) if line.startswith(h))
        for h in ("Recommendations", "Log switches", "Files ", "Top 10 slowest")
    }
    assert first["Recommendations"] < first["Log switches"] < first["Files "] < first["Top 10 slowest"]
    assert lines[first["Recommendations"] + 2].lstrip().startswith("Evidence: standby I/O (RFS write) was 48%")


def test_a_very_narrow_table_becomes_name_value_lines() -> None:
    table = Table(("name", "value ms", "where"), [("x" * 30, "1,234.567", "a/b/c.trc:1")], paths=("where",))
    assert layout(table, 20, plain=True, short={}) is None
    text = _text(["samples/paper-2014", "--tz", "-07:00"], 30)
    assert "  msgid: 117468" in text and "  rfs_io ms: 162.679" in text


def test_shortest_unique_tails() -> None:
    labels = ["h1/diag/x/trace/a_nss2_1.trc", "h2/diag/x/trace/a_nss2_1.trc", "h1/diag/x/trace/b_rfs_2.trc"]
    assert tails(labels) == {
        "h1/diag/x/trace/a_nss2_1.trc": "h1/diag/x/trace/a_nss2_1.trc",
        "h2/diag/x/trace/a_nss2_1.trc": "h2/diag/x/trace/a_nss2_1.trc",
        "h1/diag/x/trace/b_rfs_2.trc": "b_rfs_2.trc",
    }


def _tails_by_definition(labels: list[str]) -> dict[str, str]:
    """Each label's shortest tail that no other label ends with at a path boundary, tried one by one."""
    split = {label: re.split(r"(?<=[/\\!])", label) for label in set(labels)}

    def clash(label: str, tail: str) -> bool:
        return any(o != label and o.endswith(tail) and o[: -len(tail)][-1:] in "/\\!" for o in split)

    out = {}
    for label, parts in split.items():
        tries = ("".join(parts[-n:]) for n in range(1, len(parts) + 1))
        out[label] = next((t for t in tries if not clash(label, t)), label)
    return out


_DIRS = st.lists(st.sampled_from(["a", "b", "trace", "diag", "n1", "up.zip!", "b.zip!"]), max_size=4)
_LABEL = st.tuples(_DIRS, st.sampled_from(["a", "x.trc", "b.trc"])).map(lambda p: "/".join([*p[0], p[1]]))


@given(st.lists(_LABEL.map(lambda label: label.replace("!/", "!")), max_size=12))
def test_shortest_unique_tails_as_defined(labels: list[str]) -> None:
    """The one-pass tails equal the definition, label against label, for any set of paths (an archive
    member's `!` a boundary too; a label that is another's tail, or equal to it)."""
    assert tails(labels) == _tails_by_definition(labels)


def test_trace_text_cannot_drive_the_terminal(tmp_path: Path) -> None:
    """A host name holding ANSI escapes (clear screen, colour) is shown as text, never sent raw."""
    lines = [
        "Trace file /u01/x/db1_nss2_1.trc",
        "Node name:\tprim\x1b[2J\x1b[31mred",
        "",
        "*** 2014-12-02 08:46:34.000",
        send(1),
        krs("2014-12-02 08:46:34.598", "5837 krsu.c"),
        krs("2014-12-02 08:46:34.600", "6058 krsu.c"),
        ack(1),
    ]
    write(tmp_path / "db1_nss2_1.trc", lines)
    text = _text([str(tmp_path)], 120)
    assert "\x1b" not in text
    assert "prim\\x1b[2J\\x1b[31mred" in text


def _in_a_terminal(args: list[str], columns: int) -> str:
    """`dgtrace ARGS` run in a real pseudo-terminal `columns` wide (no COLUMNS in its environment)."""
    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 50, columns, 0, 0))
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES", "NO_COLOR")}
    env["TERM"] = "xterm-256color"
    command = [sys.executable, "-m", "analyzer", *args]
    with subprocess.Popen(command, stdin=follower, stdout=follower, stderr=follower, env=env) as proc:
        os.close(follower)
        chunks = []
        while True:
            ready, _, _ = select.select([leader], [], [], 60)
            if not ready:
                break
            try:
                data = os.read(leader, 65536)
            except OSError:  # the terminal closed with the process
                break
            if not data:
                break
            chunks.append(data)
        proc.wait(timeout=60)
    os.close(leader)
    return ANSI.sub("", b"".join(chunks).decode("utf-8", "replace")).replace("\r\n", "\n")


@pytest.mark.slow
@pytest.mark.parametrize("columns", [80, 120])
def test_in_a_real_terminal(columns: int) -> None:
    """In a pseudo-terminal the report takes the terminal's width, draws boxes, and cuts no number."""
    text = _in_a_terminal(["analyze", str(PAPER), "--tz", "-07:00", "--quiet"], columns)
    assert "Top 10 slowest writes" in text and "117468" in text and "162.679" in text
    assert "…" not in text
    assert max(len(line) for line in text.splitlines()) <= columns
    assert "━" in text  # box drawing on a terminal
    if columns == 120:
        assert "1584" in text  # seq is shown at 120 columns


@pytest.mark.slow
def test_the_demo_in_a_terminal_120_wide() -> None:
    """`make demo` in a 120-column terminal shows the slowest writes as the README does."""
    if shutil.which("make") is None:
        pytest.skip("make is not installed")
    text = _in_a_terminal(["analyze", "samples/paper-2014", "--tz", "-07:00"], 120)
    row = next(line for line in text.splitlines() if "117468" in line and "162.679" in line)
    assert re.search(r"15:46:34\.598000\s+1\s+1584\s+117468\s+163\s+0\s+162\.679\s+0\s+rfs_io\s+boston1_nss2_4401", row)


# --- what the traces say beyond the writes: both kinds of LGWR warning, events, gaps, destinations


def _report(a: Analysis) -> str:
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
    text = _report(rich_set)
    markdown, html = io.StringIO(), io.StringIO()
    render_markdown(rich_set, markdown, 5)
    render_html(rich_set, html, 5)
    for report in (text, markdown.getvalue(), html.getvalue()):
        assert "LGWR warnings (long writes, broadcast waits)" in report
        assert "broadcast wait" in report and "sync_switch" in report and "log_switch" in report
        assert "Missing segments" in report and "_1.trc" in report
        assert "Redo transport destinations (alert logs)" in report and "LOG_ARCHIVE_DEST_2" in report
    assert "more fall in 2 missing segment(s): see Missing segments" in text


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
    analysis = analyze_files(files, [], Options())
    text = _report(analysis)
    (nss,) = [row for row in files_table(Context.of(analysis)).rows if row[0] == "db1_nss2_5.trc"]
    assert "2014-12-31 23:59:59" in nss and "2015-01-01 00:00:01" in nss
    (warning,) = warnings_table(Context.of(analysis), 5).rows
    assert warning[1:5] == ("long write", "1", "120", "0")
    assert "long write" in text


def test_lines_with_bytes_that_are_not_text_are_said(tmp_path: Path) -> None:
    """A trace with a few damaged lines: read, and the report says how many lines hold such bytes."""
    trace = tmp_path / "db1_nss2_5.trc"
    lines = [line.encode() for line in primary_lines([(1, "2024-01-01 00:00:00.100000", "2024-01-01 00:00:00.103000")])]
    trace.write_bytes(b"\n".join([*lines, b"junk \xff\xfe here", *lines[:1]]) + b"\n")
    text = " ".join(_report(analyze([str(trace)], Options())).split())  # the note may wrap
    assert "1 of 6 line(s) hold bytes that are not text: replaced" in text
