"""The dataset on disk: partition files written atomically, the manifest, the lock.

    DIR/<table>/primary_db=<db>/day=<YYYY-MM-DD>/<configuration>.parquet   the rows (hive layout)
    DIR/_dgtrace/dataset.json        schema version, settings, the tables' columns
    DIR/_dgtrace/inputs.json         every input seen: size, modification time, its sources (digest, identity)
    DIR/_dgtrace/units/<unit>.json   every unit whose rows are in place: its fingerprint, its files and their sums
    DIR/_dgtrace/lock                held (flock) by the run writing the dataset
    DIR/_dgtrace/tmp/                files being written, renamed into place once complete

A partition file is live when a unit record names it. A unit's record is removed before its files
are replaced and written again only after they are all in place (each written to `tmp/`, flushed
to disk and renamed), so after a crash at any moment the next run, which first removes every file
no record names (`analyzer.batch.sweep`), sees each unit either whole or not at all, and runs again
those that are not. A write that fails (a full disk, a read-only folder) stops the run with one line
(`OutputError`, exit code 6) and leaves the dataset as a crash would.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import functools
import io
import json
import os
import shutil
import socket
import stat
from collections.abc import Callable, Iterator
from datetime import UTC, date, datetime
from pathlib import Path, PurePosixPath
from typing import Any, BinaryIO

import polars as pl

from analyzer.base import safefs
from analyzer.base.errors import AnalyzerError, ExitCode, OutputError, UnsafeLocation, UsageError
from analyzer.batch.manifest import FileSum, HashingWriter, UnitRecord, confined
from analyzer.batch.plan import safe_name
from analyzer.batch.schemas import FILE_SCHEMAS, MIGRATES_FROM, PARTITIONS, SCHEMA_VERSION

META = "_dgtrace"
#: the value hive readers (polars, DuckDB, pyarrow, Spark) read as null
NULL_PARTITION = "__HIVE_DEFAULT_PARTITION__"
_WRITE_BUFFER = 1 << 20


class DatasetBusy(AnalyzerError):
    """Another run holds the dataset's lock."""

    exit_code = ExitCode.BUSY


