"""Bounded byte streams for uploads: decompression stages, zip and tar listing, limits, spool.

Every input (a file or device named by the user, or a file found in a folder) is a `Tree`: the
file and everything nested in it. Its limits hold for the whole tree, across all nesting levels:
the bytes every decompression stage and archive member produce (against `max_ratio` times the
input's size on disk, and against `max_total_bytes` for the whole run), the members listed, the
depth, and the seconds spent reading it. Each stage of each member also keeps its own ratio.
"""

from __future__ import annotations

import bz2
import dataclasses
import errno
import gzip
import io
import itertools
import lzma
import stat
import struct
import tarfile
import tempfile
import threading
import time
import weakref
import zipfile
import zlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import IO, TYPE_CHECKING, Protocol, Self

import zstandard

from analyzer.errors import CorruptInput, LimitExceeded, UsageError
from analyzer.spill import check_stop

if TYPE_CHECKING:
    from _typeshed import WriteableBuffer

KiB, MiB, GiB = 1024, 1024**2, 1024**3
#: largest read handed to a decompressor at once: limits are checked at least this often
CHUNK = 1 * MiB
#: bytes copied to the spool at a time (what a stream that breaks while it is copied loses)
_SPOOL_READ = 64 * KiB
#: compressed bytes read at a time when a damaged zip's members are recovered
_SALVAGE_READ = 64 * KiB

#: what the standard library and zstandard raise on corrupt, truncated or unreadable data
#: (zipfile raises NotImplementedError for a "version needed" or feature it does not know)
CORRUPT_ERRORS: tuple[type[Exception], ...] = (
    OSError,
    EOFError,
    ValueError,
    NotImplementedError,
    struct.error,
    zlib.error,
    lzma.LZMAError,
    zipfile.BadZipFile,
    tarfile.TarError,
    zstandard.ZstdError,
)
#: the same, and our own wrapping of them
_BROKEN: tuple[type[Exception], ...] = (*CORRUPT_ERRORS, CorruptInput)
_ZIP_METHODS = {zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED, zipfile.ZIP_BZIP2, zipfile.ZIP_LZMA}
_ZIP_ENCRYPTED = 0x01 | 0x40  # traditional PKWARE or strong encryption
_ZIP_DESCRIPTOR = 0x08  # sizes and CRC follow the data instead of sitting in the local header
_ZIP_PATCHED = 0x20  # "compressed patched data": zipfile cannot read it
_ZIP_UTF8 = 0x800
_LOCAL = b"PK\x03\x04"
_CENTRAL = b"PK\x01\x02"
_END = b"PK\x05\x06"
_LOCAL_HEADER = struct.Struct("<4sHHHHHIIIHH")
_TAR_HEADER_TYPES = {
    tarfile.GNUTYPE_LONGNAME,
    tarfile.GNUTYPE_LONGLINK,
    tarfile.XHDTYPE,
    tarfile.XGLTYPE,
    tarfile.SOLARIS_XHDTYPE,
}


@dataclass(frozen=True)
class Limits:
    """Safety limits against hostile uploads; every one can be raised from the command line."""

    #: decompressed bytes over the whole run (every decompression stage and archive member counts,
    #: and so do devices and pipes read with `read_special`)
    max_total_bytes: int = 64 * GiB
    #: decompressed / compressed bytes of one stage of one member, and of a whole input: the bytes
    #: produced at every nesting level of a file, against its size on disk
    max_ratio: float = 1000.0
    #: the ratios are only checked once a stage (or an input) has produced this much
    ratio_grace_bytes: int = 1 * MiB
    #: archive and compression layers between a file on disk and a trace (upload.zip!n.zip!x.gz = 3)
    max_depth: int = 8
    #: archive members over the whole run
    max_members: int = 100_000
    #: temporary copies of nested archives and of members of compressed tarballs
    max_spool_bytes: int = 16 * GiB
    #: part of the spool held in memory before it moves to an anonymous temporary file
    spool_memory_bytes: int = 64 * MiB
    #: one metadata block read into memory: a zip central directory, a tar long-name or pax header
    max_header_bytes: int = 32 * MiB
    #: seconds spent on one input: listing and reading a file with everything nested in it, the
    #: walk of a folder or a glob, or waiting for a pipe's data
    max_seconds_per_input: float = 600.0
    #: read devices, FIFOs and sockets named on the command line (else they are skipped)
    read_special: bool = False

    def __post_init__(self) -> None:
        for item in dataclasses.fields(self):
            value = getattr(self, item.name)
            if not isinstance(value, bool) and not value > 0:
                raise UsageError(f"limit {item.name} must be positive, got {value}")


