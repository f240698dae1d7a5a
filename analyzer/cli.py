"""The `dgtrace` command line: parse options, call the pipeline, hand the result to a renderer.

Commands stay thin; errors meant for the user are caught in one place (`_guard`) and become one
line on stderr plus a named exit code (`analyzer.errors.ExitCode`): a bad option or path (2), no
usable input (3), a report that cannot be written (6), Ctrl-C (130), a reader gone away (141).
"""

from __future__ import annotations

import errno
import functools
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import date
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

from analyzer import __version__
from analyzer import redact as redaction
from analyzer.api import Analysis, Options, ProgressHook, analyze
from analyzer.batch.engine import EngineName, EngineSpec
from analyzer.batch.plan import Settings
from analyzer.batch.query import trend
from analyzer.batch.run import run_batch
from analyzer.errors import AnalyzerError, ExitCode, Interrupted, NoInputError, UsageError
from analyzer.helptext import Command, Group
from analyzer.insights import plural
from analyzer.limits import Limits
from analyzer.output import os_errno, quiet_stdout, write_report
from analyzer.report.batch_view import render_summary_json, render_summary_text
from analyzer.report.formats import CSV_TABLES, RENDERERS, CsvTable, OutputFormat
from analyzer.report.inventory_view import render_inventory_json, render_inventory_text
from analyzer.report.trend import TREND_RENDERERS, TrendFormat, TrendReport
from analyzer.simulate.cli import simulate_command, simulate_share_command
from analyzer.spill import stop_on_signals
from analyzer.units import parse_clock_offsets, parse_instant, parse_size
from analyzer.zones import parse_zones

#: a file of which at least this share of lines hold bytes that are not text is no trace
BINARY_SHARE = 0.05


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
_err = Console(stderr=True, highlight=False)
_state = {"debug": False, "quiet": False}


def _version(value: bool) -> None:
    if value:
        typer.echo(f"dgtrace {__version__}")
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
    _state.update(debug=debug, quiet=quiet)


def _say(message: str) -> None:
    """One line on stderr, never wrapped."""
    _err.print(message, markup=False, soft_wrap=True)


@contextmanager
def _guard() -> Iterator[None]:
    """Turn user-facing errors into one line on stderr and their exit code."""
    try:
        yield
    except AnalyzerError as err:
        if _state["debug"]:
            raise
        _say(f"dgtrace: error: {err}")
        raise typer.Exit(int(err.exit_code)) from None
    except KeyboardInterrupt:
        _say("dgtrace: interrupted")
        raise typer.Exit(int(ExitCode.INTERRUPTED)) from None
    except Exception as err:  # a bug of ours: still one line, the traceback behind --debug
        if os_errno(err) == errno.EPIPE:  # the reader went away (`| head`): stop quietly
            quiet_stdout()
            raise typer.Exit(int(ExitCode.BROKEN_PIPE)) from None
        if _state["debug"]:
            raise
        _say(f"dgtrace: internal error: {type(err).__name__}: {err} (--debug shows the traceback; please report it)")
        raise typer.Exit(int(ExitCode.INTERNAL)) from None


def _reading(label: str) -> str:
    name = label.replace("\\", "/").rsplit("/", 1)[-1]
    return f"reading {name}" if name else "matching"


@contextmanager
def _progress(describe: Callable[[str], str] = _reading) -> Iterator[ProgressHook | None]:
    """A progress bar on stderr, only on a terminal and without --quiet (rich honours NO_COLOR)."""
    if _state["quiet"] or not _err.is_terminal:
        yield None
        return
    with Progress(
        SpinnerColumn(),
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=_err,
        transient=True,
    ) as bar:
        task = bar.add_task("reading traces", total=None)

        def hook(label: str, done: int, total: int) -> None:
            bar.update(task, total=total, completed=done, description=describe(label))

        yield hook


ANALYZE_EXAMPLES = """Examples:

  dgtrace analyze prim01/ prim02/ stby01/ --tz -07:00

  dgtrace analyze upload.zip --format html -o incident.html

  dgtrace analyze 'traces/*.trc' --since 2024-12-09T06:40 --until 2024-12-09T07:00 --format csv --table warnings

  dgtrace analyze upload.zip --redact --redact-map mapping.json --format markdown -o ticket.md"""


def _at_least(value: float, low: float, option: str, what: str) -> None:
    if not value >= low:  # also NaN
        raise UsageError(f"{option} must be {what} of at least {low:g}, not {value:g}")


