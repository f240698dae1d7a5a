"""Zip archives: members listed and opened lazily, a damaged zip recovered from its local headers,
encrypted, unsupported and overlapping members refused."""

from __future__ import annotations

import io
import re
import struct
import zipfile
from collections.abc import Callable
from pathlib import Path

import pytest

from analyzer.base.errors import CorruptInput
from analyzer.inputs.filenames import wanted
from analyzer.inputs.limits import Limits, Session, Tree
from analyzer.inputs.skips import Skipped
from analyzer.inputs.sources import discover
from analyzer.inputs.streams import Member, Region
from analyzer.inputs.zip_archives import zip_members
from tests.conftest import zip_bytes
from tests.uploads import drain, read, write

#: a field of a member's headers: its offset in the local header and in the central directory entry
_FIELDS = {"flags": (6, 8), "method": (8, 10)}


def _patched(data: bytes, name: str, field: str, change: Callable[[int], int]) -> bytes:
    """A zip with one 16-bit field of one member changed, in its local and central headers alike."""
    patched = bytearray(data)
    local_at, central_at = _FIELDS[field]
    headers = ((b"PK\x03\x04", local_at, 26, 30), (b"PK\x01\x02", central_at, 28, 46))
    for signature, field_at, length_at, name_at in headers:
        for found in re.finditer(re.escape(signature), data):
            start = found.start()
            (length,) = struct.unpack_from("<H", data, start + length_at)
            if data[start + name_at : start + name_at + length] == name.encode():
                (value,) = struct.unpack_from("<H", patched, start + field_at)
                struct.pack_into("<H", patched, start + field_at, change(value))
    return bytes(patched)


def _listed(path: Path) -> list[Member | Skipped]:
    session = Session(Limits())
    size = path.stat().st_size
    return list(zip_members(Region(session, path, 0, size), str(path), Tree(session, str(path), size), wanted))


class _Unseekable(io.RawIOBase):
    """Where zipfile writes a zip as a stream: each member's sizes in a data descriptor after its data."""

    def __init__(self) -> None:
        super().__init__()
        self.data = io.BytesIO()

    def writable(self) -> bool:
        return True

    def write(self, data: bytes) -> int:
        return self.data.write(data)


def test_members_are_listed_in_order_opened_lazily_and_unwanted_names_said(tmp_path: Path) -> None:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("trace/", b"")
        archive.writestr("trace/a.trc", b"a\n" * 100)
        archive.writestr("trace/a.trm", b"map")
        archive.writestr("trace/b.trc", b"b\n")
    upload = write(tmp_path / "up.zip", buffer.getvalue())
    listed = _listed(upload)
    assert [m.label for m in listed] == [f"{upload}!trace/a.trc", f"{upload}!trace/a.trm", f"{upload}!trace/b.trc"]
    first, trm, last = listed
    assert isinstance(first, Member) and isinstance(last, Member) and first.region is None
    with first.open() as layer:
        assert layer.read(1 << 20) == b"a\n" * 100
    assert trm == Skipped(f"{upload}!trace/a.trm", "trace map (.trm) file: ADR metadata, nothing to parse")


def test_an_encrypted_member_is_reported_and_the_others_are_read(tmp_path: Path) -> None:
    data = zip_bytes({"secret.trc": b"secret\n", "open.trc": b"open\n"})
    upload = write(tmp_path / "upload.zip", _patched(data, "secret.trc", "flags", lambda flags: flags | 0x1))
    assert zipfile.ZipFile(upload).getinfo("secret.trc").flag_bits & 0x1
    sources, skipped = discover([str(upload)])
    assert [(s.name, read(s)) for s in sources] == [("open.trc", b"open\n")]
    assert skipped == [Skipped(f"{upload}!secret.trc", "encrypted member: cannot read", True)]


def test_a_compression_zipfile_cannot_read_is_refused_by_its_method(tmp_path: Path) -> None:
    data = zip_bytes({"odd.trc": b"odd\n", "fine.trc": b"fine\n"})
    upload = write(tmp_path / "upload.zip", _patched(data, "odd.trc", "method", lambda _: 98))
    sources, skipped = discover([str(upload)])
    assert [(s.name, read(s)) for s in sources] == [("fine.trc", b"fine\n")]
    assert skipped == [Skipped(f"{upload}!odd.trc", "unsupported zip compression (method 98)", True)]


