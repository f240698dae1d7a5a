"""Uploads built on disk for the discovery tests: files of given bytes, tarballs, and what discovery found."""

from __future__ import annotations

import csv
import io
import struct
import tarfile
import zlib
from pathlib import Path
from typing import Any

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


# --- damaged uploads: what an independent decoder still gets out of them, and the simulator's truth ---


def _inflated(data: bytes, wbits: int) -> bytes:
    """Every byte zlib decodes from `data` (fed in small pieces, so that an error costs only the last)."""
    inflater, parts = zlib.decompressobj(wbits), []
    for at in range(0, len(data), 256):
        try:
            parts.append(inflater.decompress(data[at : at + 256]))
        except zlib.error:
            break
        if inflater.eof:
            break
    return b"".join(parts)


def decodable(name: str, data: bytes) -> dict[str, bytes]:
    """The traces an upload (a zip of stored or deflated members, zips stored in it, a .tar.gz or .tar)
    still holds when cut or damaged, by member path: read by hand from its local headers, as much of
    each member as zlib decodes. An oracle independent of dgtrace's readers."""
    if name.endswith((".tar.gz", ".tgz")):
        return decodable(name.removesuffix(".gz").removesuffix(".tgz") + ".tar", _inflated(data, 31))
    if name.endswith(".tar"):
        found, at = {}, 0
        while at + 512 <= len(data) and data[at : at + 512].strip(b"\0"):
            header = data[at : at + 512]
            size = int(header[124:136].strip(b"\0 ") or b"0", 8)
            if header[156:157] in (b"0", b"\0"):
                found[header[:100].rstrip(b"\0").decode()] = data[at + 512 : at + 512 + size]
            at += 512 + -(-size // 512) * 512
        return found
    found, at = {}, data.find(b"PK\x03\x04")
    while at >= 0 and at + 30 <= len(data):
        _, _, _, method, _, _, _, size, _, name_length, extra = struct.unpack_from("<4sHHHHHIIIHH", data, at)
        member = data[at + 30 : at + 30 + name_length].decode()
        start = at + 30 + name_length + extra
        body = data[start : start + size] if method == 0 else _inflated(data[start : start + size], -15)
        found.update(decodable(member, body) if member.endswith((".zip", ".tar.gz", ".tgz")) else {member: body})
        at = data.find(b"PK\x03\x04", start + size)
    return {member: body for member, body in found.items() if member.endswith(".trc")}


def against_truth(doc: dict[str, Any], truth: Path) -> int:
    """The matched writes of a JSON document, each checked against the simulator's truth (every key in
    truth.csv, every component within 0.01 ms): their number."""
    with truth.open(newline="") as handle:
        rows = {(int(r["thread"]), int(r["seq"]), int(r["msgid"])): r for r in csv.DictReader(handle)}
    matched = [w for w in doc["writes"] if w["matched"]]
    for write in matched:
        row = rows[(write["thread"], write["seq"], write["msgid"])]
        for name in ("total_ms", "network_ms", "rfs_ms", "rfs_io_ms"):
            assert abs(float(row[name]) - write[name]) <= 0.01, (name, row, write)
    assert doc["summary"]["matched_writes"] == len(matched)
    return len(matched)
