"""`dgtrace report`: the trend in text, Markdown, JSON and HTML."""

from __future__ import annotations

import io
import json
import re
from datetime import date

import polars as pl
import pytest

from analyzer.batch.schemas import TREND
from analyzer.report.trend import TREND_RENDERERS, TrendFormat, TrendReport, trend_figure


def _report() -> TrendReport:
    rows = pl.DataFrame(
        {
            "primary_db": ["hr", "sales", "hr"],
            "day": [date(2024, 10, 23), date(2024, 10, 22), date(2024, 10, 22)],
            "standby_db": ["hrdr", "salesdr", "hrdr"],
            "writes": [400, 1200, 0],
            "slow_writes": [16, 1, 0],
            "total_p50_ms": [1.97, 1.9, None],
            "total_p99_ms": [284.191, 5.6, None],
            "total_max_ms": [468.456, 138.7, None],
            "fastsync_p99_ms": [31.377, 5.1, None],
            "fastsync_slow_writes": [0, 0, 0],
            "network_share": [0.104, 0.917, None],
            "rfs_io_share": [0.888, 0.05, None],
            "rfs_other_share": [0.008, 0.033, None],
            "threshold_ms": [100.0, 100.0, 100.0],
        },
        schema=TREND,
    )
    return TrendReport("/data/dg", rows, date(2024, 10, 22), None, ("hr",))


def _render(fmt: TrendFormat, report: TrendReport | None = None) -> str:
    out = io.StringIO()
    TREND_RENDERERS[fmt](report or _report(), out)
    return out.getvalue()


@pytest.mark.parametrize("columns", [80, 60])
def test_the_text_trend_fits_the_terminal_and_names_what_it_leaves_out(
    monkeypatch: pytest.MonkeyPatch, columns: int
) -> None:
    """As `analyze` does: COLUMNS (or the terminal's width) is kept, no number is split across lines."""
    full = _render(TrendFormat.TEXT).splitlines()
    assert max(map(len, full)) > 100  # every column in a pipe
    monkeypatch.setenv("COLUMNS", str(columns))
    text = _render(TrendFormat.TEXT).splitlines()
    assert all(len(line) <= columns for line in text), text
    table = text[text.index("") + 1 :][:4]
    assert [row.split()[:4] for row in table[1:]] == [row.split()[:4] for row in full[3:6]]
    assert "p99" in table[0] and "284.19" in table[1]
    note = " ".join(text[text.index(table[-1]) + 1 :])
    assert note.startswith("Left out at this width: other RFS, slow, max ms")


def test_text_lines_in_the_given_order() -> None:
    text = _render(TrendFormat.TEXT).splitlines()
    assert text[0].startswith("dgtrace report /data/dg: 3 configuration-days, 2024-10-22 .. 2024-10-23")
    assert "slow: total >= 100 ms" in text[0]
    assert text[2].split()[:3] == ["configuration", "day", "writes"]
    assert text[2].split()[8:12] == ["p99", "ms", "Fast", "Sync"]
    rows = [line.split() for line in text[3:6]]
    assert rows[0] == [
        "hr",
        "->",
        "hrdr",
        "2024-10-23",
        "400",
        "16",
        "4.0%",
        "1.97",
        "284.19",
        "31.38",  # standby I/O took 89% of the time: the p99 with Fast Sync beside the measured one
        "468.46",
        "10%",
        "89%",
        "1%",
    ]
    assert rows[1][:4] == ["sales", "->", "salesdr", "2024-10-22"] and rows[1][4] == "1,200"
    assert rows[1][8:10] == ["5.60", "-"]  # 5% in standby I/O: Fast Sync would change little
    assert rows[2][5:] == ["0", "-", "-", "-", "-", "-", "-", "-", "-"]  # a day without writes
    assert text[7].startswith("Fast Sync p99: the p99 of the writes seen on both sides without their standby I/O")


def test_markdown_table() -> None:
    md = _render(TrendFormat.MARKDOWN).splitlines()
    assert md[0].startswith("# dgtrace report /data/dg")
    assert md[2].startswith("| configuration | day | writes |")
    assert md[3].startswith("|---|---|---:|")
    assert md[4] == "| hr -\\> hrdr | 2024-10-23 | 400 | 16 | 4.0% | 1.97 | 284.19 | 31.38 | 468.46 | 10% | 89% | 1% |"
    assert md[-1].startswith("Fast Sync p99: the p99 of the writes seen on both sides")


def test_json_document() -> None:
    doc = json.loads(_render(TrendFormat.JSON))
    assert (doc["since"], doc["until"], doc["dbs"]) == ("2024-10-22", None, ["hr"])
    assert doc["days"][0] == {
        "primary_db": "hr",
        "day": "2024-10-23",
        "standby_db": "hrdr",
        "writes": 400,
        "slow_writes": 16,
        "total_p50_ms": 1.97,
        "total_p99_ms": 284.191,
        "total_max_ms": 468.456,
        "fastsync_p99_ms": 31.377,
        "fastsync_slow_writes": 0,
        "network_share": 0.104,
        "rfs_io_share": 0.888,
        "rfs_other_share": 0.008,
        "threshold_ms": 100.0,
    }


