"""The dataset on disk: lock, atomic partition files, unit records, the sweep after a crash."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from datetime import date
from pathlib import Path
from typing import BinaryIO

import polars as pl
import pyarrow.parquet as pq
import pytest

from analyzer.base.errors import ExitCode, UsageError
from analyzer.batch.schemas import FILE_SCHEMAS, SCHEMA_VERSION
from analyzer.batch.store import NULL_PARTITION, Dataset, DatasetBusy
from tests.batch.helpers import unit_tables as _tables

HOLD = """
import sys, time
from pathlib import Path
from analyzer.batch.store import Dataset
with Dataset(Path(sys.argv[1])).locked():
    print("locked", flush=True)
    time.sleep(60)
"""


def test_second_writer_is_refused_and_a_killed_holder_holds_nothing(tmp_path: Path) -> None:
    holder = subprocess.Popen([sys.executable, "-c", HOLD, str(tmp_path)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
        with pytest.raises(DatasetBusy, match=f"pid {holder.pid}") as err, Dataset(tmp_path).locked():
            pass
        assert err.value.exit_code is ExitCode.BUSY
    finally:
        holder.send_signal(signal.SIGKILL)
        holder.wait()
        if holder.stdout is not None:
            holder.stdout.close()
    with Dataset(tmp_path).locked():  # the kernel released the dead process's lock
        assert (tmp_path / "_dgtrace" / "lock").read_text().startswith(f"pid {os.getpid()}")


def test_commit_writes_partitions_and_records_them(tmp_path: Path) -> None:
    ds = Dataset(tmp_path)
    with ds.locked():
        record = ds.commit(
            "sales+salesdr/2024-10-22",
            "f1",
            "sales+salesdr",
            ("sales", date(2024, 10, 22)),
            _tables("sales", date(2024, 10, 22), 3),
            ["a", "b"],
        )
    assert "writes/primary_db=sales/day=2024-10-22/sales+salesdr.parquet" in record.outputs
    assert len(record.outputs) == len(FILE_SCHEMAS)  # an empty table still has its (empty) file
    assert record.rows["writes"] == 3 and record.inputs == ("a", "b")
    stored = pl.read_parquet(tmp_path / record.outputs[0])
    assert stored.columns == FILE_SCHEMAS[record.outputs[0].split("/")[0]].names()
    assert ds.units()["sales+salesdr/2024-10-22"].fingerprint == "f1"
    assert not list((tmp_path / "_dgtrace" / "tmp").iterdir())
    meta = pq.read_metadata(tmp_path / record.outputs[0]).metadata
    assert meta[b"dgtrace.schema_version"] == str(SCHEMA_VERSION).encode()


def test_null_primary_goes_to_the_hive_null_partition(tmp_path: Path) -> None:
    ds = Dataset(tmp_path)
    with ds.locked():
        record = ds.commit(
            "findr/2024-10-22", "f", "findr", (None, date(2024, 10, 22)), _tables(None, date(2024, 10, 22), 2), []
        )
    assert f"writes/primary_db={NULL_PARTITION}/day=2024-10-22/findr.parquet" in record.outputs
    assert pl.scan_parquet(tmp_path / "writes").collect()["primary_db"].to_list() == [None, None]


def test_recommit_replaces_and_retire_removes(tmp_path: Path) -> None:
    ds = Dataset(tmp_path)
    day = date(2024, 10, 22)
    with ds.locked():
        first = ds.commit("u/2024-10-22", "f1", "u", ("sales", day), _tables("sales", day, 5), [])
        second = ds.commit("u/2024-10-22", "f2", "u", ("hr", day), _tables("hr", day, 2), [])
        assert not set(first.outputs) & set(second.outputs)
        assert all(not (tmp_path / p).exists() for p in first.outputs)  # moved to another partition: old files gone
        assert pl.scan_parquet(tmp_path / "writes").collect().height == 2
        ds.retire(second)
    assert ds.units() == {}
    assert not list((tmp_path / "writes").rglob("*.parquet"))


def test_interrupted_write_leaves_no_temporary_file(tmp_path: Path) -> None:
    ds = Dataset(tmp_path)

    def half(out: BinaryIO) -> None:
        out.write(b"half")
        raise KeyboardInterrupt

    with ds.locked(), pytest.raises(KeyboardInterrupt):
        ds.write_atomic(tmp_path / "x.parquet", half)
    assert not (tmp_path / "x.parquet").exists()
    assert not list((tmp_path / "_dgtrace" / "tmp").iterdir())


def test_other_schema_version_is_refused(tmp_path: Path) -> None:
    ds = Dataset(tmp_path)
    with ds.locked():
        ds.describe({})
        ds.write_json(tmp_path / "_dgtrace" / "dataset.json", {"schema_version": SCHEMA_VERSION + 1})
        with pytest.raises(UsageError, match="schema version"):
            ds.check_version()


def test_describe_writes_only_changes(tmp_path: Path) -> None:
    ds = Dataset(tmp_path)
    with ds.locked():
        ds.describe({"threshold_ms": 100.0})
        before = (tmp_path / "_dgtrace" / "dataset.json").stat().st_mtime_ns
        time.sleep(0.01)
        ds.describe({"threshold_ms": 100.0})
        assert (tmp_path / "_dgtrace" / "dataset.json").stat().st_mtime_ns == before
