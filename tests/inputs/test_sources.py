"""Input discovery: files, folders, globs, compression wrappers, archives, nesting, duplicates."""

from __future__ import annotations

import bz2
import errno
import gzip
import io
import lzma
import os
import zipfile
from collections.abc import Callable
from pathlib import Path

import pytest
import zstandard

from analyzer.base.errors import CorruptInput, ExitCode, UsageError
from analyzer.inputs import streams as archives
from analyzer.inputs.sources import Skipped, Source, discover
from tests.conftest import zip_bytes
from tests.uploads import contents, read, reasons, tar_bytes, write

COMPRESS: dict[str, Callable[[bytes], bytes]] = {
    ".gz": gzip.compress,
    ".bz2": bz2.compress,
    ".xz": lzma.compress,
    ".zst": lambda data: zstandard.ZstdCompressor().compress(data),
}
NOT_TRACE = "not a trace file (*.trc) or alert log (alert_*.log) by its name"
MAP_REASON = "trace map (.trm) file: ADR metadata, nothing to parse"
TRACE = b"Trace file /u01/app/oracle/diag/rdbms/cdb1/cdb1/trace/cdb1_lgwr_1234.trc\nline 2\n"


# --- plain files, folders, globs ---------------------------------------------------------


def test_a_file_named_explicitly_is_read_whatever_its_name(tmp_path: Path) -> None:
    notes = write(tmp_path / "notes.log", b"some text\n")
    trm = write(tmp_path / "x.trm", b"map\n")
    sources, skipped = discover([str(notes), str(trm)])
    assert contents(sources) == {str(notes): b"some text\n", str(trm): b"map\n"}
    assert skipped == []


def test_a_folder_is_walked_recursively_and_non_traces_are_listed(tmp_path: Path) -> None:
    write(tmp_path / "up" / "a.trc", b"a\n")
    write(tmp_path / "up" / "deep" / "er" / "b.trc", b"b\n")
    write(tmp_path / "up" / "a.trm", b"m")
    write(tmp_path / "up" / "alert_cdb1.log", b"alert")
    write(tmp_path / "up" / "listener.log", b"tns")
    (tmp_path / "up" / "link.trc").symlink_to(tmp_path / "up" / "a.trc")
    (tmp_path / "up" / "deep" / "in.trc").symlink_to(tmp_path / "up" / "deep" / "er" / "b.trc")
    write(tmp_path / "elsewhere" / "c.trc", b"c\n")
    (tmp_path / "up" / "out.trc").symlink_to(tmp_path / "elsewhere" / "c.trc")
    (tmp_path / "up" / "loop").symlink_to(tmp_path / "up")
    up = tmp_path / "up"
    sources, skipped = discover([str(up)])
    assert contents(sources) == {f"{up}/a.trc": b"a\n", f"{up}/alert_cdb1.log": b"alert", f"{up}/deep/in.trc": b"b\n"}
    assert reasons(skipped) == {
        f"{up}/a.trm": MAP_REASON,
        f"{up}/listener.log": NOT_TRACE,
        f"{up}/link.trc": f"the same file as {up}/a.trc",
        f"{up}/deep/er/b.trc": f"the same file as {up}/deep/in.trc",
        f"{up}/out.trc": "symbolic link leading outside the folder given: not followed",
        f"{up}/loop": "symbolic link to a folder already walked: not followed twice",
    }
    assert not any(item.partial for item in skipped)


def test_globs_expand_and_a_path_that_names_nothing_is_a_usage_error(tmp_path: Path) -> None:
    write(tmp_path / "a_1.trc", b"1\n")
    write(tmp_path / "a_2.trc", b"2\n")
    write(tmp_path / "b.trc", b"b\n")
    sources, _ = discover([str(tmp_path / "a_*.trc")])
    assert [s.name for s in sources] == ["a_1.trc", "a_2.trc"]
    with pytest.raises(UsageError, match="no such file") as missing:
        discover([str(tmp_path / "nothing.trc")])
    assert missing.value.exit_code == ExitCode.USAGE
    with pytest.raises(UsageError):
        discover([str(tmp_path / "z*.trc")])


