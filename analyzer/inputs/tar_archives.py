"""Tar archives: listed in place from a seekable region, or streamed once (a .tar.gz) with the
members worth reading copied to the spool as they go by; oversized headers refused; hard links
followed to a member before them in the archive.

A streamed tar that breaks (a truncated or corrupt .tar.gz) is read to the last byte that decodes:
tarfile is given the stream as if it ended there (`_Ends`), and the member it breaks in is copied
straight from tarfile's stream (whose reads return what they have), so nothing decoded is lost to a
read that fails half way.
"""

from __future__ import annotations

import tarfile
from collections.abc import Callable, Iterator
from typing import IO, Self, cast

from analyzer.base.errors import CorruptInput, LimitExceeded
from analyzer.inputs.limits import InputStopped, Session, Tree, size_text, timed
from analyzer.inputs.skips import CORRUPT_ERRORS, Damaged, Skipped, describe, printable, reason_of
from analyzer.inputs.streams import Classifier, Labels, Layer, Member, Region, Window, region_member, spool

#: header blocks that carry a long name or pax attributes: bounded by `Limits.max_header_bytes`
_TAR_HEADER_TYPES = {
    tarfile.GNUTYPE_LONGNAME,
    tarfile.GNUTYPE_LONGLINK,
    tarfile.XHDTYPE,
    tarfile.XGLTYPE,
    tarfile.SOLARIS_XHDTYPE,
}


def tar_members(
    session: Session,
    source: Region | Layer,
    label: str,
    tree: Tree,
    wanted: Classifier,
    reopen: Callable[[], Layer] | None = None,
) -> Iterator[Member | Skipped]:
    """List a tar archive: in place from a region, or streamed from a layer (a .tar.gz).

    A streamed tar is read once, so the members worth reading are copied to the spool as they go
    by; the others are skipped without being stored. When the stream breaks inside a member, the
    part copied before the damage is still read. A hard link to a member not copied is read from a
    second pass over the stream (`reopen`) that copies only the members linked to. The layer, if
    given, is closed here.
    """
    cap = session.limits.max_header_bytes
    fileobj: Window | _Ends = source.window(label, cap) if isinstance(source, Region) else _Ends(source)
    links: list[tuple[str, tarfile.TarInfo]] = []
    try:
        with _open_tar(fileobj, _bounded_tarinfo(label, cap)) as tar:
            place = fileobj if isinstance(fileobj, _Ends) else cast(Region, source)
            yield from _listed(session, tar, place, label, tree, wanted, links)
        if isinstance(fileobj, _Ends) and fileobj.error is not None and not fileobj.said:
            raise fileobj.error
        if links:
            yield from _linked(session, reopen, links, label, tree)
    except InputStopped:
        raise
    except (LimitExceeded, CorruptInput) as exc:
        yield Skipped(label, f"listing stopped: {reason_of(exc, label)}", True)
    except CORRUPT_ERRORS as exc:
        yield Skipped(label, f"listing stopped: corrupt or truncated tar ({describe(exc)})", True)
    finally:
        fileobj.close()


def _listed(
    session: Session,
    tar: tarfile.TarFile,
    source: Region | _Ends,
    label: str,
    tree: Tree,
    wanted: Classifier,
    links: list[tuple[str, tarfile.TarInfo]],
) -> Iterator[Member | Skipped]:
    """The members of an open tar, up to its end or to a member after which it cannot go on; the hard
    links of a streamed tar to members not copied are left in `links`."""
    labels = Labels(label)
    regions: dict[str, Region] = {}  # the data of the regular members so far, by name (for hard links)
    while (info := _next(tar, tree)) is not None:
        session.count_member(label)
        if info.isdir():
            continue
        name = labels(info.name)
        if isinstance(source, _Ends) and info.islnk() and info.linkname not in regions and wanted(info.name) is None:
            links.append((name, info))
            continue
        try:
            found = _tar_member(session, tar, info, source, name, tree, wanted, regions)
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


def _linked(
    session: Session,
    reopen: Callable[[], Layer] | None,
    links: list[tuple[str, tarfile.TarInfo]],
    label: str,
    tree: Tree,
) -> Iterator[Member | Skipped]:
    """The hard links of a streamed tar whose members were not copied: the stream read again, the
    members they link to copied (only those)."""
    targets = {info.linkname for _, info in links}
    regions: dict[str, Region] = {}
    if reopen is not None:
        ends = _Ends(reopen())
        try:
            with _open_tar(ends, _bounded_tarinfo(label, session.limits.max_header_bytes)) as tar:
                while targets - set(regions) and (info := _next(tar, tree)) is not None:
                    if info.name in targets and info.isreg() and not info.issparse():
                        regions[info.name] = spool(session, _MemberData(tar, info), label, tree, keep_partial=True)
        finally:
            ends.close()
    for name, info in links:
        target = regions.get(info.linkname)
        if target is None:
            reason = f"hard link to {printable(info.linkname)}, which is not a member read before it: not followed"
            yield Skipped(name, reason, True)
        else:
            yield region_member(target, name, info.name, tree)


