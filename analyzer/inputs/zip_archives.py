"""Zip archives: members listed from the central directory and opened lazily; a zip whose
directory is missing or damaged recovered from its local headers; overlapping members (a zip
bomb construction) refused.

A zip cut short has lost its central directory, but zipfile may still find one: that of a zip
stored inside it (a TFA upload stores its per-node zips), whose members it would then list as the
upload's. A directory that does not list the member at the start of the file is not the upload's:
the zip is recovered from its local headers, and a stored member (an inner zip) is read in place,
so that an inner zip cut by the end of the upload is recovered from its own local headers in turn.
One central directory entry whose size runs into the next member is read with the size its local
header (or data descriptor) gives, when that one ends where the next member begins.
"""

from __future__ import annotations

import bz2
import stat
import struct
import zipfile
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from functools import partial

from analyzer.base.errors import CorruptInput, LimitExceeded
from analyzer.inputs.limits import InputStopped, KiB, Tree, timed
from analyzer.inputs.skips import CORRUPT_ERRORS, Damaged, Skipped, corrupt, describe, reason_of
from analyzer.inputs.sniff import ZIP_LOCAL
from analyzer.inputs.streams import CHUNK, ByteReader, Classifier, Labels, Layer, Member, Meter, Region, Window

#: compressed bytes read at a time when a damaged zip's members are recovered
_SALVAGE_READ = 64 * KiB
#: errors of a damaged zip, and our own wrapping of them
_BROKEN: tuple[type[Exception], ...] = (*CORRUPT_ERRORS, CorruptInput)
#: compression methods zipfile reads, and those a damaged zip's members are recovered with
_ZIP_METHODS = {zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED, zipfile.ZIP_BZIP2, zipfile.ZIP_LZMA}
_SALVAGE_METHODS = {zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED, zipfile.ZIP_BZIP2}
_ZIP_ENCRYPTED = 0x01 | 0x40  # traditional PKWARE or strong encryption
_ZIP_DESCRIPTOR = 0x08  # sizes and CRC follow the data instead of sitting in the local header
_ZIP_PATCHED = 0x20  # "compressed patched data": zipfile cannot read it
_ZIP_UTF8 = 0x800
_CENTRAL = b"PK\x01\x02"
_LOCAL_HEADER = struct.Struct("<4sHHHHHIIIHH")


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
    if _foreign(archive, region, label):
        window.close()
        why = "its central directory is missing; the one found belongs to an archive stored in it"
        yield from _salvage_zip(region, label, tree, wanted, why)
        return
    window.cap = None  # the directory is in memory; member reads are bounded by Layer
    session.keep(window)
    yield from _listed(archive, region, label, tree, wanted)


def _listed(
    archive: zipfile.ZipFile, region: Region, label: str, tree: Tree, wanted: Classifier
) -> Iterator[Member | Skipped]:
    """The members of a zip whose central directory was read."""
    infos = archive.infolist()
    overlapping = _overlapping(infos, archive.start_dir, region, label)
    labels = Labels(label)
    for info in infos:
        tree.check()
        region.session.count_member(label)
        if info.filename.endswith("/"):  # a directory (ZipInfo.is_dir fails on an empty name)
            continue
        name = labels(info.filename)
        if id(info) in overlapping:
            yield Skipped(name, "its data overlap another member's (a zip bomb construction): not read", True)
        else:
            yield _zip_member(archive, info, region, name, tree, wanted)


def _foreign(archive: zipfile.ZipFile, region: Region, label: str) -> bool:
    """The central directory found does not list the member whose local header starts the file (it is
    that of a zip stored inside it: the upload's own directory was cut off)."""
    infos = archive.infolist()
    if not infos or min(info.header_offset for info in infos) == 0:
        return False
    window = region.window(label)
    try:
        return window.read(len(ZIP_LOCAL)) == ZIP_LOCAL
    except _BROKEN:
        return False
    finally:
        window.close()


def _overlapping(infos: list[zipfile.ZipInfo], directory: int, region: Region, label: str) -> set[int]:
    """ids of the members whose local header and data overlap another member's, or the central
    directory. A member takes at least 30 + its compressed size bytes from its header offset.

    A member whose directory entry alone claims too many bytes (its local header, or its data
    descriptor, gives a size that ends where the next member begins) is given that size instead."""
    found: set[int] = set()
    ordered = sorted((info for info in infos if not info.filename.endswith("/")), key=lambda i: i.header_offset)
    ends = [*(info.header_offset for info in ordered[1:]), directory]
    for at, (info, end) in enumerate(zip(ordered, ends, strict=True)):
        if info.header_offset + 30 + info.compress_size <= end:
            continue
        size = _true_size(info, end, region, label) if end > info.header_offset else None
        if size is not None:
            info.compress_size = size
            continue
        found.add(id(info))
        if at + 1 < len(ordered):
            found.add(id(ordered[at + 1]))
    return found


