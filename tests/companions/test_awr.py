"""AWR and Statspack reports (`--awr`): every value of every fixture, skipped sections, rejects."""

from __future__ import annotations

import gzip
import re
from datetime import datetime
from pathlib import Path

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from analyzer.base.errors import ExitCode, UsageError
from analyzer.companions.awr import (
    AWR_EVENTS,
    AWR_HISTOGRAM,
    DATA_GUARD_EVENTS,
    AwrReport,
    SkippedSection,
    parse_awr,
    read_awr,
)
from analyzer.companions.awr_tables import section_title

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "awr"
LINE_BREAKS = "\r\n\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"
NO_DATA = "no table under the title: No data exists for this section of the report."


def _pairs(labels: list[str], bounds: list[tuple[float, float | None]]) -> list[tuple[str, tuple[float, float | None]]]:
    return list(zip(labels, bounds, strict=True))


MS = ["<1ms", "<2ms", "<4ms", "<8ms", "<16ms", "<32ms"]
MS_BOUNDS: list[tuple[float, float | None]] = [
    (0.0, 1.0),
    (1.0, 2.0),
    (2.0, 4.0),
    (4.0, 8.0),
    (8.0, 16.0),
    (16.0, 32.0),
]
#: "<1ms" ... "<32ms", "<=1s", ">1s" (11.2 and Statspack)
HIST_11 = _pairs([*MS, "<=1s", ">1s"], [*MS_BOUNDS, (32.0, 1000.0), (1000.0, None)])
#: "<1ms" ... "<32ms", "<1s", ">=1s" (12.1)
HIST_12 = _pairs([*MS, "<1s", ">=1s"], [*MS_BOUNDS, (32.0, 1000.0), (1000.0, None)])
#: "<32ms" ... ">=2s" (the 64 msec to 2 sec tables)
SECONDS: list[tuple[float, float | None]] = [(0.0, 32.0), (32.0, 64.0), (64.0, 125.0), (125.0, 250.0)]
SECONDS += [(250.0, 500.0), (500.0, 1000.0), (1000.0, 2000.0), (2000.0, None)]
UP_TO_2S = _pairs(["<32ms", "<64ms", "<1/8s", "<1/4s", "<1/2s", "<1s", "<2s", ">=2s"], SECONDS)
#: "<512" (microseconds: the heading after it is in ms) ... ">=32m" (ms: no heading of the row is in s)
UP_TO_32MS = _pairs(["<512", *MS, ">=32m"], [(0.0, 0.512), (0.512, 1.0), *MS_BOUNDS[1:], (32.0, None)])
MICRO: list[tuple[float, float | None]] = [(0.0, 0.008), (0.008, 0.016), (0.016, 0.032), (0.032, 0.064)]
MICRO += [(0.064, 0.128), (0.128, 0.256), (0.256, 0.512), (0.512, None)]
#: 12.2+ microsecond histogram, text headings cut to 5 characters ("<128u", ">=512")
MICRO_TEXT = _pairs(["<8us", "<16us", "<32us", "<64us", "<128u", "<256u", "<512u", ">=512"], MICRO)
MICRO_HTML = _pairs(["<8us", "<16us", "<32us", "<64us", "<128us", "<256us", "<512us", ">=512us"], MICRO)


def _head(r: AwrReport) -> tuple[object, ...]:
    return (r.kind, r.format, r.db_name, r.instance, r.host, r.role, r.release)


def _window(r: AwrReport) -> tuple[object, ...]:
    return (r.begin_snap, r.end_snap, r.begin_time, r.end_time, r.elapsed_s)


def _events(r: AwrReport) -> list[tuple[object, ...]]:
    assert r.events.schema == AWR_EVENTS
    return [tuple(pytest.approx(v) if isinstance(v, float) else v for v in row) for row in r.events.iter_rows()]


