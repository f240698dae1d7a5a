"""The first step of every run, under the lock: what a killed run left is removed, and every file of
the dataset is checked against the manifest; a unit whose files are damaged or missing is removed,
so that the plan runs it again from its inputs.

The tables are walked once (`os.fwalk`, no link followed; a link is removed as a name). A file no
unit record names was left by a run that was killed: removed. A file a record names is compared
with what the record says was written (`manifest.FileSum`): its size at every run (the walk's
`stat`, which costs nothing more), and its SHA-256 when its modification time differs, or for
every file with `dgtrace batch --verify`. A file whose time changed but whose content is what was
written is kept, its new time recorded. A record of a release that kept no sums has each file's
Parquet framing checked (a file cut short has lost its footer) and its sums recorded.
"""

from __future__ import annotations

import contextlib
import os
import posixpath
import stat
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import PurePosixPath

from analyzer.base.errors import UnsafeLocation
from analyzer.batch.manifest import FileSum, UnitRecord, digest_of, parquet_footer
from analyzer.batch.schemas import TABLES
from analyzer.batch.store import Dataset

_READ = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK


@dataclass(frozen=True)
class Damage:
    """A unit whose files are not what was written: the first file found wrong, and how."""

    record: UnitRecord
    file: str
    problem: str


@dataclass
class Swept:
    """What the sweep removed and checked."""

    #: files a killed run left (in tmp/, and partition files no record names)
    removed: int = 0
    #: partition files compared with their records, files hashed and their bytes
    checked: int = 0
    hashed: int = 0
    hashed_bytes: int = 0
    #: units removed because a file of theirs is missing or damaged
    damaged: list[Damage] = field(default_factory=list)


def sweep(dataset: Dataset, *, verify: bool = False) -> Swept:
    """Empty tmp/, remove the partition files no unit record names, check the named ones (hash them
    all when `verify`), and remove the units whose files are missing or damaged (their records
    first). Links in the dataset are removed as names, never followed."""
    swept = Swept(removed=dataset.remove_temporary(mine_only=False))
    records = dataset.units()
    owner = {rel: key for key, record in records.items() for rel in record.outputs}
    problems: dict[str, tuple[str, str]] = {}
    sums: dict[str, FileSum] = {}

    def look(rel: str, info: os.stat_result, folder: int, name: str) -> None:
        record = records[owner[rel]]
        written = record.sums.get(rel)

        def digest() -> str:
            swept.hashed += 1
            swept.hashed_bytes += info.st_size
            return _digest(folder, name, info.st_size)

        if written is None:  # a record of a release that kept no sums
            problem = _framing(folder, name, info) if stat.S_ISREG(info.st_mode) else "not a regular file"
            fresh = None if problem else FileSum(info.st_size, info.st_mtime_ns, digest())
        else:
            problem = written.problem(info, digest, full=verify)
            same = info.st_mtime_ns == written.mtime_ns
            fresh = None if problem else written if same else replace(written, mtime_ns=info.st_mtime_ns)
        swept.checked += 1
        if problem is not None:
            problems.setdefault(record.key, (rel, problem))
        elif fresh is not None:
            sums[rel] = fresh

    swept.removed += _walk(dataset, owner, look)
    for key, record in records.items():
        for rel in record.outputs:
            if rel not in sums and key not in problems:
                problems[key] = (rel, "missing")
    for key, (rel, problem) in sorted(problems.items()):
        dataset.retire(records[key])
        swept.damaged.append(Damage(records[key], rel, problem))
    for key, record in records.items():
        if key not in problems and any(sums[rel] != record.sums.get(rel) for rel in record.outputs):
            dataset.put_record(replace(record, sums={rel: sums[rel] for rel in record.outputs}))
    return swept


def _walk(dataset: Dataset, owner: dict[str, str], look: Callable[[str, os.stat_result, int, str], None]) -> int:
    """Walk every table (bottom up): remove what no record names (and empty folders), `look` at the rest."""
    removed = 0
    occupied = {posixpath.dirname(rel) for rel in owner}  # folders that keep a file: not worth an rmdir
    occupied |= {posixpath.dirname(folder) for folder in occupied}
    with dataset.folder(PurePosixPath(), create=False) as root:
        for table in TABLES:
            try:
                kind = os.stat(table, dir_fd=root, follow_symlinks=False).st_mode
            except FileNotFoundError:
                continue
            if not stat.S_ISDIR(kind):
                raise UnsafeLocation(
                    f"refusing to write the dataset {dataset.root}: {dataset.root / table} is not a folder"
                    " (a symbolic link?); dgtrace follows no link in a dataset"
                )
            with dataset.writing(f"checking {table}/"), dataset.folder(PurePosixPath(table), create=False) as top:
                for here, dirs, files, fd in os.fwalk(".", topdown=False, follow_symlinks=False, dir_fd=top):
                    for name in [*files, *dirs]:
                        rel = posixpath.normpath(posixpath.join(table, here, name))
                        info = os.stat(name, dir_fd=fd, follow_symlinks=False)
                        if stat.S_ISDIR(info.st_mode):
                            if rel not in occupied:
                                with contextlib.suppress(OSError):  # removed when empty
                                    os.rmdir(name, dir_fd=fd)
                        elif rel in owner:
                            look(rel, info, fd, name)  # a link there is damage: its unit is removed, the link as a name
                        else:
                            os.unlink(name, dir_fd=fd)
                            removed += 1
    return removed


def _digest(folder: int, name: str, size: int) -> str:
    fd = os.open(name, _READ, dir_fd=folder)
    try:
        return digest_of(fd, size + 1)
    finally:
        os.close(fd)


def _framing(folder: int, name: str, info: os.stat_result) -> str | None:
    fd = os.open(name, _READ, dir_fd=folder)
    try:
        return parquet_footer(fd, info.st_size)
    finally:
        os.close(fd)
