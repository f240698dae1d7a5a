"""What an analysis is given and gives: options, per-file results, coverage, the exit code, zones assumed."""

from __future__ import annotations

import io

import polars as pl

from analyzer.api import read_file
from analyzer.base.zones import ASSUMED_UTC, TimeZones
from analyzer.inputs.sources import Source
from analyzer.reduce.results import (
    DEFAULT_THRESHOLD_MS,
    IGNORED_CATEGORIES,
    PARSED_FAMILIES,
    Options,
    coverage,
    known_zones,
    unparsed,
)
from tests.builders import primary_lines, read_trace, standby_lines

#: a primary whose ISO ADR line says +02:00, and a standby with bare krs stamps (no zone)
PRIMARY = [
    "*** 2024-01-01T10:00:00.000000+02:00",
    *primary_lines([(1, "2024-01-01 10:00:00.100", "2024-01-01 10:00:00.150")]),
]
STANDBY = standby_lines([(1, "2024-01-01 10:00:00.110", "2024-01-01 10:00:00.140", [("RFS write", 20000)])])


def test_the_defaults_of_an_analysis() -> None:
    options = Options()
    assert (options.threshold_ms, options.window_s, options.since, options.until) == (
        DEFAULT_THRESHOLD_MS,
        60.0,
        None,
        None,
    )
    assert options.zones == TimeZones() and options.baselines == () and options.limits.max_depth == 8


def test_coverage_accounts_for_every_line_of_every_file() -> None:
    lines = [*PRIMARY, "", "some other text", "Client sending SQLNET request data [kpurcs] oper='Write' flag=1 thrd=1"]
    rows = coverage([read_trace(lines, "p.trc"), read_trace(STANDBY, "s.trc")]).to_dicts()
    first, second = rows
    assert (first["file"], first["lines"], first["parsed"], first["ignored"], first["unparsed"]) == (
        "p.trc",
        8,
        5,
        2,
        1,
    )
    assert first["parsed_by_family"] == {name: {"stamps": 3, "transport": 2}.get(name, 0) for name in PARSED_FAMILIES}
    assert first["ignored_by_category"] == {name: {"blank": 1, "other": 1}.get(name, 0) for name in IGNORED_CATEGORIES}
    assert (second["lines"], second["parsed_by_family"]["wait"], second["read_error"]) == (6, 2, None)
    assert coverage([]).height == 0


def test_unparsed_lines_are_listed_with_their_file() -> None:
    broken = "Client sending SQLNET request data [kpurcs] oper='Write' flag=1 thrd=1"
    table = unparsed([read_trace([*PRIMARY, broken], "p.trc"), read_trace(STANDBY, "s.trc")])
    assert table.select("file", "line", "family").rows() == [("p.trc", 6, "transport")]
    assert table["reason"][0].startswith("line ends early")
    none = unparsed([])
    assert none.height == 0 and none.schema["file"] == pl.String


def test_the_zones_a_file_was_read_in_are_known_unless_utc_was_assumed() -> None:
    primary, standby = read_trace(PRIMARY, "p.trc"), read_trace(STANDBY, "s.trc")
    assert (known_zones(primary), known_zones(standby)) == (frozenset({120}), None)
    assert standby.reduced.zone == ASSUMED_UTC
    given = read_file(Source("s.trc", lambda: io.BytesIO(("\n".join(STANDBY) + "\n").encode())), TimeZones(-420))
    assert known_zones(given) == frozenset({-420})


def test_a_file_result_keeps_its_source() -> None:
    data = ("\n".join(STANDBY) + "\n").encode()
    result = read_file(Source("stby.trc", lambda: io.BytesIO(data)), TimeZones())
    assert result.source.label == "stby.trc" and result.stats.lines == len(STANDBY)
    assert result.reduced.exchanges.fallback_min == 0