def _histogram(r: AwrReport) -> dict[str, dict[str, tuple[int, int, list[float]]]]:
    """table -> event -> (waits, line, pct per bucket); the buckets are checked by _buckets."""
    assert r.histogram.schema == AWR_HISTOGRAM
    out: dict[str, dict[str, tuple[int, int, list[float]]]] = {}
    for (table, event, waits, line), group in r.histogram.group_by(
        "table", "event", "waits", "line", maintain_order=True
    ):
        out.setdefault(str(table), {})[str(event)] = (int(waits), int(line), group["pct"].to_list())  # type: ignore[call-overload]
    return out


def _buckets(r: AwrReport, table: str) -> list[tuple[str, tuple[float, float | None]]]:
    """The bucket labels and bounds of one table, the same for every event in it."""
    rows = r.histogram.filter(pl.col("table") == table)
    per_event = {e: g.select("bucket", "lower_ms", "upper_ms").rows() for (e,), g in rows.group_by("event")}
    assert len({tuple(v) for v in per_event.values()}) == 1, per_event
    return [(b, (lo, hi)) for b, lo, hi in next(iter(per_event.values()))]


def test_awr_11_2_text_every_value() -> None:
    r = read_awr(FIXTURES / "awr-11.2-primary.txt")
    assert r.label == str(FIXTURES / "awr-11.2-primary.txt")
    assert _head(r) == ("awr", "text", "ORBIT", "orbit1", "dbprim01", None, "11.2.0.4.0")
    assert _window(r) == (40211, 40212, datetime(2024, 3, 5, 14, 0, 8), datetime(2024, 3, 5, 15, 0, 11), 3603.0)
    # the "Top 5 Timed Foreground Events" summary is not a wait event section: its log file sync is not read
    assert _events(r) == [
        ("foreground", "log file sync", 3941207, 0.0, 9065.0, 2.0, 40),
        ("background", "LNS wait on SENDREQ", 3376882, 0.0, 3118.0, 1.0, 55),
        ("background", "log file parallel write", 3377016, 0.0, 2187.0, 1.0, 56),
    ]
    detail = "Wait Event Histogram Detail (64 msec to 2 sec)"
    assert _histogram(r) == {
        "Wait Event Histogram": {  # "log file sync" is on the second page of the table
            "LNS wait on SENDREQ": (3377000, 74, [41.2, 38.9, 12.7, 4.1, 1.9, 0.8, 0.4, 0.0]),
            "log file parallel write": (3377000, 76, [78.3, 14.2, 4.9, 1.6, 0.6, 0.3, 0.1, 0.0]),
            "log file sync": (3941000, 89, [22.6, 41.8, 21.4, 8.1, 3.9, 1.6, 0.6, 0.0]),
        },
        detail: {
            "LNS wait on SENDREQ": (1352, 109, [99.6, 0.3, 0.1, 0.0, 0.0, 0.0, 0.0, 0.0]),
            "log file parallel write": (338, 110, [99.9, 0.1, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]),
            "log file sync": (2365, 111, [99.4, 0.4, 0.1, 0.1, 0.0, 0.0, 0.0, 0.0]),
        },
    }
    assert _buckets(r, "Wait Event Histogram") == HIST_11
    assert _buckets(r, detail) == UP_TO_2S
    assert r.skipped == (SkippedSection("Wait Event Histogram Detail (4 sec to 2 min)", 114, NO_DATA),)


