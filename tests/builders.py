"""Builders of small real-shaped trace lines and sets, and shortcuts through the stages, for the unit tests."""

from __future__ import annotations

import io

import polars as pl

from analyzer.api import Analysis, FileResult, Options, analyze_files, read_file
from analyzer.base.zones import TimeZones
from analyzer.inputs.sources import Source
from analyzer.parse.families import parse_chunk
from analyzer.reduce.reducer import reduce_parsed
from analyzer.reduce.stamping import associate
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


def reduced(lines: list[str], label: str = "f.trc", zones: TimeZones | None = None):  # type: ignore[no-untyped-def]
    parsed, _ = parse_chunk(lines_frame("\n".join(lines)), in_header=False)
    return reduce_parsed(label, label, parsed, zones or TimeZones())


def stamped(lines: list[str]) -> pl.DataFrame:
    """The messages of a trace with their stamps (or the problem that left them without)."""
    parsed, _ = parse_chunk(lines_frame("\n".join(lines)), in_header=False)
    return associate(parsed.tables["messages"], parsed.tables["krs"])


def read_trace(lines: list[str], label: str) -> FileResult:
    """A trace read through the whole read -> parse -> tables path, from memory."""
    data = ("\n".join(lines) + "\n").encode()
    return read_file(Source(label, lambda: io.BytesIO(data)), TimeZones())


def primary_lines(writes: list[tuple[int, str, str]], thread: int = 1) -> list[str]:
    out = []
    for m, t1, t4 in writes:
        out += [send(m, thread), krs(t1, "[krsu.c:5837]"), krs(t4, "[krsu.c:6058]"), ack(m, thread)]
    return out


def standby_lines(writes: list[tuple[int, str, str, list[tuple[str, int]]]], thread: int = 1) -> list[str]:
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


def analyze_lines(p_lines: list[str], s_lines: list[str], window_s: float = 60.0) -> tuple[pl.DataFrame, pl.DataFrame]:
    a = analyze_files([read_trace(p_lines, "p.trc"), read_trace(s_lines, "s.trc")], [], Options(window_s=window_s))
    return a.writes, a.unmatched


def same_writes(a: Analysis, b: Analysis) -> None:
    assert a.writes.height > 0
    assert a.writes.equals(b.writes), "writes differ"
    assert a.unmatched.equals(b.unmatched), "unmatched differ"
    assert a.warnings.equals(b.warnings), "warnings differ"
