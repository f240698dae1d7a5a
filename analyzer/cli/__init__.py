"""The `dgtrace` command line: parse options, call the pipeline, hand the result to a renderer.

One module per group of commands, registered on the one typer `app` of `analyzer.cli.base`:

- `trace`: `analyze` and `inventory` (the commands that read trace files);
- `archive`: `batch` and `report` (a Parquet dataset of archived traces, and its trend);
- `simulation`: `simulate` and `simulate-share`.

`main` is the console script's entry point (`dgtrace`, `python -m analyzer`). The commands call the
facade as `analyzer.cli.analyze`, looked up when they run: the one seam to replace it.
"""

from __future__ import annotations

from analyzer.api import analyze
from analyzer.cli import archive, simulation, trace
from analyzer.cli.base import app, main
from analyzer.cli.trace import BINARY_SHARE, check_usable
from analyzer.report.formats import CSV_TABLES, RENDERERS, CsvTable, OutputFormat

__all__ = [
    "BINARY_SHARE",
    "CSV_TABLES",
    "RENDERERS",
    "CsvTable",
    "OutputFormat",
    "analyze",
    "app",
    "archive",
    "check_usable",
    "main",
    "simulation",
    "trace",
]
