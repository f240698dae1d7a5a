"""Tables, match and attribute stages on small real-shaped traces."""

from __future__ import annotations

import io
from datetime import UTC, datetime, timedelta

import polars as pl
import pytest

from analyzer.api import FileResult, Options, analyze_files, read_file
from analyzer.attribute import tie_warnings
from analyzer.errors import UsageError
from analyzer.parse import parse_chunk
from analyzer.reduce import associate, reduce_parsed
from analyzer.sources import Source
from analyzer.units import parse_offset
from analyzer.zones import TimeZones, parse_zones
from tests.conftest import lines_frame

MSG = "oper='Write' flag=67111042 thrd={t} seq={s} msgid={m}"


def send(m: int, t: int = 1, s: int = 10) -> str:
    return "Client sending SQLNET request data [kpurcs] " + MSG.format(t=t, s=s, m=m)


def ack(m: int, t: int = 1, s: int = 10) -> str:
    return "... Client received SQLNET call [kpurcs] response " + MSG.format(t=t, s=s, m=m)


def recv(m: int, t: int = 1, s: int = 10) -> str:
    return "... Server received SQLNET data [krsr_rfs_dsp] " + MSG.format(t=t, s=s, m=m)


def done(m: int, t: int = 1, s: int = 10) -> str:
    return "... Server finished processing SQLNET data [krsr_rfs_dsp] " + MSG.format(t=t, s=s, m=m)


def krs(when: str, src: str = "[krsu.c:1]") -> str:
    return f"*** {when} {src}"


def wait(event: str, ela: int, tim: int = 1) -> str:
    return f"WAIT #0: nam='{event}' ela= {ela} p1=0 p2=0 p3=0 obj#=-1 tim={tim}"


def tables(lines: list[str], label: str = "f.trc", zones: TimeZones | None = None):  # type: ignore[no-untyped-def]
    parsed, _ = parse_chunk(lines_frame("\n".join(lines)), in_header=False)
    return reduce_parsed(label, label, parsed, zones or TimeZones())


def events(lines: list[str]) -> pl.DataFrame:
    """The messages of a trace with their stamps (or the problem that left them without)."""
    parsed, _ = parse_chunk(lines_frame("\n".join(lines)), in_header=False)
    return associate(parsed.tables["messages"], parsed.tables["krs"])


def read(lines: list[str], label: str) -> FileResult:
    """A trace read through the whole read -> parse -> tables path, from memory."""
    data = ("\n".join(lines) + "\n").encode()
    return read_file(Source(label, lambda: io.BytesIO(data)), TimeZones())


# ---------------------------------------------------------------------------- association
def test_paper_rule_send_takes_next_stamp_ack_takes_previous() -> None:
    lines = [
        send(1),
        krs("2024-01-01 00:00:00.100000", "[krsu.c:5837]"),
        krs("2024-01-01 00:00:00.300000", "[krsu.c:6058]"),
        ack(1),
    ]
    assert events(lines).select("kind", "stamp_line").rows() == [("client_send", 2), ("client_recv", 3)]
    exchange = tables(lines).exchanges.collect().row(0, named=True)
    assert (exchange["a_line"], exchange["b_line"]) == (1, 4)
    assert (exchange["b_at"] - exchange["a_at"]).total_seconds() == 0.2


def test_stamp_wanted_by_two_messages_goes_to_neither() -> None:
    lines = [send(1), krs("2024-01-01 00:00:00.100000"), ack(1)]
    assert events(lines)["problem"].to_list() == ["stamp at line 2 claimed by two messages"] * 2
    t = tables(lines)  # both are reported, none is paired
    assert t.exchanges.rows == 0
    assert t.unmatched["reason"].to_list() == ["stamp at line 2 claimed by two messages"] * 2


def test_stamp_beyond_the_next_message_is_not_taken() -> None:
    ev = events([send(1), send(2), krs("2024-01-01 00:00:00.100000")])
    assert ev["problem"].to_list() == ["no transport stamp after this message", None]


def test_ack_without_stamp_before_it() -> None:
    assert events([ack(1)])["problem"].to_list() == ["no transport stamp before this message"]


def test_associate_on_empty_tables() -> None:
    parsed, _ = parse_chunk(lines_frame(""), in_header=False)
    assert associate(parsed.tables["messages"], parsed.tables["krs"]).height == 0


