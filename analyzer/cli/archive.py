"""`dgtrace batch` and `dgtrace report`: archived traces into a Parquet dataset, and its daily trend."""

from __future__ import annotations

import sys
from datetime import date
from pathlib import Path
from typing import Annotated

import typer

from analyzer.base.errors import ExitCode, Interrupted, UsageError
from analyzer.base.units import parse_clock_offsets, parse_size
from analyzer.base.zones import parse_zones
from analyzer.batch.engine import EngineName, EngineSpec
from analyzer.batch.plan import Settings
from analyzer.batch.query import trend
from analyzer.batch.run import run_batch
from analyzer.cli.base import app, err, guard, progress, say
from analyzer.cli.helptext import Command
from analyzer.cli.output import check_output, write_report
from analyzer.cli.trace import InventoryFormat
from analyzer.report.batch_view import render_summary_json, render_summary_text
from analyzer.report.trend import TREND_RENDERERS, TrendFormat, TrendReport

BATCH_EXAMPLES = """Examples:

  dgtrace batch /share/traces --out /data/dg-dataset

  dgtrace batch '/share/traces/*/2024-12-*' --out /data/dg-dataset --tz -07:00 --workers 4

  dgtrace batch /share/traces --out /data/dg-dataset --engine dask --scheduler tcp://sched01:8786 --format json

  dgtrace batch /share/traces --out /data/dg-dataset --verify"""


@app.command("batch", cls=Command, epilog=BATCH_EXAMPLES)
def batch_command(
    paths: Annotated[
        list[str],
        typer.Argument(metavar="PATH...", help="Archived trace files, directories (an archive share) or globs."),
    ],
    out: Annotated[
        Path, typer.Option("--out", metavar="DIR", help="The dataset directory (created, or brought up to date).")
    ],
    engine: Annotated[
        EngineName,
        typer.Option("--engine", metavar="ENGINE", help="local: a process pool on this machine; dask: a Dask cluster."),
    ] = EngineName.LOCAL,
    scheduler: Annotated[
        str | None,
        typer.Option("--scheduler", metavar="ADDRESS", help="With --engine dask: the address of an existing cluster."),
    ] = None,
    workers: Annotated[
        int | None,
        typer.Option("--workers", min=1, metavar="N", help="Processes (local) or local Dask workers; default: cores."),
    ] = None,
    output_format: Annotated[
        InventoryFormat, typer.Option("--format", "-f", metavar="FORMAT", help="The run summary: text or json.")
    ] = InventoryFormat.TEXT,
    threshold: Annotated[
        float, typer.Option("--threshold", min=0, metavar="MS", help="A write is slow from this many ms.")
    ] = 100.0,
    tz: Annotated[
        list[str] | None, typer.Option("--tz", metavar="ZONE", help="As for analyze: -07:00 or HOST=ZONE.")
    ] = None,
    window: Annotated[
        float, typer.Option("--match-window", min=0, metavar="S", help="As for analyze (seconds).")
    ] = 60.0,
    clock_offset: Annotated[
        list[str] | None, typer.Option("--clock-offset", metavar="HOST=MS", help="As for analyze.")
    ] = None,
    max_total: Annotated[str, typer.Option("--max-total-bytes", metavar="SIZE", help="As for analyze.")] = "64GiB",
    verify: Annotated[
        bool,
        typer.Option(
            "--verify",
            help="Hash every file of the dataset and compare it with the SHA-256 recorded when it was written"
            " (each run compares sizes and times); damaged units are rebuilt from their inputs.",
        ),
    ] = False,
) -> None:
    """Turn archived traces into a Parquet dataset, incrementally (see "Batch over archives" in the README)."""
    with guard():
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
        if warning := spec.warning():
            say(f"dgtrace: warning: {warning}")
        try:
            with progress(lambda label: label) as hook:
                summary = run_batch(paths, out, settings, spec, progress=hook, verify=verify)
        except Interrupted as stop:
            err.print(f"dgtrace: {stop.message}; the dataset is consistent, the next run goes on", markup=False)
            stopped = stop.signum
        else:
            stopped = 0
            render = render_summary_json if output_format is InventoryFormat.JSON else render_summary_text
            render(summary, sys.stdout)
    if stopped:
        raise typer.Exit(128 + stopped)
    if summary.exit_code != ExitCode.OK:
        raise typer.Exit(int(summary.exit_code))


REPORT_EXAMPLES = """Examples:

  dgtrace report /data/dg-dataset

  dgtrace report /data/dg-dataset --since 2024-12-01 --until 2025-01-01 --db sales --format markdown -o dec.md

  dgtrace report /data/dg-dataset --format html -o trend.html"""


@app.command("report", cls=Command, epilog=REPORT_EXAMPLES)
def report_command(
    dataset: Annotated[Path, typer.Argument(metavar="DIR", help="A dataset written by dgtrace batch.")],
    output_format: Annotated[
        TrendFormat,
        typer.Option(
            "--format", "-f", metavar="FORMAT", help="text, markdown, json or html (one plot per configuration)."
        ),
    ] = TrendFormat.TEXT,
    since: Annotated[
        str | None, typer.Option("--since", metavar="DAY", help="Only days from this one (YYYY-MM-DD).")
    ] = None,
    until: Annotated[
        str | None, typer.Option("--until", metavar="DAY", help="Only days before this one (YYYY-MM-DD).")
    ] = None,
    db: Annotated[
        list[str] | None,
        typer.Option("--db", metavar="DB", help="Only configurations with this database (repeatable)."),
    ] = None,
    output: Annotated[
        Path | None,
        typer.Option(
            "--output",
            "-o",
            metavar="FILE",
            help="Write the report to FILE (replaced only once it is complete; - is stdout).",
        ),
    ] = None,
) -> None:
    """The daily trend of a batch dataset per configuration, the worst days first."""
    with guard():
        first, last = _day(since, "--since"), _day(until, "--until")
        check_output(output)
        rows = trend(dataset, first, last, db or [])
        report = TrendReport(str(dataset), rows, first, last, tuple(db or []))
        render = TREND_RENDERERS[output_format]
        write_report(lambda out: render(report, out), output)


def _day(text: str | None, option: str) -> date | None:
    if text is None:
        return None
    try:
        return date.fromisoformat(text[:10])
    except ValueError:
        raise UsageError(f"{option} {text!r} is not a day (YYYY-MM-DD)") from None