@dataclass(frozen=True)
class Skipped:
    """An input found but not read (a folder entry, an archive member, a whole archive), and why."""

    label: str
    reason: str
    #: content was lost (limit, corruption, encryption, permission): the run is only partial
    partial: bool = False


class InputStopped(LimitExceeded):
    """A limit of a whole input (its bytes, its ratio, its time; the run's bytes or members):
    nothing more of that input is listed or read."""


class _Reader(Protocol):
    def read(self, size: int = ..., /) -> bytes: ...
    def close(self) -> object: ...


def size_text(count: float) -> str:
    """Bytes for messages: 64 GiB, 1.5 MiB, 512 bytes."""
    for unit, name in ((GiB, "GiB"), (MiB, "MiB"), (KiB, "KiB")):
        if count >= unit:
            return f"{count / unit:.4g} {name}"
    return f"{count:g} bytes"


def printable(text: str) -> str:
    """A label safe to print: control and undecodable characters escaped."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


def describe(exc: BaseException) -> str:
    """One line saying what a decoder or the OS complained about."""
    text = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
    return " ".join((text or type(exc).__name__).split())


def reason_of(exc: Exception, label: str) -> str:
    """An exception's message as a skip reason for `label` (without repeating the label)."""
    return str(exc).removeprefix(f"{label}: ")


class Damaged(CorruptInput):
    """CorruptInput that also keeps its reason without the label (to say it of another member)."""

    def __init__(self, label: str, reason: str) -> None:
        super().__init__(f"{label}: {reason}")
        self.reason = reason


def corrupt(label: str, exc: BaseException) -> CorruptInput:
    """The documented exception for data that cannot be decoded or read."""
    return Damaged(label, f"corrupt, truncated or unreadable data ({describe(exc)})")


def open_file(path: Path) -> IO[bytes]:
    """Open a file on disk for reading (the one place that does)."""
    return path.open("rb")


def _close_all(resources: list[_Reader]) -> None:
    for resource in reversed(resources):
        resource.close()


# --- magic bytes ------------------------------------------------------------------------------

#: bytes enough to recognise every format below (a tar header is 512 bytes)
MAGIC_BYTES = 512
#: single-stream compressions: first bytes -> the suffix that names them
_COMPRESSION_MAGIC = (
    (b"\x1f\x8b", ".gz"),
    (b"BZh", ".bz2"),
    (b"\xfd7zXZ\x00", ".xz"),
    (b"\x28\xb5\x2f\xfd", ".zst"),
)


def compression_of(head: bytes) -> str | None:
    """The compression suffix (`.gz .bz2 .xz .zst`) the first bytes announce, else None."""
    for magic, suffix in _COMPRESSION_MAGIC:
        if head.startswith(magic) and (suffix != ".bz2" or head[3:4].isdigit()):
            return suffix
    return None


def archive_of(head: bytes) -> str | None:
    """ "zip" or "tar" when the first bytes are a zip local header (or an empty zip) or a valid
    tar header (ustar magic or a correct header checksum), else None."""
    if head.startswith((_LOCAL, _END, b"PK\x07\x08PK\x03\x04")):
        return "zip"
    if len(head) >= 512 and (head[257:262] == b"ustar" or _tar_checksum_ok(head[:512])):
        return "tar"
    return None


def _tar_checksum_ok(block: bytes) -> bool:
    try:
        stored = int(block[148:156].replace(b"\x00", b" ").strip() or b"-1", 8)
    except ValueError:
        return False
    computed = sum(block[:148]) + 8 * 32 + sum(block[156:512])
    return stored == computed and block[0] != 0


# --- the whole run, and each input ----------------------------------------------------------