# ---------------------------------------------------------------------------- time zones
def test_iso_adr_lines_give_the_offset_and_follow_a_dst_change() -> None:
    t = tables(
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
    per_host = tables(lines, zones=TimeZones(default_min=60, per_host={"prim01": -420}))
    assert per_host.pending["at"][0] == datetime(2014, 12, 2, 15, 46, 34, 598000, tzinfo=UTC)
    assert per_host.zone == "--tz prim01="
    default = tables(lines, zones=TimeZones(default_min=60))
    assert default.pending["at"][0] == datetime(2014, 12, 2, 7, 46, 34, 598000, tzinfo=UTC)
    assumed = tables(lines)
    assert assumed.zone.startswith("assumed UTC")


@pytest.mark.parametrize(
    ("text", "minutes"),
    [("+05:30", 330), ("-07:00", -420), ("-0700", -420), ("+2", 120), ("UTC", 0), ("Z", 0)],
)
def test_parse_offset(text: str, minutes: int) -> None:
    assert parse_offset(text) == minutes


@pytest.mark.parametrize("text", ["Europe/Paris", "07:00", "+25:00", "+07:99", ""])
def test_parse_offset_rejects(text: str) -> None:
    with pytest.raises(UsageError, match="time zone offset"):
        parse_offset(text)


def test_parse_zones_per_host() -> None:
    zones = parse_zones(["-07:00", "stby01=+01:00"])
    assert zones.default_min == -420
    assert zones.per_host == {"stby01": 60}


# ---------------------------------------------------------------------------- match + attribute
def _primary(writes: list[tuple[int, str, str]], thread: int = 1) -> list[str]:
    out = []
    for m, t1, t4 in writes:
        out += [send(m, thread), krs(t1, "[krsu.c:5837]"), krs(t4, "[krsu.c:6058]"), ack(m, thread)]
    return out


def _standby(writes: list[tuple[int, str, str, list[tuple[str, int]]]], thread: int = 1) -> list[str]:
    out = []
    for m, t2, t3, waits in writes:
        out += [recv(m, thread), krs(t2, "[krsr.c:826]")]
        out += [wait(e, ela) for e, ela in waits]
        out += [
            done(m, thread),
            krs(t3, "[krsr.c:1459]"),
            wait("SQL*Net message from client", 500000),
        ]
    return out


def _analyze(p_lines: list[str], s_lines: list[str], window_s: float = 60.0) -> tuple[pl.DataFrame, pl.DataFrame]:
    a = analyze_files([read(p_lines, "p.trc"), read(s_lines, "s.trc")], [], Options(window_s=window_s))
    return a.writes, a.unmatched


def test_split_with_standby_clock_minutes_off() -> None:
    """Network = total - RFS time does not depend on the clock offset between hosts."""
    p = _primary([(1, "2024-01-01 00:00:00.000000", "2024-01-01 00:00:00.150000")])
    s = _standby(
        [
            (
                1,
                "2024-01-01 00:05:00.040000",
                "2024-01-01 00:05:00.140000",
                [("RFS write", 90000), ("RFS random i/o", 4000)],
            )
        ]
    )
    writes, unmatched = _analyze(p, s)
    row = writes.row(0, named=True)
    assert (
        row["total_ms"],
        row["rfs_ms"],
        row["network_ms"],
        row["rfs_io_ms"],
        row["rfs_other_ms"],
    ) == (150.0, 100.0, 50.0, 94.0, 6.0)
    assert row["verdict"] == "rfs_io" and row["slow"] and row["rfs_io_waits"] == 2
    assert (row["primary_line"], row["standby_line"]) == (1, 1)
    assert unmatched.height == 0


def test_waits_outside_the_write_are_not_counted() -> None:
    p = _primary(
        [
            (1, "2024-01-01 00:00:00.000000", "2024-01-01 00:00:00.010000"),
            (2, "2024-01-01 00:00:01.000000", "2024-01-01 00:00:01.010000"),
        ]
    )
    s = [
        wait("RFS write", 7777),
        *_standby(
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
    writes, _ = _analyze(p, s)
    assert writes["rfs_io_ms"].to_list() == [5.0, 0.0]
    assert writes["verdict"].to_list() == ["rfs_io", "rfs_other"]


def test_negative_component_is_explained() -> None:
    p = _primary([(1, "2024-01-01 00:00:00.000", "2024-01-01 00:00:00.001")])
    s = _standby([(1, "2024-01-01 00:00:00.000", "2024-01-01 00:00:00.002", [("RFS write", 1500)])])
    writes, _ = _analyze(p, s)
    assert writes["network_ms"][0] == -1.0
    assert "network_ms < 0" in writes["warning"][0] and "within timestamp resolution" in writes["warning"][0]


def test_msgid_reuse_is_told_apart_by_time() -> None:
    """After an NSS restart the same msgid comes back an hour later: each matches its own."""
    p = _primary(
        [
            (7, "2024-01-01 00:00:00.000000", "2024-01-01 00:00:00.005000"),
            (7, "2024-01-01 01:00:00.000000", "2024-01-01 01:00:00.200000"),
        ]
    )
    s = _standby(
        [
            (7, "2024-01-01 00:00:00.001000", "2024-01-01 00:00:00.004000", []),
            (
                7,
                "2024-01-01 01:00:00.001000",
                "2024-01-01 01:00:00.199000",
                [("RFS write", 190000)],
            ),
        ]
    )
    writes, unmatched = _analyze(p, s)
    assert writes["total_ms"].to_list() == [5.0, 200.0]
    assert writes["rfs_ms"].to_list() == [3.0, 198.0]
    assert unmatched.height == 0


def test_msgid_collision_is_reported_not_guessed() -> None:
    p = _primary([(7, "2024-01-01 00:00:00.000000", "2024-01-01 00:00:00.005000")])
    s = _standby(
        [
            (7, "2024-01-01 00:00:00.001000", "2024-01-01 00:00:00.004000", []),
            (7, "2024-01-01 00:00:00.011000", "2024-01-01 00:00:00.014000", []),
        ]
    )
    writes, unmatched = _analyze(p, s)
    assert writes.height == 0
    assert set(unmatched["reason"]) == {
        "msgid collision: several standby writes fit",
        "msgid collision: several primary writes fit",
    }


def test_unmatched_lists_each_side_with_reason() -> None:
    p = [
        *_primary(
            [
                (1, "2024-01-01 00:00:00.000000", "2024-01-01 00:00:00.005000"),
                (2, "2024-01-01 00:00:01.000000", "2024-01-01 00:00:01.005000"),
            ]
        ),
        send(3),
    ]
    s = _standby(
        [
            (1, "2024-01-01 00:00:00.001000", "2024-01-01 00:00:00.004000", []),
            (9, "2024-01-01 00:00:02.001000", "2024-01-01 00:00:02.004000", []),
        ]
    )
    writes, unmatched = _analyze(p, s)
    assert writes.filter("matched")["msgid"].to_list() == [1]
    one_sided = {r["msgid"]: r for r in writes.filter(~pl.col("matched")).to_dicts()}
    assert (one_sided[2]["total_ms"], one_sided[2]["network_ms"], one_sided[2]["verdict"]) == (5.0, None, None)
    assert (one_sided[9]["rfs_ms"], one_sided[9]["total_ms"], one_sided[9]["primary_file"]) == (3.0, None, None)
    reasons = {(r["side"], r["msgid"]): r["reason"] for r in unmatched.to_dicts()}
    assert reasons[("primary", 2)].startswith("no standby write")
    assert reasons[("standby", 9)].startswith("no primary write")
    assert reasons[("primary", 3)] == "no transport stamp after this message"


def test_lgwr_warning_gets_the_breakdown_of_its_remote_write() -> None:
    p = _primary(
        [
            (1, "2024-01-01 00:00:00.000000", "2024-01-01 00:00:00.150000"),
            (2, "2024-01-01 00:00:00.400000", "2024-01-01 00:00:00.402000"),
        ]
    )
    s = _standby(
        [
            (1, "2024-01-01 00:00:00.100000", "2024-01-01 00:00:00.145000", [("RFS write", 40000)]),
            (2, "2024-01-01 00:00:00.400500", "2024-01-01 00:00:00.401500", []),
        ]
    )
    writes, _ = _analyze(p, s)
    lg = tables(
        [
            "*** 2024-01-01T00:00:00.151000+00:00",
            "Warning: log write elapsed time 151ms, size 18KB",
            "*** 2024-01-01T00:00:09.000000+00:00",
            "Warning: log write elapsed time 120ms, size 1KB",
        ],
        "lgwr.trc",
    )
    frame = lg.lgwr.with_columns(host=pl.lit("p.trc"), wthread=pl.lit(1, pl.Int64)).select(
        "file", "line", "kind", "at", "elapsed_ms", "size_kb", "host", "wthread"
    )
    tied = tie_warnings(frame, writes)
    first, second = tied.to_dicts()
    assert (
        first["msgid"],
        first["writes"],
        first["remote_total_ms"],
        first["network_ms"],
        first["verdict"],
    ) == (1, 1, 150.0, 105.0, "network")
    assert (second["writes"], second["msgid"]) == (0, None)


def test_time_window_filter_on_large_tables() -> None:
    """No window, or a window, on 150k rows (a literal predicate once broke on large frames)."""
    from analyzer.api import Options, _in_window

    start = datetime(2024, 1, 1, tzinfo=UTC)
    frame = pl.DataFrame({"sent_at": [start + timedelta(seconds=i) for i in range(150_000)]})
    assert _in_window(frame, Options(), "sent_at").height == 150_000
    window = Options(since=start + timedelta(seconds=10), until=start + timedelta(seconds=20))
    assert _in_window(frame, window, "sent_at").height == 10


def test_writes_near_warnings_include_those_under_an_earlier_longer_warning() -> None:
    """A write inside a long warning's interval is a candidate even when a later, shorter warning
    starts before it ends; writes outside every interval are not."""
    from analyzer.attribute import _near_warnings

    t0 = datetime(2024, 1, 1, tzinfo=UTC)

    def at(seconds: float) -> datetime:
        return t0 + timedelta(seconds=seconds)

    warn = pl.DataFrame({"_from": [at(0), at(1)], "_to": [at(10), at(1.5)]})
    writes = pl.DataFrame(
        {"sent_at": [at(5), at(11), at(0.5), at(20)], "total_ms": [100.0, 5.0, 1.0, None], "msgid": [1, 2, 3, 4]}
    )
    assert writes[_near_warnings(writes, warn)]["msgid"].to_list() == [3, 1]  # in send order
