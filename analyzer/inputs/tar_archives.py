"""Tar archives: listed in place from a seekable region, or streamed once (a .tar.gz) with the
members worth reading copied to the spool as they go by; oversized headers refused.
"""

from __future__ import annotations

import tarfile
from collections.abc import Iterator
from typing import Self

from analyzer.base.errors import CorruptInput, LimitExceeded
from analyzer.inputs.limits import InputStopped, Session, Tree, size_text, timed
from analyzer.inputs.skips import CORRUPT_ERRORS, Skipped, describe, printable, reason_of
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
    session: Session, source: Region | Layer, label: str, tree: Tree, wanted: Classifier
) -> Iterator[Member | Skipped]:
    """List a tar archive: in place from a region, or streamed once from a layer (a .tar.gz).

    A streamed tar cannot be re-read, so the members worth reading are copied to the spool as
    they go by; the others are skipped without being stored. When the stream breaks inside a
    member, the part copied before the damage is still read. The layer, if given, is closed here.
    """
    cap = session.limits.max_header_bytes
    fileobj = source.window(label, cap) if isinstance(source, Region) else source
    try:
        with _open_tar(fileobj, _bounded_tarinfo(label, cap)) as tar:
            yield from _listed(session, tar, source, label, tree, wanted)
    except InputStopped:
        raise
    except (LimitExceeded, CorruptInput) as exc:
        yield Skipped(label, f"listing stopped: {reason_of(exc, label)}", True)
    except CORRUPT_ERRORS as exc:
        yield Skipped(label, f"listing stopped: corrupt or truncated tar ({describe(exc)})", True)
    finally:
        fileobj.close()


def _listed(
    session: Session, tar: tarfile.TarFile, source: Region | Layer, label: str, tree: Tree, wanted: Classifier
) -> Iterator[Member | Skipped]:
    """The members of an open tar, up to its end or to a member after which it cannot go on."""
    labels = Labels(label)
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
    return region_member(spool(session, stream, label, tree, keep_partial=True), label, info.name, tree)


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
