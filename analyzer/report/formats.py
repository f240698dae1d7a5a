"""The renderers of an `Analysis`, in a registry keyed by format (`--format`, `--table`)."""

from __future__ import annotations

from collections.abc import Callable
from enum import StrEnum
from typing import TextIO

from analyzer.findings import events
from analyzer.findings.insights import per_minute
from analyzer.match.analysis import Analysis
from analyzer.report.html import render_html
from analyzer.report.machine import render_csv, render_json, write_csv
from analyzer.report.markdown import render_markdown
from analyzer.report.text import render_text


class OutputFormat(StrEnum):
    """Values of `--format`."""

    TEXT = "text"
    JSON = "json"
    CSV = "csv"
    HTML = "html"
    MARKDOWN = "markdown"


Renderer = Callable[[Analysis, TextIO, int], None]

RENDERERS: dict[OutputFormat, Renderer] = {
    OutputFormat.TEXT: render_text,
    OutputFormat.JSON: render_json,
    OutputFormat.CSV: render_csv,
    OutputFormat.HTML: render_html,
    OutputFormat.MARKDOWN: render_markdown,
}


class CsvTable(StrEnum):
    """Values of `--table` (which table `--format csv` prints)."""

    WRITES = "writes"
    TIMELINE = "timeline"
    EVENTS = "events"
    WARNINGS = "warnings"
    UNMATCHED = "unmatched"


def render_timeline_csv(a: Analysis, out: TextIO, top: int) -> None:
    """Write the per-minute series (the JSON `timeline` items) as CSV."""
    del top  # the CSV is always the full table
    write_csv(per_minute(a.writes), out)


def render_events_csv(a: Analysis, out: TextIO, top: int) -> None:
    """Write every send, receive, finish and ack, and the log writer and alert-log events around
    them, on one timeline (standby shifted by the clock offset)."""
    del top
    write_csv(events.timeline(a), out)


def render_warnings_csv(a: Analysis, out: TextIO, top: int) -> None:
    """Write every LGWR warning (long writes, broadcast waits: `kind`) with the breakdown of the remote
    write it covers."""
    del top
    write_csv(a.warnings, out)


def render_unmatched_csv(a: Analysis, out: TextIO, top: int) -> None:
    """Write every message that found no partner, with the reason."""
    del top
    write_csv(a.unmatched, out)


CSV_TABLES: dict[CsvTable, Renderer] = {
    CsvTable.WRITES: render_csv,
    CsvTable.TIMELINE: render_timeline_csv,
    CsvTable.EVENTS: render_events_csv,
    CsvTable.WARNINGS: render_warnings_csv,
    CsvTable.UNMATCHED: render_unmatched_csv,
}
