"""Damaged uploads end to end: every write their bytes still hold is matched, each checked against the
simulator's truth, and the damage is named with exit 1.

What an upload still holds is found by an independent decoder (`tests.uploads.decodable`: its local
headers read by hand, each member inflated by zlib as far as it goes), written to a folder and
analysed; the damaged upload must give the same matched writes.
"""

from __future__ import annotations

import gzip
import io
import json
import shutil
import struct
import subprocess
import tarfile
import zipfile
from pathlib import Path
from typing import Any

import pytest

from analyzer.api import analyze
from analyzer.base.errors import ExitCode
from analyzer.simulate import SimOptions, simulate
from tests.conftest import invoke
from tests.uploads import against_truth, decodable, member, tar_of, write

#: remote writes per primary thread of the simulated set (two threads)
WRITES = 300


@pytest.fixture(scope="module")
def good(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("damaged") / "set"
    simulate(folder, SimOptions(writes=WRITES, seed=5))
    return folder


def _traces(good: Path, under: str = "") -> list[Path]:
    return sorted((good / under).rglob("*.trc"))


def _run(*paths: Path, code: ExitCode) -> dict[str, Any]:
    result = invoke(["analyze", *map(str, paths), "--format", "json"], code=code)
    return json.loads(result.stdout)  # type: ignore[no-any-return]


def _oracle(upload: Path, folder: Path) -> int:
    """Matched writes of what the independent decoder gets out of the upload (written to `folder`)."""
    for name, body in decodable(upload.name, upload.read_bytes()).items():
        write(folder / name, body)
    return analyze([str(folder)]).writes.filter("matched").height


def _skipped(doc: dict[str, Any]) -> dict[str, str]:
    return {f["file"]: f["skipped"] for f in doc["files"] if f["skipped"]}


def _zip_of(good: Path, under: str, method: int = zipfile.ZIP_DEFLATED) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", method) as archive:
        for trace in _traces(good, under):
            archive.write(trace, str(trace.relative_to(good)))
    return buffer.getvalue()


def _tgz_of(good: Path, under: str) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        for trace in _traces(good, under):
            archive.add(trace, str(trace.relative_to(good)))
    return buffer.getvalue()


def _tfa(good: Path) -> bytes:
    """A TFA-like upload as the `zip` command makes it: per-node zips and the standby's tarball stored
    (not compressed again) in the outer zip, the second primary node last."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_STORED) as outer:
        outer.writestr("node_all/prim01.tfa.zip", _zip_of(good, "prim01"))
        outer.writestr("node_all/stby01.tfa.tar.gz", _tgz_of(good, "stby01"))
        outer.writestr("node_all/prim02.tfa.zip", _zip_of(good, "prim02"))
    return buffer.getvalue()


# --- 7. an upload of stored inner zips, cut ---------------------------------------------------


@pytest.mark.slow  # four cuts, each analysed twice
@pytest.mark.parametrize("cut", [0.4, 0.55, 0.7, 0.9])
def test_a_cut_upload_of_stored_zips_is_read_to_its_cut(good: Path, tmp_path: Path, cut: float) -> None:
    """The outer zip has lost its central directory, and zipfile would take that of a stored inner
    zip for it: every node whose bytes are there is read, the one cut is recovered from its own local
    headers, and the damage is named."""
    data = _tfa(good)
    upload = write(tmp_path / "collection.zip", data[: int(len(data) * cut)])
    doc = _run(upload, code=ExitCode.PARTIAL)
    assert against_truth(doc, good / "truth.csv") == _oracle(upload, tmp_path / "oracle")
    assert "central directory is missing" in _skipped(doc)[str(upload)]
    read = {f["file"].split("!")[1] for f in doc["files"] if "!" in f["file"]}
    names = ("prim01.tfa.zip", "stby01.tfa.tar.gz", "prim02.tfa.zip")
    assert read == {f"node_all/{name}" for name in names if name.encode() in upload.read_bytes()}
    assert len(read) >= 2


def test_a_stored_inner_zip_cut_in_its_middle_is_recovered(good: Path, tmp_path: Path) -> None:
    data = _tfa(good)
    last = data.rfind(b"PK\x03\x04", 0, data.rfind(b"node_all/prim02.tfa.zip"))  # its local header
    inner_end = data.find(b"PK\x01\x02", last)  # the outer directory's first entry
    upload = write(tmp_path / "collection.zip", data[: (last + inner_end) // 2])
    doc = _run(upload, code=ExitCode.PARTIAL)
    assert against_truth(doc, good / "truth.csv") == _oracle(upload, tmp_path / "oracle") > WRITES
    assert any("prim02.tfa.zip!" in row["file"] and row["read_error"] for row in doc["coverage"])


# --- 8. one wrong directory entry --------------------------------------------------------------


def test_one_wrong_directory_size_spoils_no_neighbour(good: Path, tmp_path: Path) -> None:
    """The first standby trace's central entry claims 5,000 bytes more than it holds (over its
    neighbour's header): both standby traces are read whole, with the sizes their local headers give."""
    data = bytearray(_zip_of(good, ""))
    entry = data.find(b"PK\x01\x02", data.find(b"_rfs_", data.find(b"PK\x01\x02")) - 100)
    while b"_rfs_" not in data[entry + 46 : entry + 46 + struct.unpack_from("<H", data, entry + 28)[0]]:
        entry = data.find(b"PK\x01\x02", entry + 4)
    struct.pack_into("<I", data, entry + 20, struct.unpack_from("<I", data, entry + 20)[0] + 5000)
    upload = write(tmp_path / "set.zip", bytes(data))
    doc = _run(upload, code=ExitCode.OK)
    assert against_truth(doc, good / "truth.csv") == 2 * WRITES
    assert not _skipped(doc)


# --- 9. archives read to the last byte that decodes ----------------------------------------------


def test_a_zip_cut_at_60_percent_keeps_every_decodable_write(good: Path, tmp_path: Path) -> None:
    data = _zip_of(good, "")
    upload = write(tmp_path / "cut.zip", data[: int(len(data) * 0.6)])
    doc = _run(upload, code=ExitCode.PARTIAL)
    assert against_truth(doc, good / "truth.csv") == _oracle(upload, tmp_path / "oracle") > 0


@pytest.mark.parametrize("cut", [0.8, 0.95])
def test_a_tar_gz_cut_keeps_every_decodable_write(good: Path, tmp_path: Path, cut: float) -> None:
    data = _tgz_of(good, "")
    upload = write(tmp_path / "cut.tar.gz", data[: int(len(data) * cut)])
    doc = _run(upload, code=ExitCode.PARTIAL)
    assert against_truth(doc, good / "truth.csv") == _oracle(upload, tmp_path / "oracle") > 0
    assert "listing stopped: the archive breaks inside" in _skipped(doc)[str(upload)]


def test_a_gz_with_trailing_garbage_keeps_its_whole_content(good: Path, tmp_path: Path) -> None:
    """`gzip -d` keeps the whole content and warns of the garbage; so does dgtrace (exit 1, named)."""
    folder = tmp_path / "upload"
    for trace in _traces(good):
        packed = gzip.compress(trace.read_bytes())
        garbage = b"\x00" * 512 if "_nss" in trace.name else b"not gzip at all\n" * 100  # padding is fine
        write(folder / trace.relative_to(good).with_suffix(".trc.gz"), packed + garbage)
    doc = _run(folder, code=ExitCode.PARTIAL)
    assert against_truth(doc, good / "truth.csv") == 2 * WRITES
    errors = {row["file"].rsplit("/", 1)[-1]: row["read_error"] for row in doc["coverage"] if row["read_error"]}
    assert sorted(errors) == sorted(t.name + ".gz" for t in _traces(good) if "_nss" not in t.name)
    assert all("data that are not gzip follow the end of the compressed data" in e for e in errors.values())


@pytest.mark.parametrize("mode", ["w", "w:gz"])
def test_a_tar_hard_link_is_followed_within_the_archive(good: Path, tmp_path: Path, mode: str) -> None:
    """The standby traces are kept under a name not read (`.keep`) and linked to their trace names."""
    infos = []
    for trace in _traces(good):
        name = str(trace.relative_to(good))
        if "_rfs_" in name:
            infos.append((member(f"saved/{trace.name}.keep"), trace.read_bytes()))
            infos.append((member(name, tarfile.LNKTYPE, f"saved/{trace.name}.keep"), b""))
        else:
            infos.append((member(name), trace.read_bytes()))
    upload = write(tmp_path / ("set.tar" if mode == "w" else "set.tar.gz"), tar_of(infos, mode))
    doc = _run(upload, code=ExitCode.OK)
    assert against_truth(doc, good / "truth.csv") == 2 * WRITES


def test_a_trace_compressed_by_unix_compress_is_read(good: Path, tmp_path: Path) -> None:
    """`.trc.Z`, made by the `compress` command where it is installed (else by the library)."""
    folder = tmp_path / "upload"
    shutil.copytree(good, folder, ignore=shutil.ignore_patterns("*.csv", "*.json"))
    rfs = [p for p in _traces(folder) if "_rfs_" in p.name]
    if shutil.which("compress"):
        subprocess.run(["compress", "-f", *map(str, rfs)], check=True)
    else:
        import ncompress  # type: ignore[import-untyped]

        for path in rfs:
            path.with_suffix(".trc.Z").write_bytes(ncompress.compress(path.read_bytes()))
            path.unlink()
    assert sorted(p.name for p in folder.rglob("*.Z")) == sorted(p.name + ".Z" for p in rfs)
    doc = _run(folder, code=ExitCode.OK)
    assert against_truth(doc, good / "truth.csv") == 2 * WRITES


# --- 15. files without an identity --------------------------------------------------------------


def test_an_empty_and_a_foreign_trace_make_no_phantom_configuration(good: Path, tmp_path: Path) -> None:
    folder = tmp_path / "upload"
    shutil.copytree(good, folder)
    write(folder / "empty.trc", b"")
    write(folder / "empty_too.trc", b"")
    write(folder / "gc_java.trc", b"[GC (Allocation Failure) 1024K->512K(2048K), 0.0012 secs]\n" * 20)
    doc = _run(folder, code=ExitCode.OK)
    assert against_truth(doc, good / "truth.csv") == 2 * WRITES
    assert [c["name"] for c in doc["summary"]["configurations"]] == ["sales"]
    assert not any("configurations" in note for note in doc["summary"]["notes"])
    assert {k.rsplit("/", 1)[-1]: v for k, v in _skipped(doc).items() if k.endswith(".trc")} == {
        "empty.trc": "empty",
        "empty_too.trc": "empty",
    }
    text = invoke(["analyze", str(folder)]).stdout
    assert "unknown" not in text


# --- 10. send blocks logged twice ------------------------------------------------------------------


def _twice(text: str, block: int) -> str:
    """Every send block of an NSS trace logged twice: its `Client sending` line and the `block - 1` lines
    after it (2: with its stamp; 4: the whole exchange, stamps and `Client received`)."""
    lines, out, at = text.split("\n"), [], 0
    while at < len(lines):
        if lines[at].startswith("Client sending") and lines[at + block - 1 : at + block] and block in (2, 4):
            out += lines[at : at + block] * 2
            at += block
        else:
            out.append(lines[at])
            at += 1
    return "\n".join(out)


@pytest.mark.parametrize("block", [2, 4], ids=["send-and-stamp", "whole-exchange"])
def test_send_blocks_logged_twice_are_counted_once_with_a_note(good: Path, tmp_path: Path, block: int) -> None:
    folder = tmp_path / "upload"
    shutil.copytree(good, folder)
    nss = [p for p in _traces(folder) if "_nss" in p.name]
    for path in nss:
        path.write_text(_twice(path.read_text(), block))
    doc = _run(folder, code=ExitCode.OK)
    assert against_truth(doc, good / "truth.csv") == 2 * WRITES
    assert doc["summary"]["primary_writes"] == 2 * WRITES
    copies = [u for u in doc["unmatched"] if u["reason"].startswith("logged twice")]
    assert len(copies) >= (2 * WRITES - 50) * block // 2  # a few blocks have a noise line inside
    assert {u["side"] for u in copies} == {"primary"}
    (note,) = [n for n in doc["summary"]["notes"] if "logged twice" in n]
    assert note.startswith(f"{len(copies):,} message(s) in 2 file(s) were logged twice")


# --- 11. two forms of one trace --------------------------------------------------------------------


@pytest.mark.parametrize("cut", ["plain", "gz"])
def test_a_trace_beside_its_gzipped_form_is_read_once_from_the_longer(good: Path, tmp_path: Path, cut: str) -> None:
    """`x.trc` beside `x.trc.gz` (a copy taken while housekeeping compressed it): one of the two is cut;
    the other, whose first bytes it is, is read, and the choice is said."""
    folder = tmp_path / "upload"
    shutil.copytree(good, folder)
    for trace in [p for p in _traces(folder) if "_nss" in p.name or "_rfs_" in p.name]:
        data = trace.read_bytes()
        packed = gzip.compress(data)
        trace.with_suffix(".trc.gz").write_bytes(packed[: len(packed) // 2] if cut == "gz" else packed)
        trace.write_bytes(data if cut == "gz" else data[: len(data) // 3])
    doc = _run(folder, code=ExitCode.OK)
    assert against_truth(doc, good / "truth.csv") == 2 * WRITES
    notes = {k: v for k, v in _skipped(doc).items() if "another form of" in v}
    assert len(notes) == 4
    for label, reason in notes.items():
        kept = label + ".gz" if cut == "plain" else label.removesuffix(".gz")
        assert reason.startswith(f"another form of {kept}, which is read: its ")
        assert " bytes begin its " in reason
