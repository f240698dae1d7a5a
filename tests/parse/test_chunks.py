"""A file's chunks through `FileParser` (compiled scanner or pure path) and small files through `parse_small`:
each file's results as `families.parse_chunk` gives them chunk after chunk, whichever path reads them."""

from __future__ import annotations

from pathlib import Path

import pytest
from polars.testing import assert_frame_equal

from analyzer.parse import families as fam
from analyzer.parse import scanner
from analyzer.parse.chunks import FileParser, parse_small
from analyzer.parse.lines import MAX_LINE_CHARS, Chunk, ReadStats, read_chunks
from tests.conftest import ROOT

SAMPLES = sorted((ROOT / "samples").rglob("*.trc"))
PATHS = ["compiled", "python"]


def _chunks(path: Path, chunk_bytes: int) -> list[Chunk]:
    with path.open("rb") as stream:
        return list(read_chunks(stream, ReadStats(), chunk_bytes=chunk_bytes))


def _in_turn(chunks: list[Chunk]) -> tuple[list[fam.Parsed], ReadStats]:
    """The reference: each chunk's frame parsed with the header state the one before ended in."""
    stats, in_header, out = ReadStats(), False, []
    for chunk in chunks:
        part, in_header = fam.parse_chunk(chunk.frame(stats), in_header)
        out.append(part)
    return out, stats


def _assert_equal(got: fam.Parsed, expected: fam.Parsed) -> None:
    for name in fam.TABLES:
        assert_frame_equal(got.tables[name], expected.tables[name])
    assert (got.parsed, got.ignored) == (expected.parsed, expected.ignored)


@pytest.fixture(params=PATHS)
def path(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    if request.param == "compiled" and not scanner.compiled():
        pytest.skip("the compiled scanner is not built in this install")
    if request.param == "python":
        monkeypatch.setenv(scanner.SWITCH, "python")
    return str(request.param)


def test_a_files_chunks_in_two_steps_are_its_chunks_parsed_in_turn(path: str) -> None:
    """512-byte chunks cut the sample's header: the region is carried from chunk to chunk on either path."""
    chunks = _chunks(next(p for p in SAMPLES if p.name == "chicago1_rfs_8801.trc"), 512)
    stats = ReadStats()
    reader = FileParser(stats)
    assert reader.scanned == (path == "compiled")
    jobs = [reader.split(chunk) for chunk in chunks]  # the pure path's split runs ahead, in turn
    got = [reader.parse(job) for job in jobs]
    expected, expected_stats = _in_turn(chunks)
    for part, reference in zip(got, expected, strict=True):
        _assert_equal(part, reference)
    assert stats == expected_stats
    assert len(chunks) > 10 and fam.parse_chunk(chunks[0].frame(ReadStats()), False)[1]  # a header cut by the chunk


def test_an_alert_log_is_read_by_the_pure_path() -> None:
    reader = FileParser(ReadStats(), alert=True)
    assert not reader.scanned
    data = b"2024-10-22T16:18:49.116779+00:00\nThread 1 advanced to log sequence 5 (LGWR switch)\n"
    part = reader.parse(reader.split(Chunk(data, 1, 2)))
    assert part.tables["adr"].height == 1 and part.tables["alert"].height == 1


def test_small_files_parsed_together_are_each_as_alone(path: str) -> None:
    """The samples, a file without a line the scanner hands back, and one the scanner declines (a line too
    long for it), parsed together: each file's tables and counts as parsing it alone gives them."""
    files = [_chunks(p, 1 << 24)[0] for p in SAMPLES]
    quiet = b"*** 2024-10-22 16:18:49.590088 [krsr.c:1196]\n" * 3
    long = b"Trace file /x.trc\n" + b"x" * (MAX_LINE_CHARS + 5) + b"\n\nWAIT #1: nam='x' ela= 1 tim=2\n"
    files[1:1] = [Chunk(quiet, 1, 3), Chunk(long, 1, 4)]
    stats = [ReadStats() for _ in files]
    together = parse_small(files, stats)
    for chunk, part, each in zip(files, together, stats, strict=True):
        expected, expected_stats = _in_turn([chunk])
        _assert_equal(part, expected[0])
        assert each == expected_stats
    assert together[2].tables["waits"].height == 1 and stats[2].cut_lines == 1
    assert len(parse_small(files[:1], stats[:1])) == 1