@app.command("analyze", cls=Command, epilog=ANALYZE_EXAMPLES)
def analyze_command(
    paths: Annotated[list[str], typer.Argument(metavar="PATH...", help="Trace files, directories, archives or globs.")],
    output_format: Annotated[
        OutputFormat,
        typer.Option(
            "--format",
            "-f",
            metavar="FORMAT",
            help="text (the report), json (one document), csv (one table), html (one page with plots), markdown.",
        ),
    ] = OutputFormat.TEXT,
    table: Annotated[
        CsvTable,
        typer.Option(
            "--table",
            metavar="TABLE",
            help="With --format csv: writes (one row per write), timeline (per minute), events (send, receive,"
            " finish and ack on one timeline), warnings (LGWR long-write warnings) or unmatched (messages"
            " without a partner).",
        ),
    ] = CsvTable.WRITES,
    threshold: Annotated[
        float,
        typer.Option("--threshold", metavar="MS", help="A write is slow when its total is at least MS."),
    ] = 100.0,
    top: Annotated[
        int, typer.Option("--top", metavar="N", help="Rows of the longest tables (slowest writes, warnings).")
    ] = 10,
    tz: Annotated[
        list[str] | None,
        typer.Option(
            "--tz",
            metavar="ZONE",
            help="Zone of files whose stamps carry none (up to 12.1): -07:00 or Europe/Paris for all files, or"
            " HOST=ZONE for one host (repeatable; HOST may be the short name). 12.2+ files carry their own.",
        ),
    ] = None,
    window: Annotated[
        float,
        typer.Option(
            "--match-window",
            metavar="S",
            help="Seconds a msgid match may stray from the typical send->receive gap (msgid reuse guard).",
        ),
    ] = 60.0,
    output: Annotated[
        Path | None,
        typer.Option(
            "--output", "-o", metavar="FILE", help="Write the report to FILE (replaced only once it is complete)."
        ),
    ] = None,
    since: Annotated[
        str | None,
        typer.Option("--since", metavar="TIME", help="Only writes sent at or after TIME (ISO-8601; local at --tz)."),
    ] = None,
    until: Annotated[str | None, typer.Option("--until", metavar="TIME", help="Only writes sent before TIME.")] = None,
    clock_offset: Annotated[
        list[str] | None,
        typer.Option(
            "--clock-offset",
            metavar="HOST=MS",
            help="That standby host's clock minus the primary's, instead of the estimate (repeatable).",
        ),
    ] = None,
    redact: Annotated[
        bool,
        typer.Option(
            "--redact",
            help="Replace host, database and instance names, paths and SQL text with pseudonyms (host-1, db-1,"
            " inst-1), the same in every table and format; the numbers stay.",
        ),
    ] = False,
    redact_map: Annotated[
        Path | None,
        typer.Option(
            "--redact-map",
            metavar="FILE",
            help="With --redact: write the pseudonyms and what they stand for to FILE (JSON; keep it private).",
        ),
    ] = None,
    max_total: Annotated[
        str,
        typer.Option("--max-total-bytes", metavar="SIZE", help="Stop reading archives past SIZE decompressed."),
    ] = "64GiB",
    max_ratio: Annotated[
        float, typer.Option("--max-ratio", metavar="X", help="Largest compression ratio of an archive member.")
    ] = 1000.0,
    max_depth: Annotated[int, typer.Option("--max-depth", metavar="N", help="Deepest nesting of archives.")] = 8,
    max_members: Annotated[
        int, typer.Option("--max-members", metavar="N", help="Most archive members read.")
    ] = 100_000,
    max_seconds: Annotated[
        float,
        typer.Option(
            "--max-seconds-per-input",
            metavar="S",
            help="Most seconds spent on one input (an archive with all it holds, a file, a folder walk, a pipe).",
        ),
    ] = 600.0,
    read_special: Annotated[
        bool,
        typer.Option(
            "--read-special",
            help="Read devices and FIFOs named on the command line (else skipped), within --max-total-bytes.",
        ),
    ] = False,
) -> None:
    """Match primary and standby messages and split every remote write into network and RFS time."""
    with _guard():
        if table is not CsvTable.WRITES and output_format is not OutputFormat.CSV:
            raise UsageError("--table applies to --format csv only")
        if redact_map is not None and not redact:
            raise UsageError("--redact-map needs --redact")
        for value, low, option, what in (
            (threshold, 0, "--threshold", "a number of ms"),
            (top, 0, "--top", "a number"),
            (window, 0, "--match-window", "a number of seconds"),
            (max_ratio, 1, "--max-ratio", "a ratio"),
            (max_depth, 1, "--max-depth", "a depth"),
            (max_members, 1, "--max-members", "a number"),
            (max_seconds, 0.001, "--max-seconds-per-input", "a number of seconds"),
        ):
            _at_least(value, low, option, what)
        render = CSV_TABLES[table] if output_format is OutputFormat.CSV else RENDERERS[output_format]
        limits = Limits(
            max_total_bytes=parse_size(max_total, "--max-total-bytes"),
            max_ratio=max_ratio,
            max_depth=max_depth,
            max_members=max_members,
            max_seconds_per_input=max_seconds,
            read_special=read_special,
        )
        zones = parse_zones(tz or [])
        options = Options(
            threshold_ms=threshold,
            zones=zones,
            since=parse_instant(since, zones.default_tzinfo(), "--since") if since else None,
            until=parse_instant(until, zones.default_tzinfo(), "--until") if until else None,
            window_s=window,
            limits=limits,
            clock_offsets=parse_clock_offsets(clock_offset or []),
        )
        with _progress() as hook:
            result = analyze(paths, options, progress=hook)
        _check_usable(result)
        if redact:
            result, mapping = redaction.redact(result)
            if redact_map is not None:
                write_report(lambda out: redaction.write_map(mapping, out), redact_map)
        write_report(lambda out: render(result, out, top), output)
    if result.exit_code != ExitCode.OK:
        raise typer.Exit(int(result.exit_code))