def test_the_same_path_given_twice_is_one_source(tmp_path: Path) -> None:
    trace = write(tmp_path / "a.trc", b"a\n")
    sources, skipped = discover([str(trace), str(trace)], dedupe=False)
    assert [s.label for s in sources] == [str(trace)]
    assert skipped == []


# --- compression wrappers and archives ------------------------------------------------------


@pytest.mark.parametrize("suffix", list(COMPRESS))
def test_compressed_traces_are_decompressed_as_streams(tmp_path: Path, suffix: str) -> None:
    explicit = write(tmp_path / f"cdb1_lgwr_1234.trc{suffix}", COMPRESS[suffix](TRACE))
    write(tmp_path / "dir" / f"cdb1_nss2_77.trc{suffix}", COMPRESS[suffix](b"nss\n"))
    write(tmp_path / "dir" / f"cdb1_nss2_77.trm{suffix}", COMPRESS[suffix](b"map"))
    sources, skipped = discover([str(explicit), str(tmp_path / "dir")])
    assert [(s.name, read(s)) for s in sources] == [
        ("cdb1_lgwr_1234.trc", TRACE),
        ("cdb1_nss2_77.trc", b"nss\n"),
    ]
    assert [item.reason for item in skipped] == ["trace map (.trm) file: ADR metadata, nothing to parse"]


def _archive(kind: str, members: dict[str, bytes]) -> bytes:
    builders: dict[str, Callable[[], bytes]] = {
        ".zip": lambda: zip_bytes(members),
        ".zip(stored)": lambda: zip_bytes(members, zipfile.ZIP_STORED),
        ".zip(bzip2)": lambda: zip_bytes(members, zipfile.ZIP_BZIP2),
        ".zip(lzma)": lambda: zip_bytes(members, zipfile.ZIP_LZMA),
        ".tar": lambda: tar_bytes(members),
        ".tar.gz": lambda: tar_bytes(members, "w:gz"),
        ".tgz": lambda: tar_bytes(members, "w:gz"),
        ".tar.bz2": lambda: tar_bytes(members, "w:bz2"),
        ".tar.xz": lambda: tar_bytes(members, "w:xz"),
        ".tar.zst": lambda: COMPRESS[".zst"](tar_bytes(members)),
    }
    return builders[kind]()


ARCHIVES = [".zip", ".zip(stored)", ".zip(bzip2)", ".zip(lzma)", ".tar", ".tar.gz", ".tgz"]
ARCHIVES += [".tar.bz2", ".tar.xz", ".tar.zst"]


@pytest.mark.parametrize("kind", ARCHIVES)
def test_archives_are_listed_and_members_streamed(tmp_path: Path, kind: str) -> None:
    members = {
        "trace/cdb1_lgwr_1234.trc": TRACE,
        "trace/cdb1_lgwr_1234.trm": b"map",
        "trace/cdb1_rfs_4809.trc.gz": gzip.compress(b"rfs\n"),
        "trace/alert_cdb1.log": b"alert",
    }
    upload = write(tmp_path / f"upload{kind.split('(')[0]}", _archive(kind, members))
    sources, skipped = discover([str(upload)])
    assert contents(sources) == {
        f"{upload}!trace/cdb1_lgwr_1234.trc": TRACE,
        f"{upload}!trace/cdb1_rfs_4809.trc.gz": b"rfs\n",
        f"{upload}!trace/alert_cdb1.log": b"alert",
    }
    assert sorted(s.name for s in sources) == ["alert_cdb1.log", "cdb1_lgwr_1234.trc", "cdb1_rfs_4809.trc"]
    assert reasons(skipped) == {f"{upload}!trace/cdb1_lgwr_1234.trm": MAP_REASON}


