"""The command line: formats, the JSON/CSV contract, errors and exit codes."""

from __future__ import annotations

import csv
import errno
import io
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any, TextIO

import pytest

from analyzer import cli
from analyzer.base.errors import ExitCode
from analyzer.base.schemas import TIMELINE, WRITES
from analyzer.report.formats import OutputFormat
from tests.conftest import invoke, write

PAPER = "samples/paper-2014"
WRITE_KEYS = {
    "thread",
    "seq",
    "msgid",
    "oper",
    "sent_at",
    "total_ms",
    "rfs_ms",
    "network_ms",
    "rfs_io_ms",
    "rfs_other_ms",
    "verdict",
    "slow",
    "primary_file",
    "primary_line",
    "standby_file",
    "standby_line",
}


def test_text_report_sections() -> None:
    out = invoke(["analyze", PAPER, "--tz", "-07:00"]).stdout
    lines = out.splitlines()
    assert lines[2].startswith(
        "Isolated outliers: 54% of slow-write time (2 writes >= 100 ms) was standby I/O (RFS write)"
    )
    headings = [
        "Assessment",
        "Redo transport destinations",
        "Recommendations",
        "Log switches",
        "No log switch",
        "Notes and caveats",
        "Facts",
        "Percentiles (ms)",
        "Histogram",
        "Verdicts",
        "Top 10 slowest writes",
        "Clock offset",
        "LGWR warnings (long writes, broadcast waits)",
        "Coverage",
        "Files",
    ]
    at = 0
    for heading in headings:  # the answer first, in this order
        at = next(i for i, line in enumerate(lines) if i > at and line.startswith(heading))
    assert "  1. Standby I/O outliers: the spikes of the standby storage" in lines
    assert any(line.startswith("     Evidence: From 2 slow writes only, treat as a hint:") for line in lines)
    assert "Slow writes                       2 with total >= 100 ms" in lines
    assert "boston1_nss2_4401.trc:101" in out  # evidence file:line of msgid 117468
    assert all(line == line.rstrip() for line in lines)  # no trailing spaces in a pipe


def test_json_contract() -> None:
    doc = json.loads(invoke(["analyze", PAPER, "--format", "json", "--tz", "-07:00"]).stdout)
    assert {"summary", "writes", "unmatched", "files", "coverage"} <= set(doc)
    assert all(set(w) >= WRITE_KEYS for w in doc["writes"])
    slow = [w for w in doc["writes"] if w["slow"]]
    assert [(w["msgid"], w["verdict"]) for w in slow] == [(117468, "rfs_io"), (124705, "network")]
    assert slow[0]["sent_at"] == "2014-12-02T15:46:34.598000Z"
    s = doc["summary"]
    assert (s["threshold_ms"], s["matched_writes"], s["match_rate"], s["slow_writes"]) == (
        100.0,
        66,
        1.0,
        2,
    )
    assert [c["component"] for c in s["components"]] == [
        "total",
        "network",
        "rfs_io",
        "rfs_other",
        "rfs",
    ]
    assert s["histograms"]["total"][-1] == {"bucket": "<256", "count": 2}
    for row in doc["coverage"]:
        assert row["lines"] == row["parsed"] + row["ignored"] + row["unparsed"]


def test_csv_has_the_writes_columns() -> None:
    out = invoke(["analyze", PAPER, "--format", "csv"]).stdout
    rows = list(csv.DictReader(io.StringIO(out)))
    assert list(rows[0]) == WRITES.names()
    assert len(rows) == 66
    assert {r["msgid"]: r["verdict"] for r in rows if r["slow"] == "true"} == {
        "117468": "rfs_io",
        "124705": "network",
    }


def test_threshold_and_top_options() -> None:
    doc = json.loads(invoke(["analyze", PAPER, "--format", "json", "--threshold", "150", "--top", "1"]).stdout)
    assert doc["summary"]["slow_writes"] == 1
    assert [w["msgid"] for w in doc["summary"]["top"]] == [117468]


