"""Reading sources into file results: small files parsed together give what each gives read alone."""

from __future__ import annotations

import functools
import gzip
import io
import shutil
import zipfile
from datetime import UTC, datetime, timedelta
from pathlib import Path

import polars as pl
import pytest
from polars.testing import assert_frame_equal

from analyzer.api import analyze, discover
from analyzer.base.zones import ASSUMED_UTC, TimeZones
from analyzer.inputs.limits import Limits
from analyzer.inputs.sources import Source
from analyzer.parse import lines as read
from analyzer.parse.families import TABLES, parse_chunk
from analyzer.reduce import ingest
from analyzer.reduce.ingest import BATCH_BYTES, SMALL_BYTES, _batches, _Reading, read_file, read_files, read_small
from analyzer.reduce.results import FileResult, Options, known_zones
from analyzer.simulate import ShareOptions, SimOptions, simulate, simulate_share
from tests.builders import primary_lines, standby_lines

SAMPLES = Path(__file__).resolve().parents[2] / "samples" / "paper-2014"


def same_file(alone: FileResult, together: FileResult) -> None:
    """Two results of one source: every table, count and identity alike."""
    assert together.source.label == alone.source.label
    for name in TABLES:
        assert_frame_equal(together.parsed.tables[name], alone.parsed.tables[name])
    assert (together.parsed.parsed, together.parsed.ignored) == (alone.parsed.parsed, alone.parsed.ignored)
    a, b = alone.reduced, together.reduced
    assert_frame_equal(b.exchanges.collect(), a.exchanges.collect())
    for name in ("pending", "boundary_waits", "unmatched", "lgwr", "alert"):
        assert_frame_equal(getattr(b, name), getattr(a, name))
    assert (b.info, b.zone, b.first_at, b.last_at, b.tim, b.messages, b.waits, b.threads, b.processes) == (
        a.info,
        a.zone,
        a.first_at,
        a.last_at,
        a.tim,
        a.messages,
        a.waits,
        a.threads,
        a.processes,
    )
    assert (together.stats, together.identity, together.placement) == (alone.stats, alone.identity, alone.placement)


