"""Uploads built on disk for the discovery tests: files of given bytes, tarballs, and what discovery found."""

from __future__ import annotations

import io
import tarfile
from pathlib import Path

from analyzer.inputs.classify import Source
from analyzer.inputs.skips import Skipped


def write(path: Path, data: bytes) -> Path:
    """Write `data` to `path` (its folders created) and return the path."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path


def read(source: Source) -> bytes:
    """The whole decompressed content of a source."""
    with source.opener() as stream:
        return stream.read()


def drain(source: Source) -> int:
    """Read a source in 64 KiB chunks; the number of bytes read."""
    total = 0
    with source.opener() as stream:
        while chunk := stream.read(65536):
            total += len(chunk)
    return total


def contents(sources: list[Source]) -> dict[str, bytes]:
    """Each source's content by its label."""
    return {source.label: read(source) for source in sources}


def reasons(skipped: list[Skipped]) -> dict[str, str]:
    """Each skipped input's reason by its label."""
    return {item.label: item.reason for item in skipped}


def tar_bytes(members: dict[str, bytes], mode: str = "w") -> bytes:
    """A tarball in memory holding regular members (name -> bytes); `mode` `w:gz` etc. compresses it."""
    return tar_of([(member(name), data) for name, data in members.items()], mode)


def tar_of(infos: list[tuple[tarfile.TarInfo, bytes]], mode: str = "w", **kw: int) -> bytes:
    """A tarball in memory of the members given with their data (links, devices: no data)."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode=mode, **kw) as archive:
        for info, data in infos:
            info.size = len(data) if info.isreg() else 0
            archive.addfile(info, io.BytesIO(data) if info.isreg() else None)
    return buffer.getvalue()


def member(name: str, kind: bytes = tarfile.REGTYPE, link: str = "") -> tarfile.TarInfo:
    """A tar member's header: a regular file, or a link or device (`kind`, `link`)."""
    info = tarfile.TarInfo(name)
    info.type, info.linkname = kind, link
    return info
