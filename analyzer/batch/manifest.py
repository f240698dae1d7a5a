"""What the manifest records of each unit whose rows are in place: its files, and the size,
modification time and SHA-256 of each as it was written.

    DIR/_dgtrace/units/<unit>.json   {"key", "fingerprint", "outputs", "files", "rows", "inputs", "written_at"}

A partition file is hashed while it is written (`HashingWriter`: the bytes pass through SHA-256 on
their way to the file, so recording the sum reads nothing again). Each run compares every recorded
file's size and modification time with the file's (one `stat`, made by the sweep's walk anyway)
and hashes only a file whose modification time differs; `dgtrace batch --verify` hashes them all
(`FileSum.problem`). A record written by a release that kept no sums has its files checked as
Parquet (their footer read) and their sums recorded once.
"""

from __future__ import annotations

import hashlib
import io
import os
import re
import stat
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from analyzer.batch.schemas import TABLES

if TYPE_CHECKING:
    from _typeshed import ReadableBuffer

#: a partition file as a unit record names it: within the dataset, in a table's hive layout
_OUTPUT = re.compile(
    r"(?P<table>[a-z_]+)/primary_db=[A-Za-z0-9._+%-]+/day=\d{4}-\d{2}-\d{2}/[A-Za-z0-9._+%-]+\.parquet"
)
_SHA256 = re.compile("[0-9a-f]{64}")
#: Parquet files begin and end with these four bytes; the footer's length is stored just before the end
PARQUET_MAGIC = b"PAR1"
_HASH_BLOCK = 1 << 20


def confined(rel: str) -> bool:
    """Whether a path read from a unit record names a partition file inside the dataset (no absolute
    path, no `..`, no other folder): a record naming anything else is not one dgtrace wrote."""
    found = _OUTPUT.fullmatch(rel)
    return found is not None and found["table"] in TABLES and ".." not in rel.split("/")


@dataclass(frozen=True)
class FileSum:
    """A partition file as it was written: its size, modification time and SHA-256."""

    bytes: int
    mtime_ns: int
    sha256: str

    def to_json(self) -> dict[str, Any]:
        return {"bytes": self.bytes, "mtime_ns": self.mtime_ns, "sha256": self.sha256}

    @classmethod
    def from_json(cls, data: Any) -> FileSum:
        if not isinstance(data, dict):
            raise TypeError("a file's sums are not an object")
        size, mtime, digest = data["bytes"], data["mtime_ns"], data["sha256"]
        if not (
            _integer(size) and _integer(mtime) and isinstance(digest, str) and re.fullmatch("[0-9a-f]{64}", digest)
        ):
            raise TypeError("a file's sums are not a size, a time and a SHA-256")
        return cls(size, mtime, digest)

    def problem(self, info: os.stat_result, digest: Callable[[], str], *, full: bool) -> str | None:
        """What is wrong with a file of this `stat` (None: it is as written): a size other than the one
        written is damage; its content is hashed (`digest`) when its modification time differs, or
        always (`full`)."""
        if not stat.S_ISREG(info.st_mode):
            return "not a regular file"
        if info.st_size != self.bytes:
            return f"{info.st_size:,} bytes where {self.bytes:,} were written"
        if not full and info.st_mtime_ns == self.mtime_ns:
            return None
        if digest() != self.sha256:
            return "its content is not what was written (its SHA-256 differs)"
        return None


def _integer(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


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
    #: each output's size, modification time and SHA-256 as written (empty in a record of a release that kept none)
    sums: dict[str, FileSum] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "key": self.key,
            "fingerprint": self.fingerprint,
            "outputs": list(self.outputs),
            "files": {rel: s.to_json() for rel, s in sorted(self.sums.items())},
            "rows": self.rows,
            "inputs": list(self.inputs),
            "written_at": self.written_at,
        }

    @classmethod
    def from_json(cls, data: Any) -> UnitRecord:
        """The record of a unit record's JSON.

        Raises:
            ValueError, KeyError, TypeError: not a record dgtrace wrote (a field missing or of another
                type, a file outside the dataset's layout, sums of a file it does not name).
        """
        if not isinstance(data, dict):
            raise TypeError("a unit record is a JSON object")
        key, fingerprint, written = data["key"], data["fingerprint"], data["written_at"]
        outputs, rows, inputs = data["outputs"], data["rows"], data["inputs"]
        files = data.get("files", {})
        if not all(isinstance(v, str) for v in (key, fingerprint, written)):
            raise TypeError("a unit record's key, fingerprint and time are strings")
        if not isinstance(outputs, list) or not all(isinstance(rel, str) and confined(rel) for rel in outputs):
            raise ValueError("a unit record names a file outside the dataset")
        if not isinstance(rows, dict) or not all(isinstance(k, str) and _integer(n) for k, n in rows.items()):
            raise TypeError("a unit record's rows are counts per table")
        if not isinstance(inputs, list) or not all(isinstance(label, str) for label in inputs):
            raise TypeError("a unit record's inputs are labels")
        if not isinstance(files, dict) or not set(files) <= set(outputs):
            raise ValueError("a unit record has sums of a file it does not name")
        sums = {rel: FileSum.from_json(s) for rel, s in files.items()}
        if sums and set(sums) != set(outputs):
            raise ValueError("a unit record has sums of some of its files only")
        return cls(key, fingerprint, tuple(outputs), dict(rows), tuple(inputs), written, sums)


class HashingWriter(io.RawIOBase):
    """A binary writer onto the file open at `fd` that hashes what passes (SHA-256) and keeps the
    operating system's error: polars reports a failed write as its own error, without the errno
    that tells a full disk from a missing permission."""

    def __init__(self, fd: int) -> None:
        super().__init__()
        self.fd = fd
        self.hash = hashlib.sha256()
        self.size = 0
        self.error: OSError | None = None

    def writable(self) -> bool:
        return True

    def write(self, data: ReadableBuffer) -> int:
        view = memoryview(data).cast("B")
        done = 0
        try:
            while done < len(view):
                done += os.write(self.fd, view[done:])
        except OSError as err:
            self.error = err
            raise
        self.hash.update(view)
        self.size += done
        return done

    def sums(self) -> FileSum:
        """The sums of what was written, with the file's modification time (after the last write)."""
        return FileSum(self.size, os.fstat(self.fd).st_mtime_ns, self.hash.hexdigest())


def digest_of(fd: int, size: int = _HASH_BLOCK) -> str:
    """SHA-256 of the file open at `fd`, from its start (the descriptor's offset is not used), read in
    blocks of at most 1 MiB (`size`, the file's expected size, spares zeroing a larger buffer)."""
    digest = hashlib.sha256()
    buffer = bytearray(min(max(size, 4096), _HASH_BLOCK))
    view = memoryview(buffer)
    at = 0
    while n := os.preadv(fd, [view], at):
        digest.update(view[:n])
        at += n
    return digest.hexdigest()


def parquet_footer(fd: int, size: int) -> str | None:
    """What is wrong with the Parquet framing of the file open at `fd` (None: its magic bytes are at
    both ends and its footer's length fits): a file cut short has lost its footer."""
    if size < 12:
        return f"{size:,} bytes: too short for a Parquet file"
    head, tail = os.pread(fd, 4, 0), os.pread(fd, 8, size - 8)
    if head != PARQUET_MAGIC or tail[4:] != PARQUET_MAGIC:
        return "not a whole Parquet file (its end is missing)"
    if int.from_bytes(tail[:4], "little") > size - 12:
        return "not a whole Parquet file (its footer is longer than the file)"
    return None
