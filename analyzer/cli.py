"""The `dgtrace` command line: parse options, call the pipeline, hand the result to a renderer.

Commands stay thin; errors meant for the user are caught in one place (`_guard`) and become one
line on stderr plus a named exit code (`analyzer.errors.ExitCode`).
"""

from __future__ import annotations

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
from analyzer.api import Analysis, Options, ProgressHook, analyze
from analyzer.archives import Limits
from analyzer.batch.engine import EngineName, EngineSpec
from analyzer.batch.plan import Settings
from analyzer.batch.query import trend
from analyzer.batch.run import Interrupted, run_batch
from analyzer.errors import AnalyzerError, ExitCode, UsageError
from analyzer.report.batch_view import render_summary_json, render_summary_text
from analyzer.report.formats import CSV_TABLES, RENDERERS, CsvTable, OutputFormat, Renderer
from analyzer.report.inventory_view import render_inventory_json, render_inventory_text
from analyzer.report.trend import TREND_RENDERERS, TrendFormat, TrendReport
from analyzer.simulate.cli import simulate_command, simulate_share_command
from analyzer.units import parse_clock_offsets, parse_instant, parse_size
from analyzer.zones import parse_zones

app = typer.Typer(
    help="Explain slow Oracle Data Guard SYNC commits from event 16410 / 10046 trace files.",
    context_settings={"help_option_names": ["-h", "--help"]},
    no_args_is_help=True,
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
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress or notes on stderr.")] = False,
) -> None:
    """Global options."""
    _state.update(debug=debug, quiet=quiet)


@contextmanager
def _guard() -> Iterator[None]:
    """Turn user-facing errors into one line on stderr and their exit code."""
    try:
        yield
    except AnalyzerError as err:
        if _state["debug"]:
            raise
        _err.print(f"dgtrace: error: {err}", markup=False, soft_wrap=True)  # one line, never wrapped
        raise typer.Exit(int(err.exit_code)) from None
    except Exception as err:  # a bug of ours: still one line, the traceback behind --debug
        if _state["debug"]:
            raise
        message = (
            f"dgtrace: internal error: {type(err).__name__}: {err} (--debug shows the traceback; please report it)"
        )
        _err.print(message, markup=False, soft_wrap=True)
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


@app.command("analyze")
def analyze_command(
    paths: Annotated[list[str], typer.Argument(help="Trace files, directories or globs.")],
    output_format: Annotated[
        OutputFormat,
        typer.Option(
            "--format",
            "-f",
            help="text (report), json (one document), csv (a table), html (one page with plots) or markdown.",
        ),
    ] = OutputFormat.TEXT,
    table: Annotated[
        CsvTable,
        typer.Option(
            "--table",
            help="With --format csv: writes (one per write), timeline (per minute) or events (merged timeline).",
        ),
    ] = CsvTable.WRITES,
    threshold: Annotated[
        float,
        typer.Option("--threshold", min=0, help="A write is slow when its total is at least this many ms."),
    ] = 100.0,
    top: Annotated[int, typer.Option("--top", min=0, help="How many of the slowest writes to list.")] = 10,
    tz: Annotated[
        list[str] | None,
        typer.Option(
            "--tz",
            help=(
                "UTC offset of files whose stamps carry no zone: -07:00 for all, or HOST=-07:00"
                " (repeatable). 12.2+ files use their own ISO lines."
            ),
        ),
    ] = None,
    window: Annotated[
        float,
        typer.Option(
            "--match-window",
            min=0,
            help="Seconds a msgid match may stray from the typical send->receive gap (msgid reuse guard).",
        ),
    ] = 60.0,
    output: Annotated[
        Path | None,
        typer.Option("--output", "-o", help="Write the report to this file instead of stdout."),
    ] = None,
    since: Annotated[
        str | None, typer.Option("--since", help="Only writes sent at or after this ISO-8601 time (local at --tz).")
    ] = None,
    until: Annotated[str | None, typer.Option("--until", help="Only writes sent before this ISO-8601 time.")] = None,
    clock_offset: Annotated[
        list[str] | None,
        typer.Option(
            "--clock-offset", help="HOST=MS: that standby host's clock minus the primary's, instead of the estimate."
        ),
    ] = None,
    max_total: Annotated[
        str, typer.Option("--max-total-bytes", help="Stop reading archives past this much decompressed data.")
    ] = "64GiB",
    max_ratio: Annotated[
        float, typer.Option("--max-ratio", min=1, help="Largest compression ratio of a member.")
    ] = 1000.0,
    max_depth: Annotated[int, typer.Option("--max-depth", min=1, help="Deepest nesting of archives.")] = 8,
    max_members: Annotated[int, typer.Option("--max-members", min=1, help="Most archive members read.")] = 100_000,
) -> None:
    """Match primary and standby messages and split every remote write into network and RFS time."""
    with _guard():
        if table is not CsvTable.WRITES and output_format is not OutputFormat.CSV:
            raise UsageError("--table applies to --format csv only")
        render = CSV_TABLES[table] if output_format is OutputFormat.CSV else RENDERERS[output_format]
        limits = Limits(
            max_total_bytes=parse_size(max_total, "--max-total-bytes"),
            max_ratio=max_ratio,
            max_depth=max_depth,
            max_members=max_members,
        )
        zones = parse_zones(tz or [])
        options = Options(
            threshold_ms=threshold,
            zones=zones,
            since=parse_instant(since, zones.default_min, "--since") if since else None,
            until=parse_instant(until, zones.default_min, "--until") if until else None,
            window_s=window,
            limits=limits,
            clock_offsets=parse_clock_offsets(clock_offset or []),
        )
        with _progress() as hook:
            result = analyze(paths, options, progress=hook)
        if output:
            _render_to_file(render, result, top, output)
        else:
            render(result, sys.stdout, top)
    if result.exit_code != ExitCode.OK:
        raise typer.Exit(int(result.exit_code))