def test_nested_archives_are_read_at_any_depth_with_chained_labels(tmp_path: Path) -> None:
    inner_zip = zip_bytes({"deep/a.trc.gz": gzip.compress(b"a\n")})
    inner_tgz = tar_bytes({"t/b.trc": b"b\n", "t/in.zip": zip_bytes({"c.trc": b"c\n"})}, "w:gz")
    outer = zip_bytes({"node1.zip": inner_zip, "node2.tar.gz": inner_tgz})
    upload = write(tmp_path / "upload.zip.xz", COMPRESS[".xz"](zip_bytes({"outer.zip": outer})))
    sources, skipped = discover([str(upload)])
    prefix = f"{upload}!outer.zip"
    assert contents(sources) == {
        f"{prefix}!node1.zip!deep/a.trc.gz": b"a\n",
        f"{prefix}!node2.tar.gz!t/b.trc": b"b\n",
        f"{prefix}!node2.tar.gz!t/in.zip!c.trc": b"c\n",
    }
    assert skipped == []


def test_a_member_can_be_reopened_and_members_read_side_by_side(tmp_path: Path) -> None:
    big = {f"m{i}.trc": bytes([65 + i]) * 300_000 for i in range(3)}
    upload = write(tmp_path / "u.zip", zip_bytes({"n.zip": zip_bytes(big)}))
    sources, _ = discover([str(upload)])
    streams = [source.opener() for source in sources]
    chunks: list[list[bytes]] = [[] for _ in streams]
    while any(chunk := [s.read(65536) for s in streams]):
        for kept, piece in zip(chunks, chunk, strict=True):
            kept.append(piece)
    for stream in streams:
        stream.close()
    assert [b"".join(c) for c in chunks] == list(big.values())
    assert read(sources[0]) == big["m0.trc"]


# --- a TFA collection ---------------------------------------------------------------------


def _tfa_tree(node: str) -> dict[str, bytes]:
    trace = f"{node}/diag/rdbms/cdb1/cdb1_{node[-1]}/trace"
    sid = f"cdb1_{node[-1]}"
    return {
        f"{trace}/{sid}_lgwr_1234.trc.gz": gzip.compress(f"lgwr on {node}\n".encode() * 5000),
        f"{trace}/{sid}_lgwr_1234.trm": b"\x00map",
        f"{trace}/{sid}_nss2_2345.trc": f"nss2 on {node}\n".encode() * 3000,
        f"{trace}/{sid}_nss2_2345.trm": b"\x00map",
        f"{trace}/{sid}_rfs_4809.trc": f"rfs on {node}\n".encode(),
        f"{node}_uname.txt": b"Linux\n",
    }


def test_a_tfa_upload_yields_the_same_traces_as_the_same_files_in_a_folder(tmp_path: Path) -> None:
    nodes = {node: _tfa_tree(node) for node in ("node1", "node2")}
    upload = {f"{node}.zip": zip_bytes(tree) for node, tree in nodes.items()}
    upload["collection_summary.txt"] = b"TFA\n"
    tfa = write(tmp_path / "tfa_collection.zip", zip_bytes(upload))
    for tree in nodes.values():
        for name, data in tree.items():
            write(tmp_path / "folder" / name, data)

    from_zip, skipped_zip = discover([str(tfa)])
    from_folder, skipped_folder = discover([str(tmp_path / "folder")])

    def by_name(sources: list[Source]) -> list[tuple[str, bytes]]:
        return sorted((s.name, read(s)) for s in sources)

    assert by_name(from_zip) == by_name(from_folder)
    assert len(from_zip) == 6
    assert f"{tfa}!node1.zip!node1/diag/rdbms/cdb1/cdb1_1/trace/cdb1_1_rfs_4809.trc" in {s.label for s in from_zip}
    trm = [item for item in skipped_zip if item.label.endswith(".trm")]
    assert len(trm) == 4 == len([item for item in skipped_folder if item.label.endswith(".trm")])