def test_awr_12c_text_every_value() -> None:
    r = read_awr(FIXTURES / "awr-12c-primary.txt")
    assert _head(r) == ("awr", "text", "HARBOR", "harbor2", "hbrdb02", None, "12.1.0.2.0")
    assert _window(r) == (8802, 8803, datetime(2025, 1, 28, 10, 0, 51), datetime(2025, 1, 28, 11, 0, 3), 3552.0)
    assert _events(r) == [
        ("foreground", "log file sync", 5812339, 0.0, 26737.0, 4.60, 28),
        ("background", "SYNC Remote Write", 897751, 0.0, 3097.0, 3.45, 42),
        ("background", "log file parallel write", 897802, 0.0, 557.0, 0.62, 43),
    ]
    detail = "Wait Event Histogram Detail (64 msec to 2 sec)"
    assert _histogram(r) == {
        "Wait Event Histogram": {  # 897.8K and the cut 5812.K (K is 1000)
            "SYNC Remote Write": (897800, 60, [3.1, 29.8, 44.0, 16.9, 4.4, 1.3, 0.5, 0.0]),
            "log file parallel write": (897800, 61, [71.9, 22.4, 4.1, 1.1, 0.3, 0.1, 0.1, 0.0]),
            "log file sync": (5812000, 62, [9.8, 30.7, 31.2, 16.5, 7.4, 3.1, 1.3, 0.0]),
        },
        detail: {
            "SYNC Remote Write": (4489, 81, [99.5, 0.3, 0.1, 0.1, 0.0, 0.0, 0.0, 0.0]),
            "log file sync": (75600, 82, [98.7, 0.7, 0.3, 0.2, 0.1, 0.0, 0.0, 0.0]),
        },
    }
    assert _buckets(r, "Wait Event Histogram") == HIST_12
    assert _buckets(r, detail) == UP_TO_2S
    assert r.skipped == ()


def test_awr_19c_text_every_value() -> None:
    r = read_awr(FIXTURES / "awr-19c-primary.txt")
    assert _head(r) == ("awr", "text", "ORBIT", "orbit1", "dbprim01", "PRIMARY", "19.0.0.0.0")
    assert _window(r) == (51877, 51878, datetime(2024, 4, 16, 9, 0, 2), datetime(2024, 4, 16, 9, 30, 5), 1803.0)
    assert _events(r) == [  # averages printed with their unit: 1.03ms, 811.09us, 416.83us
        ("foreground", "log file sync", 1884523, 0.0, 1941.0, 1.03, 41),
        ("background", "SYNC Remote Write", 1911870, 0.0, 1551.0, 0.81109, 56),
        ("background", "log file parallel write", 1912044, 0.0, 797.0, 0.41683, 57),
    ]
    assert _histogram(r) == {
        "Wait Event Histogram": {
            "SYNC Remote Write": (1900000, 77, [0.0, 0.0, 0.0, 0.0, 0.1, 2.4, 38.8, 58.7]),
            "log file parallel write": (1900000, 78, [0.0, 0.0, 0.0, 0.2, 4.6, 29.3, 44.1, 21.8]),
            "log file sync": (1900000, 79, [0.0, 0.0, 0.0, 0.0, 0.0, 0.4, 19.6, 80.0]),
        },
        "Wait Event Histogram (up to 32 ms)": {
            "SYNC Remote Write": (1100000, 98, [41.3, 51.0, 6.1, 1.1, 0.3, 0.1, 0.1, 0.0]),
            "log file parallel write": (413000, 99, [78.4, 19.0, 2.0, 0.4, 0.1, 0.1, 0.0, 0.0]),
            "log file sync": (1500000, 100, [20.0, 52.3, 20.9, 4.8, 1.3, 0.4, 0.2, 0.1]),
        },
        "Wait Event Histogram (up to 2 sec)": {
            "SYNC Remote Write": (612, 119, [99.9, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]),
            "log file sync": (2377, 120, [99.9, 0.1, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]),
        },
    }
    assert _buckets(r, "Wait Event Histogram") == MICRO_TEXT
    assert _buckets(r, "Wait Event Histogram (up to 32 ms)") == UP_TO_32MS
    assert _buckets(r, "Wait Event Histogram (up to 2 sec)") == UP_TO_2S
    assert r.skipped == (SkippedSection("Wait Event Histogram (up to 2 min)", 124, NO_DATA),)


