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
import errno
import fcntl
import functools
import json
import os
import posixpath
import re
import shutil
import socket
import stat
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, date, datetime
from pathlib import Path, PurePosixPath
from typing import Any, BinaryIO

import polars as pl

from analyzer.base import safefs
from analyzer.base.errors import AnalyzerError, ExitCode, UnsafeLocation, UsageError
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


def fsync_dir(path: Path | int) -> None:
    """Make a rename or removal in `path` (a path, or an open folder's descriptor) durable."""
    if isinstance(path, int):
        os.fsync(path)
        return
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


#: a partition file as a unit record names it: within the dataset, in a table's hive layout
_OUTPUT = re.compile(
    r"(?P<table>[a-z_]+)/primary_db=[A-Za-z0-9._+%-]+/day=\d{4}-\d{2}-\d{2}/[A-Za-z0-9._+%-]+\.parquet"
)


def confined(rel: str) -> bool:
    """Whether a path read from a unit record names a partition file inside the dataset (no absolute
    path, no `..`, no other folder): a record naming anything else is not one dgtrace wrote."""
    found = _OUTPUT.fullmatch(rel)
    return found is not None and found["table"] in TABLES and ".." not in rel.split("/")


class Dataset:
    """A batch dataset directory (see the module docstring).

    While `locked`, every file is created, renamed and removed relative to descriptors of the
    dataset's folders, opened without following links and checked to be this user's or root's and
    not writable by others (`analyzer.base.safefs`; docs/security.md); a dataset folder another
    user controls is refused (`UnsafeLocation`, exit code 8) before anything is read or written.
    """

    def __init__(self, root: Path) -> None:
        self.root = root
        self.meta = root / META
        self.tmp = self.meta / "tmp"
        self.units_dir = self.meta / "units"
        self._lock_fd: int | None = None
        #: descriptors of the root, META, tmp/ and units/ while locked
        self._fds: dict[str, int] = {}

    # ------------------------------------------------------------------ lock
    @contextlib.contextmanager
    def locked(self) -> Iterator[None]:
        """Hold the dataset's lock (released by the kernel if this process dies).

        Raises:
            DatasetBusy: another run holds it.
            UnsafeLocation: the dataset, or a folder or the lock in it, is one another user controls.
        """
        what = f"the dataset {self.root}"
        try:
            parent = safefs.open_folder(self.root.parent)
        except (FileNotFoundError, NotADirectoryError):
            missing = f"cannot write the dataset {self.root}: the folder {self.root.parent} does not exist"
            raise UsageError(missing) from None
        try:
            self._fds["root"] = safefs.child_folder(parent, self.root.name or ".", str(self.root), what)
            self._fds["meta"] = safefs.child_folder(self._fds["root"], META, str(self.meta), what)
            self._fds["tmp"] = safefs.child_folder(self._fds["meta"], "tmp", str(self.tmp), what)
            self._fds["units"] = safefs.child_folder(self._fds["meta"], "units", str(self.units_dir), what)
            fd = self._open_lock()
        except BaseException:
            self._close()
            raise
        finally:
            os.close(parent)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 400, 0).decode("utf-8", "replace").strip() or "another process"
            os.close(fd)
            self._close()
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
            self._close()

    def _open_lock(self) -> int:
        flags = os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK
        try:
            fd = os.open("lock", flags, 0o644, dir_fd=self._fds["meta"])
        except OSError as err:
            if err.errno != errno.ELOOP:
                raise
            raise UnsafeLocation(
                f"refusing to write the dataset {self.root}: {self.meta / 'lock'} is a symbolic link;"
                " dgtrace follows no link in a dataset"
            ) from None
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or not safefs.trusted(info.st_uid):
            os.close(fd)
            raise UnsafeLocation(
                f"refusing to write the dataset {self.root}: {self.meta / 'lock'} is not a regular file of this user"
            )
        return fd

    def _close(self) -> None:
        for fd in self._fds.values():
            os.close(fd)
        self._fds.clear()

    def _fd(self, name: str) -> int:
        if name not in self._fds:
            raise RuntimeError("the dataset is written only while locked")  # a bug of ours
        return self._fds[name]

    @contextlib.contextmanager
    def _folder(self, rel: PurePosixPath, *, create: bool) -> Iterator[int]:
        """The folder `rel` inside the dataset, each step a real folder of this user (created when `create`)."""
        fd = safefs.descend(self._fd("root"), rel.parts, str(self.root), f"the dataset {self.root}", create=create)
        try:
            yield fd
        finally:
            os.close(fd)

    # ------------------------------------------------------------------ files
    def write_atomic(self, target: Path, write: Callable[[BinaryIO], None]) -> None:
        """Write `target` (inside the dataset) through a temporary file in tmp/: flushed, renamed over
        it (relative to the folders' descriptors), the rename flushed."""
        rel = PurePosixPath(target.relative_to(self.root).as_posix())
        tmp = self._fd("tmp")
        handle, part = safefs.create_exclusive(tmp, f"{os.getpid()}-", target.suffix, 0o644)
        try:
            with os.fdopen(handle, "wb") as out:
                write(out)
                out.flush()
                os.fsync(out.fileno())
            with self._folder(rel.parent, create=True) as folder:
                os.replace(part, rel.name, src_dir_fd=tmp, dst_dir_fd=folder)
                fsync_dir(folder)
        finally:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(part, dir_fd=tmp)

    def write_json(self, target: Path, document: Any) -> None:
        text = json.dumps(document, indent=1, sort_keys=True) + "\n"

        def write(out: BinaryIO) -> None:
            out.write(text.encode("utf-8"))

        self.write_atomic(target, write)

    def remove_temporary(self, *, mine_only: bool) -> int:
        """Remove the files being written (this process's only, or all: the sweep)."""
        removed = 0
        prefix = f"{os.getpid()}-"
        tmp = self._fd("tmp")
        for entry in list(os.scandir(tmp)):
            if not mine_only or entry.name.startswith(prefix):
                if entry.is_dir(follow_symlinks=False):
                    shutil.rmtree(entry.name, dir_fd=tmp)  # never follows a link inside
                else:
                    os.unlink(entry.name, dir_fd=tmp)
                removed += 1
        return removed

    # ------------------------------------------------------------------ metadata
    def read_json(self, name: str) -> Any:
        if "meta" not in self._fds:  # reading a dataset (`dgtrace report`): nothing is written
            path = self.meta / name
            return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else None
        return _load(self._fds["meta"], name)

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
        """The unit records; one that cannot be read, or that names a file outside the dataset's
        layout (`confined`), is not one dgtrace wrote: it is removed (and its unit runs again)."""
        with contextlib.ExitStack() as stack:
            if "units" in self._fds:
                folder = self._fds["units"]
            elif self.units_dir.is_dir():  # reading only
                folder = os.open(self.units_dir, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
                stack.callback(os.close, folder)
            else:
                return {}
            records = {}
            for name in sorted(e.name for e in os.scandir(folder) if e.name.endswith(".json")):
                try:
                    record = UnitRecord.from_json(_load(folder, name))
                    if not all(isinstance(rel, str) and confined(rel) for rel in record.outputs):
                        raise ValueError("a file outside the dataset")
                except (ValueError, KeyError, TypeError, AttributeError, UnsafeLocation):
                    os.unlink(name, dir_fd=folder)  # written atomically, so never half: foreign; run the unit again
                    continue
                records[record.key] = record
            return records

    def _record_name(self, key: str) -> str:
        return f"{safe_name(key)}.json"

    def _record_path(self, key: str) -> Path:
        return self.units_dir / self._record_name(key)

    # ------------------------------------------------------------------ sweep
    def sweep(self) -> int:
        """Remove temporary files, unit records whose files are missing, and every partition file
        no unit record names (left by a run that was killed); returns the files removed. Links in
        the dataset are removed as names, never followed."""
        removed = self.remove_temporary(mine_only=False)
        live: set[str] = set()
        for key, record in self.units().items():
            if all(self._is_file(rel) for rel in record.outputs):
                live.update(record.outputs)
            else:
                self.forget(key)
        root = self._fd("root")
        for table in TABLES:
            try:
                info = os.stat(table, dir_fd=root, follow_symlinks=False)
            except FileNotFoundError:
                continue
            if not stat.S_ISDIR(info.st_mode):
                raise UnsafeLocation(
                    f"refusing to write the dataset {self.root}: {self.root / table} is not a folder"
                    " (a symbolic link?); dgtrace follows no link in a dataset"
                )
            with self._folder(PurePosixPath(table), create=False) as top:
                for here, dirs, files, fd in os.fwalk(".", topdown=False, follow_symlinks=False, dir_fd=top):
                    for name in [*files, *dirs]:
                        rel = posixpath.normpath(posixpath.join(table, here, name))
                        kind = os.stat(name, dir_fd=fd, follow_symlinks=False).st_mode
                        if stat.S_ISDIR(kind):
                            with contextlib.suppress(OSError):  # removed when empty
                                os.rmdir(name, dir_fd=fd)
                        elif rel not in live or not stat.S_ISREG(kind):
                            os.unlink(name, dir_fd=fd)
                            removed += 1
        return removed

    def _is_file(self, rel: str) -> bool:
        """Whether the partition file `rel` is a regular file in place (no link on the way)."""
        path = PurePosixPath(rel)
        try:
            with self._folder(path.parent, create=False) as folder:
                return stat.S_ISREG(os.stat(path.name, dir_fd=folder, follow_symlinks=False).st_mode)
        except (FileNotFoundError, UnsafeLocation):
            return False

    def _unlink(self, rel: str) -> None:
        """Remove the partition file `rel` (confined to the dataset; a missing one is fine)."""
        path = PurePosixPath(rel)
        if not confined(rel):
            return
        try:
            with self._folder(path.parent, create=False) as folder:
                os.unlink(path.name, dir_fd=folder)
        except (FileNotFoundError, UnsafeLocation):
            pass

    def forget(self, key: str) -> None:
        """Remove a unit's record (its files become unnamed: the sweep would remove them)."""
        units = self._fd("units")
        try:
            os.unlink(self._record_name(key), dir_fd=units)
        except FileNotFoundError:
            return
        fsync_dir(units)

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
            self._unlink(stale)
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
            self._unlink(rel)


def _write_parquet(frame: pl.DataFrame, metadata: dict[str, str], out: BinaryIO) -> None:
    frame.write_parquet(out, compression="zstd", metadata=metadata)


def _load(folder: int, name: str) -> Any:
    """The JSON document `name` in the folder at `folder` (never through a link), None when missing."""
    fd = safefs.open_file(folder, name)
    if fd is None:
        return None
    with os.fdopen(fd, "rb") as handle:
        return json.loads(handle.read().decode("utf-8"))


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