def test_a_truncated_zip_gives_back_the_members_before_the_damage(tmp_path: Path) -> None:
    """Without its central directory, a zip is read from its local headers: the members before
    the cut whole, the member the cut falls in up to the cut, then an error."""
    first = b"".join(b"first %d\n" % i for i in range(3000))
    second = b"".join(b"second member, line %d of it\n" % i for i in range(40_000))
    for method in (zipfile.ZIP_DEFLATED, zipfile.ZIP_STORED):  # (a cut bzip2 block gives nothing back)
        data = zip_bytes({"a.trc": first, "b.trc": second, "c.trc": b"c\n"}, method)
        upload = write(tmp_path / f"upload{method}.zip", data[: len(data) * 2 // 3])
        sources, skipped = discover([str(upload)])
        assert [s.label for s in sources] == [f"{upload}!a.trc", f"{upload}!b.trc"]
        assert read(sources[0]) == first
        with pytest.raises(CorruptInput, match=re.escape(f"{upload}!b.trc: truncated")):
            drain(sources[1])
        kept = io.BytesIO()
        with pytest.raises(CorruptInput), sources[1].opener() as stream:
            while chunk := stream.read(4096):
                kept.write(chunk)
        assert 0 < len(kept.getvalue()) < len(second) and second.startswith(kept.getvalue())
        [note] = skipped
        assert note.label == str(upload) and note.partial
        assert note.reason.startswith("corrupt or truncated zip archive (File is not a zip file)")
        assert note.reason.endswith(": 2 member(s) recovered from their local headers")


def test_a_streamed_zip_without_its_directory_recovers_what_has_an_end(tmp_path: Path) -> None:
    """A zip written as a stream gives its sizes after each member's data: a deflated member ends where
    its stream does, a stored one nowhere that can be found."""
    stream = _Unseekable()
    with zipfile.ZipFile(stream, "w") as archive:
        for name, method in (("a.trc", zipfile.ZIP_DEFLATED), ("b.trc", zipfile.ZIP_STORED)):
            info = zipfile.ZipInfo(name)
            info.compress_type = method
            with archive.open(info, "w") as out:
                out.write(name.encode() * 500)
    data = stream.data.getvalue()
    upload = write(tmp_path / "streamed.zip", data[: data.index(b"PK\x01\x02")])
    deflated, stored, note = _listed(upload)
    assert isinstance(deflated, Member)
    with deflated.open() as layer:
        assert layer.read(1 << 20) == b"a.trc" * 500
    assert stored == Skipped(
        f"{upload}!b.trc", "stored member of unknown size in a damaged zip: its end cannot be found", True
    )
    assert isinstance(note, Skipped) and note.reason.endswith(": 2 member(s) recovered from their local headers")


def test_a_zip_with_nothing_recoverable_is_skipped_with_the_reason(tmp_path: Path) -> None:
    upload = write(tmp_path / "upload.zip", b"PK\x03\x04" + b"\x00" * 10)
    assert discover([str(upload)]) == (
        [],
        [
            Skipped(
                str(upload),
                "corrupt or truncated zip archive (File is not a zip file): no member could be recovered",
                True,
            )
        ],
    )


def test_overlapping_zip_members_are_refused(tmp_path: Path) -> None:
    """Central directory entries that all point at one member's data (the "overlapping" zip
    bomb): none of them is read; a normal member beside them is."""
    kernel = zip_bytes({"k.trc": b"a line of text\n" * 70_000})  # 1 MiB of text in ~3 KB
    (size,) = struct.unpack_from("<I", kernel, 18)
    local_end = 30 + len("k.trc") + size
    entry = bytearray(kernel[local_end : local_end + 46])  # the central entry of k.trc, without its name
    struct.pack_into("<H", entry, 28, len("k000.trc"))
    directory = b"".join(bytes(entry) + f"k{i:03}.trc".encode() for i in range(200))
    end = struct.pack("<4sHHHHIIH", b"PK\x05\x06", 0, 0, 200, 200, len(directory), local_end, 0)
    upload = write(tmp_path / "overlap.zip", kernel[:local_end] + directory + end)
    fine = write(tmp_path / "fine.zip", zip_bytes({"fine.trc": b"fine\n"}))
    sources, skipped = discover([str(upload), str(fine)])
    assert [read(s) for s in sources] == [b"fine\n"]
    assert len(skipped) == 200 and all(s.partial and "overlap another member" in s.reason for s in skipped)
