"""`dgtrace analyze` and `dgtrace inventory`: the commands that read trace files.

Commands stay thin: typer options -> one call of the facade -> one renderer. The facade is looked
up in `analyzer.cli` when a command runs (`cli.analyze`), the one place a test or a script replaces it.
"""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

import analyzer.cli as cli
from analyzer.api import Analysis, Options
from analyzer.base.errors import ExitCode, NoInputError, UsageError
from analyzer.base.units import parse_clock_offsets, parse_instant, parse_size
from analyzer.base.words import plural
from analyzer.base.zones import parse_zones
from analyzer.cli.base import app, at_least, guard, progress
from analyzer.cli.helptext import Command
from analyzer.cli.output import check_output, write_report
from analyzer.findings import redact as redaction
from analyzer.inputs.limits import Limits
from analyzer.report.formats import CSV_TABLES, RENDERERS, CsvTable, OutputFormat
from analyzer.report.inventory_view import render_inventory_json, render_inventory_text

#: a file of which at least this share of lines hold bytes that are not text is no trace
BINARY_SHARE = 0.05

ANALYZE_EXAMPLES = """Examples:

  dgtrace analyze prim01/ prim02/ stby01/ --tz -07:00

  dgtrace analyze upload.zip --format html -o incident.html

  dgtrace analyze 'traces/*.trc' --since 2024-12-09T06:40 --until 2024-12-09T07:00 --format csv --table warnings

  dgtrace analyze upload.zip --redact --redact-map mapping.json --format markdown -o ticket.md

  dgtrace analyze upload.zip --baseline oratcptest-sync.txt --baseline oratcptest-async.txt --distance-km 180

  dgtrace analyze upload.zip --awr awrrpt_1_51877_51878.html --awr sp_117_118.lst"""


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
            "--output",
            "-o",
            metavar="FILE",
            help="Write the report to FILE (replaced only once it is complete; - is stdout).",
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
    baseline: Annotated[
        list[Path] | None,
        typer.Option(
            "--baseline",
            metavar="FILE",
            help="oratcptest client output (repeatable): the incident's network and standby I/O beside its round"
            " trips, the writes at its latency, and the socket buffer against 3 x bandwidth-delay product.",
        ),
    ] = None,
    awr: Annotated[
        list[Path] | None,
        typer.Option(
            "--awr",
            metavar="FILE",
            help="AWR report of the primary, AWR or Statspack report of the standby, text or HTML (repeatable):"
            " SYNC Remote Write, RFS write and log file sync beside the traces' figures for the same hours.",
        ),
    ] = None,
    distance_km: Annotated[
        float | None,
        typer.Option(
            "--distance-km",
            metavar="KM",
            help="Fibre distance between primary and standby: the lowest round trips beside what light needs"
            " (about 1 ms per 100 km) and the 20 ms beyond which SYNC is rarely viable.",
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
            help="With --redact: write the pseudonyms and what they stand for to FILE (JSON, made mode 0600).",
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
    with guard():
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
            at_least(value, low, option, what)
        if distance_km is not None and not 0 < distance_km <= 40_000:  # also NaN; half the equator at most
            raise UsageError(f"--distance-km must be a distance in km above 0 and at most 40000, not {distance_km:g}")
        render = CSV_TABLES[table] if output_format is OutputFormat.CSV else RENDERERS[output_format]
        limits = Limits(
            max_total_bytes=parse_size(max_total, "--max-total-bytes"),
            max_ratio=max_ratio,
            max_depth=max_depth,
            max_members=max_members,
            max_seconds_per_input=max_seconds,
            read_special=read_special,
        )
        check_output(output)  # a report that cannot be written is said before the input is read
        check_output(redact_map)
        zones = parse_zones(tz or [])
        options = Options(
            threshold_ms=threshold,
            zones=zones,
            since=parse_instant(since, zones.default_tzinfo(), "--since") if since else None,
            until=parse_instant(until, zones.default_tzinfo(), "--until") if until else None,
            window_s=window,
            limits=limits,
            clock_offsets=parse_clock_offsets(clock_offset or []),
            baselines=tuple(str(p) for p in baseline or ()),
            awr=tuple(str(p) for p in awr or ()),
            distance_km=distance_km,
        )
        with progress() as hook:
            result = cli.analyze(paths, options, progress=hook)
        check_usable(result)
        if redact:
            result, mapping = redaction.redact(result)
            if redact_map is not None:
                write_report(lambda out: redaction.write_map(mapping, out), redact_map, private=True)
        write_report(lambda out: render(result, out, top), output)
    if result.exit_code != ExitCode.OK:
        raise typer.Exit(int(result.exit_code))


def check_usable(a: Analysis) -> None:
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
    """Values of `dgtrace inventory --format` (and of `dgtrace batch --format`)."""

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
    with guard():
        with progress() as hook:
            result = cli.analyze(paths, Options(zones=parse_zones(tz or [])), progress=hook)
        render = render_inventory_json if output_format is InventoryFormat.JSON else render_inventory_text
        write_report(lambda out: render(result, out), None)
    if result.exit_code != ExitCode.OK:
        raise typer.Exit(int(result.exit_code))