def test_output_file(tmp_path: Path) -> None:
    target = tmp_path / "report.json"
    result = invoke(["analyze", PAPER, "--format", "json", "--output", str(target)])
    assert (result.stdout, result.stderr) == ("", "")  # no progress bar when stderr is no terminal
    assert json.loads(target.read_text())["summary"]["matched_writes"] == 66


def test_failed_render_keeps_the_previous_report(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The report streams to a temporary file renamed into place: a render that fails midway
    leaves the old report as it was and no temporary file."""
    target = tmp_path / "report.json"
    target.write_text("old report")

    def broken(a: object, out: TextIO, top: int) -> None:
        out.write("half a report")
        raise RuntimeError("renderer failed")

    monkeypatch.setitem(cli.RENDERERS, OutputFormat.JSON, broken)
    result = invoke(["analyze", PAPER, "--format", "json", "--output", str(target)], code=ExitCode.INTERNAL)
    assert "renderer failed" in result.stderr
    assert target.read_text() == "old report"
    assert sorted(tmp_path.iterdir()) == [target]


def test_output_to_a_device_is_written_directly() -> None:
    """`--output /dev/null` writes to the device (no temporary file next to it)."""
    result = invoke(["analyze", PAPER, "--format", "json", "--output", "/dev/null"])
    assert (result.stdout, result.stderr) == ("", "")
    assert not Path("/dev/.null.part").exists()


def test_missing_path_is_a_usage_error() -> None:
    result = invoke(["analyze", "no/such/dir"], code=ExitCode.USAGE)
    assert "no/such/dir: no such file or directory" in result.stderr
    assert "Traceback" not in result.stderr + result.stdout


def test_bad_tz_is_a_usage_error() -> None:
    result = invoke(["analyze", PAPER, "--tz", "Mars/Olympus"], code=ExitCode.USAGE)
    assert "--tz: bad time zone 'Mars/Olympus'" in result.stderr


def test_directory_without_traces(tmp_path: Path) -> None:
    write(tmp_path / "notes.txt", ["hello"])
    result = invoke(["analyze", str(tmp_path)], code=ExitCode.NO_INPUT)
    assert "no trace files found" in result.stderr


def test_a_file_with_none_of_our_lines_is_no_usable_input(tmp_path: Path) -> None:
    trace = write(
        tmp_path / "db1_ora_123.trc",
        ["PARSING IN CURSOR #1 len=5", "select 1 from dual", "END OF STMT"],
    )
    result = invoke(["analyze", str(trace), "--format", "json"], code=ExitCode.NO_INPUT)
    assert result.stdout == "" and result.stderr.count("\n") == 1
    assert "no event 16410 message in the 1 file read" in result.stderr
    assert "none of its 3 lines is a 16410 message" in result.stderr
    inventory = json.loads(invoke(["inventory", str(trace), "--format", "json"]).stdout)  # still listed
    assert inventory["files"][0]["role"] == "other" and inventory["files"][0]["lines"] == 3


def test_primary_only_still_reports_with_a_note() -> None:
    out = invoke(["analyze", "samples/paper-2014/prim01"]).stdout
    assert "no standby RFS trace" in out
    assert "33 sent by the primary, 0 received by the standby, 0 matched" in out
    assert "UTC assumed" in out


def test_since_until_with_offsets_of_either_sign() -> None:
    """The same window written at UTC-7, at UTC+5:30, in UTC, and as local time at --tz."""
    expected = None
    for since, until in [
        ("2014-12-02T08:46:49-07:00", "2014-12-02T08:47:00-07:00"),
        ("2014-12-02T21:16:49+05:30", "2014-12-02T21:17:00+05:30"),
        ("2014-12-02T15:46:49Z", "2014-12-02T15:47:00Z"),
        ("2014-12-02 08:46:49", "2014-12-02 08:47:00"),
    ]:
        args = ["analyze", PAPER, "--tz", "-07:00", "--format", "json", "--since", since, "--until", until]
        doc = json.loads(invoke(args).stdout)
        msgids = [w["msgid"] for w in doc["writes"]]
        assert msgids and all(w["sent_at"] >= "2014-12-02T15:46:49" for w in doc["writes"])
        assert expected is None or msgids == expected
        expected = msgids
        assert doc["summary"]["primary_writes"] == len(msgids) and 124705 in msgids and 117468 not in msgids


def test_bad_since_is_a_usage_error() -> None:
    assert "--since: cannot read" in invoke(["analyze", PAPER, "--since", "yesterday"], code=ExitCode.USAGE).stderr


def test_clock_offset_override() -> None:
    doc = json.loads(
        invoke(["analyze", PAPER, "--tz", "-07:00", "--format", "json", "--clock-offset", "stby01=0.25"]).stdout
    )
    clock = doc["summary"]["clock"]
    assert {(c["standby_host"], c["offset_ms"], c["bound_ms"], c["source"]) for c in clock} == {
        ("stby01", 0.25, 0.0, "--clock-offset")
    }
    w = next(w for w in doc["writes"] if w["msgid"] == 124705)
    assert w["net_out_ms"] + w["net_back_ms"] == w["network_ms"]
    # received 50.016 (stamp) refined by its first wait to 50.016326: 137.326 ms after the send
    assert abs(w["net_out_ms"] - (137.326 - 0.25)) < 1e-9


def test_timeline_csv_from_the_command_line() -> None:
    out = invoke(["analyze", "samples/paper-2014", "--tz", "-07:00", "--format", "csv", "--table", "timeline"]).stdout
    rows = list(csv.DictReader(io.StringIO(out)))
    assert list(rows[0]) == TIMELINE.names()
    assert [(r["minute"], r["thread"], r["writes"], r["slow_writes"]) for r in rows] == [
        ("2014-12-02T15:46:00.000000Z", "1", "33", "1"),
        ("2014-12-02T15:46:00.000000Z", "2", "33", "1"),
    ]
    assert rows[0]["total_p99_ms"] == "163.0"


def test_table_is_only_for_csv() -> None:
    result = invoke(["analyze", "samples/paper-2014", "--table", "timeline"], code=2)
    assert "--table applies to --format csv only" in result.stderr


# --- exit codes -------------------------------------------------------------------------------


def _zip(path: Path) -> Path:
    import zipfile

    with zipfile.ZipFile(path, "w") as z:
        z.writestr("word/document.xml", "<w:document>" + "x" * 5000 + "</w:document>")
    return path


@pytest.mark.parametrize(
    ("name", "make", "why"),
    [
        ("random.trc", lambda p: p.write_bytes(bytes(range(256)) * 400), "random.trc: not a text trace: binary data"),
        # a .docx renamed .trc: opened as the zip it is, which holds no trace
        (
            "report.trc",
            lambda p: _zip(p),
            "report.trc!word/document.xml: not a trace file (*.trc) or alert log (alert_*.log) by its name",
        ),
        (
            "slides.trc",
            lambda p: p.write_bytes(b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n" + bytes(range(256)) * 200),
            "slides.trc: not a text trace: a PDF document",
        ),
        ("upload", lambda p: _zip(p), "upload!word/document.xml: not a trace file"),  # an archive without extension
    ],
)
def test_input_with_nothing_usable_exits_3(tmp_path: Path, name: str, make: Any, why: str) -> None:
    path = tmp_path / name
    make(path)
    result = invoke(["analyze", str(path)], code=ExitCode.NO_INPUT)
    assert result.stdout == "" and result.stderr.count("\n") == 1
    assert result.stderr.startswith(f"dgtrace: error: no trace files found in {path} (1 input(s) skipped; first: ")
    assert why in result.stderr


def test_text_without_16410_messages_exits_3(tmp_path: Path) -> None:
    """A text file read to its end without one 16410 message (a foreground trace) is no usable input."""
    path = write(tmp_path / "cdb1_ora_1234.trc", ["WAIT #0: nam='log file sync' ela= 812 buffer#=1 sync scn=2 tim=5"])
    result = invoke(["analyze", str(path)], code=ExitCode.NO_INPUT)
    assert result.stderr.startswith("dgtrace: error: no event 16410 message in the 1 file read")


def test_an_empty_since_until_window_exits_3() -> None:
    result = invoke(["analyze", PAPER, "--tz", "-07:00", "--since", "2030-01-01T00:00:00Z"], code=ExitCode.NO_INPUT)
    assert "no remote write sent in the --since/--until window [2030-01-01 00:00:00, ...) UTC" in result.stderr
    assert "the traces span 2014-12-02 15:46:28 to 2014-12-02 15:46:54 UTC" in result.stderr


# --- writing the report -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("target", "reason"),
    [
        ("/nonexistent/dir/out.html", "cannot write the report to /nonexistent/dir/out.html: the folder"),
        ("/dev/full", "cannot write the report to /dev/full: No space left on device"),
    ],
)
def test_output_that_cannot_be_written(target: str, reason: str) -> None:
    for output_format in ("csv", "json", "text"):
        result = invoke(["analyze", PAPER, "--format", output_format, "-o", target], code=ExitCode.OUTPUT)
        assert result.stderr.startswith(f"dgtrace: error: {reason}") and result.stderr.count("\n") == 1


def test_output_naming_a_directory(tmp_path: Path) -> None:
    result = invoke(["analyze", PAPER, "-o", str(tmp_path)], code=ExitCode.OUTPUT)
    assert result.stderr == f"dgtrace: error: cannot write the report to {tmp_path}: it is a directory\n"


def test_output_into_a_folder_that_takes_no_new_file(tmp_path: Path) -> None:
    """A read-only folder; root writes into those, but not into /sys, whose folders take no new file
    (EACCES, or EROFS where it is mounted read-only, as in most containers)."""
    if os.geteuid() != 0:
        folder, reasons = tmp_path / "ro", ["Permission denied"]
        folder.mkdir()
        folder.chmod(0o555)
    elif Path("/sys/kernel").is_dir():
        folder, reasons = Path("/sys"), ["Permission denied", "Read-only file system"]
    else:
        pytest.skip("no sysfs here")
    target = folder / "dgtrace-report.txt"
    result = invoke(["analyze", PAPER, "-o", str(target)], code=ExitCode.OUTPUT)
    assert result.stderr in [f"dgtrace: error: cannot write the report to {target}: {why}\n" for why in reasons]
    assert not target.exists()


def test_output_under_a_regular_file(tmp_path: Path) -> None:
    """No one, root included, creates a file under a regular file: said as it is."""
    (tmp_path / "notes.txt").write_text("a file")
    target = tmp_path / "notes.txt" / "r.txt"
    result = invoke(["analyze", PAPER, "-o", str(target)], code=ExitCode.OUTPUT)
    expected = f"dgtrace: error: cannot write the report to {target}: {tmp_path / 'notes.txt'} is not a folder\n"
    assert result.stderr == expected
    assert (tmp_path / "notes.txt").read_text() == "a file"


def test_a_full_disk_keeps_the_earlier_report_and_leaves_no_partial_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "report.json"
    target.write_text("earlier report")

    def full(a: object, out: TextIO, top: int) -> None:
        out.write("half a report")
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setitem(cli.RENDERERS, OutputFormat.JSON, full)
    result = invoke(["analyze", PAPER, "--format", "json", "-o", str(target)], code=ExitCode.OUTPUT)
    assert result.stderr == f"dgtrace: error: cannot write the report to {target}: No space left on device\n"
    assert target.read_text() == "earlier report" and sorted(tmp_path.iterdir()) == [target]


def test_the_temporary_file_follows_no_planted_link_and_has_a_random_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A link planted at the old fixed temporary name is left alone; the report is written through a
    new file of a random name, created exclusively, and renamed over the target."""
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    target = tmp_path / "report.csv"
    (tmp_path / ".report.csv.part").symlink_to(victim)
    seen: list[str] = []
    real = cli.CSV_TABLES[cli.CsvTable.WRITES]

    def spying(a: Any, out: TextIO, top: int) -> None:
        seen.extend(sorted(p.name for p in tmp_path.iterdir()))
        real(a, out, top)

    monkeypatch.setitem(cli.CSV_TABLES, cli.CsvTable.WRITES, spying)
    invoke(["analyze", PAPER, "--format", "csv", "-o", str(target)])
    invoke(["analyze", PAPER, "--format", "csv", "-o", str(target)])
    assert victim.read_text() == "precious"
    parts = [name for name in seen if name.endswith(".part") and name != ".report.csv.part"]
    assert len(parts) == 2 and parts[0] != parts[1] and all(p.startswith(".report.csv.") for p in parts)
    assert target.read_text().startswith("thread,seq,msgid")
    assert oct(target.stat().st_mode & 0o777) == oct(0o666 & ~_umask())


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


@pytest.mark.slow  # a pipeline of processes, ~1 s each
@pytest.mark.parametrize(
    ("args", "lines"),
    [(["--format", "csv"], 1), (["--format", "json"], 3), ([], 1), (["--format", "markdown"], 2)],
)
def test_a_closed_pipe_ends_quietly(args: list[str], lines: int) -> None:
    """`dgtrace ... | head -N`: no "internal error", no traceback; exit 141 (SIGPIPE), or 0 when the
    report was written before the reader left."""
    command = f"{sys.executable} -m analyzer analyze {PAPER} --tz -07:00 {' '.join(args)} | head -{lines}"
    run = subprocess.run(
        ["bash", "-c", f"set -o pipefail; {command}; echo rc=$?"], capture_output=True, text=True, timeout=120
    )
    assert run.stderr == ""
    assert run.stdout.rstrip().rsplit("rc=", 1)[1] in ("0", "141")


@pytest.mark.slow
def test_a_closed_pipe_on_a_big_report_exits_141(tmp_path: Path) -> None:
    from analyzer.simulate.options import SimOptions
    from analyzer.simulate.runner import simulate

    simulate(tmp_path / "set", SimOptions(writes=3000, seed=2))
    for args in ("--format csv", "--format json", "--format csv --table events"):
        command = f"{sys.executable} -m analyzer analyze {tmp_path / 'set'} {args} | head -1 > /dev/null"
        run = subprocess.run(["bash", "-c", f"set -o pipefail; {command}; echo $?"], capture_output=True, text=True)
        assert (run.stdout.strip(), run.stderr) == ("141", ""), args


# --- options ----------------------------------------------------------------------------------


def test_bad_numbers_are_usage_errors() -> None:
    result = invoke(["analyze", PAPER, "--threshold", "-1"], code=ExitCode.USAGE)
    assert result.stderr == "dgtrace: error: --threshold must be a number of ms of at least 0, not -1\n"


def test_warnings_and_unmatched_tables() -> None:
    out = invoke(["analyze", PAPER, "--tz", "-07:00", "--format", "csv", "--table", "warnings"]).stdout
    rows = list(csv.DictReader(io.StringIO(out)))
    assert [(r["msgid"], r["verdict"], r["elapsed_ms"]) for r in rows] == [
        ("117468", "rfs_io", "163"),
        ("124705", "network", "138"),
    ]
    out = invoke(["analyze", "samples/paper-2014/stby01", "--format", "csv", "--table", "unmatched"]).stdout
    rows = list(csv.DictReader(io.StringIO(out)))
    assert len(rows) == 66 and {r["side"] for r in rows} == {"standby"}


def test_events_name_the_line_of_every_event() -> None:
    out = invoke(["analyze", PAPER, "--tz", "-07:00", "--format", "csv", "--table", "events"]).stdout
    rows = list(csv.DictReader(io.StringIO(out)))
    first = {r["event"]: r["line"] for r in rows if r["msgid"] == "117468"}
    assert first == {"send": "101", "receive": "144", "finish": "149", "ack": "105"}  # each message's own line
    assert all(r["line"] for r in rows)
