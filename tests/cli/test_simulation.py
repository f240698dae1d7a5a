"""`dgtrace simulate` and `dgtrace simulate-share` on the program: their options, help, errors through its guard."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from analyzer.cli import app


def test_simulate_share_on_the_command_line(tmp_path: Path) -> None:
    out = tmp_path / "cli"
    args = ["simulate-share", str(out), "--configs", "2", "--days", "2", "--writes", "40", "--no-gzip-older"]
    result = CliRunner().invoke(app, [*args, "--format-version", "12.1", "--seed", "5", "--threads", "1"])
    assert result.exit_code == 0, result.output
    assert "simulated 160 remote writes of 2 configuration(s) over 2 day(s)" in result.stderr
    manifest = json.loads((out / "share.json").read_text())
    assert manifest["options"]["seed"] == 5 and not any(f["compressed"] for f in manifest["files"])
    bad = CliRunner().invoke(app, ["simulate-share", str(tmp_path / "x"), "--days", "0"])
    assert bad.exit_code == 2 and "--days must be between 1 and 366" in bad.stderr
    taken = CliRunner().invoke(app, ["simulate-share", str(out)])
    assert taken.exit_code == 2 and "not an empty directory" in taken.stderr
    for command in ("simulate", "simulate-share"):
        text = CliRunner().invoke(app, [command, "--help"], env={"COLUMNS": "120"}).stdout
        assert text.count(f"dgtrace {command} /tmp/") == 2, text


def test_simulate_through_the_program_refuses_bad_options_in_one_line(tmp_path: Path) -> None:
    bad = CliRunner().invoke(app, ["simulate", str(tmp_path / "set"), "--writes", "10", "--size", "1MB"])
    assert bad.exit_code == 2 and bad.stderr.startswith("dgtrace: error: ") and bad.stderr.count("\n") == 1
    assert not (tmp_path / "set" / "truth.csv").exists()
    made = CliRunner().invoke(app, ["--quiet", "simulate", str(tmp_path / "ok"), "--writes", "20", "--seed", "3"])
    assert made.exit_code == 0 and json.loads((tmp_path / "ok" / "scenario.json").read_text())["options"]["seed"] == 3