def _next(tar: tarfile.TarFile, tree: Tree) -> tarfile.TarInfo | None:
    tree.check()
    with timed(tree, tree.label):
        return tar.next()


def _open_tar(fileobj: Window | _Ends, tarinfo: type[tarfile.TarInfo]) -> tarfile.TarFile:
    if isinstance(fileobj, Window):
        return tarfile.open(fileobj=fileobj, mode="r:", tarinfo=tarinfo)
    return tarfile.open(fileobj=cast(IO[bytes], fileobj), mode="r|", tarinfo=tarinfo)


def _tar_member(
    session: Session,
    tar: tarfile.TarFile,
    info: tarfile.TarInfo,
    source: Region | _Ends,
    label: str,
    tree: Tree,
    wanted: Classifier,
    regions: dict[str, Region],
) -> Member | Skipped:
    """A member read in place (seekable tar) or copied to the spool as it streams by; a hard link
    read as the member it links to.

    Raises:
        LimitExceeded: the copy went over a limit; the stream cannot go on.
    """
    if isinstance(source, Region) and info.isreg() and not info.issparse():
        regions[info.name] = source.sub(info.offset_data, info.size)
    refusal = _tar_refusal(info, wanted)
    if refusal is not None:
        return Skipped(label, *refusal)
    if info.islnk():
        target = regions.get(info.linkname)
        if target is None:
            reason = f"hard link to {printable(info.linkname)}, which is not a member read before it: not followed"
            return Skipped(label, reason, True)
        return region_member(target, label, info.name, tree)
    if isinstance(source, Region):
        return region_member(regions[info.name], label, info.name, tree)
    stream = _MemberData(tar, info)
    region = spool(session, stream, label, tree, keep_partial=True)
    if region.length < info.size and region.damage is None:
        error = source.error if isinstance(source, _Ends) else None
        if isinstance(source, _Ends):
            source.said = True
        reason = error.reason if isinstance(error, Damaged) else "truncated (the archive ends inside this member)"
        region = Region(region.session, region.path, region.start, region.length, reason)
    if region.damage is None:
        regions[info.name] = region
    return region_member(region, label, info.name, tree)


def _tar_refusal(info: tarfile.TarInfo, wanted: Classifier) -> tuple[str, bool] | None:
    if info.issym():
        return "symbolic link member: not followed", False
    if info.islnk():
        return None if (reason := wanted(info.name)) is None else (reason, False)
    if info.ischr() or info.isblk() or info.isfifo():
        return "device or FIFO member: no content to read", False
    if not info.isreg():
        return f"not a regular file member (tar type {info.type!r})", False
    if (reason := wanted(info.name)) is not None:
        return reason, False
    if info.issparse():
        return "sparse file member: not supported", True
    return None


class _Ends:
    """A streamed tar as tarfile reads it: the decoded bytes, then the end of the data where they
    break (the error kept in `error`, raised once the members before it are listed)."""

    def __init__(self, layer: Layer) -> None:
        self._layer = layer
        self.error: CorruptInput | None = None
        #: the error was said of the member it broke in
        self.said = False

    def read(self, size: int = -1, /) -> bytes:
        if self.error is not None:
            return b""
        try:
            return self._layer.read(size)
        except CorruptInput as exc:
            self.error = exc
            return b""

    def close(self) -> None:
        self._layer.close()


class _MemberData:
    """The data of the member a streamed tar is at, read from tarfile's stream (which returns what it
    has at the end of the data, where tarfile's own member reader fails and loses the last read)."""

    def __init__(self, tar: tarfile.TarFile, info: tarfile.TarInfo) -> None:
        self._stream = tar.fileobj
        self._stream.seek(info.offset_data)  # forward only: tarfile's stream skips to it
        self._left = info.size

    def read(self, size: int = -1, /) -> bytes:
        size = self._left if size is None or size < 0 else min(size, self._left)
        data: bytes = self._stream.read(size) if size else b""
        self._left -= len(data)
        return data

    def close(self) -> None:
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
