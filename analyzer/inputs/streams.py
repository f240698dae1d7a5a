"""Metered byte streams: seekable regions of a file or of the spool, and read pipelines whose
stages (decompression, archive members) check the limits of their input as they produce bytes.
"""

from __future__ import annotations

import bz2
import errno
import io
import lzma
import tempfile
import threading
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import IO, TYPE_CHECKING, Protocol

import zstandard

from analyzer.base.errors import CorruptInput, LimitExceeded
from analyzer.base.spill import check_stop
from analyzer.inputs import decoders
from analyzer.inputs.decoders import GzipReader, LzwReader
from analyzer.inputs.limits import KiB, MiB, Session, Tree, size_text, timed
from analyzer.inputs.skips import CORRUPT_ERRORS, Damaged, cannot_read, corrupt, describe, printable

#: python-isal is there: gzip inputs are inflated by ISA-L (`gzip_reader`)
FAST_GZIP = decoders.FAST_GZIP

if TYPE_CHECKING:
    from _typeshed import WriteableBuffer

#: largest read handed to a decompressor at once: limits are checked at least this often
CHUNK = 1 * MiB
#: bytes copied to the spool at a time (what a stream that breaks while it is copied loses)
_SPOOL_READ = 64 * KiB


class Reader(Protocol):
    """What a pipeline stage reads from: a decompressor, a zip member, a window, a pipe."""

    def read(self, size: int = ..., /) -> bytes: ...
    def close(self) -> object: ...


def open_file(path: Path) -> IO[bytes]:
    """Open a file on disk for reading (the one place that does)."""
    return path.open("rb")


# --- seekable byte ranges ---------------------------------------------------------------------


@dataclass(frozen=True)
class Region:
    """A seekable byte range: a file on disk (`path`) or a slice of the session's spool.

    `damage` says why the range ends early (a truncated archive): reading to its end raises it.
    """

    session: Session
    path: Path | None
    start: int
    length: int
    damage: str | None = None

    def window(self, label: str, cap: int | None = None) -> Window:
        """A new independent reader over the range (`cap`: see Window)."""
        if self.path is None:
            spool = self.session.spool_file()
            lock: threading.Lock | threading.RLock = self.session.lock
            return Window(spool, self.start, self.length, lock, label, cap, owned=False, damage=self.damage)
        file = open_file(self.path)
        return Window(file, self.start, self.length, threading.Lock(), label, cap, owned=True, damage=self.damage)

    def sub(self, offset: int, length: int, damage: str | None = None) -> Region:
        """A range inside this one (a tar member); reading past the real end is an error."""
        return Region(self.session, self.path, self.start + offset, length, damage)


class ByteReader(io.RawIOBase):
    """A raw stream whose subclasses implement `read(size)`; `readinto` is served from it."""

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: WriteableBuffer, /) -> int:
        view = memoryview(buffer).cast("B")
        data = self.read(len(view))
        view[: len(data)] = data
        return len(data)


class Window(ByteReader):
    """A seekable view of `length` bytes of `file` from `start`.

    While an archive's directory or headers are read through it, `cap` refuses any single read
    above the header size limit, before memory is taken for it. When the file ends before the
    range does, the bytes that are there are returned first; the next read raises CorruptInput.
    """

    def __init__(
        self,
        file: IO[bytes],
        start: int,
        length: int,
        lock: threading.Lock | threading.RLock,
        label: str,
        cap: int | None,
        *,
        owned: bool,
        damage: str | None = None,
    ) -> None:
        super().__init__()
        self._file, self._start, self._length, self._lock = file, start, length, lock
        self._label, self._owned, self._pos, self._damage = label, owned, 0, damage
        self.cap = cap

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self._pos

    def seek(self, offset: int, whence: int = io.SEEK_SET, /) -> int:
        base = {io.SEEK_SET: 0, io.SEEK_CUR: self._pos, io.SEEK_END: self._length}[whence]
        if base + offset < 0:
            raise OSError(errno.EINVAL, "negative seek position")
        self._pos = base + offset
        return self._pos

    def read(self, size: int | None = -1, /) -> bytes:
        remaining = max(self._length - self._pos, 0)
        size = remaining if size is None or size < 0 else min(size, remaining)
        if self.cap is not None and size > self.cap:
            raise LimitExceeded(
                f"{self._label}: metadata block of {size_text(size)} over the header size limit ({size_text(self.cap)})"
            )
        if remaining == 0 and self._damage is not None:
            raise Damaged(self._label, self._damage)
        with self._lock:
            self._file.seek(self._start + self._pos)
            data = self._file.read(size)
        self._pos += len(data)
        if size and not data:
            raise Damaged(self._label, f"truncated (data ends {remaining} bytes early)")
        return data

    def close(self) -> None:
        if self._owned and not self.closed:
            self._file.close()
        super().close()


# --- metered read pipelines -------------------------------------------------------------------