class Session:
    """What one discovery shares: limits, bytes budget, member count, spool, open archives.

    Nested archives (a zip inside a zip: zipfile needs to seek) and the wanted members of
    compressed tarballs (a tar.gz can only be read in order) are copied once into the spool, a
    `SpooledTemporaryFile` that stays in memory up to `Limits.spool_memory_bytes` and then moves to
    an anonymous file in the system temporary directory (already unlinked, so nothing is left
    behind, even when the process is killed); what it takes is bounded by `Limits.max_spool_bytes`
    and by the bytes budget left. Open files and the spool are closed when the session is no
    longer referenced by any source or stream.
    """

    def __init__(self, limits: Limits) -> None:
        self.limits = limits
        self.lock = threading.RLock()
        self._spent = 0
        self._members = 0
        self._spooled = 0
        self._spool: tempfile.SpooledTemporaryFile[bytes] | None = None
        self._resources: list[_Reader] = []
        weakref.finalize(self, _close_all, self._resources)

    def keep(self, resource: _Reader) -> None:
        """Close `resource` when the session ends."""
        self._resources.append(resource)

    def spend(self, count: int, label: str) -> None:
        """Charge decompressed bytes to the budget of the whole run.

        Raises:
            InputStopped: the run's budget is spent.
        """
        with self.lock:
            self._spent += count
            if self._spent > self.limits.max_total_bytes:
                raise InputStopped(
                    f"{label}: decompressed bytes of the whole input over the limit "
                    f"({size_text(self.limits.max_total_bytes)}, --max-total-bytes)"
                )

    def remaining(self) -> int:
        """Bytes left in the run's budget."""
        return max(self.limits.max_total_bytes - self._spent, 0)

    def count_member(self, label: str) -> None:
        """Count one archive member against the limit for the whole run."""
        with self.lock:
            self._members += 1
            if self._members > self.limits.max_members:
                raise InputStopped(
                    f"{label}: archive members of the whole input over the limit "
                    f"({self.limits.max_members}, --max-members), the rest of this archive is not listed"
                )

    def spool_file(self) -> tempfile.SpooledTemporaryFile[bytes]:
        """The spool, created on first use."""
        if self._spool is None:
            size = self.limits.spool_memory_bytes
            # lives as long as the session: closed by keep()
            self._spool = tempfile.SpooledTemporaryFile(max_size=size)  # noqa: SIM115
            self.keep(self._spool)
        return self._spool

    def spool(self, stream: _Reader, label: str, tree: Tree, *, keep_partial: bool = False) -> Region:
        """Copy a stream into the spool.

        With `keep_partial`, a stream that breaks (corrupt or truncated data) leaves what was
        copied as a region whose end raises the error; otherwise a failure leaves the spool as
        it was.

        Raises:
            LimitExceeded: the spool limit, or the bytes left in the budgets, are exceeded.
            CorruptInput: the stream broke (without `keep_partial`).
        """
        with self.lock:
            spool = self.spool_file()
            start = spool.seek(0, io.SEEK_END)
            size = 0
            room = min(self.limits.max_spool_bytes - self._spooled, self.remaining(), tree.remaining_bytes())
            try:
                while chunk := _read_chunk(stream, label, tree):
                    size += len(chunk)
                    if size > room:
                        raise LimitExceeded(f"{label}: temporary spool over the limit ({_room_text(self, tree)})")
                    spool.seek(0, io.SEEK_END)  # reading a nested stream may have moved it
                    try:
                        spool.write(chunk)
                    except OSError as exc:
                        where = tempfile.gettempdir()
                        raise LimitExceeded(
                            f"{label}: cannot copy it to the temporary folder {where} ({describe(exc)})"
                        ) from exc
            except CorruptInput as exc:
                if not keep_partial:
                    spool.truncate(start)
                    raise
                self._spooled += size
                return Region(self, None, start, size, damage=exc.reason if isinstance(exc, Damaged) else str(exc))
            except BaseException:
                spool.truncate(start)
                raise
            self._spooled += size
        return Region(self, None, start, size)


def _room_text(session: Session, tree: Tree) -> str:
    limits = session.limits
    if limits.max_spool_bytes <= min(session.remaining(), tree.remaining_bytes()):
        return size_text(limits.max_spool_bytes)
    return "bytes left in the decompressed-bytes budget"


