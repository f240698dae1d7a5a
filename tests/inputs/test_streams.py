"""Decompressing streams: gzip inputs give the same lines through python-isal's reader and the standard library's."""

from __future__ import annotations

import gzip
import random
from pathlib import Path

import polars as pl
import pytest

from analyzer.inputs import decoders, streams
from analyzer.inputs.sources import discover
from analyzer.parse.lines import ReadStats, read_lines
from tests.builders import done, krs, recv, wait


def _trace_text(writes: int) -> bytes:
    """RFS-shaped lines of `writes` writes, with a Latin-1 byte and a CRLF line among them."""
    rng = random.Random(7)
    lines = []
    for m in range(writes):
        lines += [recv(m), krs(f"2024-12-09 06:30:{m % 60:02d}.{rng.randrange(10**6):06d}")]
        lines += [wait("RFS write", rng.randrange(1, 5000), tim=m) for _ in range(rng.randrange(3))]
        lines += [done(m), krs(f"2024-12-09 06:30:{m % 60:02d}.{rng.randrange(10**6):06d}")]
    return ("\n".join(lines) + "\n").encode() + b"SQL text caf\xe9\r\n"


def _lines(path: Path, *, fast: bool, monkeypatch: pytest.MonkeyPatch) -> tuple[pl.DataFrame, ReadStats]:
    if not fast:
        monkeypatch.setattr(decoders, "isal_zlib", None)
    sources, skipped = discover([str(path)])
    assert len(sources) == 1 and not skipped
    stats = ReadStats()
    with sources[0].opener() as stream:
        frames = list(read_lines(stream, stats, chunk_bytes=64 * 1024))
    monkeypatch.undo()
    return pl.concat(frames), stats


def test_the_fast_gzip_extra_is_installed_for_the_tests() -> None:
    assert streams.FAST_GZIP, "install the `fast-gzip` extra (python-isal): the dev group has it"


def test_both_gzip_readers_give_the_lines_of_the_plain_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    text = _trace_text(3000)
    half = len(text) // 2
    packed = tmp_path / "stby1_rfs_4801.trc.gz"
    packed.write_bytes(gzip.compress(text[:half], 1) + gzip.compress(text[half:], 9))  # two members, cut mid-line
    plain = tmp_path / "plain" / "stby1_rfs_4801.trc"
    plain.parent.mkdir()
    plain.write_bytes(text)
    expected, _ = _lines(plain, fast=True, monkeypatch=monkeypatch)
    fast, fast_stats = _lines(packed, fast=True, monkeypatch=monkeypatch)
    slow, slow_stats = _lines(packed, fast=False, monkeypatch=monkeypatch)
    assert expected.height > 10_000
    assert fast.equals(expected) and slow.equals(expected)
    assert fast_stats == slow_stats and fast_stats.error is None


def test_a_truncated_gzip_keeps_its_lines_and_says_so_on_both_readers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    packed = gzip.compress(_trace_text(3000))
    path = tmp_path / "stby1_rfs_4801.trc.gz"
    path.write_bytes(packed[: len(packed) * 2 // 3])
    fast, fast_stats = _lines(path, fast=True, monkeypatch=monkeypatch)
    slow, slow_stats = _lines(path, fast=False, monkeypatch=monkeypatch)
    assert fast_stats.error and slow_stats.error
    assert fast.height > 1000 and slow.height > 1000
    shorter = min(fast.height, slow.height)  # what each inflater had delivered before the error may differ
    assert fast.head(shorter).equals(slow.head(shorter))