def test_statspack_standby_every_value() -> None:
    r = read_awr(FIXTURES / "statspack-11.2-standby.txt")
    # the database name cell is empty in Statspack's head: it comes from the DB/Inst titles
    assert _head(r) == ("statspack", "text", "ORBIT", "orbitsb1", "dbstby01.example", None, "11.2.0.4.0")
    assert _window(r) == (117, 118, datetime(2024, 3, 5, 14, 0, 31), datetime(2024, 3, 5, 15, 0, 29), 3598.2)
    rfs = [
        ("RFS write", 3377021, 2209.0, 1.0),
        ("RFS random i/o", 3377019, 811.0, 0.0),
        ("RFS sequential i/o", 1406, 9.0, 6.0),
    ]
    assert _events(r) == [
        *[("background", e, w, 0.0, t, a, 38 + i) for i, (e, w, t, a) in enumerate(rfs)],
        *[("all", e, w, 0.0, t, a, 56 + i) for i, (e, w, t, a) in enumerate(rfs)],
    ]
    assert _histogram(r) == {
        "Wait Event Histogram": {  # RFS write is on the second page, whose title follows a row directly
            "RFS random i/o": (3377000, 74, [98.9, 0.8, 0.2, 0.1, 0.0, 0.0, 0.0, 0.0]),
            "RFS sequential i/o": (1406, 75, [36.2, 21.4, 19.9, 13.1, 6.5, 2.3, 0.6, 0.0]),
            "RFS write": (3377000, 85, [71.8, 17.3, 6.2, 2.6, 1.2, 0.6, 0.3, 0.0]),
        }
    }
    assert _buckets(r, "Wait Event Histogram") == HIST_11
    assert r.skipped == ()


def test_awr_11_2_html_every_value() -> None:
    r = read_awr(FIXTURES / "awr-11.2-primary.html")
    assert _head(r) == ("awr", "html", "HARBOR", "harbor1", "hbrdb01", None, "11.2.0.4.0")
    assert _window(r) == (60114, 60115, datetime(2023, 2, 14, 22, 0, 15), datetime(2023, 2, 14, 23, 0, 27), 3612.0)
    assert _events(r) == [
        ("foreground", "log file sync", 4118307, 0.0, 20611.0, 5.0, 45),
        ("background", "LNS wait on SENDREQ", 1805233, 0.0, 3972.0, 2.0, 56),
        ("background", "log file parallel write", 1805610, 0.0, 3014.0, 2.0, 57),
    ]
    detail = "Wait Event Histogram Detail (64 msec to 2 sec)"
    assert _histogram(r) == {
        "Wait Event Histogram": {  # two heading rows: "% of Waits" spans the eight buckets
            "LNS wait on SENDREQ": (1805200, 68, [18.3, 42.6, 24.1, 9.2, 3.7, 1.4, 0.7, 0.0]),
            "log file parallel write": (1805600, 69, [31.5, 37.9, 19.8, 7.1, 2.5, 0.9, 0.3, 0.0]),
            "log file sync": (4118300, 70, [6.2, 21.0, 33.3, 22.4, 10.3, 4.6, 2.1, 0.1]),
        },
        detail: {"log file sync": (86500, 76, [97.9, 1.2, 0.5, 0.2, 0.1, 0.1, 0.0, 0.0])},
    }
    assert _buckets(r, "Wait Event Histogram") == HIST_11
    assert _buckets(r, detail) == UP_TO_2S
    assert r.skipped == ()


#: "<2s" ... ">=2m" (the 4 sec to 2 min tables): `m` is minutes beside `s` headings, "< 1m" has a space
MINUTES: list[tuple[float, float | None]] = [(0.0, 2000.0), *((2000.0 * 2**k, 4000.0 * 2**k) for k in range(4))]
MINUTES += [(32000.0, 60000.0), (60000.0, 120000.0), (120000.0, None)]
UP_TO_2M = _pairs(["<2s", "<4s", "<8s", "<16s", "<32s", "<1m", "<2m", ">=2m"], MINUTES)