def test_html_one_plot_per_configuration() -> None:
    pytest.importorskip("plotly")
    page = _render(TrendFormat.HTML)
    assert page.startswith("<!DOCTYPE html>") and "Content-Security-Policy" in page
    assert page.count('id="trend-') == 2  # hr and sales
    assert '"text":"hr -&gt; hrdr: daily p99 and where the time went"' in page  # the figure's title, in its JSON
    assert "<td>hr -&gt; hrdr</td><td>2024-10-23</td><td class=num>400</td>" in page
    assert "default-src 'none'" in page  # the page may fetch nothing


def test_figure_days_in_order() -> None:
    pytest.importorskip("plotly")
    rows = _report().rows.filter(pl.col("primary_db") == "hr")
    fig = trend_figure(rows, "hr")
    assert [t.name for t in fig.data] == ["network %", "standby I/O %", "other RFS %", "p99 total (ms)"]
    assert list(fig.data[3].x) == ["2024-10-22", "2024-10-23"]
    assert list(fig.data[0].y) == [None, pytest.approx(10.4)]


def test_html_plots_the_fast_sync_p99_where_standby_io_matters() -> None:
    pytest.importorskip("plotly")
    page = _render(TrendFormat.HTML)
    assert page.count('"name":"p99 with Fast Sync (ms)"') == 1  # hr's plot; sales spends 5% in standby I/O
    assert "<td class=num>284.19</td><td class=num>31.38</td>" in page
    assert "<td class=num>5.60</td><td class=num>-</td>" in page


def test_no_rows() -> None:
    empty = TrendReport("/d", _report().rows.clear())
    assert _render(TrendFormat.TEXT, empty).startswith("dgtrace report /d: no configuration-day matches")
    assert json.loads(_render(TrendFormat.JSON, empty))["days"] == []


#: names as an ADR path can carry them: Markdown and HTML markup, a link, ANSI escapes, a table cell's end
HOSTILE_PRIMARY = "s<img src=x onerror=alert(1)>[l](javascript:a)"
HOSTILE_STANDBY = "\x1b[31mred\x1b[0m|dr`x`\rback"
HOSTILE_DATASET = "/data/<b>dg</b>\x1b]0;title\x07"


def _hostile() -> TrendReport:
    rows = _report().rows.with_columns(
        primary_db=pl.lit(HOSTILE_PRIMARY, pl.String), standby_db=pl.lit(HOSTILE_STANDBY, pl.String)
    )
    return TrendReport(HOSTILE_DATASET, rows)


def test_hostile_names_in_the_text_trend_send_no_control_character() -> None:
    text = _render(TrendFormat.TEXT, _hostile())
    assert not any(c in text for c in "\x1b\x07\r")
    lines = text.splitlines()
    assert lines[0].startswith("dgtrace report /data/<b>dg</b>\\x1b]0;title\\x07: 3 configuration-days")
    assert len(lines) == 3 + 3 + 2  # title, blank line, header, one line per row, blank line, note
    assert all(line.startswith(f"{HOSTILE_PRIMARY} -> \\x1b[31mred\\x1b[0m|dr`x`\\x0dback ") for line in lines[3:6])


def test_hostile_names_in_the_markdown_trend_open_no_tag_link_or_cell() -> None:
    md = _render(TrendFormat.MARKDOWN, _hostile())
    assert not re.search(r"(?<!\\)[<>\[\]`]", md) and "\r" not in md and "\x1b" not in md  # every one escaped
    lines = md.splitlines()
    assert lines[0].startswith("# dgtrace report /data/\\<b\\>dg\\</b\\>")
    cell = "s\\<img src=x onerror=alert(1)\\>\\[l\\](javascript:a) -\\> \\x1b\\[31mred\\x1b\\[0m\\|dr\\`x\\`back"
    assert all(line.startswith(f"| {cell} | 2024-10-2") for line in lines[4:7])
    for line in lines[2:7]:  # as many cells as columns: no name ends one
        assert line.replace("\\|", "").count("|") == 13


def test_hostile_names_in_the_json_trend_come_back_as_they_are() -> None:
    doc = json.loads(_render(TrendFormat.JSON, _hostile()))
    assert doc["dataset"] == HOSTILE_DATASET
    assert {(d["primary_db"], d["standby_db"]) for d in doc["days"]} == {(HOSTILE_PRIMARY, HOSTILE_STANDBY)}


def test_hostile_names_in_the_html_trend_stay_text() -> None:
    pytest.importorskip("plotly")
    page = _render(TrendFormat.HTML, _hostile())
    assert "<img" not in page and "<b>dg" not in page
    assert "<td>s&lt;img src=x onerror=alert(1)&gt;[l](javascript:a) -&gt; " in page
    assert "/data/&lt;b&gt;dg&lt;/b&gt;" in page
    # the figure's title escaped before plotly (which reads tags in titles), then JSON-encoded
    assert '"text":"s&lt;img src=x onerror=alert(1)&gt;[l](javascript:a) -&gt; ' in page