# --- duplicates -----------------------------------------------------------------------------


def test_the_same_content_uploaded_twice_is_read_once(tmp_path: Path) -> None:
    big = os.urandom(50_000).hex().encode()
    folder = tmp_path / "up"
    write(folder / "a.trc", b"a\n")
    write(folder / "big.trc", big)
    upload = write(tmp_path / "up.zip", zip_bytes({"a.trc": b"a\n", "big.trc.gz": gzip.compress(big)}))
    sources, skipped = discover([str(folder), str(upload)])
    assert [s.label for s in sources] == [f"{folder}/a.trc", f"{folder}/big.trc"]
    assert reasons(skipped) == {
        f"{upload}!a.trc": f"duplicate content: the same bytes as {folder}/a.trc",
        f"{upload}!big.trc.gz": f"duplicate content: the same bytes as {folder}/big.trc",
    }
    assert not any(item.partial for item in skipped)
    sources, skipped = discover([str(folder), str(upload)], dedupe=False)
    assert len(sources) == 4 and skipped == []


def test_contents_that_differ_only_after_the_head_are_not_duplicates(tmp_path: Path) -> None:
    head = os.urandom(100_000).hex().encode()
    write(tmp_path / "up" / "one.trc", head + b"one\n")
    write(tmp_path / "up" / "two.trc", head + b"two\n")
    sources, skipped = discover([str(tmp_path / "up")])
    assert len(sources) == 2 and skipped == []


# --- unreadable files -------------------------------------------------------------------------


def test_an_unreadable_file_is_skipped_with_the_os_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    locked = write(tmp_path / "up" / "locked.trc", b"x\n")
    write(tmp_path / "up" / "open.trc", b"y\n")
    real_open = archives.open_file

    def deny(path: Path) -> io.BufferedReader:
        if path == locked:
            raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), str(path))
        return real_open(path)

    monkeypatch.setattr(archives, "open_file", deny)
    sources, skipped = discover([str(tmp_path / "up"), str(locked)])
    assert [s.name for s in sources] == ["open.trc"]
    assert skipped == [Skipped(str(locked), "cannot read: Permission denied", partial=True)] * 2


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads files whatever their mode")
def test_a_file_without_read_permission_is_skipped(tmp_path: Path) -> None:
    locked = write(tmp_path / "locked.trc", b"x\n")
    locked.chmod(0)
    _, skipped = discover([str(tmp_path)])
    assert skipped == [Skipped(str(locked), "cannot read: Permission denied", partial=True)]


def test_a_file_removed_after_discovery_raises_corrupt_input_when_opened(tmp_path: Path) -> None:
    trace = write(tmp_path / "a.trc", b"a\n")
    sources, _ = discover([str(trace)], dedupe=False)
    trace.unlink()
    with pytest.raises(CorruptInput, match=rf"^{trace}: .*No such file") as error:
        sources[0].opener()
    assert error.value.exit_code == ExitCode.PARTIAL


def test_a_path_with_glob_characters_that_exists_is_taken_literally(tmp_path: Path) -> None:
    literal = write(tmp_path / "odd[1].trc", b"literal\n")
    write(tmp_path / "odd1.trc", b"glob match\n")
    assert contents(discover([str(literal)])[0]) == {str(literal): b"literal\n"}
    assert contents(discover([str(tmp_path / "odd[0-9].trc")])[0]) == {f"{tmp_path}/odd1.trc": b"glob match\n"}


def test_globs_visit_each_folder_once_and_stay_inside_their_fixed_part(tmp_path: Path) -> None:
    up = tmp_path / "up"
    write(up / "a" / "x.trc", b"x\n")
    write(tmp_path / "outside" / "y.trc", b"y\n")
    (up / "a" / "loop").symlink_to(up)
    (up / "a" / "parent").symlink_to(up / "a")
    (up / "out").symlink_to(tmp_path / "outside")
    (up / "escape.trc").symlink_to(tmp_path / "outside" / "y.trc")
    sources, skipped = discover([str(up / "**" / "*.trc")])
    assert contents(sources) == {f"{up}/a/x.trc": b"x\n"}
    assert reasons(skipped) == {f"{up}/escape.trc": "symbolic link leading outside the glob's folder: not followed"}


