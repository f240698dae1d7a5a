"""Every numeric field of every line family, pushed to extremes, through the whole pipeline.

A small good set (a 19c primary sender, its LGWR, the standby RFS with 10046 WAIT lines) is
read with one number of one line replaced by an extreme value (0, -1, 2^31, 2^53, 2^63 - 1,
2^63, 2^64, 30 nines, 5000 nines, zero-padded). The analysis never raises; every line is
accounted for; the writes whose lines were not touched are all matched; the mutated line is
either parsed or unparsed with a reason.
"""

from __future__ import annotations

import functools
import io
import re
from collections.abc import Callable
from dataclasses import dataclass

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from analyzer.api import Analysis, FileResult, Options, analyze_files, read_file
from analyzer.base.zones import TimeZones
from analyzer.inputs.sources import Source
from tests.builders import ack, done, recv, send

EXTREMES = ["0", "1", "-1", str(2**31), str(2**53 - 1), str(2**53), str(2**63 - 1), str(2**63), str(2**64)]
EXTREMES += ["9" * 30, "9" * 5000, "0000000000000000000000001"]
MSGIDS = range(501, 507)
HEADER = [
    "Trace file /u01/app/oracle/diag/rdbms/{db}/{sid}/trace/{sid}_{proc}_{pid}.trc",
    "Oracle Database 19c Enterprise Edition Release 19.0.0.0.0 - Production",
    "Version 19.21.0.0.0",
    "Node name:      {host}",
    "Instance name: {sid}",
    "Redo thread mounted by this instance: {thread}",
    "Oracle process number: 31",
    "Unix process pid: {pid}, image: oracle@{host} ({image})",
    "",
]


@dataclass(frozen=True)
class Line:
    """One line of the good set: its file, its family and the write it belongs to (if any)."""

    file: str
    text: str
    family: str
    msgid: int | None = None


def _header(db: str, sid: str, proc: str, pid: int, host: str, thread: int, image: str) -> list[str]:
    values = {"db": db, "sid": sid, "proc": proc, "pid": pid, "host": host, "thread": thread, "image": image}
    return [line.format(**values) for line in HEADER]


