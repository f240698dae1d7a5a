"""Customer uploads end to end: a TFA-shaped zip of per-node zips, and hostile members beside good ones."""

from __future__ import annotations

import gzip
import io
import json
import zipfile
from pathlib import Path

import polars as pl

from analyzer.api import Options, analyze
from analyzer.base.errors import ExitCode
from analyzer.base.zones import TimeZones
from tests.conftest import PAPER, invoke

LABEL_COLUMNS = ["primary_file", "standby_file"]


def _tfa_zip(target: Path) -> Path:
    """collection.zip holding <node>.tfa.zip per node; LGWR traces gzipped; .trm files beside."""
    outer = io.BytesIO()
    with zipfile.ZipFile(outer, "w") as collection:
        for node in sorted(p.name for p in PAPER.iterdir()):
            inner = io.BytesIO()
            with zipfile.ZipFile(inner, "w", zipfile.ZIP_DEFLATED) as node_zip:
                for trace in sorted((PAPER / node).rglob("*.trc")):
                    name = str(trace.relative_to(PAPER))
                    if "_lgwr_" in name:
                        node_zip.writestr(name + ".gz", gzip.compress(trace.read_bytes()))
                    else:
                        node_zip.writestr(name, trace.read_bytes())
                    node_zip.writestr(name[:-4] + ".trm", b"\x00\x01binary map")
            collection.writestr(f"node_all/{node}.tfa_20141202.zip", inner.getvalue())
    target.write_bytes(outer.getvalue())
    return target


def test_tfa_zip_gives_the_same_writes_as_the_folder(tmp_path: Path) -> None:
    options = Options(zones=TimeZones(default_min=-420))
    folder = analyze([str(PAPER)], options)
    upload = analyze([str(_tfa_zip(tmp_path / "collection.zip"))], options)
    assert upload.writes.height == folder.writes.height == 66
    assert upload.writes.drop(LABEL_COLUMNS).equals(folder.writes.drop(LABEL_COLUMNS))
    assert upload.warnings.drop("file").equals(folder.warnings.drop("file"))
    assert all("!" in label for label in upload.writes["primary_file"])
    skipped = [s.reason for s in upload.skipped]
    assert sum("trace map" in r for r in skipped) == 6
    assert upload.exit_code == ExitCode.OK


def test_ratio_bomb_beside_good_traces_is_partial_and_keeps_the_rest(tmp_path: Path) -> None:
    upload = _tfa_zip(tmp_path / "collection.zip")
    with zipfile.ZipFile(upload, "a", zipfile.ZIP_DEFLATED) as z:
        z.writestr("bomb/diag/rdbms/x/x1/trace/x1_rfs_1.trc", b"\n" * (20 * 1024 * 1024))
    result = invoke(["analyze", str(upload), "--format", "json", "--max-ratio", "100"], code=ExitCode.PARTIAL)
    doc = json.loads(result.stdout)
    assert doc["summary"]["matched_writes"] == 66
    lost = [f for f in doc["files"] if "bomb" in f["file"]]
    assert lost and ("ratio" in (lost[0].get("skipped") or "") or "ratio" in str(doc["coverage"]))


