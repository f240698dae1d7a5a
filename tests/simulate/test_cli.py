"""The simulator's commands as typer functions: every option becomes the setting of the same name."""

from __future__ import annotations

import dataclasses
import inspect
import json
from pathlib import Path

import typer
from typer.testing import CliRunner

from analyzer.simulate import ShareOptions, SimOptions
from analyzer.simulate.cli import simulate_command, simulate_share_command


def _options(command: object) -> set[str]:
    return set(inspect.signature(command).parameters) - {"outdir"}  # type: ignore[arg-type]


def _fields(settings: type) -> set[str]:
    return {f.name for f in dataclasses.fields(settings)}


def test_every_option_is_a_setting_of_the_same_name() -> None:
    """`--size` is read into size_bytes; the settings left out are for the library and the tests only."""
    assert _options(simulate_command) - {"size"} <= _fields(SimOptions)
    assert _fields(SimOptions) - _options(simulate_command) == {"size_bytes", "sender", "lgwr_warning_ms"}
    assert _options(simulate_share_command) <= _fields(ShareOptions)
    assert _fields(ShareOptions) - _options(simulate_share_command) == {"noise", "log_switch_every"}


def test_simulate_on_the_command_line(tmp_path: Path) -> None:
    app = typer.Typer()
    app.command("simulate")(simulate_command)
    app.callback()(lambda: None)
    out = tmp_path / "cli"
    args = [
        "simulate",
        str(out),
        "--scenario",
        "network",
        "--format-version",
        "12.1",
        "--writes",
        "50",
    ]
    args += ["--threads", "1", "--rtt-ms", "3", "--net-spike-rate", "0.1", "--io-spike-rate", "0"]
    args += ["--log-switch-every", "20", "--standby-skew-s", "1.5", "--primary-tz", "+01:00"]
    args += ["--standby-tz", "+02:00", "--noise", "0", "--seed", "9"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    assert result.stdout == ""
    assert "simulated 50 remote writes" in result.stderr
    options = json.loads((out / "scenario.json").read_text())["options"]
    assert options["rtt_ms"] == 3 and options["log_switch_every"] == 20
    assert options["standby_skew_s"] == 1.5 and options["seed"] == 9
    assert len((out / "truth.csv").read_text().splitlines()) == 51
    sized = CliRunner().invoke(app, ["simulate", str(tmp_path / "sized"), "--size", "600KB"])
    assert sized.exit_code == 0, sized.output
