"""The tables every human report shares (`report.sections`), on the MAA paper's 11.2 traces."""

from __future__ import annotations

from analyzer.api import Analysis
from analyzer.report.comparisons import what_if_table
from analyzer.report.context import Context
from analyzer.report.sections import percentile_table, verdict_table

PAPER = "samples/paper-2014"


def test_tables_of_millisecond_stamps_show_whole_milliseconds(paper: Analysis) -> None:
    """11.2 stamps: the total, network, RFS and other RFS time in whole ms, RFS I/O (`ela`) in microseconds."""
    c = Context.of(paper)
    stats = {r[0]: r for r in percentile_table(c).rows}
    assert stats["total"][2:] == ("6", "2", "2", "138", "163")
    assert stats["network"][-1] == "137" and stats["rfs"][-1] == "163"
    assert stats["rfs_io"][2:] == ("3.378", "0.938", "1.262", "1.471", "162.679")
    verdicts = {r[0]: r for r in verdict_table(c).rows}
    assert verdicts["rfs_io"] == ("rfs_io", "40", "222", "1", "163")
    measured, fast = what_if_table(c).rows
    assert measured[3:] == ("6", "2", "2", "138", "163") and fast[-1] == "137"
