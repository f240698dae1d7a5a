"""The dataset on disk: partition files written atomically, the manifest, the lock, the sweep.

    DIR/<table>/primary_db=<db>/day=<YYYY-MM-DD>/<configuration>.parquet   the rows (hive layout)
    DIR/_dgtrace/dataset.json        schema version, settings, the tables' columns
    DIR/_dgtrace/inputs.json         every input seen: size, modification time, its sources (digest, identity)
    DIR/_dgtrace/units/<unit>.json   every unit whose rows are in place: its fingerprint and its files
    DIR/_dgtrace/lock                held (flock) by the run writing the dataset
    DIR/_dgtrace/tmp/                files being written, renamed into place once complete

A partition file is live when a unit record names it. A unit's record is removed before its files
are replaced and written again only after they are all in place (each written to `tmp/`, flushed
to disk and renamed), so after a crash at any moment the next run, which first removes every file
no record names, sees each unit either whole or not at all, and runs again those that are not.
"""

from __future__ import annotations

import contextlib
import fcntl
import functools
import json
import os
import socket
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

import polars as pl

from analyzer.base.errors import AnalyzerError, ExitCode, UsageError
from analyzer.batch.plan import safe_name
from analyzer.batch.schemas import FILE_SCHEMAS, MIGRATES_FROM, PARTITIONS, SCHEMA_VERSION, TABLES

META = "_dgtrace"
#: the value hive readers (polars, DuckDB, pyarrow, Spark) read as null
NULL_PARTITION = "__HIVE_DEFAULT_PARTITION__"


class DatasetBusy(AnalyzerError):
    """Another run holds the dataset's lock."""

    exit_code = ExitCode.BUSY