@dataclass
class Meter:
    """The limits of one decompression stage (or archive member) of one input; `charged`
    outlives each opening, so a re-read costs no budget."""

    session: Session
    label: str
    tree: Tree
    #: decompressed bytes of this stage already charged to the tree and the run (a re-read is free)
    charged: int = 0
    #: check the stage's own ratio (not for a device or pipe: nothing compressed there)
    ratio: bool = True

    def check(self, produced: int, consumed: int) -> None:
        """Raise LimitExceeded when the stage has gone over its ratio, InputStopped when the
        input or the run has gone over its budget."""
        limits = self.session.limits
        if self.ratio and produced > limits.ratio_grace_bytes and produced > limits.max_ratio * max(consumed, 1):
            raise LimitExceeded(
                f"{self.label}: compression ratio over the limit ({limits.max_ratio:g}:1), "
                f"{size_text(produced)} from {size_text(consumed)}"
            )
        if produced > self.charged:
            count, self.charged = produced - self.charged, produced
            self.tree.charge(count, self.label)


class Layer(ByteReader):
    """One stage of a read pipeline: bounded reads of `inner`, limits checked, errors wrapped,
    the time spent charged to the input's tree."""

    def __init__(
        self,
        inner: Reader,
        label: str,
        *,
        meter: Meter | None = None,
        consumed: Callable[[], int] = lambda: 0,
        below: Layer | None = None,
        tree: Tree | None = None,
    ) -> None:
        super().__init__()
        self._inner, self._label, self._meter = inner, label, meter
        #: one decoder call a read (`read1`, where the stage has it): a read that gathers several
        #: calls loses them all when the last one fails
        self._read: Callable[[int], bytes] = getattr(inner, "read1", None) or inner.read
        self._consumed, self._below = consumed, below
        self._tree = tree if tree is not None else meter.tree if meter is not None else None
        #: bytes this stage has produced so far
        self.pos = 0

    def read(self, size: int | None = -1, /) -> bytes:
        if size is None or size < 0:
            return self.readall()
        data = guarded_read(self._read, min(size, CHUNK), self._label, self._tree)
        self.pos += len(data)
        if self._meter is not None:
            self._meter.check(self.pos, self._consumed())
        return data

    def readall(self) -> bytes:
        parts = []
        while data := self.read(CHUNK):
            parts.append(data)
        return b"".join(parts)

    def close(self) -> None:
        if not self.closed:
            try:
                self._inner.close()
            finally:
                if self._below is not None:
                    self._below.close()
        super().close()


class Whole(io.BufferedIOBase):
    """The top of a read pipeline as a binary file: each read served by at most one read of the stage
    below (of at least `size` bytes), so that an error never takes back bytes already decoded
    (`io.BufferedReader` gathers several reads into one and loses them all when the last fails): the
    bytes before the damage are returned, the error on the next read."""

    def __init__(self, raw: Reader, size: int) -> None:
        super().__init__()
        self._raw, self._size = raw, size
        self._left: memoryview = memoryview(b"")

    def readable(self) -> bool:
        return True

    def read(self, size: int | None = -1, /) -> bytes:
        if size is None or size < 0:
            parts = []
            while data := self.read(self._size):
                parts.append(data)
            return b"".join(parts)
        if not self._left:
            self._left = memoryview(self._raw.read(max(size, self._size)))
        data = bytes(self._left[:size])
        self._left = self._left[size:]
        return data

    read1 = read

    def readinto(self, buffer: WriteableBuffer, /) -> int:
        view = memoryview(buffer).cast("B")
        data = self.read(len(view))
        view[: len(data)] = data
        return len(data)

    readinto1 = readinto

    def close(self) -> None:
        if not self.closed:
            self._raw.close()
        super().close()


def guarded_read(read: Callable[[int], bytes], size: int, label: str, tree: Tree | None) -> bytes:
    """At most `size` bytes of a stream (`read`: its read method): the time spent charged to `tree`, a
    stopped input or a stop signal raised first, decoder and OS errors raised as CorruptInput naming `label`."""
    if tree is not None:
        tree.check()
    else:
        check_stop()
    try:
        with timed(tree, label):
            return read(size)
    except CORRUPT_ERRORS as exc:
        raise corrupt(label, exc) from exc


def read_up_to(stream: Reader, size: int) -> bytes:
    """The first `size` bytes of a stream (fewer at its end, or where it breaks once some were read:
    the next read raises the error again), however few each read returns."""
    parts: list[bytes] = []
    got = 0
    while got < size:
        try:
            data = stream.read(size - got)
        except CorruptInput:
            if not parts:
                raise
            break
        if not data:
            break
        parts.append(data)
        got += len(data)
    return b"".join(parts)


def _xz_reader(source: Layer) -> Reader:
    return lzma.LZMAFile(io.BufferedReader(source))


def _zstd_reader(source: Layer) -> Reader:
    buffered = io.BufferedReader(source)
    return zstandard.ZstdDecompressor().stream_reader(buffered, read_across_frames=True, closefd=True)


def gzip_reader(source: Layer, label: str, *, fast: bool = True) -> Reader:
    """A gzip stream's bytes (every member): through python-isal's inflater when it is installed (the
    `fast-gzip` extra: ISA-L inflates about three times as fast as zlib, the same bytes) and `fast`,
    else through the standard library's; every byte that decodes before damage is given (`decoders`)."""
    return GzipReader(source, label, fast=fast)


