"""Tar archives: listed in place or streamed once (a .tar.gz) with the members worth reading spooled;
links, devices and odd members refused; a damaged tar read up to the damage."""

from __future__ import annotations

import io
import os
import re
import tarfile
from pathlib import Path

import pytest

from analyzer.base.errors import CorruptInput
from analyzer.inputs.filenames import wanted
from analyzer.inputs.limits import Limits, Session, Tree
from analyzer.inputs.skips import Skipped
from analyzer.inputs.sources import discover
from analyzer.inputs.streams import Layer, Member, Meter, Region, decompressing, open_file
from analyzer.inputs.tar_archives import tar_members
from tests.uploads import drain, member, read, tar_of, write

MiB = 1024 * 1024


class Newlines(io.RawIOBase):
    """`size` newline bytes (text: read, not skipped as binary), produced on demand."""

    def __init__(self, size: int) -> None:
        super().__init__()
        self.left = size

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: memoryview) -> int:
        count = min(len(buffer), self.left)
        buffer[:count] = b"\n" * count
        self.left -= count
        return count


def member_with_size(name: str, size: int) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.size = size
    return info


def test_a_tar_on_disk_is_listed_in_place_and_odd_members_are_said(tmp_path: Path) -> None:
    infos = [
        (member("t", tarfile.DIRTYPE), b""),
        (member("t/multi.trc", b"M"), b""),
        (member("t/a.trc"), b"a\n" * 50),
        (member("t/notes.txt"), b"notes"),
    ]
    upload = write(tmp_path / "up.tar", tar_of(infos))
    session = Session(Limits())
    size = upload.stat().st_size
    listed = list(tar_members(session, Region(session, upload, 0, size), str(upload), Tree(session, "", size), wanted))
    odd, trace, notes = listed
    assert odd == Skipped(f"{upload}!t/multi.trc", "not a regular file member (tar type b'M')")
    assert isinstance(trace, Member) and trace.region is not None and trace.region.path == upload
    assert upload.read_bytes()[trace.region.start : trace.region.start + trace.region.length] == b"a\n" * 50
    with trace.open() as layer:
        assert layer.read(1 << 20) == b"a\n" * 50
    assert notes == Skipped(f"{upload}!t/notes.txt", "not a trace file (*.trc) or alert log (alert_*.log) by its name")
    assert session.spooled == 0  # read where it is: nothing copied


def test_a_compressed_tar_is_streamed_once_and_only_wanted_members_are_spooled(tmp_path: Path) -> None:
    big = os.urandom(40_000)
    upload = write(tmp_path / "up.tar.gz", tar_of([(member("skip.bin"), big), (member("a.trc"), b"a\n")], "w:gz"))
    session = Session(Limits())
    label, size = str(upload), upload.stat().st_size
    tree = Tree(session, label, size)
    packed = Layer(open_file(upload), label, tree=tree)
    listed = list(tar_members(session, decompressing(packed, ".gz", Meter(session, label, tree)), label, tree, wanted))
    skipped, trace = listed
    assert skipped == Skipped(f"{upload}!skip.bin", "not a trace file (*.trc) or alert log (alert_*.log) by its name")
    assert isinstance(trace, Member) and trace.region is not None and trace.region.path is None  # in the spool
    assert session.spooled == 2  # a.trc's bytes, not skip.bin's 40,000
    with trace.open() as layer:
        assert layer.read(1 << 20) == b"a\n"


def test_a_bomb_inside_a_tarball_stops_its_listing_and_keeps_earlier_members(
    tmp_path: Path,
) -> None:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        archive.addfile(member_with_size("ok.trc", 5), io.BytesIO(b"fine\n"))
        archive.addfile(member_with_size("bomb.trc", 50 * MiB), Newlines(50 * MiB))
        archive.addfile(member_with_size("later.trc", 5), io.BytesIO(b"late\n"))
    upload = write(tmp_path / "upload.tar.gz", buffer.getvalue())
    sources, skipped = discover([str(upload)], limits=Limits(max_ratio=100))
    assert [(s.label, read(s)) for s in sources] == [(f"{upload}!ok.trc", b"fine\n")]
    [stopped] = skipped
    assert stopped.label == f"{upload}!bomb.trc" and stopped.partial
    assert stopped.reason.startswith("compression ratio over the limit (100:1)")
    assert stopped.reason.endswith("; the rest of the archive is not listed")


def test_a_truncated_tarball_gives_back_what_was_before_the_damage(tmp_path: Path) -> None:
    first = b"".join(b"first %d\n" % i for i in range(3000))
    second = os.urandom(400_000).hex().encode() + b"\n"
    data = tar_of([(member("a.trc"), first), (member("b.trc"), second), (member("c.trc"), b"c\n")], "w:gz")
    upload = write(tmp_path / "upload.tar.gz", data[: len(data) // 2])
    sources, skipped = discover([str(upload)])
    assert [s.label for s in sources] == [f"{upload}!a.trc", f"{upload}!b.trc"]
    assert read(sources[0]) == first
    with pytest.raises(CorruptInput, match=re.escape(f"{upload}!b.trc: ")):
        drain(sources[1])
    [note] = skipped
    assert note.label == str(upload) and note.partial and note.reason.startswith("listing stopped:")


def test_a_truncated_tar_member_raises_corrupt_input_and_stops_the_listing(
    tmp_path: Path,
) -> None:
    data = tar_of([(member("a.trc"), b"a line of a trace\n" * 6_000), (member("b.trc"), b"b\n")])
    upload = write(tmp_path / "upload.tar", data[:50_000])
    sources, skipped = discover([str(upload)], dedupe=False)
    assert [s.label for s in sources] == [f"{upload}!a.trc"]
    with pytest.raises(CorruptInput, match=re.escape(f"{upload}!a.trc: truncated")):
        read(sources[0])
    assert [item.label for item in skipped] == [str(upload)] and skipped[0].partial
    assert skipped[0].reason.startswith("listing stopped: corrupt or truncated tar")
