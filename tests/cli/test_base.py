"""What every command shares: the error guard (one line and an exit code), the version, progress, `main`."""

from __future__ import annotations

import errno
import io
import signal
from pathlib import Path

import pytest
import typer
from rich.console import Console
from typer.testing import CliRunner

from analyzer import cli
from analyzer.base.errors import ExitCode, Interrupted, NoInputError, UsageError
from analyzer.cli import app, base
from analyzer.parse import scanner
from tests.conftest import invoke

PAPER = "samples/paper-2014"


def _guarded(error: BaseException) -> int:
    """The exit code `guard` turns `error` into."""
    with pytest.raises(typer.Exit) as stopped, base.guard():
        raise error
    return stopped.value.exit_code


def test_version() -> None:
    assert invoke(["--version"]).stdout.startswith("dgtrace ")


def test_long_error_is_one_line(tmp_path: Path) -> None:
    deep = tmp_path / ("x" * 120) / "missing.trc"
    result = invoke(["analyze", str(deep)], code=ExitCode.USAGE)
    assert result.stderr.count("\n") == 1 and result.stderr.startswith("dgtrace: error: ")


def test_internal_error_is_one_line_and_debug_shows_the_traceback(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    import analyzer.cli

    def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError("boom")

    monkeypatch.setattr(analyzer.cli, "analyze", broken)
    result = invoke(["analyze", PAPER], code=ExitCode.INTERNAL)
    assert result.stderr.startswith("dgtrace: internal error: RuntimeError: boom") and result.stderr.count("\n") == 1
    debug = CliRunner().invoke(app, ["--debug", "analyze", PAPER])
    assert isinstance(debug.exception, RuntimeError)


def test_ctrl_c_exits_130_with_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    def interrupted(*args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(cli, "analyze", interrupted)
    result = invoke(["analyze", PAPER], code=ExitCode.INTERRUPTED)
    assert result.stderr == "dgtrace: interrupted\n" and result.stdout == ""


def test_user_errors_become_their_exit_code_and_a_broken_pipe_141(capsys: pytest.CaptureFixture[str]) -> None:
    assert _guarded(UsageError("--tz: bad zone")) == ExitCode.USAGE
    assert _guarded(NoInputError("no trace files found")) == ExitCode.NO_INPUT
    assert capsys.readouterr().err == "dgtrace: error: --tz: bad zone\ndgtrace: error: no trace files found\n"
    assert _guarded(BrokenPipeError(errno.EPIPE, "Broken pipe")) == ExitCode.BROKEN_PIPE
    assert capsys.readouterr().err == ""  # the reader went away: nothing to say


def test_at_least_refuses_smaller_values_and_nan() -> None:
    base.at_least(0.0, 0.0, "--threshold", "a number of ms")
    for value in (-1.0, float("nan")):
        with pytest.raises(UsageError, match=r"^--threshold must be a number of ms of at least 0, not (-1|nan)$"):
            base.at_least(value, 0.0, "--threshold", "a number of ms")


def test_a_progress_bar_only_on_a_terminal_and_without_quiet(monkeypatch: pytest.MonkeyPatch) -> None:
    with base.progress() as hook:
        assert hook is None  # the tests' stderr is no terminal
    screen = io.StringIO()
    monkeypatch.setattr(base, "err", Console(file=screen, force_terminal=True, width=100))
    monkeypatch.setitem(base.state, "quiet", True)
    with base.progress() as hook:
        assert hook is None
    monkeypatch.setitem(base.state, "quiet", False)
    with base.progress() as hook:
        assert hook is not None
        hook("up.zip!trace/cdb1_nss2_1.trc", 1, 4)
    assert "reading cdb1_nss2_1.trc" in screen.getvalue() and "1/4" in screen.getvalue()
    assert base._reading("") == "matching"


@pytest.mark.parametrize(("signum", "line"), [(signal.SIGTERM, "stopped by SIGTERM"), (signal.SIGINT, "interrupted")])
def test_main_ends_a_stopped_run_with_one_line_and_128_plus_the_signal(
    signum: int, line: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def stopped() -> None:
        raise Interrupted(signum)

    monkeypatch.setattr(base, "app", stopped)
    with pytest.raises(SystemExit) as ended:
        base.main()
    assert ended.value.code == 128 + signum
    assert capsys.readouterr().err == f"dgtrace: {line}\n"


def test_the_version_of_the_package(tmp_path: Path) -> None:
    from analyzer import __version__

    assert invoke(["--version"]).stdout == f"dgtrace {__version__}\nscanner: {scanner.name()}\n"
    assert CliRunner().invoke(app, ["--version", "analyze", str(tmp_path / "nothing")]).exit_code == 0  # eager
