"""Bounded byte streams for uploads: decompression stages, zip and tar listing, limits, spool."""

from __future__ import annotations

import bz2
import dataclasses
import errno
import gzip
import io
import lzma
import stat
import struct
import tarfile
import tempfile
import threading
import weakref
import zipfile
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import IO, TYPE_CHECKING, Protocol, Self

import zstandard

from analyzer.errors import CorruptInput, LimitExceeded, UsageError

if TYPE_CHECKING:
    from _typeshed import WriteableBuffer

KiB, MiB, GiB = 1024, 1024**2, 1024**3
#: largest read handed to a decompressor at once: limits are checked at least this often
CHUNK = 1 * MiB

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
_ZIP_METHODS = {zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED, zipfile.ZIP_BZIP2, zipfile.ZIP_LZMA}
_ZIP_ENCRYPTED = 0x01 | 0x40  # traditional PKWARE or strong encryption
_ZIP_PATCHED = 0x20  # "compressed patched data": zipfile cannot read it
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

    #: decompressed bytes over the whole input (every decompression stage counts)
    max_total_bytes: int = 64 * GiB
    #: decompressed / compressed bytes of one stage of one member, checked while streaming
    max_ratio: float = 1000.0
    #: the ratio is only checked once a stage has produced this much
    ratio_grace_bytes: int = 1 * MiB
    #: archive and compression layers between a file on disk and a trace (upload.zip!n.zip!x.gz = 3)
    max_depth: int = 8
    #: archive members over the whole input
    max_members: int = 100_000
    #: temporary copies of nested archives and of members of compressed tarballs
    max_spool_bytes: int = 16 * GiB
    #: part of the spool held in memory before it moves to an anonymous temporary file
    spool_memory_bytes: int = 64 * MiB
    #: one metadata block read into memory: a zip central directory, a tar long-name or pax header
    max_header_bytes: int = 32 * MiB

    def __post_init__(self) -> None:
        for item in dataclasses.fields(self):
            value = getattr(self, item.name)
            if not value > 0:
                raise UsageError(f"limit {item.name} must be positive, got {value}")


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


def corrupt(label: str, exc: BaseException) -> CorruptInput:
    """The documented exception for data that cannot be decoded or read."""
    return CorruptInput(f"{label}: corrupt, truncated or unreadable data ({describe(exc)})")


def open_file(path: Path) -> IO[bytes]:
    """Open a file on disk for reading (the one place that does)."""
    return path.open("rb")


def _close_all(resources: list[_Reader]) -> None:
    for resource in reversed(resources):
        resource.close()


class Session:
    """What one discovery shares: limits, bytes budget, member count, spool, open archives.

    Nested archives (a zip inside a zip: zipfile needs to seek) and the wanted members of
    compressed tarballs (a tar.gz can only be read in order) are copied once into the spool, a
    `SpooledTemporaryFile` that stays in memory up to `Limits.spool_memory_bytes` and then moves to
    an anonymous file in the system temporary directory (already unlinked, so nothing is left
    behind); its size is capped by `Limits.max_spool_bytes`. Open files and the spool are closed
    when the session is no longer referenced by any source or stream.
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
        """Charge decompressed bytes to the budget of the whole input."""
        with self.lock:
            self._spent += count
            if self._spent > self.limits.max_total_bytes:
                raise LimitExceeded(
                    f"{label}: decompressed bytes of the whole input over the limit "
                    f"({size_text(self.limits.max_total_bytes)})"
                )

    def count_member(self, label: str) -> None:
        """Count one archive member against the limit for the whole input."""
        self._members += 1
        if self._members > self.limits.max_members:
            raise LimitExceeded(
                f"{label}: archive members of the whole input over the limit "
                f"({self.limits.max_members}), the rest of this archive is not listed"
            )

    def spool_file(self) -> tempfile.SpooledTemporaryFile[bytes]:
        """The spool, created on first use."""
        if self._spool is None:
            size = self.limits.spool_memory_bytes
            # lives as long as the session: closed by keep()
            self._spool = tempfile.SpooledTemporaryFile(max_size=size)  # noqa: SIM115
            self.keep(self._spool)
        return self._spool

    def spool(self, stream: _Reader, label: str) -> Region:
        """Copy a stream into the spool; a failure leaves the spool as it was."""
        with self.lock:
            spool = self.spool_file()
            start = spool.seek(0, io.SEEK_END)
            size = 0
            try:
                while chunk := _read_chunk(stream, label):
                    size += len(chunk)
                    if self._spooled + size > self.limits.max_spool_bytes:
                        raise LimitExceeded(
                            f"{label}: temporary spool over the limit ({size_text(self.limits.max_spool_bytes)})"
                        )
                    spool.seek(0, io.SEEK_END)  # reading a nested stream may have moved it
                    spool.write(chunk)
            except BaseException:
                spool.truncate(start)
                raise
            self._spooled += size
        return Region(self, None, start, size)


def _read_chunk(stream: _Reader, label: str) -> bytes:
    try:
        return stream.read(CHUNK)
    except CORRUPT_ERRORS as exc:
        raise corrupt(label, exc) from exc


@dataclass(frozen=True)
class Region:
    """A seekable byte range: a file on disk (`path`) or a slice of the session's spool."""

    session: Session
    path: Path | None
    start: int
    length: int

    def window(self, label: str, cap: int | None = None) -> Window:
        """A new independent reader over the range (`cap`: see Window)."""
        if self.path is None:
            spool = self.session.spool_file()
            return Window(spool, self.start, self.length, self.session.lock, label, cap, owned=False)
        file = open_file(self.path)
        return Window(file, self.start, self.length, threading.Lock(), label, cap, owned=True)

    def sub(self, offset: int, length: int) -> Region:
        """A range inside this one (a tar member); reading past the real end is an error."""
        return Region(self.session, self.path, self.start + offset, length)


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
    above the header size limit, before memory is taken for it.
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
    ) -> None:
        super().__init__()
        self._file, self._start, self._length, self._lock = file, start, length, lock
        self._label, self._owned, self._pos = label, owned, 0
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
        with self._lock:
            self._file.seek(self._start + self._pos)
            data = self._file.read(size)
        self._pos += len(data)
        if len(data) < size:
            raise CorruptInput(f"{self._label}: truncated (data ends {size - len(data)} bytes early)")
        return data

    def close(self) -> None:
        if self._owned and not self.closed:
            self._file.close()
        super().close()


