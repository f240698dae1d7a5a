"""The tables of a text or HTML AWR / Statspack report: section titles, ruled columns, header words, rows."""

from __future__ import annotations

import pytest

from analyzer.companions.awr_tables import html_tables, section_title, text_tables

REPORT = """WORKLOAD REPOSITORY report for
Background Wait Events  DB/Inst: PRODA/proda1  Snaps: 10-11
-> ordered by wait time desc

                                                             Avg
                                        %Time Total Wait    wait    Waits
Event                             Waits -outs   Time (s)    (ms)     /txn
---------------------------- ------------ ----- ---------- ------- --------
log file parallel write           912,044     0        797       1      1.1

LNS wait on SENDREQ                 1,234     0         12      10      0.0
          -------------------------------------------------------------
Wait Event Histogram  DB/Inst: PRODA/proda1  Snaps: 10-11
No data exists for this section of the report.
"""


@pytest.mark.parametrize(
    ("line", "title"),
    [
        ("Foreground Wait Events         DB/Inst: PRODA/proda1  Snaps: 10-11", "Foreground Wait Events"),
        ("Wait Event Histogram  DB/Inst: X/x1", "Wait Event Histogram"),
        ("Top 5 Timed Events", None),
        ("log file sync                  1,884,523", None),
    ],
)
def test_section_titles_of_the_wait_event_sections(line: str, title: str | None) -> None:
    assert section_title(line) == title


def test_a_ruled_text_table_has_its_header_words_per_column_and_its_rows() -> None:
    events, histogram = text_tables(REPORT.splitlines())
    assert (events.title, events.line) == ("Background Wait Events", 8)
    assert [(c.name, c.last) for c in events.columns] == [
        ("Event", "Event"),
        ("Waits", "Waits"),
        ("%Time -outs", "-outs"),
        ("Total Wait Time (s)", "Time (s)"),
        ("Avg wait (ms)", "(ms)"),
        ("Waits /txn", "/txn"),
    ]
    assert [(r.line, r.first) for r in events.rows] == [(9, "log file parallel write"), (11, "LNS wait on SENDREQ")]
    assert events.rows[1].cells == ("LNS wait on SENDREQ", "1,234", "0", "12", "10", "0.0")
    assert (histogram.title, histogram.line, histogram.columns, histogram.rows) == ("Wait Event Histogram", 13, (), ())
    assert histogram.note == "No data exists for this section of the report."


def test_an_html_table_takes_the_heading_above_it_and_spanned_header_cells() -> None:
    page = (
        "<h3>Foreground Wait Events</h3><table summary='wait events'>"
        "<tr><th rowspan=2>Event</th><th colspan=2>Time</th></tr><tr><th>Total (s)</th><th>Avg</th></tr>\n"
        "<tr><td>log file sync</td><td>1,941</td><td>1.03ms</td></tr></table>"
    )
    headings, [table] = html_tables(page)
    assert headings == ["Foreground Wait Events"]
    assert (table.title, table.summary) == ("Foreground Wait Events", "wait events")
    assert [(c.name, c.last) for c in table.columns] == [
        ("Event", "Event"),
        ("Time Total (s)", "Total (s)"),
        ("Time Avg", "Avg"),
    ]
    assert [(r.line, r.first, r.cells) for r in table.rows] == [
        (2, "log file sync", ("log file sync", "1,941", "1.03ms"))
    ]
