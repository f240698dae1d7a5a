"""The analysis summarised once for the human reports, and tables as plain strings."""

from __future__ import annotations

from analyzer.api import Analysis
from analyzer.report.context import Context, Table, more


def test_optional_columns_empty_in_every_row_are_left_out() -> None:
    table = Table(
        ("file", "warning", "note"),
        [("a.trc", "", "x"), ("b.trc", "", "")],
        optional=("warning", "note"),
    )
    trimmed = table.trimmed()
    assert trimmed.headers == ("file", "note") and list(trimmed.rows) == [("a.trc", "x"), ("b.trc", "")]
    full = Table(("file", "n"), [("a.trc", "1")], optional=("n",))
    assert full.trimmed() is full


def test_columns_of_numbers_are_told_from_columns_of_words() -> None:
    table = Table(
        ("file", "writes", "share", "span", "blank", "mixed"),
        [("a.trc", "1,204", "12.5%", "45 s", "", "3"), ("b.trc", "-7", "0%", "", "", "n/a")],
    )
    assert table.numeric() == [False, True, True, True, False, False]


def test_more_says_how_many_rows_are_left_and_where_they_are() -> None:
    assert more(10, 11_314, "warnings (the longest)", "--format csv --table warnings") == (
        "10 of 11,314 warnings (the longest); 11,304 more: --format csv --table warnings."
    )
    assert more(5, 5, "writes", "anywhere") == ""


def test_the_context_of_an_analysis_names_files_from_their_common_folder(paper: Analysis) -> None:
    c = Context.of(paper)
    assert c.labels == [f.source.label for f in paper.files] and len(c.labels) == 6
    lgwr, rfs = c.labels[0], c.labels[-1]
    assert c.where(lgwr, 12) == "prim01/diag/rdbms/boston/boston1/trace/boston1_lgwr_4371.trc:12"
    assert c.where(None, 12) == ""
    assert c.file(rfs) == "stby01/diag/rdbms/chicago/chicago1/trace/chicago1_rfs_8802.trc"


def test_the_context_summarises_once_for_every_section(paper: Analysis) -> None:
    c = Context.of(paper)
    assert (c.counts.primary_writes, c.counts.matched_writes, c.counts.slow_writes) == (66, 66, 2)
    assert c.counts.match_rate == 1.0 and len(c.files) == 6 and c.files[0].role == "primary"
    assert c.checks.fast_sync is not None and c.checks.runs == () and c.checks.distance is None  # no companions
    assert [s.name for s in c.scopes] == ["boston"] and c.scopes[0].recommendations == c.recommendations
    assert c.switches.window_s > 0 and c.shipping == []  # one SYNC link, nothing shipped ASYNC