def test_awr_12c_html_every_value() -> None:
    r = read_awr(FIXTURES / "awr-12c-primary.html")
    assert _head(r) == ("awr", "html", "HARBOR", "harbor1", "hbrdb01", None, "12.1.0.2.0")
    assert _window(r) == (8802, 8803, datetime(2025, 1, 28, 10, 0, 51), datetime(2025, 1, 28, 11, 0, 3), 3552.0)
    # the "Top 10 Foreground Events" summary (log file sync, 26.3K s) is not a wait event section
    assert _events(r) == [
        ("foreground", "log file sync", 5790214, 0.0, 26310.0, 4.54, 61),
        ("background", "SYNC Remote Write", 902114, 0.0, 3158.0, 3.50, 76),
        ("background", "log file parallel write", 902170, 0.0, 571.0, 0.63, 77),
    ]
    detail, minutes = "Wait Event Histogram Detail (64 msec to 2 sec)", "Wait Event Histogram Detail (4 sec to 2 min)"
    assert _histogram(r) == {
        # two heading rows, "% of Waits" spanning the buckets; "Redo Transport Open" is not asked for
        "Wait Event Histogram": {
            "SYNC Remote Write": (902100, 94, [2.9, 30.4, 43.6, 16.8, 4.5, 1.3, 0.5, 0.0]),
            "log file parallel write": (902200, 95, [72.3, 22.0, 4.2, 1.0, 0.3, 0.1, 0.1, 0.0]),
            "log file sync": (5790200, 96, [10.1, 30.2, 31.5, 16.4, 7.3, 3.0, 1.5, 0.0]),
        },
        detail: {
            "SYNC Remote Write": (4362, 111, [99.5, 0.3, 0.1, 0.1, 0.0, 0.0, 0.0, 0.0]),
            "log file sync": (81200, 112, [98.6, 0.8, 0.3, 0.2, 0.1, 0.0, 0.0, 0.0]),
        },
        minutes: {"log file sync": (3, 127, [100.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0])},
    }
    assert _buckets(r, "Wait Event Histogram") == HIST_12
    assert _buckets(r, detail) == UP_TO_2S
    assert _buckets(r, minutes) == UP_TO_2M
    # "(4 min to 1 hr)" has no table ("No data exists ..."): an HTML heading without a table is no section
    assert r.skipped == ()
    wanted = ("Redo Transport Open", "enq: TX - row lock contention")
    others = read_awr(FIXTURES / "awr-12c-primary.html", events=wanted)
    assert _events(others) == [
        ("foreground", "enq: TX - row lock contention", 1804, 0.0, 573.0, 317.63, 63),  # a blank %Time -outs is 0
        ("background", "Redo Transport Open", 12, 0.0, 0.0, 2.21, 78),
    ]
    assert _histogram(others) == {
        "Wait Event Histogram": {"Redo Transport Open": (12, 93, [25.0, 25.0, 41.7, 8.3, 0.0, 0.0, 0.0, 0.0])}
    }


def test_awr_19c_html_every_value() -> None:
    r = read_awr(FIXTURES / "awr-19c-primary.html")
    assert _head(r) == ("awr", "html", "ORBIT", "orbit1", "dbprim01", "PRIMARY", "19.0.0.0.0")
    assert _window(r) == (51901, 51902, datetime(2024, 4, 17, 12, 0, 4), datetime(2024, 4, 17, 13, 0, 1), 3597.0)
    assert _events(r) == [  # "Total Wait Time (sec)", "Avg Wait" with units in the cells
        ("foreground", "log file sync", 2204611, 0.0, 2391.0, 1.08, 49),
        ("background", "SYNC Remote Write", 2231950, 0.0, 1866.0, 0.83611, 60),
        ("background", "log file parallel write", 2232118, 0.0, 903.0, 0.40456, 61),
    ]
    assert _histogram(r) == {
        "Wait Event Histogram": {
            "SYNC Remote Write": (2200000, 72, [0.0, 0.0, 0.0, 0.0, 0.1, 2.2, 36.9, 60.8]),
            "log file parallel write": (2200000, 73, [0.0, 0.0, 0.0, 0.3, 5.0, 30.1, 43.0, 21.6]),
            "log file sync": (2200000, 74, [0.0, 0.0, 0.0, 0.0, 0.0, 0.3, 17.7, 82.0]),
        },
        "Wait Event Histogram (up to 32 ms)": {
            "SYNC Remote Write": (1400000, 80, [39.0, 52.7, 6.6, 1.2, 0.3, 0.1, 0.1, 0.0]),
            "log file sync": (1800000, 81, [18.0, 53.1, 21.6, 5.1, 1.4, 0.5, 0.2, 0.1]),
        },
    }
    assert _buckets(r, "Wait Event Histogram") == MICRO_HTML
    assert _buckets(r, "Wait Event Histogram (up to 32 ms)") == UP_TO_32MS
    assert r.skipped == ()