@pytest.mark.slow
def test_chunks_parsed_ahead_are_parsed_as_in_turn(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each chunk is split into families in turn (by the compiled scanner, or the pure path) and parsed on a
    second thread while the one before is reduced. 256-byte chunks cut the sample trace's header: a chunk
    after one that ends inside it is split with that state, and every chunk gives the tables of parsing in
    turn."""
    monkeypatch.setattr(ingest, "read_chunks", functools.partial(read.read_chunks, chunk_bytes=256))
    reading = _Reading(discover([str(next(SAMPLES.rglob("chicago1_rfs_8801.trc")))])[0][0])
    chunks = list(reading.lines())
    ahead = list(reading.parsed(iter(chunks)))
    in_header, ends = False, []
    for chunk, part in zip(chunks, ahead, strict=True):
        expected, in_header = parse_chunk(chunk.frame(read.ReadStats()), in_header)
        ends.append(in_header)
        for name in TABLES:
            assert_frame_equal(part.tables[name], expected.tables[name])
        assert (part.parsed, part.ignored) == (expected.parsed, expected.ignored)
    assert len(chunks) > 20 and any(ends[:-1]) and not all(ends)


@pytest.mark.slow
def test_small_files_read_together_are_read_as_alone(tmp_path: Path) -> None:
    """A share of small traces (plain and gzipped, with alert logs and foreground traces) and the paper's
    samples: every file read in batches is what it is read alone, in input order."""
    simulate_share(tmp_path / "share", ShareOptions(configs=2, days=2, writes=30, extras=True))
    shutil.copytree(SAMPLES, tmp_path / "paper")
    sources, _ = discover([str(tmp_path)])
    assert len(sources) > 20 and all(source.stored_bytes and source.stored_bytes < SMALL_BYTES for source in sources)
    assert any(source.label.endswith(".gz") for source in sources)
    assert any(Path(source.label).name.startswith("alert_") for source in sources)
    zones = TimeZones(default_min=0)
    together = read_files(sources, zones)
    assert [f.source.label for f in together] == [s.label for s in sources]
    for source, result in zip(sources, together, strict=True):
        same_file(read_file(source, zones), result)


@pytest.mark.slow
def test_a_small_source_bigger_than_a_chunk_is_read_alone(tmp_path: Path) -> None:
    """A gzipped trace whose content spans several chunks, in a batch of small files: read chunk by chunk."""
    simulate(tmp_path / "big", SimOptions(format_version="19c", writes=90_000, threads=1, seed=3))
    rfs = next((tmp_path / "big").rglob("*_rfs_*.trc"))
    packed = tmp_path / "small" / (rfs.name + ".gz")
    packed.parent.mkdir()
    packed.write_bytes(gzip.compress(rfs.read_bytes()))
    assert rfs.stat().st_size > 17 * 1024 * 1024
    shutil.copy(next(SAMPLES.rglob("chicago1_rfs_8801.trc")), tmp_path / "small")
    sources, _ = discover([str(tmp_path / "small")])
    zones = TimeZones(default_min=0)
    together = read_small(sources, zones)
    for source, result in zip(sources, together, strict=True):
        same_file(read_file(source, zones), result)
    assert max(f.reduced.messages for f in together) == 180_000


def _source(label: str, lines: list[str]) -> Source:
    data = ("\n".join(lines) + "\n").encode()
    return Source(label, lambda: io.BytesIO(data), stored_bytes=len(data))


def test_a_file_without_a_zone_is_read_in_the_zone_the_others_agree_on() -> None:
    """The primary's ISO ADR line says +02:00; the standby's stamps and an 11.2 alert log carry no zone:
    read together, both are in +02:00 (their messages, span and alert-log entries); read alone, in UTC."""
    primary = [
        "*** 2024-01-01T10:00:00.000000+02:00",
        *primary_lines([(1, "2024-01-01 10:00:00.100", "2024-01-01 10:00:00.150")]),
    ]
    standby = standby_lines([(1, "2024-01-01 10:00:00.110", "2024-01-01 10:00:00.140", [("RFS write", 20000)])])
    alert = ["Mon Jan  1 10:00:05 2024", "Thread 1 advanced to log sequence 11 (LGWR switch)"]
    sources = [_source("p.trc", primary), _source("s.trc", standby), _source("alert_s1.log", alert)]
    kept, moved, log = read_files(sources, TimeZones())
    assert (kept.reduced.zone, known_zones(kept)) == ("ISO ADR lines of the file", frozenset({120}))
    assumed = "assumed +02:00 as the other files (no zone in the file)"
    assert (moved.reduced.zone, log.reduced.zone, known_zones(moved)) == (assumed, assumed, frozenset({120}))
    at = datetime(2024, 1, 1, 8, 0, 0, 110000, tzinfo=UTC)
    assert (moved.reduced.first_at, moved.reduced.exchanges.collect()["a_at"][0]) == (at, at)
    assert log.reduced.alert["at"].to_list() == [datetime(2024, 1, 1, 8, 0, 5, tzinfo=UTC)]
    alone = read_file(sources[1], TimeZones())
    assert alone.reduced.zone == ASSUMED_UTC and alone.reduced.first_at == at + timedelta(hours=2)


def test_batches_keep_the_input_order_and_use_every_worker() -> None:
    def source(name: str, size: int) -> Source:
        return Source(name, lambda: open(__file__, "rb"), stored_bytes=size)

    small = [source(f"f{n}.trc", 18_000) for n in range(300)]
    for workers in (1, 2, 4):
        batches = _batches(small, workers)
        assert [s.label for batch in batches for s in batch] == [s.label for s in small]
        assert len(batches) >= workers
    many = [source(f"g{n}.trc", 900_000) for n in range(40)]
    assert all(sum(s.stored_bytes or 0 for s in batch) <= BATCH_BYTES + 900_000 for batch in _batches(many, 2))
    assert _batches([], 2) == []


def test_an_analysis_of_small_files_is_the_same_read_either_way(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The whole analysis of a set of small files, batched or each read alone, gives the same writes."""
    simulate(tmp_path / "set", SimOptions(format_version="12.1", writes=200, seed=6))
    options = Options(zones=TimeZones(default_min=0))
    batched = analyze([str(tmp_path / "set")], options)
    monkeypatch.setattr(ingest, "SMALL_BYTES", 0)  # nothing is small: every file read alone
    alone = analyze([str(tmp_path / "set")], options)
    assert batched.writes.height == 400
    assert_frame_equal(batched.writes, alone.writes)
    assert_frame_equal(batched.unmatched, alone.unmatched)
    assert_frame_equal(batched.warnings, alone.warnings)
    assert pl.Series([f.parsed.lines for f in batched.files]).sum() > 0


@pytest.mark.slow  # a second of parsing before the budget stops it
def test_the_time_budget_of_an_input_bounds_its_parsing_too(tmp_path: Path) -> None:
    """A zip member of 64 Mi empty lines (64 KiB stored, its ratio allowed): reading and parsing them takes far
    longer than a budget of 20 ms, however fast the machine (the compiled scanner reads them in well under a
    second); --max-seconds-per-input stops the parsing, the lines before it stand, the input is named."""
    upload = tmp_path / "nl.zip"
    with zipfile.ZipFile(upload, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("db_rfs_1.trc", b"\n" * (64 * 1024 * 1024))
    (source,), _ = discover([str(upload)], limits=Limits(max_seconds_per_input=0.02, max_ratio=1e9))
    result = read_file(source, TimeZones())
    assert result.stats.error is not None
    assert result.stats.error.endswith("over the limit (0.02 s, --max-seconds-per-input), not read further")
    assert result.stats.lines < 64 * 1024 * 1024  # (none at all when the listing alone took the second)
    assert result.stats.lines == sum(result.parsed.ignored.values()) + sum(result.parsed.parsed.values())