def test_corrupt_gzip_member_is_reported(tmp_path: Path) -> None:
    """A gzip cut in half: the lines before the cut are analysed, the file is reported, exit 1."""
    body = (PAPER / "prim01/diag/rdbms/boston/boston1/trace/boston1_nss2_4401.trc").read_bytes() * 200
    good = gzip.compress(body)
    broken = tmp_path / "boston1_nss2_4401.trc.gz"
    broken.write_bytes(good[: len(good) // 2])
    result = invoke(["analyze", str(broken), "--format", "json"], code=ExitCode.PARTIAL)
    doc = json.loads(result.stdout)
    (row,) = doc["coverage"]
    assert "corrupt, truncated" in row["read_error"]
    assert 0 < row["lines"] < body.count(b"\n")
    assert row["lines"] == row["parsed"] + row["ignored"] + row["unparsed"]
    assert pl.DataFrame(doc["unmatched"]).height > 0  # what was read is still analysed


def _copy_paper(target: Path) -> None:
    for src in PAPER.rglob("*.trc"):
        dest = target / src.relative_to(PAPER)
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_bytes(src.read_bytes())


def test_segments_of_one_process_are_joined(tmp_path: Path) -> None:
    """An NSS trace cut into two files between a send and its ack (ADR segmentation) still matches."""
    _copy_paper(tmp_path)
    nss = next(tmp_path.rglob("boston1_nss2_4401.trc"))
    lines = nss.read_text().split("\n")
    send = next(i for i, text in enumerate(lines) if "msgid=117468" in text and text.startswith("Client sending"))
    header = lines[:16]  # the file header and the blank lines after it
    nss.write_text("\n".join(lines[: send + 2]) + "\n")
    (nss.parent / "boston1_nss2_4401_2.trc").write_text("\n".join([*header, *lines[send + 2 :]]))
    result = analyze([str(tmp_path)], Options(zones=TimeZones(default_min=-420)))
    assert result.writes.filter("matched").height == 66
    w = result.writes.filter(msgid=117468).row(0, named=True)
    assert (w["total_ms"], w["verdict"]) == (163.0, "rfs_io")


def test_recreated_file_starts_a_new_incarnation(tmp_path: Path) -> None:
    """A send before `TRACE FILE RECREATED` is never paired with an ack after it."""
    msg = "oper='Write' flag=67111042 thrd=1 seq=5 msgid=42"
    trace = tmp_path / "db1_nss2_77.trc"
    trace.write_text(
        "\n".join(
            [
                f"Client sending SQLNET request data [kpurcs] {msg}",
                "*** 2024-01-01 00:00:00.100000 [krsu.c:1]",
                "*** TRACE FILE RECREATED AFTER BEING REMOVED ***",
                "*** 2024-01-01 00:00:00.300000 [krsu.c:2]",
                f"... Client received SQLNET call [kpurcs] response {msg}",
            ]
        )
        + "\n"
    )
    result = analyze([str(trace)])
    assert result.writes.height == 0
    assert sorted(result.unmatched["kind"].to_list()) == ["client_recv", "client_send"]


def test_nesting_bomb_and_encrypted_member_are_partial(tmp_path: Path) -> None:
    good = (PAPER / "stby01/diag/rdbms/chicago/chicago1/trace/chicago1_rfs_8801.trc").read_bytes()
    inner = good
    name = "deep.trc"
    for depth in range(4):  # deep.trc inside four nested zips
        buffer = io.BytesIO()
        with zipfile.ZipFile(buffer, "w") as z:
            z.writestr(name, inner)
        inner, name = buffer.getvalue(), f"level{depth}.zip"
    upload = tmp_path / "upload.zip"
    with zipfile.ZipFile(upload, "w") as z:
        z.writestr("nested.zip", inner)
        z.writestr("chicago1_rfs_8801.trc", good)
        z.writestr("secret/chicago1_rfs_9999.trc", good[:2000])
    raw = bytearray(upload.read_bytes())
    member = b"secret/chicago1_rfs_9999.trc"
    for signature, name_at, flag_at in ((b"PK\x03\x04", 30, 6), (b"PK\x01\x02", 46, 8)):  # local, central
        at = raw.find(signature)
        while raw[at + name_at : at + name_at + len(member)] != member:
            at = raw.find(signature, at + 1)
        raw[at + flag_at] |= 0x01  # general purpose bit 0: encrypted
    upload.write_bytes(bytes(raw))
    result = invoke(["analyze", str(upload), "--format", "json", "--max-depth", "3"], code=ExitCode.PARTIAL)
    files = json.loads(result.stdout)["files"]
    reasons = " | ".join(f["skipped"] or "" for f in files)
    assert "depth" in reasons and "encrypted" in reasons
    assert any(f["file"].endswith("!chicago1_rfs_8801.trc") and f["role"] == "standby" for f in files)