def test_other_events_on_request_and_names_cut_to_the_column() -> None:
    """`events=` reads any event; a name that fills its text column (26 characters) was cut by Oracle."""
    wanted = ("enq: TX - row lock contention", "Redo Transport Open", "log file sync")
    r = read_awr(FIXTURES / "awr-12c-primary.txt", events=wanted)
    assert [(s, e, w, a) for s, e, w, _, _, a, _ in r.events.iter_rows()] == [
        ("foreground", "log file sync", 5812339, 4.6),
        ("foreground", "enq: TX - row lock contention", 1977, 309.56),  # blank %time-outs: "truly 0"
        ("background", "Redo Transport Open", 12, 2.08),
    ]
    assert r.events.row(1)[3] == 0.0
    assert set(DATA_GUARD_EVENTS) >= {"SYNC Remote Write", "LNS wait on SENDREQ", "RFS random i/o"}


def _edit(name: str, edits: list[tuple[str, str]]) -> str:
    text = (FIXTURES / name).read_text(encoding="utf-8")
    for old, new in edits:
        assert old in text, old
        text = text.replace(old, new, 1)
    return text


def test_unreadable_sections_are_skipped_with_reasons_and_the_rest_is_read() -> None:
    header = "Event                             Waits -outs   Time (s)    (ms)     /txn   time"
    text = _edit(
        "awr-11.2-primary.txt",
        [
            (
                header,
                "Evnt                              Wts   -outs   Tm (s)      (ms)     /txn   time",
            ),  # garbled FG heading
            ("LNS wait on SENDREQ           3,376,882", "LNS wait on SENDREQ           3,376,8x2"),  # damaged number
            (
                "Event                      Waits  <1ms  <2ms",
                "Event                      Waits  ~1ms  ~2ms",
            ),  # bad buckets
        ],
    )
    r = parse_awr(text, "edited.txt")
    # only the first page of the histogram lost its headings: the first two buckets are not buckets any more
    assert r.skipped[:2] == (
        SkippedSection(
            "Foreground Wait Events",
            39,
            "no Event/Waits/time columns (headings: Evnt, Wts, %Time -outs, Total Wait Tm (s), Avg wait (ms), "
            "Waits /txn, % DB time)",
        ),
        SkippedSection("Background Wait Events", 55, "LNS wait on SENDREQ: unexpected 'x2' at column 8"),
    )
    assert _events(r) == [("background", "log file parallel write", 3377016, 0.0, 2187.0, 1.0, 56)]
    first_page = r.histogram.filter(pl.col("event") == "LNS wait on SENDREQ", pl.col("table") == "Wait Event Histogram")
    assert first_page["bucket"].to_list() == ["<4ms", "<8ms", "<16ms", "<32ms", "<=1s", ">1s"]
    assert first_page["lower_ms"][0] == 0.0  # the first bucket read starts at 0: what it says is what we know
    assert r.histogram.filter(pl.col("event") == "log file sync", pl.col("table") == "Wait Event Histogram").height == 8