class DatasetUnusable(UsageError):
    """A dataset this dgtrace cannot use as it is: another schema version, or a manifest that is not
    one dgtrace wrote (the message says what to do)."""


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
        #: files of the manifest found damaged and put right: (the file in the dataset, what was wrong, what was done)
        self.healed: list[tuple[str, str, str]] = []

    # ------------------------------------------------------------------ lock
    @contextlib.contextmanager
    def locked(self) -> Iterator[None]:
        """Hold the dataset's lock (released by the kernel if this process dies).

        Raises:
            DatasetBusy: another run holds it.
            UnsafeLocation: the dataset, or a folder or the lock in it, is one another user controls.
            OutputError: the dataset's folders cannot be made (no permission, a read-only file system),
                or `root` is a file.
            UsageError: the folder it would be made in does not exist.
        """
        what = f"the dataset {self.root}"
        with self.writing("opening its folders and its lock", started=False):
            try:
                parent = safefs.open_folder(self.root.parent)
            except (FileNotFoundError, NotADirectoryError):
                missing = f"cannot write the dataset {self.root}: the folder {self.root.parent} does not exist"
                raise UsageError(missing) from None
            try:
                self._not_a_file(parent)
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

    def _not_a_file(self, parent: int) -> None:
        """`--out` naming a file (not a link, which `child_folder` refuses as one) is a mistake, not an attack."""
        try:
            kind = os.stat(self.root.name or ".", dir_fd=parent, follow_symlinks=False).st_mode
        except FileNotFoundError:
            return
        if not stat.S_ISDIR(kind) and not stat.S_ISLNK(kind):
            raise OutputError(
                f"cannot write the dataset {self.root}: it is a file, not a folder (--out names the dataset's folder)"
            )

    def _open_lock(self) -> int:
        flags = os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK
        try:
            fd = os.open("lock", flags, 0o644, dir_fd=self._fds["meta"])
        except OSError as err:
            if err.errno not in (errno.ELOOP, errno.EISDIR):
                raise
            kind = "a symbolic link" if err.errno == errno.ELOOP else "a folder"
            raise UnsafeLocation(
                f"refusing to write the dataset {self.root}: {self.meta / 'lock'} is {kind}, not the lock file"
                " dgtrace keeps there; dgtrace follows no link in a dataset and writes only files it made"
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
    def folder(self, rel: PurePosixPath, *, create: bool) -> Iterator[int]:
        """The folder `rel` inside the dataset, each step a real folder of this user (created when `create`)."""
        fd = safefs.descend(self._fd("root"), rel.parts, str(self.root), f"the dataset {self.root}", create=create)
        try:
            yield fd
        finally:
            os.close(fd)

    @contextlib.contextmanager
    def writing(self, doing: str, *, started: bool = True) -> Iterator[None]:
        """An error of the operating system while the dataset is written (a full disk, no permission, a
        read-only file system) as one line naming the dataset and what was being done (exit code 6)."""
        try:
            yield
        except OSError as err:
            reason = err.strerror or str(err)
            after = "; what is in place stays whole and the next run goes on from there" if started else ""
            raise OutputError(f"cannot write the dataset {self.root}: {reason} ({doing}){after}") from None

    # ------------------------------------------------------------------ files
    def write_atomic(self, target: Path, write: Callable[[BinaryIO], None]) -> FileSum:
        """Write `target` (inside the dataset) through a temporary file in tmp/: hashed as it is written,
        flushed, renamed over it (relative to the folders' descriptors), the rename flushed.

        Raises:
            OutputError: it cannot be written (nothing is left of it in tmp/).
        """
        rel = PurePosixPath(target.relative_to(self.root).as_posix())
        tmp = self._fd("tmp")
        with self.writing(f"writing {rel}"):
            handle, part = safefs.create_exclusive(tmp, f"{os.getpid()}-", target.suffix, 0o644)
            try:
                sums = _write_through(handle, write)
                with self.folder(rel.parent, create=True) as folder:
                    os.replace(part, rel.name, src_dir_fd=tmp, dst_dir_fd=folder)
                    fsync_dir(folder)
            finally:
                with contextlib.suppress(OSError):
                    os.unlink(part, dir_fd=tmp)
        return sums

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
        with self.writing("emptying _dgtrace/tmp"):
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
        """A JSON document of `_dgtrace/` (None when missing).

        Raises:
            ValueError: it is not JSON (or not UTF-8).
        """
        if "meta" not in self._fds:  # reading a dataset (`dgtrace report`): nothing is written
            path = self.meta / name
            return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else None
        return _load(self._fds["meta"], name)

    def check_version(self, *, migrating: bool = False) -> int | None:
        """The dataset's schema version (None for a new dataset), when this dgtrace can use it: its
        own, or (`migrating`: `dgtrace batch`, which brings it up to date) one of `MIGRATES_FROM`.
        A `dataset.json` that is not one dgtrace wrote is put right by `dgtrace batch` (`migrating`):
        the version is in every partition file, and the rest is written again at the end of the run.

        Raises:
            DatasetUnusable: a dataset of another version, or (not `migrating`) whose dataset.json is
                damaged (the message says what to do).
        """
        try:
            described = self.read_json("dataset.json")
            if described is not None and not isinstance(described, dict):
                raise ValueError("not a JSON object")
            if described is not None and type(described.get("schema_version")) is not int:
                raise ValueError(f"its schema_version is {described.get('schema_version')!r}")
        except ValueError as err:
            where = self.meta / "dataset.json"
            if not migrating:
                raise DatasetUnusable(
                    f"{where} is not one dgtrace wrote ({_first_line(err)}):"
                    " run dgtrace batch on the dataset to put it right"
                ) from None
            found = self._version_of_files()
            done = "written again at the end of the run" + (
                "" if found is None else f" (schema version {found}, as its files say)"
            )
            self.healed.append((f"{META}/dataset.json", f"not one dgtrace wrote ({_first_line(err)})", done))
            described = None if found is None else {"schema_version": found}
        if described is None:
            return None
        found = described.get("schema_version")
        if found == SCHEMA_VERSION:
            return SCHEMA_VERSION
        if found in MIGRATES_FROM:
            if migrating:
                return int(found)
            raise DatasetUnusable(
                f"{self.root} holds a dataset of schema version {found}; this dgtrace reads version {SCHEMA_VERSION}:"
                f" run dgtrace batch on it once (with its inputs, --out {self.root}) to bring it to version"
                f" {SCHEMA_VERSION} in place: its rows are kept, and inputs it has read are not read again"
            )
        raise DatasetUnusable(
            f"{self.root} holds a dataset of schema version {found}; this dgtrace "
            f"writes version {SCHEMA_VERSION}: write a new dataset with another --out"
        )

    def _version_of_files(self) -> int | None:
        """The schema version its partition files say (in their metadata), from the first unit record
        whose first file says one; None when no file does (a new dataset)."""
        for record in self.units().values():
            for rel in record.outputs[:1]:
                path = PurePosixPath(rel)
                with contextlib.suppress(OSError, ValueError, pl.exceptions.PolarsError, UnsafeLocation):
                    with self.folder(path.parent, create=False) as folder:
                        fd = safefs.open_file(folder, path.name)
                    if fd is not None:
                        with os.fdopen(fd, "rb") as handle:
                            return int(pl.read_parquet_metadata(handle)["dgtrace.schema_version"])
        return None

    def describe(self, settings: dict[str, Any]) -> None:
        """dataset.json: the layout and the settings (rewritten only when they change)."""
        document = {
            "format": "dgtrace batch dataset",
            "schema_version": SCHEMA_VERSION,
            "partitions": list(PARTITIONS),
            "settings": settings,
            "tables": {name: {c: str(t) for c, t in cols.items()} for name, cols in FILE_SCHEMAS.items()},
        }
        try:
            same = self.read_json("dataset.json") == json.loads(json.dumps(document))
        except ValueError:
            same = False
        if not same:
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
                except (ValueError, KeyError, TypeError, AttributeError, UnsafeLocation) as err:
                    if "units" in self._fds:  # written atomically, so never half: foreign; run the unit again
                        with self.writing(f"removing {META}/units/{name}"):
                            os.unlink(name, dir_fd=folder)
                        why = f"not a unit record dgtrace wrote ({_first_line(err)})"
                        self.healed.append((f"{META}/units/{name}", why, "removed: its unit runs again"))
                    continue
                records[record.key] = record
            return records

    def record(self, key: str) -> UnitRecord | None:
        """The record of one unit (None: none, or one that is not a record dgtrace wrote)."""
        try:
            return UnitRecord.from_json(_load(self._fd("units"), self._record_name(key)))
        except (ValueError, KeyError, TypeError, AttributeError, UnsafeLocation):
            return None

    def _record_name(self, key: str) -> str:
        return f"{safe_name(key)}.json"

    def _record_path(self, key: str) -> Path:
        return self.units_dir / self._record_name(key)

    def unlink(self, rel: str) -> None:
        """Remove the partition file `rel` (confined to the dataset; a missing one is fine)."""
        path = PurePosixPath(rel)
        if not confined(rel):
            return
        with self.writing(f"removing {rel}"):
            try:
                with self.folder(path.parent, create=False) as folder:
                    os.unlink(path.name, dir_fd=folder)
            except (FileNotFoundError, UnsafeLocation):
                pass

    def forget(self, key: str) -> None:
        """Remove a unit's record (its files become unnamed: the sweep would remove them)."""
        units = self._fd("units")
        with self.writing(f"removing the record of the unit {key}"):
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
        old = self.record(key)
        self.forget(key)
        sums: dict[str, FileSum] = {}
        rows: dict[str, int] = {}
        for table, frame in tables.items():
            rows[table] = frame.height
            for (db, day), part in _partitions(frame, home):
                target = self.root / table / _partition_dir(db, day) / f"{name}.parquet"
                sums[target.relative_to(self.root).as_posix()] = self.put_file(target, table, part)
        for stale in set(old.outputs if old else ()) - set(sums):
            self.unlink(stale)
        record = UnitRecord(key, fingerprint, tuple(sums), rows, tuple(inputs), datetime.now(UTC).isoformat(), sums)
        self.put_record(record)
        return record

    def put_file(self, target: Path, table: str, frame: pl.DataFrame) -> FileSum:
        """Write one partition file of `table` (its stored columns, this version in its metadata)
        atomically; its size, modification time and SHA-256 as written."""
        stored = frame.select(FILE_SCHEMAS[table].names())
        metadata = {"dgtrace.schema_version": str(SCHEMA_VERSION), "dgtrace.table": table}
        return self.write_atomic(target, functools.partial(_write_parquet, stored, metadata))

    def put_record(self, record: UnitRecord) -> None:
        """Write a unit's record (atomically): its files are in place."""
        self.write_json(self._record_path(record.key), record.to_json())

    def retire(self, record: UnitRecord) -> None:
        """Remove a unit that the plan no longer has: its record first, then its files."""
        self.forget(record.key)
        for rel in record.outputs:
            self.unlink(rel)


def _write_through(fd: int, write: Callable[[BinaryIO], None]) -> FileSum:
    """Run `write` on a buffered writer onto `fd` that hashes what it writes; flush it to disk; the sums.
    The operating system's error is raised as it is (polars wraps it in its own)."""
    raw = HashingWriter(fd)
    try:
        try:
            with io.BufferedWriter(raw, _WRITE_BUFFER) as out:
                write(out)
        except Exception:
            if raw.error is not None:
                raise raw.error from None
            raise
        os.fsync(fd)
        return raw.sums()
    finally:
        os.close(fd)


def _first_line(err: BaseException) -> str:
    return str(err).splitlines()[0][:200] if str(err) else type(err).__name__


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
