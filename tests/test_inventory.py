"""`dgtrace inventory`: the files of an upload, their classification, and plain-language findings."""

from __future__ import annotations

import json
from pathlib import Path

from analyzer import inventory
from analyzer.api import Options, analyze
from analyzer.simulate.options import SimOptions
from analyzer.simulate.runner import simulate
from tests.conftest import PAPER, invoke, write

STBY = "samples/paper-2014/stby01"
PRIM1 = "samples/paper-2014/prim01"


def _inventory(*args: str) -> dict[str, object]:
    return json.loads(invoke(["inventory", *args, "--format", "json"]).stdout)


def test_complete_set_has_no_findings() -> None:
    doc = _inventory(str(PAPER.relative_to(PAPER.parent.parent)), "--tz", "-07:00")
    assert doc["findings"] == []
    files = {Path(f["file"]).name: f for f in doc["files"]}
    nss = files["boston1_nss2_4401.trc"]
    assert (nss["role"], nss["process"], nss["instance"], nss["host"], nss["thread"], nss["pid"], nss["version"]) == (
        "primary",
        "NSS2",
        "boston1",
        "prim01",
        1,
        4401,
        "11.2.0.4.0",
    )
    assert nss["first_at"] == "2014-12-02T15:46:28.861000Z"
    assert files["chicago1_rfs_8801.trc"]["waits"] > 0
    assert files["boston1_lgwr_4371.trc"]["lgwr_warnings"] == 1


def test_primary_only() -> None:
    doc = _inventory(PRIM1)
    assert any(f.startswith("no standby RFS trace") for f in doc["findings"])


def test_standby_only_and_no_waits(tmp_path: Path) -> None:
    src = PAPER / "stby01/diag/rdbms/chicago/chicago1/trace/chicago1_rfs_8801.trc"
    lines = [x for x in src.read_text().split("\n") if not x.startswith("WAIT #")]
    trace = write(tmp_path / "chicago1_rfs_8801.trc", lines)
    findings = _inventory(str(trace))["findings"]
    assert any(f.startswith("no primary NSS/LNS/LGWR trace") for f in findings)
    assert f"RFS trace {trace} has no 10046 WAIT lines: rfs_io cannot be told from rfs_other" in findings


def test_missing_thread_and_windows_that_do_not_overlap(tmp_path: Path) -> None:
    later = PAPER / "stby01/diag/rdbms/chicago/chicago1/trace/chicago1_rfs_8802.trc"
    moved = write(tmp_path / "chicago1_rfs_8802.trc", later.read_text().replace("2014-12-02", "2015-12-02").split("\n"))
    findings = _inventory(PRIM1, str(moved))["findings"]
    assert "thread 1 has NSS messages but no standby counterpart" in findings
    assert "thread 2 has RFS messages but no primary counterpart" in findings
    assert any(f.startswith("trace windows do not overlap") for f in findings)


def test_no_16410_at_all(tmp_path: Path) -> None:
    trace = write(
        tmp_path / "db_ora_1.trc",
        ["WAIT #1: nam='db file sequential read' ela= 5 file#=1 block#=2 blocks=1 obj#=9 tim=1"],
    )
    assert _inventory(str(trace))["findings"][0].startswith("no event 16410 messages found")


def test_text_lists_skipped_members(tmp_path: Path) -> None:
    write(tmp_path / "x" / "db1_rfs_1.trm", ["binary"])
    (tmp_path / "x" / "db1_rfs_1.trc").write_bytes(
        (PAPER / "stby01/diag/rdbms/chicago/chicago1/trace/chicago1_rfs_8801.trc").read_bytes()
    )
    out = invoke(["inventory", str(tmp_path / "x")]).stdout
    assert "Skipped (1)" in out and "trace map" in out
    assert "Findings:" in out


def test_a_skewed_standby_clock_is_no_window_that_does_not_overlap(tmp_path: Path) -> None:
    """The standby prints times 10 minutes ahead: its window looks apart from the primary's, but the
    writes match (after the clock offset), so the windows do overlap and nothing says otherwise."""
    simulate(tmp_path / "set", SimOptions(writes=40, threads=1, standby_skew_s=600.0, noise=0.0))
    a = analyze([str(tmp_path / "set")], Options())
    assert int(a.writes["matched"].sum()) == 40
    standby_first = min(f.reduced.first_at for f in a.files if f.reduced.info.role == "standby" and f.reduced.first_at)
    primary_last = max(f.reduced.last_at for f in a.files if f.reduced.info.role == "primary" and f.reduced.last_at)
    assert standby_first > primary_last  # apart on the clocks as printed
    assert not any(f.startswith("trace windows do not overlap") for f in inventory.findings(a))
