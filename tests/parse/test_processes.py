"""Process streams inside one file: repeated headers, recreated files, trcsess output of several pids."""

from __future__ import annotations

import polars as pl

from analyzer.api import Options, analyze_files
from analyzer.parse.families import parse_chunk
from analyzer.parse.processes import MAX_STREAMS, Streams
from tests.builders import done, krs, read_trace, recv, reduced
from tests.conftest import lines_frame


def _streams(text: list[str]) -> list[int]:
    parsed, _ = parse_chunk(lines_frame("\n".join(text)), in_header=False)
    streams = Streams()
    streams.add(parsed.tables["header"], parsed.tables["markers"])
    frame = pl.DataFrame({"line": range(1, len(text) + 1)}, schema={"line": pl.Int64})
    return frame.select(stream=streams.expr())["stream"].to_list()


def test_one_process_is_one_stream() -> None:
    assert _streams(["Trace file /x/db1_rfs_1.trc", "", "*** 2024-01-01 00:00:00.000", "x"]) == [1, 1, 1, 1]


def test_a_repeated_header_and_a_recreated_file_start_new_streams() -> None:
    text = [
        "Trace file /x/db1_rfs_1.trc",
        "x",
        "Trace file /x/db1_rfs_1.trc",
        "x",
        "*** TRACE FILE RECREATED AFTER BEING REMOVED ***",
        "x",
    ]
    assert _streams(text) == [1, 1, 1, 2, 2, 3]


def test_trcsess_processes_come_back_to_their_own_stream() -> None:
    text = [
        "*** [ Unix process pid: 9850 ]",
        "a",
        "*** [ Unix process pid: 9854 ]",
        "b",
        "*** [ Unix process pid: 9850 ]",
        "a",
        "*** [ Unix process pid: 9854 ]",
        "b",
    ]
    assert _streams(text) == [1, 1, 1, 2, 2, 1, 1, 2]


def test_streams_stop_growing_at_the_limit() -> None:
    streams = Streams()
    header = pl.DataFrame(
        {"line": range(2, 3000, 2), "kind": "trace_file", "key": "", "value": ""},
        schema={"line": pl.Int64, "kind": pl.String, "key": pl.String, "value": pl.String},
    )
    streams.add(
        header, pl.DataFrame(schema={"line": pl.Int64, "marker": pl.String, "path": pl.String, "pid": pl.Int64})
    )
    assert streams.last == MAX_STREAMS


def test_messages_of_two_trcsess_processes_never_pair() -> None:
    """RFS 9850 receives write 1 and 9854 finishes a write of the same key: no pair across them;
    when trcsess returns to 9850, its own finish pairs with its receive."""
    text = [
        "*** [ Unix process pid: 9850 ]",
        recv(1),
        krs("2024-01-01 00:00:00.100000", "[krsr.c:826]"),
        "*** [ Unix process pid: 9854 ]",
        done(1),
        krs("2024-01-01 00:00:00.150000", "[krsr.c:1459]"),
        "*** [ Unix process pid: 9850 ]",
        done(1),
        krs("2024-01-01 00:00:00.200000", "[krsr.c:1459]"),
    ]
    file = reduced(text, "main.trc")
    exchanges = file.exchanges.collect()
    assert exchanges.select("a_line", "b_line").rows() == [(2, 8)]
    assert file.pending["line"].to_list() == [5]  # its receive may be in another segment of 9854
    assert file.processes == (9850, 9854)


def test_trcsess_output_is_said_in_the_findings() -> None:
    from analyzer.findings import inventory

    text = ["*** [ Unix process pid: 11 ]", "x", "*** [ Unix process pid: 12 ]", "y"]
    alone = read_trace(["Unix process pid: 12, image: oracle@h (RFS)", "", "z"], "db_rfs_12.trc")
    analysis = analyze_files([read_trace(text, "main.trc"), alone], [], Options())
    (finding,) = [f for f in inventory.findings(analysis) if "trcsess" in f]
    assert "main.trc is trcsess output of 2 processes (pids 11, 12)" in finding
    assert "db_rfs_12.trc hold the same processes" in finding