def test_section_without_a_table_and_a_report_without_sections() -> None:
    text = _edit(
        "awr-19c-primary.txt",
        [("Background Wait Events                    DB/Inst", "Background Wait Events                    DB/Inst")],
    )
    lines = text.splitlines()
    start = next(i for i, t in enumerate(lines) if t.startswith("Background Wait Events"))
    end = next(i for i in range(start + 1, len(lines)) if lines[i].startswith("Wait Event Histogram"))
    lines[start + 1 : end] = ["", "   (section cut from the mail)", ""]
    r = parse_awr("\n".join(lines), "cut.txt")
    assert (
        SkippedSection("Background Wait Events", start + 1, "no table under the title: (section cut from the mail)")
        in r.skipped
    )
    assert r.events["section"].to_list() == ["foreground"] and r.histogram.height == 64

    head_only = "\n".join((FIXTURES / "awr-11.2-primary.txt").read_text(encoding="utf-8").splitlines()[:17])
    r = parse_awr(head_only, "head.txt")
    assert _window(r)[:2] == (40211, 40212) and r.events.is_empty() and r.histogram.is_empty()
    assert r.skipped == (SkippedSection("", None, "no wait event section in the report"),)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("WORKLOAD REPOSITORY report for\n\nDB Name DB Id\n", "an AWR report, but neither its snapshot window nor"),
        ("WORKLOAD REPOSITORY COMPARE PERIOD REPORT\n", "an AWR compare-period report; give a single-period"),
        ("WORKLOAD REPOSITORY REPORT (RAC)\n", "a global RAC AWR report; give one instance's report"),
        ("<html><body><h1>Quarterly sales</h1><table><tr><td>1</td></tr></table></body></html>", "not an AWR"),
        ("[Requesting a test]\n  Message payload = 1 Mbyte\n", "not an AWR or Statspack report (no 'WORKLOAD"),
        ("\ufffd" * 400, "not an AWR or Statspack report (binary data)"),
        ("", "not an AWR or Statspack report"),
    ],
)
def test_what_is_not_a_readable_report_is_a_usage_error_naming_the_file(text: str, message: str) -> None:
    with pytest.raises(UsageError) as caught:
        parse_awr(text, "given.txt")
    assert str(caught.value).startswith(f"given.txt: {message}")
    assert caught.value.exit_code == ExitCode.USAGE


