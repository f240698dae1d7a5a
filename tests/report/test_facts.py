"""The facts of an analysis in plain words, and the notes on `--tz` and `--clock-offset` values that named no host."""

from __future__ import annotations

from analyzer.api import Analysis, Options, analyze
from analyzer.base.zones import parse_zones
from analyzer.findings.files import file_views, oracle_versions
from analyzer.report.context import Context
from analyzer.report.facts import Counts, facts, host_option_notes, notes

PAPER = "samples/paper-2014"


def test_the_facts_of_the_paper_s_example_in_words(paper: Analysis) -> None:
    c = Context.of(paper)
    said = dict(facts(paper, c.counts, c.files))
    assert said == {
        "Files": "6 read: 4 primary, 2 standby",
        "Trace files in": PAPER,
        "Hosts": "primary prim01, prim02; standby stby01",
        "Oracle versions": "11.2.0.4.0",
        "Time span (UTC)": "2014-12-02 15:46:29 to 2014-12-02 15:46:54 (25 s of remote writes)",
        "Time zones": "--tz -07:00 (6 files)",
        "Clock offset (standby - primary)": "stby01 vs prim01: +0.492 ms +/- 0.98 ms (estimated);"
        " stby01 vs prim02: +0.481 ms +/- 0.982 ms (estimated)",
        "Remote writes": "66 sent by the primary, 66 received by the standby, 66 matched (match rate 100.0%)",
        "Slow writes": "2 with total >= 100 ms",
        "Unmatched messages": "0",
        "Coverage": "864 lines: 846 parsed, 18 ignored, 0 unparsed",
        "LGWR warnings": "2 (long writes and broadcast waits)",
    }
    assert oracle_versions(c.files) == ["11.2.0.4.0"]


def test_the_counts_of_an_analysis_and_its_match_rate(paper: Analysis) -> None:
    assert Context.of(paper).counts == Counts(66, 66, 66, 2, 0, 0, 2)
    assert Counts(10, 8, 3, 1, 0, 0, 0).match_rate == 0.3 and Counts(0, 8, 0, 0, 0, 0, 0).match_rate is None


def test_option_values_that_named_no_host_are_noted_with_the_hosts_there_are() -> None:
    options = Options(zones=parse_zones(["-07:00", "dbhost9=+01:00"]), clock_offsets={"prim01": 5.0, "stby01": 1.0})
    a = analyze([PAPER], options)
    said = host_option_notes(a, file_views(a))
    assert said == [
        "--tz dbhost9=+01:00 named no host of the traces (hosts: prim01, prim02, stby01)",
        "--clock-offset prim01=5 named no standby host (prim01 is a primary host: give the standby host, whose"
        " clock minus the primary's it is)",
    ]


def test_no_note_when_every_value_was_used(paper: Analysis) -> None:
    assert host_option_notes(paper, file_views(paper)) == []


def test_notes_count_the_writes_with_a_negative_component(paper: Analysis) -> None:
    assert notes(paper, file_views(paper)) == [
        "18 write(s) have a negative component (18 within timestamp resolution, 0 beyond it: see their 'warning')"
    ]
