"""Output files of a simulated set: pieces written in chunks, traces cut into segments between writes."""

from __future__ import annotations

from pathlib import Path

from analyzer.simulate.files import Segmenting, TraceFile, chunk_writer
from analyzer.simulate.headers import Process

RFS = Process("stby01", "salesdr", "salesdr1", "rfs", "", 8801, 41, 1, "2.3", "SYS$USERS", "oracle@prim01 (NSS2)")
ROOT = "/u01/app/oracle/diag/rdbms/salesdr/salesdr1/trace"


def _header(process: Process, t: int) -> str:
    return f"Trace file {process.oracle_path}\n(opened at {t})\n"


def _write(trace: TraceFile, rows: int, size: int = 40) -> None:
    """`rows` writes of `size` bytes each, a mark after every one."""
    for row in range(rows):
        trace.parts.append(f"{row:>{size - 1}}\n")
        trace.mark(row + 1, 1000 + row)


def test_pieces_are_written_in_one_chunk_and_counted(tmp_path: Path) -> None:
    path = tmp_path / "deep" / "x.csv"
    with chunk_writer(path) as out:
        out.parts += ["a,", "b\n"]
        out.flush()
        out.parts.append("c\n")
        assert out.parts == ["c\n"] and out.bytes == 4  # the first two pieces went out together
    assert path.read_text() == "a,b\nc\n" and out.bytes == 6


def test_without_segmenting_one_file_holds_every_write(tmp_path: Path) -> None:
    trace = TraceFile(tmp_path, RFS, None, _header)
    _write(trace, 10)
    trace.close()
    assert not trace.segmenting and trace.kept == [tmp_path / RFS.trace_dir / "salesdr1_rfs_8801.trc"]
    assert trace.kept[0].stat().st_size == 400


def test_a_full_segment_is_closed_after_a_write_and_the_next_opens_with_a_header(tmp_path: Path) -> None:
    trace = TraceFile(tmp_path, RFS, Segmenting(1000), _header)
    _write(trace, 25, size=100)  # a cut after the tenth write; a header and a note (212 bytes) start the next
    trace.close()
    names = [p.name for p in trace.kept]
    assert names == ["salesdr1_rfs_8801.trc", "salesdr1_rfs_8801_1.trc", "salesdr1_rfs_8801_2.trc"]
    first, second, third = (p.read_text() for p in trace.kept)
    assert first.endswith(f"\n*** TRACE CONTINUES IN FILE {ROOT}/salesdr1_rfs_8801_1.trc ***\n\n")
    assert second.startswith(f"Trace file {ROOT}/salesdr1_rfs_8801_1.trc\n(opened at 1009)\n")
    assert f"*** TRACE CONTINUED FROM FILE {ROOT}/salesdr1_rfs_8801.trc ***" in second
    rows = [[int(line) for line in text.splitlines() if line.strip().isdigit()] for text in (first, second, third)]
    assert rows == [list(range(10)), list(range(10, 18)), list(range(18, 25))]  # never a write cut in two


def test_a_dropped_segment_is_deleted_and_its_rows_remembered(tmp_path: Path) -> None:
    trace = TraceFile(tmp_path, RFS, Segmenting(1000, drop=1), _header)
    _write(trace, 25, size=100)
    trace.close()
    assert [p.name for p in trace.deleted] == ["salesdr1_rfs_8801_1.trc"] and not trace.deleted[0].exists()
    assert trace.dropped == [(10, 18)]  # rows 10 to 17 were in it
    assert [p.name for p in trace.kept] == ["salesdr1_rfs_8801.trc", "salesdr1_rfs_8801_2.trc"]