def test_files_plain_gzip_truncated_missing(tmp_path: Path) -> None:
    data = (FIXTURES / "awr-19c-primary.txt").read_bytes()
    (tmp_path / "r.txt.gz").write_bytes(gzip.compress(data))
    plain, packed = read_awr(FIXTURES / "awr-19c-primary.txt"), read_awr(tmp_path / "r.txt.gz")
    assert packed.events.equals(plain.events) and packed.histogram.equals(plain.histogram)
    cut = gzip.compress(data)
    (tmp_path / "cut.txt.gz").write_bytes(cut[: len(cut) * 2 // 3])
    partial = read_awr(tmp_path / "cut.txt.gz")
    assert partial.events.height >= 1 and partial.skipped[-1].reason.startswith("the gz stream ends early")
    with pytest.raises(UsageError, match="no such file"):
        read_awr(tmp_path / "missing.html")
    (tmp_path / "oratcptest.txt").write_text("[Requesting a test]\n", encoding="utf-8")
    with pytest.raises(UsageError, match=re.escape(f"{tmp_path / 'oratcptest.txt'}: not an AWR or Statspack")):
        read_awr(tmp_path / "oratcptest.txt")


def test_windows_line_ends_and_utf16_read_alike(tmp_path: Path) -> None:
    text = (FIXTURES / "statspack-11.2-standby.txt").read_text(encoding="utf-8")
    (tmp_path / "crlf.txt").write_bytes(text.replace("\n", "\r\n").encode())
    (tmp_path / "utf16.txt").write_bytes(text.encode("utf-16"))
    plain = read_awr(FIXTURES / "statspack-11.2-standby.txt")
    for name in ("crlf.txt", "utf16.txt"):
        other = read_awr(tmp_path / name)
        assert other.events.equals(plain.events) and other.histogram.equals(plain.histogram)
        assert _window(other) == _window(plain)


def _heading_lines(lines: list[str]) -> set[int]:
    """Indices of each ruled table's heading lines and ruler (junk there would rename columns)."""
    out: set[int] = set()
    for r, text in enumerate(lines):
        if re.fullmatch(r" *[-~]{2,}( +[-~]{2,})+ *", text):
            i = r
            while i > 0 and lines[i - 1].strip() and not lines[i - 1].lstrip().startswith("->"):
                if re.fullmatch(r" *-{10,} *", lines[i - 1]):
                    break
                i -= 1
            out |= set(range(i, r + 1))
    return out


def _without_line(frame: pl.DataFrame) -> list[tuple[object, ...]]:
    return frame.drop("line").rows()


_JUNK = st.text(st.characters(codec="utf-8", exclude_characters=LINE_BREAKS), max_size=60).filter(
    lambda t: section_title(t) is None and not re.fullmatch(r"[-~ ]*[-~][-~ ]*", t)
)


@pytest.mark.parametrize("name", ["awr-11.2-primary.txt", "awr-19c-primary.txt", "statspack-11.2-standby.txt"])
@settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(junk=st.lists(_JUNK, min_size=1, max_size=10), data=st.data())
def test_junk_lines_in_a_text_report_never_raise_and_keep_the_rows(
    name: str, junk: list[str], data: st.DataObject
) -> None:
    """Junk lines anywhere but inside a table's heading: the same event and histogram rows."""
    lines = (FIXTURES / name).read_text(encoding="utf-8").splitlines()
    clean = parse_awr("\n".join(lines), name)
    for j in junk:
        banned = _heading_lines(lines)
        allowed = [p for p in range(1, len(lines) + 1) if p not in banned]
        lines.insert(data.draw(st.sampled_from(allowed)), j)
    mixed = parse_awr("\n".join(lines), name)
    assert _without_line(mixed.events) == _without_line(clean.events)
    assert _without_line(mixed.histogram) == _without_line(clean.histogram)
    assert _window(mixed) == _window(clean)


@settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    junk=st.lists(
        st.text(st.characters(codec="utf-8", exclude_characters="<>&" + LINE_BREAKS), max_size=60), min_size=1
    ),
    data=st.data(),
)
def test_junk_text_between_html_lines_keeps_the_rows(junk: list[str], data: st.DataObject) -> None:
    lines = (FIXTURES / "awr-19c-primary.html").read_text(encoding="utf-8").splitlines()
    clean = parse_awr("\n".join(lines), "r.html")
    for j in junk:
        lines.insert(data.draw(st.integers(1, len(lines))), j)
    mixed = parse_awr("\n".join(lines), "r.html")
    assert _without_line(mixed.events) == _without_line(clean.events)
    assert _without_line(mixed.histogram) == _without_line(clean.histogram)
    assert (_head(mixed), _window(mixed)) == (_head(clean), _window(clean))


def test_an_event_name_without_numbers_is_skipped_with_its_reason() -> None:
    """A line holding only an event's name (a wrapped or damaged row) gives no row of nulls."""
    lines = (FIXTURES / "awr-19c-primary.txt").read_text(encoding="utf-8").splitlines()
    ruler = next(i for i, t in enumerate(lines) if t.startswith("-------------------------- ---"))
    clean = parse_awr("\n".join(lines), "r.txt")
    lines.insert(ruler + 1, "RFS write")
    mixed = parse_awr("\n".join(lines), "r.txt")
    assert _without_line(mixed.events) == _without_line(clean.events)
    assert any(s.line == ruler + 2 and s.reason == "RFS write: a name without numbers" for s in mixed.skipped)
