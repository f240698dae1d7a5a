"""The command line: formats, the JSON/CSV contract, errors and exit codes."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import TextIO

import pytest
from typer.testing import CliRunner

from analyzer import cli
from analyzer.cli import app
from analyzer.errors import ExitCode
from analyzer.report.formats import OutputFormat
from analyzer.schemas import TIMELINE, WRITES
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
    for heading in (
        "Files",
        "Components (ms)",
        "Histogram",
        "Verdicts",
        "Top 10 slowest writes",
        "LGWR warnings (long writes, broadcast waits)",
        "Coverage",
    ):
        assert heading in out
    assert "Slow writes (total >= 100 ms): 2." in out
    assert "boston1_nss2_4401.trc:101" in out  # evidence file:line of msgid 117468


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
    assert "bad time zone offset" in result.stderr


def test_directory_without_traces(tmp_path: Path) -> None:
    write(tmp_path / "notes.txt", ["hello"])
    result = invoke(["analyze", str(tmp_path)], code=ExitCode.NO_INPUT)
    assert "no trace files found" in result.stderr


def test_file_with_none_of_our_lines_is_listed_not_an_error(tmp_path: Path) -> None:
    trace = write(
        tmp_path / "db1_ora_123.trc",
        ["PARSING IN CURSOR #1 len=5", "select 1 from dual", "END OF STMT"],
    )
    doc = json.loads(invoke(["analyze", str(trace), "--format", "json"]).stdout)
    assert doc["files"][0]["role"] == "other"
    assert doc["writes"] == []
    assert doc["coverage"][0]["lines"] == 3


def test_primary_only_still_reports_with_a_note() -> None:
    out = invoke(["analyze", "samples/paper-2014/prim01"]).stdout
    assert "no standby RFS trace" in out
    assert "Remote writes: 33 on the primary, 0 on the standby, 0 matched" in out
    assert "UTC assumed" in out


def test_version() -> None:
    assert invoke(["--version"]).stdout.startswith("dgtrace ")


def test_long_error_is_one_line(tmp_path: Path) -> None:
    deep = tmp_path / ("x" * 120) / "missing.trc"
    result = invoke(["analyze", str(deep)], code=ExitCode.USAGE)
    assert result.stderr.count("\n") == 1 and result.stderr.startswith("dgtrace: error: ")


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


def test_internal_error_is_one_line_and_debug_shows_the_traceback(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    import analyzer.cli

    def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError("boom")

    monkeypatch.setattr(analyzer.cli, "analyze", broken)
    result = invoke(["analyze", PAPER], code=ExitCode.INTERNAL)
    assert result.stderr.startswith("dgtrace: internal error: RuntimeError: boom") and result.stderr.count("\n") == 1
    debug = CliRunner().invoke(app, ["--debug", "analyze", PAPER])
    assert isinstance(debug.exception, RuntimeError)


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
