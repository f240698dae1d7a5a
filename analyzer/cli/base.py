"""The `dgtrace` program itself: the typer app, its global options, and what every command shares.

Errors meant for the user are caught in one place (`guard`) and become one line on stderr plus a
named exit code (`analyzer.base.errors.ExitCode`): a bad option or path (2), no usable input (3), a
report that cannot be written (6), Ctrl-C (130), a reader gone away (141). A progress bar is shown
on stderr, only on a terminal and without --quiet.
"""

from __future__ import annotations

import errno
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Annotated

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

from analyzer import __version__
from analyzer.api import ProgressHook
from analyzer.base.errors import AnalyzerError, ExitCode, Interrupted, UsageError
from analyzer.base.spill import stop_on_signals
from analyzer.cli.helptext import Group
from analyzer.cli.output import os_errno, quiet_stdout
from analyzer.parse import scanner

app = typer.Typer(
    cls=Group,
    help="Explain slow Oracle Data Guard SYNC commits from event 16410 / 10046 trace files.",
    epilog=(
        "Examples:\n\n"
        "  dgtrace analyze upload.zip --tz -07:00\n\n"
        "  dgtrace inventory /cases/4711/\n\n"
        "  dgtrace simulate /tmp/demo --scenario mixed --writes 2000\n\n"
        "Global options (--quiet, --debug) may also come after the command."
    ),
    context_settings={"help_option_names": ["-h", "--help"]},
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
err = Console(stderr=True, highlight=False)
state = {"debug": False, "quiet": False}


def _version(value: bool) -> None:
    if value:
        typer.echo(f"dgtrace {__version__}")
        typer.echo(f"scanner: {scanner.name()}")  # the compiled line scanner, or the pure Python path
        raise typer.Exit()


@app.callback()
def _main(
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Print the version.")
    ] = False,
    debug: Annotated[bool, typer.Option("--debug", help="Show the traceback of errors.")] = False,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress bar on stderr.")] = False,
) -> None:
    """Global options."""
    state.update(debug=debug, quiet=quiet)


def say(message: str) -> None:
    """One line on stderr, never wrapped."""
    err.print(message, markup=False, soft_wrap=True)


@contextmanager
def guard() -> Iterator[None]:
    """Turn user-facing errors into one line on stderr and their exit code."""
    try:
        yield
    except AnalyzerError as error:
        if state["debug"]:
            raise
        say(f"dgtrace: error: {error}")
        raise typer.Exit(int(error.exit_code)) from None
    except KeyboardInterrupt:
        say("dgtrace: interrupted")
        raise typer.Exit(int(ExitCode.INTERRUPTED)) from None
    except Exception as error:  # a bug of ours: still one line, the traceback behind --debug
        if os_errno(error) == errno.EPIPE:  # the reader went away (`| head`): stop quietly
            quiet_stdout()
            raise typer.Exit(int(ExitCode.BROKEN_PIPE)) from None
        if state["debug"]:
            raise
        say(f"dgtrace: internal error: {type(error).__name__}: {error} (--debug shows the traceback; please report it)")
        raise typer.Exit(int(ExitCode.INTERNAL)) from None


def _reading(label: str) -> str:
    name = label.replace("\\", "/").rsplit("/", 1)[-1]
    return f"reading {name}" if name else "matching"


@contextmanager
def progress(describe: Callable[[str], str] = _reading) -> Iterator[ProgressHook | None]:
    """A progress bar on stderr, only on a terminal and without --quiet (rich honours NO_COLOR)."""
    if state["quiet"] or not err.is_terminal:
        yield None
        return
    with Progress(
        SpinnerColumn(),
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=err,
        transient=True,
    ) as bar:
        task = bar.add_task("reading traces", total=None)

        def hook(label: str, done: int, total: int) -> None:
            bar.update(task, total=total, completed=done, description=describe(label))

        yield hook


def at_least(value: float, low: float, option: str, what: str) -> None:
    """A usage error unless `value` >= `low` (NaN included)."""
    if not value >= low:  # also NaN
        raise UsageError(f"{option} must be {what} of at least {low:g}, not {value:g}")


def main() -> None:
    """Console-script entry point: SIGINT, SIGTERM and SIGHUP remove the temporary files and exit
    with 128 + the signal number (130, 143, 129) after one line on stderr, never a traceback."""
    try:
        with stop_on_signals():
            app()
    except Interrupted as stop:
        say(f"dgtrace: {stop.message}")
        sys.exit(stop.exit_code)
    except KeyboardInterrupt:  # before the handlers were installed
        say("dgtrace: interrupted")
        sys.exit(int(ExitCode.INTERRUPTED))
