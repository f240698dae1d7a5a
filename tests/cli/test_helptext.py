"""Help that names values, not types, and global options accepted anywhere before `--`."""

from __future__ import annotations

import click
import pytest
from typer.testing import CliRunner

from analyzer.cli import app
from analyzer.cli.helptext import GLOBAL_FLAGS, Group, _metavar
from tests.conftest import invoke

PAPER = "samples/paper-2014"


def test_global_options_anywhere() -> None:
    for args in (["--quiet", "analyze", PAPER], ["analyze", PAPER, "--quiet"], ["analyze", "-q", PAPER]):
        assert "Top 10 slowest writes" in invoke([*args, "--tz", "-07:00"]).stdout
    debug = CliRunner().invoke(app, ["analyze", "no/such/dir", "--debug"])
    assert debug.exit_code != 0 and isinstance(debug.exception, Exception)


@pytest.mark.parametrize(
    "command", [[], ["analyze"], ["inventory"], ["simulate"], ["simulate-share"], ["batch"], ["report"]]
)
def test_help_names_values_not_types_and_gives_examples(command: list[str]) -> None:
    out = CliRunner(env={"COLUMNS": "80"}).invoke(app, [*command, "--help"]).stdout
    for internal in ("<list[str]>", "range>", "[x>=", "<bool>", "<str>", "<float>", "<int>", "<path>"):
        assert internal not in out, internal
    examples = out[out.index("Examples:") :]
    assert examples.count(f"dgtrace {command[0]} " if command else "dgtrace ") >= 2
    if command == ["analyze"]:
        assert "--tz" in out and "ZONE" in out and "HOST=MS" in out and "text, json" not in out.replace("\n", " ")


def test_global_flags_move_to_the_front_but_not_past_a_double_dash() -> None:
    group = Group(name="dgtrace", params=[click.Option(["--quiet", "-q"], is_flag=True)])
    group.add_command(click.Command("analyze", params=[click.Argument(["paths"], nargs=-1)]))
    ctx = click.Context(group)
    rest = group.parse_args(ctx, ["analyze", "x.trc", "-q", "--", "--quiet"])
    assert ctx.params == {"quiet": True} and rest[-3:] == ["x.trc", "--", "--quiet"]  # (after "analyze")
    assert set(GLOBAL_FLAGS) == {"--debug", "--quiet", "-q"}


@pytest.mark.parametrize(
    ("param", "shown"),
    [
        (click.Option(["--top"], type=int), "N"),
        (click.Option(["--threshold"], type=float), "NUMBER"),
        (click.Option(["--name"], type=str), "TEXT"),
        (click.Option(["--out"], type=click.Path()), "PATH"),
        (click.Option(["--when"], type=click.DateTime()), "VALUE"),
    ],
)
def test_a_value_without_metavar_is_named_by_its_type(param: click.Option, shown: str) -> None:
    assert _metavar(param) == shown