def _check_usable(a: Analysis) -> None:
    """No 16410 message in any file, or none in the --since/--until window: no usable input.
    (When some input could not be read to its end, the report says what was lost, exit code 1.)

    Raises:
        NoInputError: with what was read and why it holds nothing (a binary file, no 16410 line).
    """
    if a.exit_code != ExitCode.OK:
        return
    if not any(f.reduced.messages for f in a.files):
        first = a.files[0]
        lines, bad = first.stats.lines, first.stats.lines_with_bad_bytes
        if not lines:
            why = "empty"
        elif bad >= BINARY_SHARE * lines:
            why = (
                f"not a text trace: {bad:,} of its {lines:,} lines hold bytes that are not text"
                " (a binary, a .docx or .pdf, an archive without its extension?)"
            )
        else:
            why = f"none of its {lines:,} lines is a 16410 message"
        more = f"; and {plural(len(a.files) - 1, 'other file')}" if len(a.files) > 1 else ""
        raise NoInputError(
            f"no event 16410 message in the {plural(len(a.files), 'file')} read ({first.source.label}: {why}{more}):"
            " was event 16410 set on the primary and the standby? (`dgtrace inventory` lists what was found)"
        )
    since, until = a.options.since, a.options.until
    if (since or until) and not a.writes.height and not a.unmatched.height:
        firsts = [f.reduced.first_at for f in a.files if f.reduced.messages and f.reduced.first_at]
        lasts = [f.reduced.last_at for f in a.files if f.reduced.messages and f.reduced.last_at]
        fmt = "%Y-%m-%d %H:%M:%S"
        span = f"the traces span {min(firsts):{fmt}} to {max(lasts):{fmt}} UTC" if firsts and lasts else ""
        window = "[" + ", ".join(t.strftime(fmt) if t else "..." for t in (since, until)) + ")"
        raise NoInputError(f"no remote write sent in the --since/--until window {window} UTC: {span}")


class InventoryFormat(StrEnum):
    """Values of `dgtrace inventory --format`."""

    TEXT = "text"
    JSON = "json"


INVENTORY_EXAMPLES = """Examples:

  dgtrace inventory upload.zip

  dgtrace inventory /cases/4711/ --tz -07:00

  dgtrace inventory upload.zip --format json > inventory.json"""


@app.command("inventory", cls=Command, epilog=INVENTORY_EXAMPLES)
def inventory_command(
    paths: Annotated[list[str], typer.Argument(metavar="PATH...", help="Trace files, directories, archives or globs.")],
    output_format: Annotated[
        InventoryFormat, typer.Option("--format", "-f", metavar="FORMAT", help="text or json.")
    ] = InventoryFormat.TEXT,
    tz: Annotated[
        list[str] | None, typer.Option("--tz", metavar="ZONE", help="As for analyze: -07:00 or HOST=ZONE.")
    ] = None,
) -> None:
    """List what an upload holds (files, their role, process, host, thread, version, time span) and what is missing."""
    with _guard():
        with _progress() as hook:
            result = analyze(paths, Options(zones=parse_zones(tz or [])), progress=hook)
        render = render_inventory_json if output_format is InventoryFormat.JSON else render_inventory_text
        write_report(lambda out: render(result, out), None)
    if result.exit_code != ExitCode.OK:
        raise typer.Exit(int(result.exit_code))


