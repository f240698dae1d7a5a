"""One input classified by its first bytes: a trace, compressed data peeled layer by layer, an archive, or skipped."""

from __future__ import annotations

import gzip
import hashlib
import io
import zipfile
from pathlib import Path

from analyzer.inputs.classify import HEAD_BYTES, Found, Source, expand
from analyzer.inputs.filenames import NOT_TRACE, Mode
from analyzer.inputs.limits import Limits, Session
from analyzer.inputs.skips import Skipped
from analyzer.inputs.sources import discover
from analyzer.inputs.streams import file_member
from tests.conftest import zip_bytes
from tests.uploads import contents, read, reasons, tar_bytes, write


def _expand(path: Path, mode: Mode, limits: Limits | None = None) -> list[Found | Skipped]:
    session = Session(limits or Limits())
    return list(expand(file_member(session, path, str(path), path.stat().st_size), 0, mode, session))


def test_files_are_opened_as_what_their_first_bytes_say(tmp_path: Path) -> None:
    """A zip, a tarball or a gzip named .trc or without extension is opened as what it is; a
    document or binary data named .trc is skipped as not a text trace."""
    folder = tmp_path / "up"
    write(folder / "zipped.trc", zip_bytes({"in/a.trc": b"a\n"}))
    write(folder / "noext", tar_bytes({"b.trc": b"b\n"}, "w:gz"))
    write(folder / "c.trc", gzip.compress(b"c\n"))
    write(folder / "d.trc.gz", b"plain text after all\n")
    write(folder / "report.trc", zip_bytes({"[Content_Types].xml": b"<xml/>", "word/document.xml": b"<w/>"}))
    write(folder / "paper.trc", b"%PDF-1.4\n%binary\n")
    write(folder / "random.trc", bytes(range(256)) * 40)
    write(folder / "README", b"just text, no extension\n")
    sources, skipped = discover([str(folder)])
    assert contents(sources) == {
        f"{folder}/c.trc": b"c\n",
        f"{folder}/d.trc.gz": b"plain text after all\n",
        f"{folder}/noext!b.trc": b"b\n",
        f"{folder}/zipped.trc!in/a.trc": b"a\n",
    }
    assert reasons(skipped) == {
        f"{folder}/README": NOT_TRACE,
        f"{folder}/paper.trc": "not a text trace: a PDF document",
        f"{folder}/random.trc": "not a text trace: binary data (10% control bytes in the first 10,200)",
        f"{folder}/report.trc": "not a text trace: a document or Java archive (zip of XML or classes)",
    }
    assert not any(item.partial for item in skipped)


def test_a_gzip_that_is_not_gzip_is_read_as_what_it_is(tmp_path: Path) -> None:
    """The first bytes decide: plain text named .gz is read as text."""
    path = write(tmp_path / "a.trc.gz", b"plain text, not gzip\n")
    sources, skipped = discover([str(path)])
    assert ([s.label for s in sources], skipped) == ([str(path)], [])
    assert read(sources[0]) == b"plain text, not gzip\n"


def test_text_is_a_trace_only_where_its_name_or_the_command_line_asks_for_one(tmp_path: Path) -> None:
    """The same text is a source when named or found as `*.trc`, and skipped where only an archive was wanted."""
    text = b"Trace file /u01/x/cdb1_nss2_1.trc\n" * 10
    path = write(tmp_path / "notes", gzip.compress(text))
    for mode in ("named", "trace"):
        [found] = _expand(path, mode)
        assert isinstance(found, Found) and read(found.source) == text
        assert found.key == (len(text), hashlib.sha256(text).digest())  # the decompressed head, to find copies
    for mode in ("archive", "probe"):
        assert _expand(path, mode) == [Skipped(str(path), NOT_TRACE)]