def _read_chunk(stream: _Reader, label: str, tree: Tree) -> bytes:
    tree.check()
    try:
        with timed(tree, label):
            return stream.read(_SPOOL_READ)
    except CORRUPT_ERRORS as exc:
        raise corrupt(label, exc) from exc


class Tree:
    """One input and everything nested in it: the bytes they produced and the time spent on them.

    `stored` is the input's size on disk (None for a pipe or device: no ratio then). Once a limit
    of the tree is hit, every later operation on it raises the same `InputStopped`.
    """

    def __init__(self, session: Session, label: str, stored: int | None) -> None:
        self.session, self.label, self.stored = session, label, stored
        self.produced = 0
        self.seconds = 0.0
        self.stopped: InputStopped | None = None

    def _stop(self, message: str) -> InputStopped:
        self.stopped = InputStopped(message)
        return self.stopped

    def check(self) -> None:
        """Raise the tree's stop, if any, and stop at a signal."""
        check_stop()
        if self.stopped is not None:
            raise self.stopped

    def remaining_bytes(self) -> int:
        """Bytes this input may still produce before its ratio limit."""
        if self.stored is None:
            return self.session.remaining()
        limits = self.session.limits
        allowed = max(limits.max_ratio * max(self.stored, 1), limits.ratio_grace_bytes)
        return max(int(allowed) - self.produced, 0)

    def charge(self, count: int, label: str) -> None:
        """Charge `count` bytes produced somewhere in the tree.

        Raises:
            InputStopped: the tree's ratio or the run's total is exceeded.
        """
        session = self.session
        with session.lock:
            self.check()
            self.produced += count
            try:
                session.spend(count, label)
            except InputStopped as exc:
                self.stopped = exc
                raise
            limits = session.limits
            if self.stored is not None and self.produced > max(
                limits.ratio_grace_bytes, limits.max_ratio * max(self.stored, 1)
            ):
                raise self._stop(
                    f"{label}: {size_text(self.produced)} decompressed from the {size_text(self.stored)} of "
                    f"{self.label}, over {limits.max_ratio:g} times its size (--max-ratio): a decompression "
                    f"bomb, not read further"
                )

    def spend_time(self, seconds: float, label: str, *, quiet: bool = False) -> None:
        """Add time spent on this input (`quiet`: an error is already on its way, do not raise).

        Raises:
            InputStopped: the input's time budget is spent.
        """
        with self.session.lock:
            self.seconds += seconds
            limit = self.session.limits.max_seconds_per_input
            if self.seconds > limit and self.stopped is None and not quiet:
                raise self._stop(
                    f"{label}: time spent on {self.label} over the limit ({limit:g} s, --max-seconds-per-input), "
                    f"not read further"
                )

    def remaining_seconds(self) -> float:
        """Seconds left in the input's time budget."""
        return self.session.limits.max_seconds_per_input - self.seconds


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


class _ByteReader(io.RawIOBase):
    """A raw stream whose subclasses implement `read(size)`; `readinto` is served from it."""

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: WriteableBuffer, /) -> int:
        view = memoryview(buffer).cast("B")
        data = self.read(len(view))
        view[: len(data)] = data
        return len(data)


class Window(_ByteReader):
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


#: per thread: a timed operation is under way (the time of nested ones is counted once, by the outermost)
_timing = threading.local()


@contextmanager
def timed(tree: Tree | None, label: str) -> Iterator[None]:
    """Charge the time spent inside to `tree` (not again when an outer operation already does).

    Raises:
        InputStopped: the input's time budget is spent.
    """
    if tree is None or getattr(_timing, "active", False):
        yield
        return
    _timing.active = True
    started = time.perf_counter()
    try:
        yield
    except BaseException:
        _timing.active = False
        tree.spend_time(time.perf_counter() - started, label, quiet=True)
        raise
    _timing.active = False
    tree.spend_time(time.perf_counter() - started, label)