def _true_size(info: zipfile.ZipInfo, end: int, region: Region, label: str) -> int | None:
    """The compressed size of a member that ends at `end`, when its local header (or the data
    descriptor before `end`) says so; None when they too claim more (or cannot be read)."""
    window = region.window(label)
    try:
        window.seek(info.header_offset)
        header = window.read(_LOCAL_HEADER.size)
        if len(header) < _LOCAL_HEADER.size or not header.startswith(ZIP_LOCAL):
            return None
        _, _, flags, _, _, _, _, size, _, name_length, extra_length = _LOCAL_HEADER.unpack(header)
        start = info.header_offset + _LOCAL_HEADER.size + name_length + extra_length
        if flags & _ZIP_DESCRIPTOR or size == 0xFFFFFFFF:
            window.seek(max(end - 16, 0))
            descriptor = window.read(16)
            if len(descriptor) < 16 or not descriptor.startswith(b"PK\x07\x08"):
                return None
            size = struct.unpack_from("<I", descriptor, 8)[0]
            return size if start + size + 16 == end else None
        return size if start + size <= end and size != info.compress_size else None
    except _BROKEN:
        return None
    finally:
        window.close()


def _zip_member(
    archive: zipfile.ZipFile, info: zipfile.ZipInfo, region: Region, label: str, tree: Tree, wanted: Classifier
) -> Member | Skipped:
    refusal = _special_file(info.external_attr >> 16) or _refusal(info.filename, info.flag_bits, wanted)
    if refusal is None and (info.flag_bits & _ZIP_PATCHED or info.compress_type not in _ZIP_METHODS):
        refusal = f"unsupported zip compression (method {info.compress_type})", True
    if refusal is not None:
        return Skipped(label, *refusal)
    # what the member can really have consumed: the declared size, but never past the archive end
    compressed = max(min(info.compress_size, region.length - info.header_offset), 1)
    meter = Meter(region.session, label, tree, ratio=info.compress_type != zipfile.ZIP_STORED)
    opened = partial(_open_zip, archive, info, label, meter, compressed)
    return Member(label, info.filename, opened, None, tree, info.compress_size)


def _refusal(name: str, flags: int, wanted: Classifier) -> tuple[str, bool] | None:
    """Why a member is not read, by its name or its encryption: (reason, content lost); or None."""
    if (reason := wanted(name)) is not None:
        return reason, False
    if flags & _ZIP_ENCRYPTED:
        return "encrypted member: cannot read", True
    return None


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
    labels = Labels(label)
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
        position = _find(window, ZIP_LOCAL, 0)
        while position is not None:
            found = _local_entry(window, position, region)
            if found is None:
                return
            entry, following = found
            yield entry
            if following is None:
                return
            window.seek(following)
            position = following if window.read(4) == ZIP_LOCAL else _find(window, ZIP_LOCAL, following)
    finally:
        window.close()


def _local_entry(window: Window, position: int, region: Region) -> tuple[_LocalEntry, int | None] | None:
    """The member whose local header is at `position`, and where the next header may be (None when
    nothing follows or the archive ends inside this member); None when the header itself is cut."""
    window.seek(position)
    header = window.read(_LOCAL_HEADER.size)
    if len(header) < _LOCAL_HEADER.size:
        return None
    _, _, flags, method, _, _, _, size, _, name_length, extra_length = _LOCAL_HEADER.unpack(header)
    raw_name = window.read(name_length)
    start = position + _LOCAL_HEADER.size + name_length + extra_length
    if len(raw_name) < name_length or start > region.length:
        return None
    name = raw_name.decode("utf-8" if flags & _ZIP_UTF8 else "cp437", errors="replace")
    declared: int | None = size
    if flags & _ZIP_DESCRIPTOR or size == 0xFFFFFFFF:
        declared = None
        following = _find(window, ZIP_LOCAL, start)
        end = following if following is not None else _find(window, _CENTRAL, start) or region.length
    else:
        end = start + size
        following = end if end + _LOCAL_HEADER.size <= region.length else None
    held = min(end, region.length) - start
    damage = "truncated: the archive ends inside this member" if end > region.length else None
    entry = _LocalEntry(name, flags, method, region.sub(start, held, damage), declared)
    return entry, None if end > region.length else following


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
    refusal = _refusal(entry.name, entry.flags, wanted) or _salvage_refusal(entry)
    if refusal is not None:
        return Skipped(label, *refusal)
    meter = Meter(entry.data.session, label, tree, ratio=entry.method != zipfile.ZIP_STORED)
    in_place = entry.data if entry.method == zipfile.ZIP_STORED else None  # a stored inner zip: listed in place
    return Member(label, entry.name, partial(_open_salvaged, entry, label, meter), in_place, tree)


def _salvage_refusal(entry: _LocalEntry) -> tuple[str, bool] | None:
    if entry.method not in _SALVAGE_METHODS:
        return f"compression method {entry.method} cannot be recovered from a damaged zip", True
    if entry.method == zipfile.ZIP_STORED and entry.declared is None:
        return "stored member of unknown size in a damaged zip: its end cannot be found", True
    return None


def _open_salvaged(entry: _LocalEntry, label: str, meter: Meter) -> Layer:
    window = entry.data.window(label)
    consumed = max(entry.data.length, 1)
    if entry.method == zipfile.ZIP_STORED:
        return Layer(window, label, meter=meter, consumed=lambda: consumed)
    return Layer(_Inflater(window, entry.method, label), label, meter=meter, consumed=lambda: consumed)


class _Inflater(ByteReader):
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
