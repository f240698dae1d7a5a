"""Unit records: their files' sums, hashed while written; records that are not dgtrace's refused."""

from __future__ import annotations

import errno
import hashlib
import io
import os
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from analyzer.batch.manifest import FileSum, HashingWriter, UnitRecord, confined, digest_of, parquet_footer

REL = "writes/primary_db=sales/day=2024-10-22/sales+salesdr.parquet"
SUM = FileSum(1234, 1_700_000_000_000_000_000, "ab" * 32)


def _record(**change: Any) -> dict[str, Any]:
    document = UnitRecord("k", "f", (REL,), {"writes": 3}, ("a",), "2024-10-23T00:00:00", {REL: SUM}).to_json()
    return document | change


def test_a_record_round_trips_with_its_sums() -> None:
    record = UnitRecord.from_json(_record())
    assert record.sums == {REL: SUM} and record.outputs == (REL,)
    assert UnitRecord.from_json(record.to_json()) == record


def test_a_record_of_a_release_that_kept_no_sums_is_read() -> None:
    document = _record()
    del document["files"]
    assert UnitRecord.from_json(document).sums == {}


@pytest.mark.parametrize(
    "change",
    [
        {"outputs": ["/etc/passwd"]},
        {"outputs": ["writes/../../x.parquet"]},
        {"rows": {"writes": "3"}},
        {"rows": {"writes": True}},
        {"key": 7},
        {"inputs": "a"},
        {"files": {REL: SUM.to_json() | {"sha256": "not hex"}}},
        {"files": {REL: SUM.to_json() | {"bytes": -1}}},
        {"files": {"writes/primary_db=x/day=2024-10-22/y.parquet": SUM.to_json()}},
        {"files": []},
    ],
)
def test_a_record_dgtrace_did_not_write_is_refused(change: dict[str, Any]) -> None:
    with pytest.raises((ValueError, TypeError, KeyError)):
        UnitRecord.from_json(_record(**change))


def test_a_record_with_sums_of_some_files_only_is_refused() -> None:
    other = "daily/primary_db=sales/day=2024-10-22/sales+salesdr.parquet"
    with pytest.raises(ValueError, match="some of its files"):
        UnitRecord.from_json(_record(outputs=[REL, other]))
    with pytest.raises(TypeError):
        UnitRecord.from_json([])


def test_confined() -> None:
    assert confined(REL)
    assert not confined("writes/primary_db=sales/day=2024-10-22/../../../etc.parquet")
    assert not confined("/" + REL) and not confined("notatable/primary_db=a/day=2024-10-22/a.parquet")


def test_the_sums_are_those_of_the_bytes_written(tmp_path: Path) -> None:
    frame = pl.DataFrame({"a": list(range(50_000)), "b": [str(n) for n in range(50_000)]})
    path = tmp_path / "x.parquet"
    fd = os.open(path, os.O_WRONLY | os.O_CREAT)
    try:
        raw = HashingWriter(fd)
        with io.BufferedWriter(raw, 4096) as out:
            frame.write_parquet(out, compression="zstd")
        sums = raw.sums()
    finally:
        os.close(fd)
    data = path.read_bytes()
    assert sums == FileSum(len(data), path.stat().st_mtime_ns, hashlib.sha256(data).hexdigest())
    assert pl.read_parquet(path).equals(frame)
    with path.open("rb") as handle:
        assert digest_of(handle.fileno()) == sums.sha256
        assert parquet_footer(handle.fileno(), len(data)) is None


def test_the_operating_systems_error_is_kept(tmp_path: Path) -> None:
    """polars wraps a failed write in its own error; the writer keeps the errno (a full disk, no permission)."""
    path = tmp_path / "x.parquet"
    path.write_bytes(b"")
    fd = os.open(path, os.O_RDONLY)  # writing fails with EBADF
    try:
        raw = HashingWriter(fd)
        with pytest.raises((pl.exceptions.PolarsError, OSError)), io.BufferedWriter(raw, 16) as out:
            pl.DataFrame({"a": [1, 2, 3]}).write_parquet(out)
    finally:
        os.close(fd)
    assert raw.error is not None and raw.error.errno == errno.EBADF


@pytest.mark.parametrize(
    ("cut", "problem"),
    [
        (lambda data: data[: len(data) // 2], "not a whole Parquet file (its end is missing)"),
        (lambda data: data[:8], "8 bytes: too short for a Parquet file"),
        (
            lambda data: data[:4] + b"\xff\xff\xff\x7f" * 4 + b"PAR1",
            "not a whole Parquet file (its footer is longer than the file)",
        ),
        (lambda data: b"x" + data[1:], "not a whole Parquet file (its end is missing)"),
    ],
)
def test_the_parquet_framing_of_a_damaged_file(tmp_path: Path, cut: Any, problem: str) -> None:
    whole = tmp_path / "whole.parquet"
    pl.DataFrame({"a": list(range(1000))}).write_parquet(whole)
    damaged = tmp_path / "damaged.parquet"
    damaged.write_bytes(cut(whole.read_bytes()))
    with damaged.open("rb") as handle:
        assert parquet_footer(handle.fileno(), damaged.stat().st_size) == problem


def test_a_file_sum_says_what_differs(tmp_path: Path) -> None:
    path = tmp_path / "f"
    path.write_bytes(b"x" * 1234)
    info = path.stat()
    digest = hashlib.sha256(b"x" * 1234).hexdigest()
    same = FileSum(1234, info.st_mtime_ns, digest)
    calls: list[int] = []

    def hashed() -> str:
        calls.append(1)
        return digest

    assert same.problem(info, hashed, full=False) is None and calls == []
    assert same.problem(info, hashed, full=True) is None and calls == [1]
    assert (
        FileSum(1000, info.st_mtime_ns, digest).problem(info, hashed, full=True)
        == "1,234 bytes where 1,000 were written"
    )
    other = FileSum(1234, info.st_mtime_ns - 1, "0" * 64)
    assert other.problem(info, hashed, full=False) == "its content is not what was written (its SHA-256 differs)"
    assert same.problem(os.stat(tmp_path), hashed, full=False) == "not a regular file"
