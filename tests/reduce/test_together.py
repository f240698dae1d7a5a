"""Small files reduced together: each file gets what reducing it alone gives, field by field."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import polars as pl
import pytest

from analyzer.base.vocab import Role
from analyzer.base.zones import TimeZones
from analyzer.parse.families import Parsed, parse_files
from analyzer.parse.lines import ReadStats, read_lines
from analyzer.reduce import together as reduce_many
from analyzer.reduce.reduced import ReducedFile
from analyzer.reduce.reducer import reduce_file
from analyzer.reduce.together import reduce_files
from analyzer.simulate.options import SimOptions
from analyzer.simulate.runner import simulate
from tests.builders import ack, done, krs, recv, send, wait
from tests.conftest import lines_frame

ZONES = TimeZones(per_host={"prim01": 120}, default_min=-300)


def _same(together: tuple[ReducedFile, Parsed], alone: tuple[ReducedFile, Parsed], label: str) -> None:
    """Every field of the reduced file (its exchanges collected) and every kept parse table equal."""
    (reduced, parsed), (expected, expected_parsed) = together, alone
    for field in dataclasses.fields(reduced):
        got, want = getattr(reduced, field.name), getattr(expected, field.name)
        if field.name == "exchanges":
            got, want = got.collect(), want.collect()
        if isinstance(want, pl.DataFrame):
            assert got.schema == want.schema and got.equals(want), (label, field.name)
        else:
            assert got == want, (label, field.name)
    for name, table in expected_parsed.tables.items():
        assert parsed.tables[name].equals(table), (label, name)
    assert (parsed.parsed, parsed.ignored) == (expected_parsed.parsed, expected_parsed.ignored), label


def _files(chunks: list[pl.DataFrame]) -> list[tuple[str, str, Parsed]]:
    parts = parse_files(chunks)
    return [(f"f{k}.trc", f"f{k}.trc", part) for k, part in enumerate(parts)]


def _check(files: list[tuple[str, str, Parsed]]) -> list[tuple[ReducedFile, Parsed]]:
    together = reduce_files(files, ZONES)
    for (label, name, parsed), done_together in zip(files, together, strict=True):
        _same(done_together, reduce_file(label, name, [parsed], ZONES), label)
    return together


@pytest.mark.parametrize("version", ["11.2", "12.1", "19c", "23ai"])
def test_simulated_segments_reduced_together_as_alone(tmp_path: Path, version: str) -> None:
    """Every process's trace cut into small segments (between writes): primary and standby files of
    every kind, SYNC and ASYNC, with noise lines, reduced in one batch."""
    simulate(
        tmp_path,
        SimOptions(writes=150, format_version=version, segment_bytes=15_000, async_sender=True, noise=0.3, seed=3),
    )
    chunks = []
    for path in sorted(tmp_path.rglob("*.trc")):
        with path.open("rb") as stream:
            (chunk,) = list(read_lines(stream, ReadStats()))
        chunks.append(chunk)
    assert len(chunks) > 30
    together = _check(_files(chunks))
    assert sum(reduced.exchanges.rows for reduced, _ in together) > 500
    assert {reduced.info.role for reduced, _ in together} >= {Role.PRIMARY, Role.STANDBY}
    assert sum(reduced.boundary_waits.height for reduced, _ in together) > 0  # RFS waits before a segment's first write


def test_files_of_every_shape_in_one_batch() -> None:
    """A send whose stamp ends its file before an ack that starts the next (no stamp crosses files),
    a file without messages (only waits), a message without a stamp, an RFS write open at the end,
    and a trcsess file of two processes (reduced alone): each as reduced alone."""
    texts = [
        [send(1), krs("2024-01-01 00:00:00.100000")],
        [ack(1), krs("2024-01-01 00:00:00.300000")],
        [wait("db file sequential read", 5, 100), wait("db file sequential read", 7, 200)],
        [send(2), send(3), krs("2024-01-01 00:00:01.000000"), ack(3), krs("2024-01-01 00:00:01.100000")],
        [
            recv(4),
            krs("2024-01-01 00:00:02.000000", "[krsr.c:826]"),
            wait("RFS write", 300, 5_000),
            done(4),
            krs("2024-01-01 00:00:02.001000", "[krsr.c:1459]"),
            recv(5),
            krs("2024-01-01 00:00:02.100000", "[krsr.c:826]"),
            wait("RFS write", 200, 6_000),
        ],
        [
            "*** [ Unix process pid: 9850 ]",
            recv(6),
            krs("2024-01-01 00:00:03.000000", "[krsr.c:826]"),
            "*** [ Unix process pid: 9854 ]",
            done(6),
            krs("2024-01-01 00:00:03.050000", "[krsr.c:1459]"),
        ],
    ]
    together = _check(_files([lines_frame("\n".join(text)) for text in texts]))
    first, second, foreground, _, rfs, trcsess = (reduced for reduced, _ in together)
    assert first.pending.height == 1 and not first.unmatched.height  # the send with its stamp, waiting for its ack
    assert second.unmatched["reason"].to_list() == ["no transport stamp before this message"]
    assert foreground.messages == 0 and foreground.boundary_waits.height == 2
    assert rfs.exchanges.rows == 1 and rfs.boundary_waits.height == 1  # the wait after the open receive
    assert trcsess.processes == (9850, 9854)


def test_a_file_of_several_processes_is_reduced_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    """The batch stamps and pairs only files of one process; a trcsess file takes the usual path."""
    batched: list[int] = []
    real = reduce_many._together

    def counted(reducers: list[object], taken: list[object]) -> None:
        batched.append(len(reducers))
        real(reducers, taken)  # type: ignore[arg-type]

    monkeypatch.setattr(reduce_many, "_together", counted)
    one = [recv(1), krs("2024-01-01 00:00:00.100000", "[krsr.c:826]")]
    two = ["*** [ Unix process pid: 1 ]", *one, "*** [ Unix process pid: 2 ]", *one]
    _check(_files([lines_frame("\n".join(text)) for text in (one, one, two)]))
    assert batched == [2]


def test_files_with_nothing_to_reduce_are_finished_together_as_alone() -> None:
    """Foreground and other traces (no 16410 message, no wait, no log writer line) in one batch with a
    sender's file: ISO ADR lines, ADR lines without a zone on a host --tz names and on one it does not,
    krs stamps alone, no stamp at all; each as reduced alone."""
    header = ["Trace file /u01/diag/rdbms/sales/sales1/trace/sales1_ora_{n}.trc", "Node name:\tprim01"]
    texts = [
        ["*** 2024-10-22T16:18:49.123456+02:00 (CDB$ROOT(1))", "a line", "*** 2024-10-22T16:19:00.000001+02:00"],
        [header[0].format(n=2), header[1], "*** 2024-01-01 00:00:00.100", "kcrfw_update_adaptive_sync_mode"],
        [header[0].format(n=3), "*** 2024-01-01 00:00:01.100", "text"],
        [krs("2024-01-01 00:00:00.100000"), "a line", krs("2024-01-01 00:00:02.100000")],
        ["nothing but text", "", "more text"],
        [send(1), krs("2024-01-01 00:00:00.100000")],
    ]
    files = _files([lines_frame("\n".join(text)) for text in texts])
    assert [reduce_many._nothing_to_reduce(parsed) for _, _, parsed in files] == [True] * 5 + [False]
    together = _check(files)
    assert together[0][0].zone == "ISO ADR lines of the file" and together[0][0].first_at is not None
    assert together[1][0].zone == "--tz prim01=+02:00" and together[2][0].zone == "--tz -05:00"
    assert together[3][0].first_at is not None and together[4][0].first_at is None
