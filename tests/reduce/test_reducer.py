"""Reduce stage: stamp association (the MAA paper's rule), zones applied, RFS waits summed per write, chunks."""

from __future__ import annotations

import functools
from datetime import UTC, datetime
from pathlib import Path

import pytest

from analyzer.api import Options, analyze
from analyzer.base.schemas import KRS
from analyzer.base.zones import TimeZones
from analyzer.parse import lines as read
from analyzer.reduce import ingest
from analyzer.simulate.options import SimOptions
from analyzer.simulate.runner import simulate
from tests.builders import (
    ack,
    analyze_lines,
    krs,
    primary_lines,
    reduced,
    same_writes,
    send,
    stamped,
    standby_lines,
    wait,
)


def test_paper_rule_send_takes_next_stamp_ack_takes_previous() -> None:
    lines = [
        send(1),
        krs("2024-01-01 00:00:00.100000", "[krsu.c:5837]"),
        krs("2024-01-01 00:00:00.300000", "[krsu.c:6058]"),
        ack(1),
    ]
    assert stamped(lines).select("kind", "stamp_line").rows() == [("client_send", 2), ("client_recv", 3)]
    exchange = reduced(lines).exchanges.collect().row(0, named=True)
    assert (exchange["a_line"], exchange["b_line"]) == (1, 4)
    assert (exchange["b_at"] - exchange["a_at"]).total_seconds() == 0.2


def test_stamp_wanted_by_two_messages_goes_to_neither() -> None:
    lines = [send(1), krs("2024-01-01 00:00:00.100000"), ack(1)]
    assert stamped(lines)["problem"].to_list() == ["stamp at line 2 claimed by two messages"] * 2
    t = reduced(lines)  # both are reported, none is paired
    assert t.exchanges.rows == 0
    assert t.unmatched["reason"].to_list() == ["stamp at line 2 claimed by two messages"] * 2


def test_stamp_beyond_the_next_message_is_not_taken() -> None:
    ev = stamped([send(1), send(2), krs("2024-01-01 00:00:00.100000")])
    assert ev["problem"].to_list() == ["no transport stamp after this message", None]


def test_ack_without_stamp_before_it() -> None:
    assert stamped([ack(1)])["problem"].to_list() == ["no transport stamp before this message"]


def test_messages_of_a_chunk_without_stamps_keep_the_stamp_columns_types() -> None:
    found = stamped([send(1), ack(1)])
    assert found.schema["local"] == KRS["local"] and found.schema["digits"] == KRS["digits"]
    t = reduced([send(1)])
    assert t.unmatched["reason"].to_list() == ["no transport stamp after this message"]


def test_iso_adr_lines_give_the_offset_and_follow_a_dst_change() -> None:
    t = reduced(
        [
            "*** 2024-03-31T01:59:59.000000+01:00",
            send(1),
            krs("2024-03-31 01:59:59.500000"),
            "*** 2024-03-31T03:00:00.000000+02:00",
            send(2),
            krs("2024-03-31 03:00:00.500000"),
        ]
    )
    assert t.zone == "ISO ADR lines of the file"
    assert t.pending["at"].to_list() == [  # sends without an ack: pending in the file
        datetime(2024, 3, 31, 0, 59, 59, 500000, tzinfo=UTC),
        datetime(2024, 3, 31, 1, 0, 0, 500000, tzinfo=UTC),
    ]


def test_tz_option_per_host_then_default_then_assumed_utc() -> None:
    lines = [
        "Trace file /x/db1_nss2_1.trc",
        "Node name:\tprim01",
        "",
        "*** 2014-12-02 08:46:34.000",
        send(1),
        krs("2014-12-02 08:46:34.598", "5837 krsu.c"),
    ]
    per_host = reduced(lines, zones=TimeZones(default_min=60, per_host={"prim01": -420}))
    assert per_host.pending["at"][0] == datetime(2014, 12, 2, 15, 46, 34, 598000, tzinfo=UTC)
    assert per_host.zone == "--tz prim01=-07:00"
    default = reduced(lines, zones=TimeZones(default_min=60))
    assert reduced(lines, zones=TimeZones(default_min=60)).zone == "--tz +01:00"
    assert default.pending["at"][0] == datetime(2014, 12, 2, 7, 46, 34, 598000, tzinfo=UTC)
    assumed = reduced(lines)
    assert assumed.zone.startswith("assumed UTC")


def test_waits_outside_the_write_are_not_counted() -> None:
    p = primary_lines(
        [
            (1, "2024-01-01 00:00:00.000000", "2024-01-01 00:00:00.010000"),
            (2, "2024-01-01 00:00:01.000000", "2024-01-01 00:00:01.010000"),
        ]
    )
    s = [
        wait("RFS write", 7777),
        *standby_lines(
            [
                (
                    1,
                    "2024-01-01 00:00:00.002000",
                    "2024-01-01 00:00:00.008000",
                    [("RFS write", 5000)],
                ),
                (
                    2,
                    "2024-01-01 00:00:01.002000",
                    "2024-01-01 00:00:01.008000",
                    [("RFS dispatch", 3000)],
                ),
            ]
        ),
    ]
    writes, _ = analyze_lines(p, s)
    assert writes["rfs_io_ms"].to_list() == [5.0, 0.0]
    assert writes["verdict"].to_list() == ["rfs_io", "rfs_other"]


@pytest.mark.slow
@pytest.mark.parametrize("generation", ["11.2", "19c"])
@pytest.mark.parametrize("cut_anywhere", [False, True])
def test_small_chunks_give_the_same_writes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, generation: str, cut_anywhere: bool
) -> None:
    """4 KiB chunks (dozens per file); with `cut_anywhere` the reader may cut inside a write."""
    simulate(tmp_path / "set", SimOptions(format_version=generation, writes=300, scenario="mixed", seed=5))
    options = Options(zones=TimeZones(default_min=0))
    whole = analyze([str(tmp_path / "set")], options)
    monkeypatch.setattr(ingest, "read_chunks", functools.partial(read.read_chunks, chunk_bytes=4096))
    if cut_anywhere:
        monkeypatch.setattr(read, "OPENING_LINES", ())
    chunked = analyze([str(tmp_path / "set")], options)
    same_writes(whole, chunked)
    assert chunked.writes.filter("matched").height == 600