class Layer(_ByteReader):
    """One stage of a read pipeline: bounded reads of `inner`, limits checked, errors wrapped,
    the time spent charged to the input's tree."""

    def __init__(
        self,
        inner: _Reader,
        label: str,
        *,
        meter: Meter | None = None,
        consumed: Callable[[], int] = lambda: 0,
        below: Layer | None = None,
        tree: Tree | None = None,
    ) -> None:
        super().__init__()
        self._inner, self._label, self._meter = inner, label, meter
        self._consumed, self._below = consumed, below
        self._tree = tree if tree is not None else meter.tree if meter is not None else None
        #: bytes this stage has produced so far
        self.pos = 0

    def read(self, size: int | None = -1, /) -> bytes:
        if size is None or size < 0:
            return self.readall()
        tree = self._tree
        if tree is not None:
            tree.check()
        else:
            check_stop()
        try:
            with timed(tree, self._label):
                data = self._inner.read(min(size, CHUNK))
        except CORRUPT_ERRORS as exc:
            raise corrupt(self._label, exc) from exc
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


def _xz_reader(source: Layer) -> _Reader:
    return lzma.LZMAFile(io.BufferedReader(source))


def _zstd_reader(source: Layer) -> _Reader:
    buffered = io.BufferedReader(source)
    return zstandard.ZstdDecompressor().stream_reader(buffered, read_across_frames=True, closefd=True)


#: single-stream compression wrappers, by file suffix
_DECOMPRESSORS: dict[str, Callable[[Layer], _Reader]] = {
    ".gz": lambda source: gzip.GzipFile(fileobj=source, mode="rb"),
    ".bz2": lambda source: bz2.BZ2File(source),
    ".xz": _xz_reader,
    ".zst": _zstd_reader,
}
COMPRESSION_SUFFIXES = tuple(_DECOMPRESSORS)


def decompressing(below: Layer, suffix: str, meter: Meter) -> Layer:
    """A stage that decompresses `below` (suffix `.gz`, `.bz2`, `.xz` or `.zst`)."""
    inner = _DECOMPRESSORS[suffix](below)
    return Layer(inner, meter.label, meter=meter, consumed=lambda: below.pos, below=below)


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


#: the reason not to read a member with this name, or None to read it
Classifier = Callable[[str], str | None]


def member_label(archive: str, name: str) -> str:
    """The label of an archive member: `upload.zip!node1.zip!path/in/archive`."""
    return f"{archive}!{printable(name)}"


class _Labels:
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


# --- zip --------------------------------------------------------------------------------------


def zip_members(region: Region, label: str, tree: Tree, wanted: Classifier) -> Iterator[Member | Skipped]:
    """List a zip archive held in a seekable region; members are opened lazily.

    Members whose data overlap (the construction of "overlapping" zip bombs) are refused; a zip
    whose central directory is missing or damaged is recovered from its local headers.
    """
    session = region.session
    window = region.window(label, session.limits.max_header_bytes)
    try:
        with timed(tree, label):
            archive = zipfile.ZipFile(window)
    except InputStopped:
        window.close()
        raise
    except LimitExceeded as exc:
        window.close()
        yield Skipped(label, reason_of(exc, label), True)
        return
    except _BROKEN as exc:
        window.close()
        yield from _salvage_zip(region, label, tree, wanted, describe(exc))
        return
    window.cap = None  # the directory is in memory; member reads are bounded by Layer
    session.keep(window)
    infos = archive.infolist()
    overlapping = _overlapping(infos, archive.start_dir)
    labels = _Labels(label)
    for info in infos:
        tree.check()
        session.count_member(label)
        if info.filename.endswith("/"):  # a directory (ZipInfo.is_dir fails on an empty name)
            continue
        name = labels(info.filename)
        if id(info) in overlapping:
            yield Skipped(name, "its data overlap another member's (a zip bomb construction): not read", True)
        else:
            yield _zip_member(archive, info, region, name, tree, wanted)


def _overlapping(infos: list[zipfile.ZipInfo], directory: int) -> set[int]:
    """ids of the members whose local header and data overlap another member's, or the central
    directory. A member takes at least 30 + its compressed size bytes from its header offset."""
    found: set[int] = set()
    ordered = sorted((info for info in infos if not info.filename.endswith("/")), key=lambda i: i.header_offset)
    for first, second in itertools.pairwise(ordered):
        if second.header_offset < first.header_offset + 30 + first.compress_size:
            found.update((id(first), id(second)))
    if ordered and ordered[-1].header_offset + 30 + ordered[-1].compress_size > directory:
        found.add(id(ordered[-1]))
    return found