def test_same_names_in_one_archive_are_both_read_or_skipped_as_duplicate_content(tmp_path: Path) -> None:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive, pytest.warns(UserWarning, match="Duplicate name"):
        archive.writestr("t/x.trc", b"first\n")
        archive.writestr("t/x.trc", b"second\n")
        archive.writestr("t/x.trc", b"first\n")
        archive.writestr("t/y\x01.trc", b"y1\n")
        archive.writestr("t/y\\x01.trc", b"y2\n")
    upload = write(tmp_path / "u.zip", buffer.getvalue())
    sources, skipped = discover([str(upload)])
    assert contents(sources) == {
        f"{upload}!t/x.trc": b"first\n",
        f"{upload}!t/x.trc [2]": b"second\n",
        f"{upload}!t/y\\x01.trc": b"y1\n",
        f"{upload}!t/y\\x01.trc [2]": b"y2\n",
    }
    assert [s.name for s in sources[:2]] == ["x.trc", "x.trc"]
    assert reasons(skipped) == {f"{upload}!t/x.trc [3]": f"duplicate content: the same bytes as {upload}!t/x.trc"}


def test_empty_files_are_skipped_as_empty_not_as_duplicates(tmp_path: Path) -> None:
    for name in ("a/empty.trc", "b/empty.trc", "c/x_nss2_1.trc"):
        write(tmp_path / name, b"")
    write(tmp_path / "d/y_rfs_1.trc", b"a line\n")
    sources, skipped = discover([str(tmp_path)])
    assert [s.label for s in sources] == [str(tmp_path / "d/y_rfs_1.trc")]
    assert {item.label: (item.reason, item.partial) for item in skipped} == {
        str(tmp_path / name): ("empty", False) for name in ("a/empty.trc", "b/empty.trc", "c/x_nss2_1.trc")
    }


def test_of_two_forms_of_one_trace_the_longer_is_read_and_the_choice_said(tmp_path: Path) -> None:
    text = b"".join(b"line %d of a trace\n" % i for i in range(5000))
    write(tmp_path / "same/x.trc", text + b"same\n")
    write(tmp_path / "same/x.trc.gz", gzip.compress(text + b"same\n"))
    write(tmp_path / "prefix/x.trc", text[:1000])
    write(tmp_path / "prefix/x.trc.bz2", bz2.compress(text))
    write(tmp_path / "differ/x.trc", text.replace(b"line 4", b"LINE 4"))
    write(tmp_path / "differ/x.trc.xz", lzma.compress(text[:2000]))
    sources, skipped = discover([str(tmp_path)])
    assert sorted(s.label for s in sources) == sorted(
        str(tmp_path / name) for name in ("differ/x.trc", "prefix/x.trc.bz2", "same/x.trc")
    )
    size = f"{len(text):,}"
    read = "another form of {}, which is read: "
    assert {item.label: (item.reason, item.partial) for item in skipped} == {
        f"{tmp_path}/same/x.trc.gz": (
            read.format(f"{tmp_path}/same/x.trc") + f"the same content ({len(text) + 5:,} bytes)",
            False,
        ),
        f"{tmp_path}/prefix/x.trc": (
            read.format(f"{tmp_path}/prefix/x.trc.bz2") + f"its 1,000 bytes begin its {size} bytes",
            False,
        ),
        f"{tmp_path}/differ/x.trc.xz": (
            read.format(f"{tmp_path}/differ/x.trc")
            + f"its 2,000 bytes differ from its {size} bytes: the longer is read",
            True,
        ),
    }
