"""`dgtrace analyze --baseline / --awr / --distance-km`: every new figure in every format, and the
files that cannot be read named with the reason (exit 2)."""

from __future__ import annotations

import csv
import html
import io
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from analyzer.base.errors import ExitCode
from analyzer.cli import app
from analyzer.simulate.options import SimOptions
from analyzer.simulate.runner import simulate
from tests.conftest import ROOT, invoke

FIXTURES = Path("tests/fixtures")
BASELINES = [FIXTURES / "oratcptest" / name for name in ("sync-no-write.txt", "sync-disk-write.txt", "async.txt")]
#: the primary's AWR and the standby's Statspack of the simulated set's hours (seed 7 at +02:00)
REPORTS = [FIXTURES / "awr" / "awr-19c-sim-primary.txt", FIXTURES / "awr" / "statspack-19c-sim-standby.txt"]


@pytest.fixture(scope="module")
def incident(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    """`analyze` arguments: a standby I/O incident with its baseline, its reports and its distance."""
    out = tmp_path_factory.mktemp("incident")
    simulate(out, SimOptions(scenario="standby-io", writes=600, seed=7, primary_tz="+02:00", standby_tz="+02:00"))
    args = ["analyze", str(out), "--distance-km", "80"]
    for path in BASELINES:
        args += ["--baseline", str(path)]
    for path in REPORTS:
        args += ["--awr", str(path)]
    return args


@pytest.fixture(scope="module")
def document(incident: list[str]) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads(invoke([*incident, "--format", "json"]).stdout)
    return doc


def _findings(doc: dict[str, Any]) -> list[str]:
    """Every sentence the comparisons say, as the JSON has them."""
    s = doc["summary"]
    out = [s["what_if"]["fast_sync"]["finding"], s["what_if"]["at_round_trip"]["finding"]]
    out += [run["finding"] for run in s["baseline"]["runs"]] + [s["baseline"]["bandwidth_delay"]["finding"]]
    out += [r["finding"] for r in s["awr"]] + [r["impact"]["finding"] for r in s["awr"] if r["impact"]]
    return [*out, s["distance"]["finding"]]


def test_the_json_holds_every_comparison(document: dict[str, Any]) -> None:
    s = document["summary"]
    assert s["schema_version"] == 6
    assert all(w["fastsync_ms"] <= w["total_ms"] for w in document["writes"])
    fast = s["what_if"]["fast_sync"]
    assert fast["real"]["slow_writes"] == s["slow_writes"] > fast["what_if"]["slow_writes"]
    assert fast["finding"].startswith(
        f"With Fast Sync, slow writes would fall from {s['slow_writes']} to {fast['what_if']['slow_writes']}"
    )
    assert s["what_if"]["at_round_trip"]["round_trip_ms"] == 4.797
    runs = s["baseline"]["runs"]
    assert [(r["mode"], r["disk_write"], r["compared_with"]) for r in runs] == [
        ("SYNC", False, "network"),
        ("SYNC", True, "total"),
        ("ASYNC", False, None),
    ]
    bdp = s["baseline"]["bandwidth_delay"]
    assert bdp["enough"] is True and bdp["advised_bytes"] == pytest.approx(3 * bdp["bdp_bytes"])
    primary, standby = s["awr"]
    assert (primary["side"], primary["begin_at"], primary["writes"]) == ("primary", "2024-10-22T15:30:00.000000Z", 600)
    remote = next(e for e in primary["events"] if e["event"] == "SYNC Remote Write")
    assert remote["agreement"] and remote["trace_count"] == 600 and remote["trace_mean_ms"] > 0
    assert primary["impact"]["remote_share"] == pytest.approx(12.49 / 14.40)  # the printed averages
    assert primary["reasons"] and standby["side"] == "standby" and 0 < standby["writes"] < 1200
    assert s["distance"]["km"] == 80 and s["distance"]["sync_limit_ms"] == 20
    fast_rec = next(r for r in s["recommendations"] if r["id"] == "fast-sync")
    assert fast["finding"] in fast_rec["evidence"] and "Trade-off" in fast_rec["advice"]
    assert fast_rec["metrics"]["fastsync_slow_writes"] == fast["what_if"]["slow_writes"]


@pytest.mark.slow
def test_the_terminal_markdown_and_html_reports_say_the_same(incident: list[str], document: dict[str, Any]) -> None:
    findings = _findings(document)
    text = invoke([*incident], code=0)
    wide = CliRunner(env={"COLUMNS": "4000"}).invoke(app, incident).stdout  # sentences on one line each
    markdown = invoke([*incident, "--format", "markdown"]).stdout
    page = invoke([*incident, "--format", "html"]).stdout
    for finding in findings:
        assert finding in wide, finding
        assert finding.replace("[", "\\[").replace("]", "\\]") in markdown, finding
        assert html.escape(finding) in page, finding
    for title in ("What if: Fast Sync", "Against the oratcptest baseline", "Against AWR and Statspack", "Distance"):
        assert title in text.stdout and title in markdown and title in page
    assert "traces mean ms" in markdown and "traces mean ms" in page and "slow time above ms" in page


def test_the_writes_table_has_the_fast_sync_column(incident: list[str], document: dict[str, Any]) -> None:
    rows = list(csv.DictReader(io.StringIO(invoke([*incident, "--format", "csv"]).stdout)))
    assert list(rows[0])[-1] == "fastsync_ms"
    expected = {(w["thread"], w["msgid"]): round(w["fastsync_ms"], 3) for w in document["writes"]}
    assert {(int(r["thread"]), int(r["msgid"])): float(r["fastsync_ms"]) for r in rows} == expected


@pytest.mark.parametrize(
    ("option", "path", "reason"),
    [
        ("--awr", FIXTURES / "oratcptest" / "async.txt", "not an AWR or Statspack report"),
        ("--baseline", FIXTURES / "oratcptest" / "server-only.txt", "only oratcptest server output"),
        ("--baseline", FIXTURES / "oratcptest" / "iperf.txt", "not oratcptest client output"),
        ("--awr", FIXTURES / "awr" / "no-such-report.txt", "no such file"),
        ("--baseline", FIXTURES / "oratcptest", "a directory, not a file"),
    ],
)
def test_a_file_that_cannot_be_read_exits_2_with_its_name_and_reason(option: str, path: Path, reason: str) -> None:
    result = invoke(["analyze", "samples/paper-2014", "--tz", "-07:00", option, str(path)], code=ExitCode.USAGE)
    assert str(path) in result.stderr and reason in result.stderr
    assert result.stderr.startswith("dgtrace: error: ") and result.stderr.count("\n") == 1 and not result.stdout


@pytest.mark.parametrize("value", ["0", "-5", "nan", "50000"])
def test_a_distance_must_be_one(value: str) -> None:
    result = invoke(["analyze", "samples/paper-2014", "--distance-km", value], code=ExitCode.USAGE)
    assert "--distance-km must be a distance in km above 0" in result.stderr


def test_help_shows_the_new_options_with_their_values_and_examples() -> None:
    out = CliRunner(env={"COLUMNS": "200"}).invoke(app, ["analyze", "--help"]).stdout
    for option, value in (("--baseline", "FILE"), ("--awr", "FILE"), ("--distance-km", "KM")):
        line = next(line for line in out.splitlines() if option in line)
        assert value in line, line
    assert "dgtrace analyze upload.zip --baseline" in out and "--awr awrrpt" in out


@pytest.mark.slow  # two interpreters started
def test_the_allocator_setting_reaches_polars_and_a_users_own_wins() -> None:
    """The entry point sets jemalloc's decay before polars loads (a setting jemalloc refuses would print
    "Invalid conf pair"); a `_RJEM_MALLOC_CONF` of the user's own is the one jemalloc reads."""
    env = {k: v for k, v in os.environ.items() if k != "_RJEM_MALLOC_CONF"}
    ours = subprocess.run(
        [sys.executable, "-m", "analyzer", "--version"], capture_output=True, text=True, cwd=ROOT, env=env
    )
    assert ours.returncode == 0 and "jemalloc" not in ours.stderr
    env["_RJEM_MALLOC_CONF"] = "no_such_option:1"
    theirs = subprocess.run(
        [sys.executable, "-m", "analyzer", "--version"], capture_output=True, text=True, cwd=ROOT, env=env
    )
    assert "Invalid conf pair: no_such_option:1" in theirs.stderr


def test_the_package_runs_as_a_module_and_as_the_console_script() -> None:
    done = subprocess.run([sys.executable, "-m", "analyzer", "--version"], capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 0 and done.stdout.startswith("dgtrace ")
    names = invoke(["--help"]).stdout
    for command in ("analyze", "inventory", "batch", "report", "simulate", "simulate-share"):
        assert command in names