def _zip_member(
    archive: zipfile.ZipFile, info: zipfile.ZipInfo, region: Region, label: str, tree: Tree, wanted: Classifier
) -> Member | Skipped:
    refusal = _special_file(info.external_attr >> 16)
    if refusal is None and (reason := wanted(info.filename)) is not None:
        refusal = reason, False
    if refusal is None and info.flag_bits & _ZIP_ENCRYPTED:
        refusal = "encrypted member: cannot read", True
    if refusal is None and (info.flag_bits & _ZIP_PATCHED or info.compress_type not in _ZIP_METHODS):
        refusal = f"unsupported zip compression (method {info.compress_type})", True
    if refusal is not None:
        return Skipped(label, *refusal)
    # what the member can really have consumed: the declared size, but never past the archive end
    compressed = max(min(info.compress_size, region.length - info.header_offset), 1)
    meter = Meter(region.session, label, tree, ratio=info.compress_type != zipfile.ZIP_STORED)
    return Member(label, info.filename, partial(_open_zip, archive, info, label, meter, compressed), None, tree)


def _special_file(mode: int) -> tuple[str, bool] | None:
    if stat.S_ISLNK(mode):
        return "symbolic link member: not followed", False
    if stat.S_IFMT(mode) and not stat.S_ISREG(mode) and not stat.S_ISDIR(mode):
        return "device, FIFO or socket member: no content to read", False
    return None


def _open_zip(
    archive: zipfile.ZipFile,
    info: zipfile.ZipInfo,
    label: str,
    meter: Meter,
    compressed: int,
) -> Layer:
    meter.tree.check()
    try:
        inner = archive.open(info)
    except CORRUPT_ERRORS as exc:
        raise corrupt(label, exc) from exc
    return Layer(inner, label, meter=meter, consumed=lambda: compressed)


@dataclass(frozen=True)
class _LocalEntry:
    """A member found by its local header in a zip without a usable central directory."""

    name: str
    flags: int
    method: int
    #: where its data start and how many bytes of them the archive holds
    data: Region
    #: the declared compressed size (None: unknown, a data descriptor follows the data)
    declared: int | None


def _salvage_zip(region: Region, label: str, tree: Tree, wanted: Classifier, why: str) -> Iterator[Member | Skipped]:
    """The members of a zip whose central directory is missing or damaged, found by scanning
    its local headers from the start; a member cut by the end of the file is read up to it."""
    found = 0
    labels = _Labels(label)
    entries = _local_entries(region, label)
    try:
        while True:
            tree.check()
            with timed(tree, label):
                entry = next(entries, None)
            if entry is None:
                break
            region.session.count_member(label)
            if entry.name.endswith("/"):
                continue
            found += 1
            yield _salvaged_member(entry, labels(entry.name), tree, wanted)
    except _BROKEN as exc:
        why = f"{why}; {describe(exc)}"
    recovered = f"{found} member(s) recovered from their local headers" if found else "no member could be recovered"
    yield Skipped(label, f"corrupt or truncated zip archive ({why}): {recovered}", True)


def _local_entries(region: Region, label: str) -> Iterator[_LocalEntry]:
    window = region.window(label)
    try:
        position = _find(window, _LOCAL, 0)
        while position is not None:
            window.seek(position)
            header = window.read(_LOCAL_HEADER.size)
            if len(header) < _LOCAL_HEADER.size:
                return
            _, _, flags, method, _, _, _, size, _, name_length, extra_length = _LOCAL_HEADER.unpack(header)
            raw_name = window.read(name_length)
            start = position + _LOCAL_HEADER.size + name_length + extra_length
            if len(raw_name) < name_length or start > region.length:
                return
            name = raw_name.decode("utf-8" if flags & _ZIP_UTF8 else "cp437", errors="replace")
            declared: int | None = size
            if flags & _ZIP_DESCRIPTOR or size == 0xFFFFFFFF:
                declared = None
                following = _find(window, _LOCAL, start)
                end = following if following is not None else _find(window, _CENTRAL, start) or region.length
            else:
                end = start + size
                following = end if end + _LOCAL_HEADER.size <= region.length else None
            held = min(end, region.length) - start
            damage = "truncated: the archive ends inside this member" if end > region.length else None
            yield _LocalEntry(name, flags, method, region.sub(start, held, damage), declared)
            if following is None or end > region.length:
                return
            window.seek(following)
            position = following if window.read(4) == _LOCAL else _find(window, _LOCAL, following)
    finally:
        window.close()


