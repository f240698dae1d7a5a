"""The renderers by `--format` and the CSV tables by `--table`: one for each value, each table its schema's columns."""

from __future__ import annotations

import io
import json

import polars as pl
import pytest

from analyzer.api import Analysis
from analyzer.base.schemas import EVENTS, TIMELINE, UNMATCHED, WARNINGS, WRITES
from analyzer.report.formats import CSV_TABLES, RENDERERS, CsvTable, OutputFormat, Renderer

COLUMNS = {
    CsvTable.WRITES: WRITES,
    CsvTable.TIMELINE: TIMELINE,
    CsvTable.EVENTS: EVENTS,
    CsvTable.WARNINGS: WARNINGS,
    CsvTable.UNMATCHED: UNMATCHED,
}


def _rendered(render: Renderer, a: Analysis) -> str:
    out = io.StringIO()
    render(a, out, 10)
    return out.getvalue()


def test_every_format_and_table_has_its_renderer() -> None:
    assert set(RENDERERS) == set(OutputFormat) and set(CSV_TABLES) == set(CsvTable) == set(COLUMNS)
    assert [str(f) for f in OutputFormat] == ["text", "json", "csv", "html", "markdown"]


@pytest.mark.parametrize("table", list(CsvTable))
def test_each_csv_table_has_the_columns_of_its_schema_and_a_row_per_item(paper: Analysis, table: CsvTable) -> None:
    text = _rendered(CSV_TABLES[table], paper)
    frame = pl.read_csv(io.StringIO(text), infer_schema=False)
    assert frame.columns == list(COLUMNS[table])
    expected = {CsvTable.WRITES: 66, CsvTable.TIMELINE: 2, CsvTable.EVENTS: 266, CsvTable.WARNINGS: 2}
    assert frame.height == expected.get(table, 0)


def test_each_format_writes_its_own_kind_of_document(paper: Analysis) -> None:
    starts = {f: _rendered(RENDERERS[f], paper) for f in OutputFormat}
    assert json.loads(starts[OutputFormat.JSON])["summary"]["matched_writes"] == 66
    assert starts[OutputFormat.CSV] == _rendered(CSV_TABLES[CsvTable.WRITES], paper)
    assert starts[OutputFormat.HTML].startswith("<!DOCTYPE html>")
    assert starts[OutputFormat.MARKDOWN].startswith("# dgtrace: Data Guard SYNC")
    assert starts[OutputFormat.TEXT].startswith("dgtrace: Data Guard SYNC")