@app.command("batch", cls=Command)
def batch_command(
    paths: Annotated[list[str], typer.Argument(help="Archived trace files, directories (an archive share) or globs.")],
    out: Annotated[Path, typer.Option("--out", help="The dataset directory (created, or brought up to date).")],
    engine: Annotated[
        EngineName, typer.Option("--engine", help="local: a process pool on this machine; dask: a Dask cluster.")
    ] = EngineName.LOCAL,
    scheduler: Annotated[
        str | None, typer.Option("--scheduler", help="With --engine dask: the address of an existing cluster.")
    ] = None,
    workers: Annotated[
        int | None, typer.Option("--workers", min=1, help="Processes (local) or local Dask workers; default: cores.")
    ] = None,
    output_format: Annotated[
        InventoryFormat, typer.Option("--format", "-f", help="The run summary: text or json.")
    ] = InventoryFormat.TEXT,
    threshold: Annotated[float, typer.Option("--threshold", min=0, help="A write is slow from this many ms.")] = 100.0,
    tz: Annotated[list[str] | None, typer.Option("--tz", help="As for analyze: -07:00 or HOST=-07:00.")] = None,
    window: Annotated[float, typer.Option("--match-window", min=0, help="As for analyze (seconds).")] = 60.0,
    clock_offset: Annotated[list[str] | None, typer.Option("--clock-offset", help="As for analyze: HOST=MS.")] = None,
    max_total: Annotated[str, typer.Option("--max-total-bytes", help="As for analyze.")] = "64GiB",
) -> None:
    """Turn archived traces into a Parquet dataset, incrementally (see "Batch over archives" in the README)."""
    with _guard():
        zones = parse_zones(tz or [])
        settings = Settings(
            threshold_ms=threshold,
            window_s=window,
            tz_default_min=zones.default_min,
            tz_per_host=zones.per_host,
            clock_offsets=parse_clock_offsets(clock_offset or []),
            max_total_bytes=parse_size(max_total, "--max-total-bytes"),
        )
        spec = EngineSpec(engine, workers, scheduler)
        try:
            with _progress(lambda label: label) as hook:
                summary = run_batch(paths, out, settings, spec, progress=hook)
        except Interrupted as stop:
            _err.print(f"dgtrace: {stop.message}; the dataset is consistent, the next run goes on", markup=False)
            stopped = stop.signum
        else:
            stopped = 0
            render = render_summary_json if output_format is InventoryFormat.JSON else render_summary_text
            render(summary, sys.stdout)
    if stopped:
        raise typer.Exit(128 + stopped)
    if summary.exit_code != ExitCode.OK:
        raise typer.Exit(int(summary.exit_code))


@app.command("report", cls=Command)
def report_command(
    dataset: Annotated[Path, typer.Argument(help="A dataset written by dgtrace batch.")],
    output_format: Annotated[
        TrendFormat, typer.Option("--format", "-f", help="text, markdown, json or html (one plot per configuration).")
    ] = TrendFormat.TEXT,
    since: Annotated[str | None, typer.Option("--since", help="Only days from this one (YYYY-MM-DD).")] = None,
    until: Annotated[str | None, typer.Option("--until", help="Only days before this one (YYYY-MM-DD).")] = None,
    db: Annotated[
        list[str] | None, typer.Option("--db", help="Only configurations with this database (repeatable).")
    ] = None,
    output: Annotated[Path | None, typer.Option("--output", "-o", help="Write the report to this file.")] = None,
) -> None:
    """The daily trend of a batch dataset per configuration, the worst days first."""
    with _guard():
        first, last = _day(since, "--since"), _day(until, "--until")
        rows = trend(dataset, first, last, db or [])
        report = TrendReport(str(dataset), rows, first, last, tuple(db or []))
        render = TREND_RENDERERS[output_format]
        if output:
            part = output.with_name(f".{output.name}.part")
            try:
                with part.open("w", encoding="utf-8") as handle:
                    render(report, handle)
                part.replace(output)
            finally:
                part.unlink(missing_ok=True)
        else:
            render(report, sys.stdout)


def _day(text: str | None, option: str) -> date | None:
    if text is None:
        return None
    try:
        return date.fromisoformat(text[:10])
    except ValueError:
        raise UsageError(f"{option} {text!r} is not a day (YYYY-MM-DD)") from None


@app.command("simulate", cls=Command)  # its help and examples are the docstring of simulate_command
@functools.wraps(simulate_command)
def _simulate(*args: Any, **kwargs: Any) -> None:
    with _guard():
        simulate_command(*args, **kwargs)


@app.command("simulate-share", cls=Command)
@functools.wraps(simulate_share_command)
def _simulate_share(*args: Any, **kwargs: Any) -> None:
    with _guard():
        simulate_share_command(*args, **kwargs)


def main() -> None:
    """Console-script entry point: SIGINT, SIGTERM and SIGHUP remove the temporary files and exit
    with 128 + the signal number (130, 143, 129) after one line on stderr, never a traceback."""
    try:
        with stop_on_signals():
            app()
    except Interrupted as stop:
        _say(f"dgtrace: {stop.message}")
        sys.exit(stop.exit_code)
    except KeyboardInterrupt:  # before the handlers were installed
        _say("dgtrace: interrupted")
        sys.exit(int(ExitCode.INTERRUPTED))
