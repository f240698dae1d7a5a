"""Hostile and broken uploads through discovery as a whole: bombs, traversal names, links, corruption, limits.

What one archive format does with its own damage is in test_zip_archives.py and test_tar_archives.py.
"""

from __future__ import annotations

import bz2
import gzip
import io
import lzma
import os
import re
import stat
import tarfile
import tempfile
import tracemalloc
import zipfile
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import zstandard
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from analyzer.base.errors import CorruptInput, ExitCode, LimitExceeded
from analyzer.inputs.sources import Limits, Skipped, discover
from tests.conftest import zip_bytes
from tests.uploads import drain, member, read, tar_of, write

MiB = 1024 * 1024
BOMB_SIZE = 200 * MiB
NEWLINES = b"\n" * MiB


@pytest.fixture(scope="module")
def gzip_bomb(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """200 MiB of newlines in a ~200 KB gzip file."""
    path = tmp_path_factory.mktemp("bomb") / "cdb1_rfs_1.trc.gz"
    with gzip.open(path, "wb") as out:
        for _ in range(BOMB_SIZE // MiB):
            out.write(NEWLINES)
    return path


def peak_memory(action: Callable[[], object]) -> int:
    tracemalloc.start()
    try:
        action()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


# --- ratio and size bombs -------------------------------------------------------------------


def test_a_gzip_bomb_stops_while_reading_and_memory_stays_small(gzip_bomb: Path) -> None:
    assert gzip_bomb.stat().st_size < 300_000
    sources, skipped = discover([str(gzip_bomb)], limits=Limits(max_ratio=50))
    assert len(sources) == 1 and skipped == []

    def read_until_stopped() -> None:
        with pytest.raises(LimitExceeded) as error:
            drain(sources[0])
        assert str(error.value).startswith(f"{gzip_bomb}: compression ratio over the limit (50:1)")
        assert error.value.exit_code == ExitCode.PARTIAL

    assert peak_memory(read_until_stopped) < 8 * MiB


def test_default_limits_stop_a_deflate_bomb(gzip_bomb: Path) -> None:
    sources, _ = discover([str(gzip_bomb)])
    with pytest.raises(LimitExceeded, match=r"ratio over the limit \(1000:1\)"):
        drain(sources[0])


def test_with_the_limit_raised_a_bomb_streams_through_in_bounded_memory(gzip_bomb: Path) -> None:
    sources, _ = discover([str(gzip_bomb)], limits=Limits(max_ratio=1e6))
    total: list[int] = []
    assert peak_memory(lambda: total.append(drain(sources[0]))) < 8 * MiB
    assert total == [BOMB_SIZE]


def test_a_zip_bomb_member_stops_and_the_other_members_keep_working(tmp_path: Path) -> None:
    upload = tmp_path / "upload.zip"
    with zipfile.ZipFile(upload, "w", zipfile.ZIP_DEFLATED) as archive:
        with archive.open("bomb.trc", "w") as out:
            for _ in range(50):
                out.write(NEWLINES)
        archive.writestr("fine.trc", b"fine\n")
    sources, _ = discover([str(upload)], limits=Limits(max_ratio=100))
    assert [s.name for s in sources] == ["bomb.trc", "fine.trc"]
    with pytest.raises(LimitExceeded, match=re.escape(f"{upload}!bomb.trc: compression ratio")):
        drain(sources[0])
    assert read(sources[1]) == b"fine\n"


def test_the_total_decompressed_bytes_limit_covers_the_whole_input(tmp_path: Path) -> None:
    text = b"".join(b"line %d of a trace\n" % i for i in range(150_000))  # ~3 MiB
    one = write(tmp_path / "one.trc.gz", gzip.compress(text))
    two = write(tmp_path / "two.trc.bz2", bz2.compress(text[::-1]))
    sources, _ = discover([str(one), str(two)], limits=Limits(max_total_bytes=4 * MiB))
    assert read(sources[0]) == text
    with pytest.raises(LimitExceeded, match=re.escape(f"{two}: decompressed bytes of the whole")):
        read(sources[1])
    assert read(sources[0]) == text  # re-reading what was already counted costs nothing


def test_the_member_count_limit_stops_listing(tmp_path: Path) -> None:
    members = {f"m{i:02}.trc": f"{i}\n".encode() for i in range(30)}
    upload = write(tmp_path / "upload.zip", zip_bytes(members))
    tarball = write(
        tmp_path / "upload.tar.gz",
        tar_of([(member(name), data) for name, data in members.items()], "w:gz"),
    )
    for path in (upload, tarball):
        sources, skipped = discover([str(path)], limits=Limits(max_members=10))
        assert [read(s) for s in sources] == [f"{i}\n".encode() for i in range(10)]
        [stop] = skipped
        assert stop.label == str(path) and stop.partial
        assert "archive members of the whole input over the limit (10, --max-members)" in stop.reason


def test_oversized_archive_metadata_is_refused_before_it_is_read(tmp_path: Path) -> None:
    many = zip_bytes({f"{'d' * 200}/{i}.trc": b"x" for i in range(40)})
    upload = write(tmp_path / "upload.zip", many)
    _, skipped = discover([str(upload)], limits=Limits(max_header_bytes=4096))
    [refused] = skipped
    assert refused.label == str(upload) and refused.partial
    assert re.fullmatch(r"metadata block of .* over the header size limit \(4 KiB\)", refused.reason)
    long_name = "x" * 3000 + ".trc"
    for fmt, mode in ((tarfile.GNU_FORMAT, "w"), (tarfile.PAX_FORMAT, "w:gz")):
        data = tar_of([(member(long_name), b"x\n")], mode, format=fmt)
        path = write(tmp_path / f"long{fmt}.tar{'.gz' if 'gz' in mode else ''}", data)
        sources, skipped = discover([str(path)], limits=Limits(max_header_bytes=1024))
        assert sources == [] and len(skipped) == 1 and skipped[0].partial
        assert re.search(r"listing stopped: tar header block of .* over the header", skipped[0].reason)


def test_the_header_limit_does_not_limit_member_data(tmp_path: Path) -> None:
    data = os.urandom(150_000).hex().encode()
    uploads = [
        write(tmp_path / "stored.zip", zip_bytes({"a.trc": data}, zipfile.ZIP_STORED)),
        write(tmp_path / "deflated.zip", zip_bytes({"a.trc": data})),
        write(tmp_path / "plain.tar", tar_of([(member("a.trc"), data)])),
        write(tmp_path / "packed.tar.gz", tar_of([(member("a.trc"), data)], "w:gz")),
    ]
    sources, skipped = discover([str(u) for u in uploads], limits=Limits(max_header_bytes=2048), dedupe=False)
    assert [read(s) for s in sources] == [data] * 4 and skipped == []


def test_a_nested_archive_over_the_spool_limit_is_skipped(tmp_path: Path) -> None:
    nested = zip_bytes({"a.trc": os.urandom(100_000).hex().encode()}, zipfile.ZIP_STORED)
    upload = write(tmp_path / "upload.zip", zip_bytes({"node1.zip": nested, "b.trc": b"b\n"}))
    sources, skipped = discover([str(upload)], limits=Limits(max_spool_bytes=64 * 1024))
    assert [s.name for s in sources] == ["b.trc"]
    assert skipped == [Skipped(f"{upload}!node1.zip", "temporary spool over the limit (64 KiB)", True)]


# --- names are only labels ------------------------------------------------------------------


def snapshot(root: Path) -> set[str]:
    return {str(path) for path in root.rglob("*")}


def test_traversal_and_absolute_member_names_write_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    work = tmp_path / "work" / "a" / "b"
    work.mkdir(parents=True)
    monkeypatch.chdir(work)
    names = [
        "../../escaped.trc",
        "../../../../../../../../tmp/escaped_dgtrace.trc",
        f"{tmp_path}/absolute.trc",
        "/etc/dgtrace_test_escape.trc",
        "..\\..\\windows.trc",
    ]
    zipped = write(tmp_path / "up" / "upload.zip", zip_bytes({n: n.encode() for n in names}))
    tarred = tar_of([(member(n), n.encode()) for n in names], "w:gz")
    tarball = write(tmp_path / "up" / "upload.tgz", tarred)
    nested = write(tmp_path / "up" / "nested.zip", zip_bytes({"in.zip": zipped.read_bytes()}))
    before = snapshot(tmp_path.parent)

    sources, skipped = discover([str(zipped), str(tarball), str(nested)], dedupe=False)
    got = {source.label: read(source) for source in sources}

    assert snapshot(tmp_path.parent) == before
    assert not Path("/etc/dgtrace_test_escape.trc").exists()
    assert not Path("/tmp/escaped_dgtrace.trc").exists()
    assert skipped == []
    # tarfile drops the leading "/" of absolute names when it writes them
    assert got[f"{zipped}!../../escaped.trc"] == b"../../escaped.trc"
    assert got[f"{zipped}!/etc/dgtrace_test_escape.trc"] == b"/etc/dgtrace_test_escape.trc"
    assert got[f"{nested}!in.zip!{tmp_path}/absolute.trc"] == f"{tmp_path}/absolute.trc".encode()
    assert got[f"{tarball}!../../escaped.trc"] == b"../../escaped.trc"
    assert len(got) == 3 * len(names)


def test_control_characters_in_member_names_are_escaped_in_labels(tmp_path: Path) -> None:
    upload = write(tmp_path / "u.zip", zip_bytes({"evil\x1b[2J\n.trc": b"x"}))
    sources, _ = discover([str(upload)])
    assert [s.label for s in sources] == [f"{upload}!evil\\x1b[2J\\n.trc"]


# --- links and devices ------------------------------------------------------------------------


def test_link_and_device_members_are_skipped(tmp_path: Path) -> None:
    infos = [
        (member("link.trc", tarfile.SYMTYPE, "/etc/passwd"), b""),
        (member("hard.trc", tarfile.LNKTYPE, "real.trc"), b""),
        (member("tty.trc", tarfile.CHRTYPE), b""),
        (member("fifo.trc", tarfile.FIFOTYPE), b""),
        (member("real.trc"), b"real\n"),
    ]
    for name, mode in (("t.tar", "w"), ("t.tar.gz", "w:gz")):
        upload = write(tmp_path / name, tar_of(infos, mode))
        sources, skipped = discover([str(upload)])
        assert [(s.label, read(s)) for s in sources] == [(f"{upload}!real.trc", b"real\n")]
        # a hard link before its target (tar never writes one): a streamed tar finds it on a second pass
        hard = "hard link to real.trc, which is not a member read before it: not followed"
        if mode == "w:gz":
            hard = f"duplicate content: the same bytes as {upload}!real.trc"
        assert {item.label.rsplit("!")[-1]: item.reason for item in skipped} == {
            "link.trc": "symbolic link member: not followed",
            "hard.trc": hard,
            "tty.trc": "device or FIFO member: no content to read",
            "fifo.trc": "device or FIFO member: no content to read",
        }
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        link = zipfile.ZipInfo("link.trc")
        link.create_system = 3
        link.external_attr = (stat.S_IFLNK | 0o777) << 16
        archive.writestr(link, "/etc/passwd")
    upload = write(tmp_path / "links.zip", buffer.getvalue())
    assert discover([str(upload)]) == (
        [],
        [Skipped(f"{upload}!link.trc", "symbolic link member: not followed")],
    )


# --- corrupt and truncated data -------------------------------------------------------------


def test_a_stored_member_is_metered_too(tmp_path: Path) -> None:
    text = b"".join(b"stored line %d\n" % i for i in range(200_000))  # ~3 MiB
    upload = write(tmp_path / "u.zip", zip_bytes({"a.trc": text}, zipfile.ZIP_STORED))
    sources, _ = discover([str(upload)], limits=Limits(max_total_bytes=MiB))
    with pytest.raises(LimitExceeded, match="decompressed bytes of the whole input over the limit"):
        drain(sources[0])


def test_corrupt_member_data_raises_corrupt_input_naming_the_member(tmp_path: Path) -> None:
    text = b"".join(b"line %d\n" % i for i in range(20_000))
    data = bytearray(zip_bytes({"a.trc": text, "b.trc": b"b\n"}))
    data[len(data) // 3 : len(data) // 3 + 8] = b"\xff" * 8  # inside a.trc's deflate stream
    upload = write(tmp_path / "upload.zip", bytes(data))
    sources, _ = discover([str(upload)], dedupe=False)
    with pytest.raises(CorruptInput, match=re.escape(f"{upload}!a.trc: corrupt")) as error:
        read(sources[0])
    assert error.value.exit_code == ExitCode.PARTIAL
    assert read(sources[1]) == b"b\n"


def gzip_variants(text: bytes) -> Iterator[tuple[str, bytes]]:
    data = gzip.compress(text)
    yield "truncated", data[: len(data) - 100]
    flipped = bytearray(data)
    flipped[len(data) // 2 : len(data) // 2 + 16] = bytes(16)
    yield "flipped", bytes(flipped)


@pytest.mark.parametrize("dedupe", [True, False])
def test_a_corrupt_gzip_raises_corrupt_input_while_reading(tmp_path: Path, dedupe: bool) -> None:
    text = b"".join(b"%d some trace text that compresses\n" % i for i in range(40_000))
    for kind, data in gzip_variants(text):
        path = write(tmp_path / f"{kind}.trc.gz", data)
        sources, skipped = discover([str(path)], dedupe=dedupe)
        assert skipped == []
        with pytest.raises(CorruptInput, match=re.escape(f"{path}: corrupt, truncated")):
            read(sources[0])


# --- property: random and mutated bytes raise only the documented errors ---------------------

NAMES = ["x.trc", "x.trc.gz", "x.trc.bz2", "x.trc.xz", "x.trc.zst", "x.zip", "x.tar", "x.tgz"]
NAMES += ["x.tar.xz", "x.zip.gz"]
TEXT = b"".join(b"*** 2024-01-01T00:00:%02d.000000+00:00\nline %d\n" % (i % 60, i) for i in range(400))


def _samples() -> list[tuple[str, bytes]]:
    zstd = zstandard.ZstdCompressor().compress
    tar = tar_of([(member("t/a.trc"), TEXT), (member("t/b.trc.gz"), gzip.compress(TEXT))])
    inner = zip_bytes({"a.trc": TEXT, "b.trc.bz2": bz2.compress(TEXT)})
    return [
        ("x.trc.gz", gzip.compress(TEXT)),
        ("x.trc.bz2", bz2.compress(TEXT)),
        ("x.trc.xz", lzma.compress(TEXT)),
        ("x.trc.zst", zstd(TEXT)),
        ("x.zip", zip_bytes({"a.trc": TEXT, "n.zip": inner, "t.tar.gz": gzip.compress(tar)})),
        ("x.zip", zip_bytes({"a.trc": TEXT, "b.trc": TEXT[::-1]}, zipfile.ZIP_STORED)),
        ("x.zip", zip_bytes({"a.trc": TEXT}, zipfile.ZIP_LZMA)),
        ("x.zip", zip_bytes({"a.trc": TEXT}, zipfile.ZIP_BZIP2)),
        ("x.tar", tar),
        ("x.tgz", gzip.compress(tar)),
        ("x.tar.xz", lzma.compress(tar)),
    ]


SAMPLES = _samples()
SMALL = Limits(max_ratio=100, ratio_grace_bytes=64 * 1024, max_total_bytes=64 * MiB)


def exercise(path: Path) -> None:
    """Discover and read everything; only the documented exceptions may come out of reading."""
    for dedupe in (True, False):
        sources, _ = discover([str(path)], limits=SMALL, dedupe=dedupe)
        for source in sources:
            try:
                drain(source)
            except (CorruptInput, LimitExceeded) as error:
                assert str(error).startswith(source.label.split("!")[0])
                assert "\n" not in str(error)


@settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.binary(max_size=4096), name=st.sampled_from(NAMES), in_zip=st.booleans())
def test_random_bytes_raise_only_documented_errors(data: bytes, name: str, in_zip: bool) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        payload = zip_bytes({name: data}) if in_zip else data
        exercise(write(Path(tmp) / ("upload.zip" if in_zip else name), payload))


@settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    sample=st.sampled_from(SAMPLES),
    edits=st.lists(st.tuples(st.integers(min_value=0), st.integers(0, 255)), max_size=6),
    cut=st.none() | st.integers(min_value=0),
)
def test_mutated_archives_raise_only_documented_errors(
    sample: tuple[str, bytes], edits: list[tuple[int, int]], cut: int | None
) -> None:
    name, original = sample
    data = bytearray(original)
    for position, value in edits:
        data[position % len(data)] = value
    if cut is not None:
        data = data[: cut % (len(data) + 1)]
    with tempfile.TemporaryDirectory() as tmp:
        exercise(write(Path(tmp) / name, bytes(data)))