def test_an_archive_found_by_its_first_bytes_has_its_members_classified_in_turn(tmp_path: Path) -> None:
    inner = tar_bytes({"t/a.trc": b"a\n", "t/a.trm": b"map", "t/more": zip_bytes({"b.trc.gz": gzip.compress(b"b\n")})})
    path = write(tmp_path / "upload", inner)
    got = _expand(path, "probe")
    assert [(x.source.label, read(x.source)) for x in got if isinstance(x, Found)] == [
        (f"{path}!t/a.trc", b"a\n"),
        (f"{path}!t/more!b.trc.gz", b"b\n"),
    ]
    assert [x for x in got if isinstance(x, Skipped)] == [
        Skipped(f"{path}!t/a.trm", "trace map (.trm) file: ADR metadata, nothing to parse")
    ]


def test_the_digest_of_a_found_trace_is_of_its_whole_content_and_none_when_it_breaks(tmp_path: Path) -> None:
    text = b"".join(b"line %d of a trace\n" % i for i in range(20_000))  # longer than the head
    assert len(text) > HEAD_BYTES
    [whole] = _expand(write(tmp_path / "a.trc.gz", gzip.compress(text)), "trace")
    assert isinstance(whole, Found) and whole.full_digest() == hashlib.sha256(text).digest()
    packed = gzip.compress(text)
    [broken] = _expand(write(tmp_path / "b.trc.gz", packed[: len(packed) // 2]), "trace")
    assert isinstance(broken, Found) and broken.full_digest() is None


def test_a_nesting_bomb_is_opened_down_to_the_depth_limit(tmp_path: Path) -> None:
    inner = zip_bytes({"a10.trc": b"deepest\n"})
    for level in range(9, 0, -1):
        inner = zip_bytes({f"a{level}.trc": f"level {level}\n".encode(), f"n{level + 1}.zip": inner})
    upload = write(tmp_path / "n1.zip", inner)
    sources, skipped = discover([str(upload)])
    assert sorted(s.name for s in sources) == sorted(f"a{level}.trc" for level in range(1, 9))
    deepest = "!".join([str(upload), *(f"n{level}.zip" for level in range(2, 10))])
    assert skipped == [Skipped(deepest, "nesting depth over the limit (8): not opened", True)]


def test_stacked_compression_counts_toward_the_depth(tmp_path: Path) -> None:
    data = b"x\n"
    for _ in range(3):
        data = gzip.compress(data)
    stacked = write(tmp_path / "a.trc.gz.gz.gz", data)
    sources, skipped = discover([str(stacked)], limits=Limits(max_depth=2))
    assert sources == [] and [item.reason for item in skipped] == ["nesting depth over the limit (2): not opened"]
    sources, _ = discover([str(stacked)], limits=Limits(max_depth=3))
    assert read(sources[0]) == b"x\n"


def test_source_name_drops_the_archive_path_and_every_compression_suffix() -> None:
    def name(label: str) -> str:
        return Source(label, lambda: io.BytesIO()).name

    assert name("up.zip!n1.zip!a/b/cdb1_rfs_1.trc.gz") == "cdb1_rfs_1.trc"
    assert name(r"C:\\up\\cdb1_lgwr_2.trc.zst.xz") == "cdb1_lgwr_2.trc"
    assert name("odd.gz") == "odd"


def test_every_source_knows_its_stored_size_and_its_input(tmp_path: Path) -> None:
    """Compressed zip members too (read in place or not): small ones are then read in batches, and the
    time spent on each is charged to the input it came from."""
    upload = write(tmp_path / "up.zip", zip_bytes({"a.trc": b"a line\n" * 1000, "b.trc": b"b\n"}))
    plain = write(tmp_path / "c.trc", b"c\n")
    sources, _ = discover([str(upload), str(plain)])
    with zipfile.ZipFile(upload) as archive:
        stored = [archive.getinfo(name).compress_size for name in ("a.trc", "b.trc")]
    assert [(s.label.rsplit("/", 1)[-1], s.stored_bytes) for s in sources] == [
        ("up.zip!a.trc", stored[0]),
        ("up.zip!b.trc", stored[1]),
        ("c.trc", 2),
    ]
    assert stored[0] < 100
    assert [s.tree.label if s.tree else None for s in sources] == [str(upload), str(upload), str(plain)]