def good_set() -> list[Line]:
    """Six writes of thread 1, seen on both sides, LGWR warnings and broadcast waits among them."""
    out: list[Line] = []
    p, s, lg = "prim1_nss2_4401.trc", "stby1_rfs_8801.trc", "prim1_lgwr_4371.trc"
    out += [Line(p, t, "header") for t in _header("prim", "prim1", "nss2", 4401, "prim01", 1, "NSS2")]
    out += [Line(s, t, "header") for t in _header("stby", "stby1", "rfs", 8801, "stby01", 0, "RFS")]
    out += [Line(lg, t, "header") for t in _header("prim", "prim1", "lgwr", 4371, "prim01", 1, "LGWR")]
    al = "alert_prim1.log"
    out += [
        Line(al, "2024-03-05T09:00:00.000100+01:00", "alert"),
        Line(al, "Starting ORACLE instance (normal) (OS id: 4012)", "alert"),
        Line(al, "Oracle Database 19c Enterprise Edition Release 19.0.0.0.0 - Production", "alert"),
        Line(al, "Version 19.21.0.0.0.", "alert"),
        Line(al, '  log_archive_dest_2       = "SERVICE=stby SYNC AFFIRM NET_TIMEOUT=30 DB_UNIQUE_NAME=stby"', "alert"),
        Line(al, "  thread                   = 1", "alert"),
        Line(al, "2024-03-05T10:00:00.050000+01:00", "alert"),
        Line(al, "Thread 1 advanced to log sequence 77 (LGWR switch),  current SCN: 123456789", "alert"),
        Line(al, "2024-03-05T10:00:00.051000+01:00", "alert"),
        Line(al, "NSS2 (PID:4401): SRL selected for T-1.S-77 for LAD:2", "alert"),
        Line(al, "2024-03-05T10:00:00.052000+01:00", "alert"),
        Line(al, "TMON (PID:4011): Process (PID:4401) hung on an I/O to LAD:2 after 250 seconds", "alert"),
    ]
    out += [Line(p, "*** 2024-03-05T10:00:00.000100+01:00 (CDB$ROOT(1))", "stamps")]
    out += [Line(s, "*** 2024-03-05T11:00:00.000200+02:00 (CDB$ROOT(1))", "stamps")]
    out += [Line(lg, "*** 2024-03-05T10:00:00.000100+01:00 (CDB$ROOT(1))", "stamps")]
    tim = 7_100_000_000_000
    for n, m in enumerate(MSGIDS):
        t1 = 100_000 * (n + 1)
        out += [
            Line(p, send(m, 1, 77), "transport", m),
            Line(p, f"*** {at(t1)} [krsu.c:10652]", "stamps", m),
            Line(p, f"*** {at(t1 + 3000)} [krsu.c:10873]", "stamps", m),
            Line(p, ack(m, 1, 77), "transport", m),
        ]
        wait_tim = tim + t1 + 2000
        out += [
            Line(s, recv(m, 1, 77), "transport", m),
            Line(s, f"*** {at(t1 + 500, 11)} [krsr.c:1196]", "stamps", m),
            Line(s, f"WAIT #0: nam='RFS write' ela= 1300 p1=0 p2=0 p3=0 obj#=-1 tim={wait_tim}", "wait", m),
            Line(s, done(m, 1, 77), "transport", m),
            Line(s, f"*** {at(t1 + 2500, 11)} [krsr.c:1871]", "stamps", m),
            Line(s, f"WAIT #0: nam='SQL*Net message from client' ela= 90 p1=1 p2=1 p3=0 tim={wait_tim + 90}", "wait"),
        ]
        out += [
            Line(lg, f"*** 2024-03-05T10:00:00.{t1 + 3100:06d}+01:00", "stamps"),
            Line(lg, "Warning: log write elapsed time 5ms, size 12KB", "lgwr"),
            Line(lg, "Warning: log write broadcast wait time 4ms (SCN 0x1a2b3c)", "lgwr"),
        ]
    return out


def at(us: int, hour: int = 10) -> str:
    """A krs stamp's time `us` microseconds after `hour`:00 on the set's day."""
    return f"2024-03-05 {hour}:00:{us // 1_000_000:02d}.{us % 1_000_000:06d}"


def _numbers(text: str) -> list[re.Match[str]]:
    return list(re.finditer(r"\d+", text))


@functools.cache
def _read(label: str, texts: tuple[str, ...]) -> FileResult:
    """One file of the set read (cached: only the mutated file is read again)."""
    data = ("\n".join(texts) + "\n").encode()
    result = read_file(Source(label, lambda: io.BytesIO(data)), TimeZones())
    assert result.stats.lines == len(texts)
    assert result.parsed.lines == len(texts), label
    return result


def _analyze(lines: list[Line]) -> Analysis:
    files: dict[str, list[str]] = {}
    for line in lines:
        files.setdefault(line.file, []).append(line.text)
    return analyze_files([_read(label, tuple(texts)) for label, texts in files.items()], [], Options())


GOOD = good_set()


def test_the_good_set_is_all_matched() -> None:
    analysis = _analyze(GOOD)
    assert sorted(analysis.writes.filter("matched")["msgid"].to_list()) == list(MSGIDS)
    assert all(f.parsed.unparsed == 0 for f in analysis.files)
    assert analysis.destinations.select("dest", "transport", "net_timeout_s").rows() == [(2, "SYNC", 30)]
    assert analysis.warnings["kind"].value_counts().sort("kind").rows() == [("broadcast_wait", 6), ("log_write", 6)]