def _render_to_file(render: Renderer, result: Analysis, top: int, output: Path) -> None:
    """Render into a temporary file next to `output`, renamed over it once complete: the report
    streams to disk (no copy in memory) and a failed render leaves no partial report behind.
    A device or a pipe (`/dev/null`, `/dev/stdout`) is written to directly."""
    if output.exists() and not output.is_file():
        with output.open("w", encoding="utf-8") as out:
            render(result, out, top)
        return
    part = output.with_name(f".{output.name}.part")
    try:
        with part.open("w", encoding="utf-8") as out:
            render(result, out, top)
        part.replace(output)
    finally:
        part.unlink(missing_ok=True)


class InventoryFormat(StrEnum):
    """Values of `dgtrace inventory --format`."""

    TEXT = "text"
    JSON = "json"


@app.command("inventory")
def inventory_command(
    paths: Annotated[list[str], typer.Argument(help="Trace files, directories, archives or globs.")],
    output_format: Annotated[
        InventoryFormat, typer.Option("--format", "-f", help="text or json.")
    ] = InventoryFormat.TEXT,
    tz: Annotated[list[str] | None, typer.Option("--tz", help="As for analyze: -07:00 or HOST=-07:00.")] = None,
) -> None:
    """List what an upload holds (files, their role, process, host, thread, version, time span) and what is missing."""
    with _guard():
        with _progress() as hook:
            result = analyze(paths, Options(zones=parse_zones(tz or [])), progress=hook)
        render = render_inventory_json if output_format is InventoryFormat.JSON else render_inventory_text
        render(result, sys.stdout)
    if result.exit_code != ExitCode.OK:
        raise typer.Exit(int(result.exit_code))


@app.command("batch")
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
            _err.print(f"dgtrace: {stop}; the dataset is consistent, the next run goes on", markup=False)
            stopped = stop.signum
        else:
            stopped = 0
            render = render_summary_json if output_format is InventoryFormat.JSON else render_summary_text
            render(summary, sys.stdout)
    if stopped:
        raise typer.Exit(128 + stopped)
    if summary.exit_code != ExitCode.OK:
        raise typer.Exit(int(summary.exit_code))


@app.command("report")
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


@app.command("simulate")
@functools.wraps(simulate_command)
def _simulate(*args: Any, **kwargs: Any) -> None:
    with _guard():
        simulate_command(*args, **kwargs)


@app.command("simulate-share")
@functools.wraps(simulate_share_command)
def _simulate_share(*args: Any, **kwargs: Any) -> None:
    with _guard():
        simulate_share_command(*args, **kwargs)


def main() -> None:
    """Console-script entry point."""
    app()