@dataclass
class Meter:
    """The limits of one decompression stage of one member; `charged` outlives each opening."""

    session: Session
    label: str
    #: decompressed bytes of this stage already charged to the session (a re-read is free)
    charged: int = 0

    def check(self, produced: int, consumed: int) -> None:
        """Raise LimitExceeded when the stage has gone over the ratio or the total budget."""
        limits = self.session.limits
        if produced > limits.ratio_grace_bytes and produced > limits.max_ratio * max(consumed, 1):
            raise LimitExceeded(
                f"{self.label}: compression ratio over the limit ({limits.max_ratio:g}:1), "
                f"{size_text(produced)} from {size_text(consumed)}"
            )
        if produced > self.charged:
            self.session.spend(produced - self.charged, self.label)
            self.charged = produced


class Layer(_ByteReader):
    """One stage of a read pipeline: bounded reads of `inner`, limits checked, errors wrapped."""

    def __init__(
        self,
        inner: _Reader,
        label: str,
        *,
        meter: Meter | None = None,
        consumed: Callable[[], int] = lambda: 0,
        below: Layer | None = None,
    ) -> None:
        super().__init__()
        self._inner, self._label, self._meter = inner, label, meter
        self._consumed, self._below = consumed, below
        #: bytes this stage has produced so far
        self.pos = 0

    def read(self, size: int | None = -1, /) -> bytes:
        if size is None or size < 0:
            return self.readall()
        try:
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


@dataclass(frozen=True)
class Refusal:
    """A member that is not read, or an archive whose listing stopped, with the reason."""

    label: str
    reason: str
    #: content was lost (limit, corruption, encryption), as opposed to nothing worth reading
    partial: bool


#: the reason not to read a member with this name, or None to read it
Classifier = Callable[[str], str | None]


def member_label(archive: str, name: str) -> str:
    """The label of an archive member: `upload.zip!node1.zip!path/in/archive`."""
    return f"{archive}!{printable(name)}"


def region_member(region: Region, label: str, name: str) -> Member:
    """A member whose bytes can be read in place."""
    return Member(label, name, partial(_open_region, region, label), region)


def _open_region(region: Region, label: str) -> Layer:
    return Layer(region.window(label), label)