@dataclass(frozen=True)
class UnitRecord:
    """What the manifest knows of a unit whose rows are in place."""

    key: str
    fingerprint: str
    #: its partition files, relative to the dataset
    outputs: tuple[str, ...]
    rows: dict[str, int]
    inputs: tuple[str, ...]
    written_at: str

    def to_json(self) -> dict[str, Any]:
        return {
            "key": self.key,
            "fingerprint": self.fingerprint,
            "outputs": list(self.outputs),
            "rows": self.rows,
            "inputs": list(self.inputs),
            "written_at": self.written_at,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> UnitRecord:
        return cls(
            data["key"],
            data["fingerprint"],
            tuple(data["outputs"]),
            dict(data["rows"]),
            tuple(data["inputs"]),
            data["written_at"],
        )


def fsync_dir(path: Path) -> None:
    """Make a rename or removal in `path` durable."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


class Dataset:
    """A batch dataset directory (see the module docstring)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.meta = root / META
        self.tmp = self.meta / "tmp"
        self.units_dir = self.meta / "units"
        self._lock_fd: int | None = None

    # ------------------------------------------------------------------ lock
    @contextlib.contextmanager
    def locked(self) -> Iterator[None]:
        """Hold the dataset's lock (released by the kernel if this process dies).

        Raises:
            DatasetBusy: another run holds it.
        """
        for directory in (self.root, self.meta, self.tmp, self.units_dir):
            directory.mkdir(exist_ok=True)
        fd = os.open(self.meta / "lock", os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 400, 0).decode("utf-8", "replace").strip() or "another process"
            os.close(fd)
            raise DatasetBusy(
                f"{self.root} is being written by another dgtrace batch ({holder}); run again when it has finished"
            ) from None
        os.ftruncate(fd, 0)
        started = datetime.now(UTC).isoformat(timespec="seconds")
        os.pwrite(fd, f"pid {os.getpid()} on {socket.gethostname()}, started {started}".encode(), 0)
        self._lock_fd = fd
        try:
            yield
        finally:
            self._lock_fd = None
            os.close(fd)  # closing releases the lock

    # ------------------------------------------------------------------ files
    def _temp(self, suffix: str) -> Path:
        return self.tmp / f"{os.getpid()}-{uuid.uuid4().hex}{suffix}"

    def write_atomic(self, target: Path, write: Callable[[Path], None]) -> None:
        """Write `target` through a temporary file: flushed, renamed over it, the rename flushed."""
        part = self._temp(target.suffix)
        try:
            write(part)
            with part.open("rb+") as handle:
                os.fsync(handle.fileno())
            target.parent.mkdir(parents=True, exist_ok=True)
            os.replace(part, target)
            fsync_dir(target.parent)
        finally:
            part.unlink(missing_ok=True)

    def write_json(self, target: Path, document: Any) -> None:
        text = json.dumps(document, indent=1, sort_keys=True) + "\n"

        def write(path: Path) -> None:
            path.write_text(text, encoding="utf-8")

        self.write_atomic(target, write)

    def remove_temporary(self, *, mine_only: bool) -> int:
        """Remove the files being written (this process's only, or all: the sweep)."""
        removed = 0
        prefix = f"{os.getpid()}-"
        for path in self.tmp.glob("*") if self.tmp.is_dir() else ():
            if not mine_only or path.name.startswith(prefix):
                path.unlink(missing_ok=True)
                removed += 1
        return removed

    # ------------------------------------------------------------------ metadata
    def read_json(self, name: str) -> Any:
        path = self.meta / name
        return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else None

    def check_version(self, *, migrating: bool = False) -> int | None:
        """The dataset's schema version (None for a new dataset), when this dgtrace can use it: its
        own, or (`migrating`: `dgtrace batch`, which brings it up to date) one of `MIGRATES_FROM`.

        Raises:
            UsageError: a dataset of another version (the message says what to do).
        """
        described = self.read_json("dataset.json")
        if described is None:
            return None
        found = described.get("schema_version")
        if found == SCHEMA_VERSION:
            return SCHEMA_VERSION
        if found in MIGRATES_FROM:
            if migrating:
                return int(found)
            raise UsageError(
                f"{self.root} holds a dataset of schema version {found}; this dgtrace reads version {SCHEMA_VERSION}:"
                f" run dgtrace batch on it once (with its inputs, --out {self.root}) to bring it to version"
                f" {SCHEMA_VERSION} in place: its rows are kept, and inputs it has read are not read again"
            )
        raise UsageError(
            f"{self.root} holds a dataset of schema version {found}; this dgtrace "
            f"writes version {SCHEMA_VERSION}: write a new dataset with another --out"
        )

    def describe(self, settings: dict[str, Any]) -> None:
        """dataset.json: the layout and the settings (rewritten only when they change)."""
        document = {
            "format": "dgtrace batch dataset",
            "schema_version": SCHEMA_VERSION,
            "partitions": list(PARTITIONS),
            "settings": settings,
            "tables": {name: {c: str(t) for c, t in cols.items()} for name, cols in FILE_SCHEMAS.items()},
        }
        if self.read_json("dataset.json") != json.loads(json.dumps(document)):
            self.write_json(self.meta / "dataset.json", document)

    def units(self) -> dict[str, UnitRecord]:
        records = {}
        for path in sorted(self.units_dir.glob("*.json")) if self.units_dir.is_dir() else ():
            try:
                record = UnitRecord.from_json(json.loads(path.read_text(encoding="utf-8")))
            except (ValueError, KeyError, TypeError):
                path.unlink()  # written atomically, so never half: unreadable means foreign; run the unit again
                continue
            records[record.key] = record
        return records

    def _record_path(self, key: str) -> Path:
        return self.units_dir / f"{safe_name(key)}.json"

    # ------------------------------------------------------------------ sweep
    def sweep(self) -> int:
        """Remove temporary files, unit records whose files are missing, and every partition file
        no unit record names (left by a run that was killed); returns the files removed."""
        removed = self.remove_temporary(mine_only=False)
        live: set[str] = set()
        for key, record in self.units().items():
            if all((self.root / rel).is_file() for rel in record.outputs):
                live.update(record.outputs)
            else:
                self.forget(key)
        for table in TABLES:
            base = self.root / table
            if not base.is_dir():
                continue
            for path in sorted(base.rglob("*"), reverse=True):
                if path.is_file() and path.relative_to(self.root).as_posix() not in live:
                    path.unlink()
                    removed += 1
                elif path.is_dir() and not any(path.iterdir()):
                    path.rmdir()
        return removed

    def forget(self, key: str) -> None:
        """Remove a unit's record (its files become unnamed: the sweep would remove them)."""
        path = self._record_path(key)
        if path.exists():
            path.unlink()
            fsync_dir(path.parent)

    # ------------------------------------------------------------------ units
    def commit(
        self,
        key: str,
        fingerprint: str,
        name: str,
        home: tuple[str | None, date],
        tables: dict[str, pl.DataFrame],
        inputs: list[str],
    ) -> UnitRecord:
        """Put a unit's rows in place and record them (see the module docstring for the order);
        a table without rows gets an empty file in the unit's own partition (`home`), so that every
        table of a dataset can be read, with its columns, as soon as one unit is in place."""
        old = self.units().get(key)
        self.forget(key)
        outputs: list[str] = []
        rows: dict[str, int] = {}
        for table, frame in tables.items():
            rows[table] = frame.height
            for (db, day), part in _partitions(frame, home):
                target = self.root / table / _partition_dir(db, day) / f"{name}.parquet"
                self.put_file(target, table, part)
                outputs.append(target.relative_to(self.root).as_posix())
        for stale in set(old.outputs if old else ()) - set(outputs):
            (self.root / stale).unlink(missing_ok=True)
        record = UnitRecord(key, fingerprint, tuple(outputs), rows, tuple(inputs), datetime.now(UTC).isoformat())
        self.put_record(record)
        return record

    def put_file(self, target: Path, table: str, frame: pl.DataFrame) -> None:
        """Write one partition file of `table` (its stored columns, this version in its metadata) atomically."""
        stored = frame.select(FILE_SCHEMAS[table].names())
        metadata = {"dgtrace.schema_version": str(SCHEMA_VERSION), "dgtrace.table": table}
        self.write_atomic(target, functools.partial(_write_parquet, stored, metadata))

    def put_record(self, record: UnitRecord) -> None:
        """Write a unit's record (atomically): its files are in place."""
        self.write_json(self._record_path(record.key), record.to_json())

    def retire(self, record: UnitRecord) -> None:
        """Remove a unit that the plan no longer has: its record first, then its files."""
        self.forget(record.key)
        for rel in record.outputs:
            (self.root / rel).unlink(missing_ok=True)


def _write_parquet(frame: pl.DataFrame, metadata: dict[str, str], path: Path) -> None:
    frame.write_parquet(path, compression="zstd", metadata=metadata)


def _partition_dir(db: str | None, day: date) -> str:
    return f"primary_db={NULL_PARTITION if db is None else safe_name(db)}/day={day.isoformat()}"


def _partitions(
    frame: pl.DataFrame, home: tuple[str | None, date]
) -> list[tuple[tuple[str | None, date], pl.DataFrame]]:
    """The frame cut by its partition columns (an empty frame: one empty part, at `home`)."""
    if frame.height == 0:
        return [(home, frame)]
    parts = frame.partition_by(list(PARTITIONS), as_dict=True, maintain_order=True)
    keyed = [((None if db is None else str(db), day), part) for (db, day), part in parts.items()]
    return sorted(keyed, key=lambda item: (item[0][0] or "", item[0][1]))