#: single-stream compression wrappers, by file suffix (`.Z`: Unix compress, the `lzw` extra)
_DECOMPRESSORS: dict[str, Callable[[Layer, str], Reader]] = {
    ".gz": gzip_reader,
    ".bz2": lambda source, _: bz2.BZ2File(source),
    ".xz": lambda source, _: _xz_reader(source),
    ".zst": lambda source, _: _zstd_reader(source),
    ".Z": LzwReader,
}
COMPRESSION_SUFFIXES = tuple(_DECOMPRESSORS)


def decompressing(below: Layer, suffix: str, meter: Meter) -> Layer:
    """A stage that decompresses `below` (suffix `.gz`, `.bz2`, `.xz`, `.zst` or `.Z`)."""
    inner = _DECOMPRESSORS[suffix](below, meter.label)
    return Layer(inner, meter.label, meter=meter, consumed=lambda: below.pos, below=below)


# --- things to read ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Member:
    """Something to read: a file, or an archive member (its bytes as stored, before any suffix)."""

    label: str
    name: str
    open: Callable[[], Layer]
    #: where the bytes sit when they can be read in place (a file, a tar member, a spooled copy)
    region: Region | None
    #: the input this member belongs to
    tree: Tree
    #: bytes as stored, when known and not in `region` (a compressed zip member): small ones are read in batches
    stored: int | None = None


#: the reason not to read a member with this name, or None to read it
Classifier = Callable[[str], str | None]


def member_label(archive: str, name: str) -> str:
    """The label of an archive member: `upload.zip!node1.zip!path/in/archive`."""
    return f"{archive}!{printable(name)}"


class Labels:
    """Member labels of one archive, made unique: a second member whose name prints the same
    (the same name twice, or names that differ only in unprintable characters) gets ` [2]`."""

    def __init__(self, archive: str) -> None:
        self.archive = archive
        self._seen: dict[str, int] = {}

    def __call__(self, name: str) -> str:
        label = member_label(self.archive, name)
        count = self._seen.get(label, 0) + 1
        self._seen[label] = count
        return label if count == 1 else f"{label} [{count}]"


def region_member(region: Region, label: str, name: str, tree: Tree) -> Member:
    """A member whose bytes can be read in place: a tar member, or a copy in the spool (whose
    bytes were charged when they were decompressed). Its reading time is charged to the tree."""
    return Member(label, name, partial(_open_region, region, label, tree), region, tree)


def _open_region(region: Region, label: str, tree: Tree) -> Layer:
    return Layer(region.window(label), label, tree=tree)


def file_member(session: Session, path: Path, label: str, size: int) -> Member:
    """A file on disk to read: an input of its own, whose tree has its size on disk."""
    tree = Tree(session, label, size)
    return Member(label, path.name, partial(_open_file, path, label, tree), Region(session, path, 0, size), tree)


def _open_file(path: Path, label: str, tree: Tree) -> Layer:
    tree.check()
    try:
        return Layer(open_file(path), label, tree=tree)
    except OSError as exc:
        raise cannot_read(label, exc) from exc


# --- the spool ------------------------------------------------------------------------------


def spool(session: Session, stream: Reader, label: str, tree: Tree, *, keep_partial: bool = False) -> Region:
    """Copy a stream into the session's spool (`limits.Session.spool_file`).

    With `keep_partial`, a stream that breaks (corrupt or truncated data) leaves what was
    copied as a region whose end raises the error; otherwise a failure leaves the spool as
    it was.

    Raises:
        LimitExceeded: the spool limit, or the bytes left in the budgets, are exceeded.
        CorruptInput: the stream broke (without `keep_partial`).
    """
    with session.lock:
        file = session.spool_file()
        start = file.seek(0, io.SEEK_END)
        size = 0
        room = min(session.limits.max_spool_bytes - session.spooled, session.remaining(), tree.remaining_bytes())
        try:
            while chunk := guarded_read(stream.read, _SPOOL_READ, label, tree):
                size += len(chunk)
                if size > room:
                    raise LimitExceeded(f"{label}: temporary spool over the limit ({_room_text(session, tree)})")
                _append(file, chunk, label)
        except CorruptInput as exc:
            if not keep_partial:
                file.truncate(start)
                raise
            session.spooled += size
            return Region(session, None, start, size, damage=exc.reason if isinstance(exc, Damaged) else str(exc))
        except BaseException:
            file.truncate(start)
            raise
        session.spooled += size
    return Region(session, None, start, size)


def _append(file: IO[bytes], chunk: bytes, label: str) -> None:
    file.seek(0, io.SEEK_END)  # reading a nested stream may have moved it
    try:
        file.write(chunk)
    except OSError as exc:
        where = tempfile.gettempdir()
        raise LimitExceeded(f"{label}: cannot copy it to the temporary folder {where} ({describe(exc)})") from exc


def _room_text(session: Session, tree: Tree) -> str:
    limits = session.limits
    if limits.max_spool_bytes <= min(session.remaining(), tree.remaining_bytes()):
        return size_text(limits.max_spool_bytes)
    return "bytes left in the decompressed-bytes budget"
