"""Machine-readable renderers: one JSON document, or the writes table as CSV."""

from __future__ import annotations

import json
from typing import TextIO

import polars as pl

from analyzer.api import Analysis
from analyzer.report.model import document


def render_json(a: Analysis, out: TextIO, top: int) -> None:
    """Write the whole analysis as one JSON document."""
    json.dump(document(a, top), out, indent=1, default=str)
    out.write("\n")


def render_csv(a: Analysis, out: TextIO, top: int) -> None:
    """Write the writes table (same column names as the JSON `writes` items)."""
    del top  # the CSV is always the full table
    table = a.writes.with_columns(pl.col("sent_at").dt.strftime("%Y-%m-%dT%H:%M:%S%.6fZ"))
    out.write(table.write_csv())
