"""The sweep: what a killed run left removed; every file of the dataset checked against its unit record
(size at every run, SHA-256 when its time changed or with --verify); damaged units removed whole."""

from __future__ import annotations

import json
import os
from datetime import date
from pathlib import Path

import polars as pl

from analyzer.batch.manifest import UnitRecord
from analyzer.batch.store import Dataset
from analyzer.batch.sweep import sweep
from tests.batch.helpers import unit_tables

DAY = date(2024, 10, 22)


def _two_units(ds: Dataset) -> tuple[UnitRecord, UnitRecord]:
    kept = ds.commit("u/2024-10-22", "f1", "u", ("sales", DAY), unit_tables("sales", DAY, 5), [])
    other = ds.commit("v/2024-10-22", "f1", "v", ("hr", DAY), unit_tables("hr", DAY, 4), [])
    return kept, other


def _writes_file(record: UnitRecord) -> str:
    return next(rel for rel in record.outputs if rel.startswith("writes/"))


def test_sweep_removes_what_a_killed_run_left(tmp_path: Path) -> None:
    ds = Dataset(tmp_path)
    with ds.locked():
        kept, half = _two_units(ds)
        ds.forget("v/2024-10-22")  # killed after removing v's record, before writing it again
        (tmp_path / "_dgtrace" / "tmp" / "123-abc.parquet").write_bytes(b"PAR1 half written")
        swept = sweep(ds)
    assert swept.removed == len(half.outputs) + 1 and swept.damaged == []
    assert swept.checked == len(kept.outputs) and swept.hashed == 0  # sizes and times only
    assert all((tmp_path / p).is_file() for p in kept.outputs)
    assert all(not (tmp_path / p).exists() for p in half.outputs)
    assert not (tmp_path / "writes" / "primary_db=hr").exists()
    assert pl.scan_parquet(tmp_path / "writes").collect().height == 5


def test_a_unit_with_a_missing_file_is_removed_whole(tmp_path: Path) -> None:
    ds = Dataset(tmp_path)
    with ds.locked():
        kept, record = _two_units(ds)
        (tmp_path / _writes_file(record)).unlink()
        swept = sweep(ds)
        assert [(d.record.key, d.file, d.problem) for d in swept.damaged] == [
            (record.key, _writes_file(record), "missing")
        ]
        assert set(ds.units()) == {kept.key}
    assert all(not (tmp_path / p).exists() for p in record.outputs)  # its other files too: it runs again whole
    assert pl.scan_parquet(tmp_path / "writes").collect().height == 5


def test_a_file_cut_short_is_found_by_its_size(tmp_path: Path) -> None:
    ds = Dataset(tmp_path)
    with ds.locked():
        _kept, record = _two_units(ds)
        path = tmp_path / _writes_file(record)
        size = path.stat().st_size
        with path.open("r+b") as handle:
            handle.truncate(size // 2)
        swept = sweep(ds)
    assert [d.problem for d in swept.damaged] == [f"{size // 2:,} bytes where {size:,} were written"]
    assert swept.hashed == 0  # the size tells, nothing is read
    assert pl.scan_parquet(tmp_path / "writes" / "**" / "*.parquet").collect().height == 5  # readable again


def test_a_touched_file_is_hashed_once_and_kept(tmp_path: Path) -> None:
    ds = Dataset(tmp_path)
    with ds.locked():
        kept, _ = _two_units(ds)
        path = tmp_path / _writes_file(kept)
        os.utime(path, ns=(1_000_000_000, 1_000_000_000))  # copied without its times
        first = sweep(ds)
        assert first.damaged == [] and first.hashed == 1 and first.hashed_bytes == path.stat().st_size
        assert ds.units()[kept.key].sums[_writes_file(kept)].mtime_ns == 1_000_000_000  # the new time recorded
        assert sweep(ds).hashed == 0


def test_changed_content_of_the_same_size_and_time_is_found_by_verify(tmp_path: Path) -> None:
    ds = Dataset(tmp_path)
    with ds.locked():
        kept, other = _two_units(ds)
        path = tmp_path / _writes_file(kept)
        before = path.stat()
        data = bytearray(path.read_bytes())
        data[len(data) // 2] ^= 0xFF  # one bit flipped by the disk
        path.write_bytes(data)
        os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
        assert sweep(ds).damaged == []  # each run trusts an unchanged size and time
        verified = sweep(ds, verify=True)
    assert verified.hashed == len(kept.outputs) + len(other.outputs)
    assert [(d.record.key, d.problem) for d in verified.damaged] == [
        (kept.key, "its content is not what was written (its SHA-256 differs)")
    ]
    assert not path.exists()


def test_verify_hashes_every_file(tmp_path: Path) -> None:
    ds = Dataset(tmp_path)
    with ds.locked():
        kept, other = _two_units(ds)
        swept = sweep(ds, verify=True)
    files = [tmp_path / rel for rel in (*kept.outputs, *other.outputs)]
    assert swept.damaged == [] and swept.checked == swept.hashed == len(files)
    assert swept.hashed_bytes == sum(p.stat().st_size for p in files)


def test_a_record_without_sums_has_its_files_checked_as_parquet_and_its_sums_recorded(tmp_path: Path) -> None:
    """A dataset written by a release that kept no sums: a whole file is adopted, a cut one is damage."""
    ds = Dataset(tmp_path)
    with ds.locked():
        kept, cut = _two_units(ds)
    for record in (kept, cut):
        path = tmp_path / "_dgtrace" / "units" / f"{record.key.replace('/', '%2F')}.json"
        document = json.loads(path.read_text())
        del document["files"]
        path.write_text(json.dumps(document))
    target = tmp_path / _writes_file(cut)
    target.write_bytes(target.read_bytes()[:-100])
    with ds.locked():
        assert ds.units()[kept.key].sums == {}
        swept = sweep(ds)
        assert [(d.record.key, d.problem) for d in swept.damaged] == [
            (cut.key, "not a whole Parquet file (its end is missing)")
        ]
        assert ds.units()[kept.key].sums == kept.sums  # the same sums as when it was written
        assert sweep(ds).hashed == 0


def test_a_link_where_a_file_was_is_removed_as_a_name(tmp_path: Path) -> None:
    ds = Dataset(tmp_path)
    outside = tmp_path.parent / f"{tmp_path.name}-outside.parquet"
    outside.write_bytes(b"keep me")
    with ds.locked():
        _kept, record = _two_units(ds)
        path = tmp_path / _writes_file(record)
        path.unlink()
        path.symlink_to(outside)
        swept = sweep(ds)
    assert [d.problem for d in swept.damaged] == ["not a regular file"]
    assert not path.is_symlink() and outside.read_bytes() == b"keep me"