def _find(window: Window, signature: bytes, start: int) -> int | None:
    """The offset of the next `signature` at or after `start`, read in blocks."""
    position = start
    window.seek(position)
    tail = b""
    while True:
        block = window.read(_SALVAGE_READ)
        if not block:
            return None
        data = tail + block
        at = data.find(signature)
        if at >= 0:
            return position - len(tail) + at
        tail = data[-(len(signature) - 1) :]
        position += len(block)


def _salvaged_member(entry: _LocalEntry, label: str, tree: Tree, wanted: Classifier) -> Member | Skipped:
    if (reason := wanted(entry.name)) is not None:
        return Skipped(label, reason)
    if entry.flags & _ZIP_ENCRYPTED:
        return Skipped(label, "encrypted member: cannot read", True)
    if entry.method not in _SALVAGE_METHODS:
        return Skipped(label, f"compression method {entry.method} cannot be recovered from a damaged zip", True)
    if entry.method == zipfile.ZIP_STORED and entry.declared is None:
        return Skipped(label, "stored member of unknown size in a damaged zip: its end cannot be found", True)
    meter = Meter(entry.data.session, label, tree, ratio=entry.method != zipfile.ZIP_STORED)
    return Member(label, entry.name, partial(_open_salvaged, entry, label, meter), None, tree)


def _open_salvaged(entry: _LocalEntry, label: str, meter: Meter) -> Layer:
    window = entry.data.window(label)
    consumed = max(entry.data.length, 1)
    if entry.method == zipfile.ZIP_STORED:
        return Layer(window, label, meter=meter, consumed=lambda: consumed)
    return Layer(_Inflater(window, entry.method, label), label, meter=meter, consumed=lambda: consumed)


class _Inflater(_ByteReader):
    """A deflate or bzip2 member's data decompressed as it is read; input that ends before the
    compressed stream does raises CorruptInput."""

    def __init__(self, raw: Window, method: int, label: str) -> None:
        super().__init__()
        self._raw, self._label = raw, label
        self._zlib = zlib.decompressobj(-zlib.MAX_WBITS) if method == zipfile.ZIP_DEFLATED else None
        self._bz2 = bz2.BZ2Decompressor() if method == zipfile.ZIP_BZIP2 else None
        self._done = False

    def read(self, size: int | None = -1, /) -> bytes:
        size = CHUNK if size is None or size < 0 else max(size, 1)
        while not self._done:
            if self._zlib is not None:
                data = self._zlib.unconsumed_tail or self._raw.read(_SALVAGE_READ)
                out = self._zlib.decompress(data, size)
                self._done = self._zlib.eof
            else:
                assert self._bz2 is not None
                data = self._raw.read(_SALVAGE_READ) if self._bz2.needs_input else b""
                out = self._bz2.decompress(data, size)
                self._done = self._bz2.eof
            if out:
                return out
            if not data and not self._done:
                raise Damaged(self._label, "truncated (the compressed data end early)")
        return b""

    def close(self) -> None:
        if not self.closed:
            self._raw.close()
        super().close()


_SALVAGE_METHODS = {zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED, zipfile.ZIP_BZIP2}


# --- tar --------------------------------------------------------------------------------------