def mutate(index: int, number: int, value: str) -> list[Line]:
    """The good set with the `number`-th number of line `index` replaced by `value`."""
    line = GOOD[index]
    found = _numbers(line.text)[number % len(_numbers(line.text))]
    lines = list(GOOD)
    text = line.text[: found.start()] + value + line.text[found.end() :]
    lines[index] = Line(line.file, text, line.family, line.msgid)
    return lines


def check(index: int, number: int, value: str) -> None:
    """The analysis of the mutated set: no exception, every line accounted for (`_read`), every
    write whose lines are untouched matched, and the mutated line parsed or unparsed with a reason."""
    lines = mutate(index, number, value)
    analysis = _analyze(lines)
    matched = set(analysis.writes.filter("matched")["msgid"].to_list())
    assert matched >= set(MSGIDS) - {GOOD[index].msgid}, lines[index].text[:200]
    unparsed = pl.concat([f.parsed.tables["unparsed"] for f in analysis.files])
    assert unparsed["reason"].str.len_chars().min() or not unparsed.height


def lines_of(family: str) -> list[int]:
    """The lines of one family that hold a number (their indexes in GOOD)."""
    return [i for i, line in enumerate(GOOD) if line.family == family and _numbers(line.text)]


def _index(family: str, text: str) -> int:
    return next(i for i in lines_of(family) if text in GOOD[i].text)


def fuzz(family: str) -> Callable[[int, int, str], None]:
    """A hypothesis test over one family: any of its lines, any of its numbers, any extreme."""

    @pytest.mark.slow
    @settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(st.sampled_from(lines_of(family)), st.integers(0, 12), st.sampled_from(EXTREMES))
    def run(index: int, number: int, value: str) -> None:
        check(index, number, value)

    return run


test_extreme_numbers_in_transport_lines = fuzz("transport")
test_extreme_numbers_in_stamp_lines = fuzz("stamps")
test_extreme_numbers_in_wait_lines = fuzz("wait")
test_extreme_numbers_in_log_writer_lines = fuzz("lgwr")
test_extreme_numbers_in_header_lines = fuzz("header")
test_extreme_numbers_in_alert_log_lines = fuzz("alert")


@pytest.mark.parametrize(
    ("family", "text", "number", "value"),
    [
        ("wait", "tim=7100000302000", -1, str(2**63 - 1)),  # tim overflowed the UTC conversion of wait times
        ("wait", "nam='RFS write'", 1, str(2**63 - 1)),  # ela
        ("wait", "nam='RFS write'", -1, str(2**53)),
        ("stamps", "[krsr.c:1196]", 0, "9999"),
        ("stamps", "+02:00", -2, "99"),
        ("lgwr", "elapsed time", 0, str(2**62)),
        ("transport", "Server received", -1, str(2**63)),
        ("header", "Unix process pid", 0, "9" * 30),
        ("alert", "advanced to log sequence", 1, str(2**63)),
        ("alert", "NET_TIMEOUT", 2, "9" * 40),
        ("alert", "2024-03-05T10:00:00.050000", 0, "9999"),
    ],
)
def test_known_extremes(family: str, text: str, number: int, value: str) -> None:
    check(_index(family, text), number, value)


def test_a_header_field_without_a_value() -> None:
    """`Redo thread mounted by this instance:` with nothing after it is a header line without a thread."""
    lines = list(GOOD)
    index = next(i for i, line in enumerate(GOOD) if line.text.startswith("Redo thread"))
    lines[index] = Line(GOOD[index].file, "Redo thread mounted by this instance:", "header")
    analysis = _analyze(lines)
    assert sorted(analysis.writes.filter("matched")["msgid"].to_list()) == list(MSGIDS)
    assert next(f for f in analysis.files if f.source.label == GOOD[index].file).reduced.info.thread is None


def test_every_family_of_the_set_is_fuzzed() -> None:
    assert sorted({line.family for line in GOOD}) == ["alert", "header", "lgwr", "stamps", "transport", "wait"]