def zip_members(region: Region, label: str, wanted: Classifier) -> Iterator[Member | Refusal]:
    """List a zip archive held in a seekable region; members are opened lazily."""
    session = region.session
    window = region.window(label, session.limits.max_header_bytes)
    try:
        archive = zipfile.ZipFile(window)
    except (LimitExceeded, CorruptInput) as exc:
        window.close()
        yield Refusal(label, reason_of(exc, label), True)
        return
    except CORRUPT_ERRORS as exc:
        window.close()
        yield Refusal(label, f"corrupt or truncated zip archive ({describe(exc)})", True)
        return
    window.cap = None  # the directory is in memory; member reads are bounded by Layer
    session.keep(window)
    for info in archive.infolist():
        try:
            session.count_member(label)
        except LimitExceeded as exc:
            yield Refusal(label, reason_of(exc, label), True)
            return
        if not info.filename.endswith("/"):  # a directory (ZipInfo.is_dir fails on an empty name)
            yield _zip_member(archive, info, region, member_label(label, info.filename), wanted)


def _zip_member(
    archive: zipfile.ZipFile, info: zipfile.ZipInfo, region: Region, label: str, wanted: Classifier
) -> Member | Refusal:
    refusal = _special_file(info.external_attr >> 16)
    if refusal is None and (reason := wanted(info.filename)) is not None:
        refusal = reason, False
    if refusal is None and info.flag_bits & _ZIP_ENCRYPTED:
        refusal = "encrypted member: cannot read", True
    if refusal is None and (info.flag_bits & _ZIP_PATCHED or info.compress_type not in _ZIP_METHODS):
        refusal = f"unsupported zip compression (method {info.compress_type})", True
    if refusal is not None:
        return Refusal(label, *refusal)
    # what the member can really have consumed: the declared size, but never past the archive end
    compressed = max(min(info.compress_size, region.length - info.header_offset), 1)
    meter = Meter(region.session, label) if info.compress_type != zipfile.ZIP_STORED else None
    return Member(label, info.filename, partial(_open_zip, archive, info, label, meter, compressed), None)


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
    meter: Meter | None,
    compressed: int,
) -> Layer:
    try:
        inner = archive.open(info)
    except CORRUPT_ERRORS as exc:
        raise corrupt(label, exc) from exc
    return Layer(inner, label, meter=meter, consumed=lambda: compressed)


def tar_members(session: Session, source: Region | Layer, label: str, wanted: Classifier) -> Iterator[Member | Refusal]:
    """List a tar archive: in place from a region, or streamed once from a layer (a .tar.gz).

    A streamed tar cannot be re-read, so the members worth reading are copied to the spool as
    they go by; the others are skipped without being stored. The layer, if given, is closed here.
    """
    cap = session.limits.max_header_bytes
    fileobj = source.window(label, cap) if isinstance(source, Region) else source
    tarinfo = _bounded_tarinfo(label, cap)
    try:
        with _open_tar(fileobj, tarinfo) as tar:
            while (info := tar.next()) is not None:
                session.count_member(label)
                if info.isdir():
                    continue
                try:
                    yield _tar_member(session, tar, info, source, label, wanted)
                except (LimitExceeded, CorruptInput) as exc:  # a streamed tar cannot go on
                    name = member_label(label, info.name)
                    reason = f"{reason_of(exc, name)}; the rest of the archive is not listed"
                    yield Refusal(name, reason, True)
                    return
    except (LimitExceeded, CorruptInput) as exc:
        yield Refusal(label, f"listing stopped: {reason_of(exc, label)}", True)
    except CORRUPT_ERRORS as exc:
        yield Refusal(label, f"listing stopped: corrupt or truncated tar ({describe(exc)})", True)
    finally:
        fileobj.close()


def _open_tar(fileobj: Window | Layer, tarinfo: type[tarfile.TarInfo]) -> tarfile.TarFile:
    if isinstance(fileobj, Window):
        return tarfile.open(fileobj=fileobj, mode="r:", tarinfo=tarinfo)
    return tarfile.open(fileobj=fileobj, mode="r|", tarinfo=tarinfo)


def _tar_member(
    session: Session,
    tar: tarfile.TarFile,
    info: tarfile.TarInfo,
    source: Region | Layer,
    archive: str,
    wanted: Classifier,
) -> Member | Refusal:
    """A member read in place (seekable tar) or copied to the spool as it streams by.

    Raises:
        LimitExceeded, CorruptInput: the copy failed; the stream cannot go on.
    """
    label = member_label(archive, info.name)
    refusal = _tar_refusal(info, wanted)
    if refusal is not None:
        return Refusal(label, *refusal)
    if isinstance(source, Region):
        return region_member(source.sub(info.offset_data, info.size), label, info.name)
    stream = tar.extractfile(info)
    if stream is None:  # tarfile gives a stream for every regular member, the only kind here
        return Refusal(label, "tar member without data", True)
    return region_member(session.spool(stream, label), label, info.name)


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