def tar_members(
    session: Session, source: Region | Layer, label: str, tree: Tree, wanted: Classifier
) -> Iterator[Member | Skipped]:
    """List a tar archive: in place from a region, or streamed once from a layer (a .tar.gz).

    A streamed tar cannot be re-read, so the members worth reading are copied to the spool as
    they go by; the others are skipped without being stored. When the stream breaks inside a
    member, the part copied before the damage is still read. The layer, if given, is closed here.
    """
    cap = session.limits.max_header_bytes
    fileobj = source.window(label, cap) if isinstance(source, Region) else source
    tarinfo = _bounded_tarinfo(label, cap)
    labels = _Labels(label)
    try:
        with _open_tar(fileobj, tarinfo) as tar:
            while (info := _next(tar, tree)) is not None:
                session.count_member(label)
                if info.isdir():
                    continue
                name = labels(info.name)
                try:
                    found = _tar_member(session, tar, info, source, name, tree, wanted)
                except (LimitExceeded, CorruptInput) as exc:  # a streamed tar cannot go on
                    if isinstance(exc, InputStopped):
                        raise
                    yield Skipped(name, f"{reason_of(exc, label)}; the rest of the archive is not listed", True)
                    return
                yield found
                if isinstance(found, Member) and found.region is not None and found.region.damage is not None:
                    reason = f"listing stopped: the archive breaks inside {printable(info.name)}: {found.region.damage}"
                    yield Skipped(label, reason, True)
                    return
    except InputStopped:
        raise
    except (LimitExceeded, CorruptInput) as exc:
        yield Skipped(label, f"listing stopped: {reason_of(exc, label)}", True)
    except CORRUPT_ERRORS as exc:
        yield Skipped(label, f"listing stopped: corrupt or truncated tar ({describe(exc)})", True)
    finally:
        fileobj.close()


def _next(tar: tarfile.TarFile, tree: Tree) -> tarfile.TarInfo | None:
    tree.check()
    with timed(tree, tree.label):
        return tar.next()


def _open_tar(fileobj: Window | Layer, tarinfo: type[tarfile.TarInfo]) -> tarfile.TarFile:
    if isinstance(fileobj, Window):
        return tarfile.open(fileobj=fileobj, mode="r:", tarinfo=tarinfo)
    return tarfile.open(fileobj=fileobj, mode="r|", tarinfo=tarinfo)


def _tar_member(
    session: Session,
    tar: tarfile.TarFile,
    info: tarfile.TarInfo,
    source: Region | Layer,
    label: str,
    tree: Tree,
    wanted: Classifier,
) -> Member | Skipped:
    """A member read in place (seekable tar) or copied to the spool as it streams by.

    Raises:
        LimitExceeded: the copy went over a limit; the stream cannot go on.
    """
    refusal = _tar_refusal(info, wanted)
    if refusal is not None:
        return Skipped(label, *refusal)
    if isinstance(source, Region):
        return region_member(source.sub(info.offset_data, info.size), label, info.name, tree)
    stream = tar.extractfile(info)
    if stream is None:  # tarfile gives a stream for every regular member, the only kind here
        return Skipped(label, "tar member without data", True)
    return region_member(session.spool(stream, label, tree, keep_partial=True), label, info.name, tree)


def _tar_refusal(info: tarfile.TarInfo, wanted: Classifier) -> tuple[str, bool] | None:
    if info.issym():
        return "symbolic link member: not followed", False
    if info.islnk():
        return "hard link member: not followed", False
    if info.ischr() or info.isblk() or info.isfifo():
        return "device or FIFO member: no content to read", False
    if not info.isreg():
        return f"not a regular file member (tar type {info.type!r})", False
    if (reason := wanted(info.name)) is not None:
        return reason, False
    if info.issparse():
        return "sparse file member: not supported", True
    return None


def _bounded_tarinfo(label: str, cap: int) -> type[tarfile.TarInfo]:
    """A TarInfo class that refuses long-name and pax blocks bigger than the header limit."""

    class BoundedTarInfo(tarfile.TarInfo):
        @classmethod
        def frombuf(cls, buf: bytes | bytearray, encoding: str, errors: str) -> Self:
            info = super().frombuf(buf, encoding, errors)
            if info.type in _TAR_HEADER_TYPES and info.size > cap:
                raise LimitExceeded(
                    f"{label}: tar header block of {size_text(info.size)} over the header size limit ({size_text(cap)})"
                )
            return info

    return BoundedTarInfo
