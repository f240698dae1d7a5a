"""What the reduce stage gives: a file's exchanges, kept as its chunks left them, loaded in UTC."""

from __future__ import annotations

from datetime import UTC, datetime

import polars as pl
import pytest

from analyzer.base.schemas import EXCHANGES, ZONE_LINES
from analyzer.base.zones import ASSUMED_UTC, TimeZones
from analyzer.parse.tim import TimClock
from analyzer.reduce.reduced import NARROW, FileClock, ReducedFile
from tests.builders import primary_lines, reduced, standby_lines

#: two primary writes of different log sequences, in a file whose ISO ADR line says +02:00
PRIMARY = [
    "*** 2024-01-01T10:00:00.000000+02:00",
    *primary_lines([(1, "2024-01-01 10:00:00.100", "2024-01-01 10:00:00.150")]),
    *[
        line.replace("seq=10", "seq=11")
        for line in primary_lines([(2, "2024-01-01 10:00:01.100", "2024-01-01 10:00:01.130")])
    ],
]


def test_exchanges_are_loaded_in_utc_by_the_zone_of_their_lines() -> None:
    t = reduced(PRIMARY, "p.trc")
    rows = t.exchanges.collect()
    assert rows.schema == EXCHANGES
    assert rows.select("seq", "msgid").rows() == [(10, 1), (11, 2)]
    assert rows["a_at"].to_list() == [
        datetime(2024, 1, 1, 8, 0, 0, 100000, tzinfo=UTC),
        datetime(2024, 1, 1, 8, 0, 1, 100000, tzinfo=UTC),
    ]
    assert rows["b_at"][1] == datetime(2024, 1, 1, 8, 0, 1, 130000, tzinfo=UTC)
    assert rows["file"].cast(pl.String).to_list() == ["p.trc", "p.trc"] and t.exchanges.rows == 2


def test_a_load_takes_the_keys_asked_for_and_narrow_columns_on_request() -> None:
    t = reduced(PRIMARY, "p.trc")
    (piece,) = t.exchanges.pieces
    keys = pl.DataFrame({"thread": [1], "seq": [11]}, schema={"thread": EXCHANGES["thread"], "seq": EXCHANGES["seq"]})
    narrow = t.exchanges.load(piece, keys, narrow=True)
    assert narrow.columns == NARROW
    assert narrow.select("msgid", "a_at").rows() == [(2, datetime(2024, 1, 1, 8, 0, 1, 100000, tzinfo=UTC))]
    assert t.exchanges.load(piece, keys).select("msgid").rows() == [(2,)]


def test_a_file_without_a_zone_is_loaded_in_the_zone_given_for_it() -> None:
    lines = standby_lines([(7, "2024-01-01 10:00:00.110", "2024-01-01 10:00:00.140", [("RFS write", 20000)])])
    t = reduced(lines, "s.trc", TimeZones(default_min=-420))
    rows = t.exchanges.collect()
    assert (t.exchanges.fallback_min, t.zone) == (-420, "--tz -07:00")
    assert rows["a_at"][0] == datetime(2024, 1, 1, 17, 0, 0, 110000, tzinfo=UTC)
    assert rows["rfs_io_ms"][0] == pytest.approx(20.0)
    assert t.first_at == datetime(2024, 1, 1, 17, 0, 0, 110000, tzinfo=UTC)


def test_a_reduced_file_is_built_by_name() -> None:
    t = reduced(PRIMARY, "p.trc")
    with pytest.raises(TypeError):
        ReducedFile(t.info, t.exchanges, t.pending, t.boundary_waits, t.unmatched, t.lgwr, t.zone, None, None)  # type: ignore[misc]


def test_a_clock_without_a_zone_takes_the_zone_it_is_given_its_counter_tim_with_it() -> None:
    """An assumed UTC clock is not known; given +02:00 (or Europe/Paris in summer) it is, and a counter
    tim anchored to its stamps moves by the offset at its first stamp; an epoch tim does not move."""
    lines = pl.DataFrame(schema=ZONE_LINES)
    counter = FileClock(lines, 0, ASSUMED_UTC, TimClock("counter", 1_000_000.0, 1.024, 40))
    assert counter.known is None and counter.assumed
    first = datetime(2024, 7, 1, 12)
    moved = counter.taking(120, "assumed +02:00 as the other files (no zone in the file)", first)
    assert not moved.assumed
    assert (moved.known, moved.fallback, moved.tim.offset_us, moved.tim.factor) == (
        frozenset({120}),
        120,
        1_000_000.0 - 120 * 60_000_000,
        1.024,
    )
    assert counter.taking("Europe/Paris", "assumed Europe/Paris", first).tim.offset_us == moved.tim.offset_us
    epoch = FileClock(lines, 0, ASSUMED_UTC, TimClock("epoch", 0.0, 1.0, 40))
    assert epoch.taking(120, "assumed +02:00", first).tim == epoch.tim
