"""Report stage: render an `Analysis` as terminal text, JSON or CSV (a registry keyed by format)."""

from __future__ import annotations

from collections.abc import Callable
from enum import StrEnum
from typing import TextIO

from analyzer.api import Analysis
from analyzer.report.machine import render_csv, render_json
from analyzer.report.model import document
from analyzer.report.text import render_text


class OutputFormat(StrEnum):
    """Values of `--format`."""

    TEXT = "text"
    JSON = "json"
    CSV = "csv"


Renderer = Callable[[Analysis, TextIO, int], None]

RENDERERS: dict[OutputFormat, Renderer] = {
    OutputFormat.TEXT: render_text,
    OutputFormat.JSON: render_json,
    OutputFormat.CSV: render_csv,
}

__all__ = ["RENDERERS", "OutputFormat", "document"]
