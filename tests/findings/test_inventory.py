"""`dgtrace inventory`: the files of an upload, their classification, and plain-language findings."""

from __future__ import annotations

import codecs
import io
import json
from pathlib import Path

import pytest

from analyzer.api import Options, analyze
from analyzer.findings import inventory
from analyzer.report.formats import RENDERERS, OutputFormat
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


def _nul_runs(data: bytes) -> bytes:
    """Two zero-filled blocks (as a crash leaves), each after a line end."""
    third = data.index(b"\n", len(data) // 3) + 1
    two_thirds = data.index(b"\n", 2 * len(data) // 3) + 1
    return data[:third] + bytes(1000) + data[third:two_thirds] + bytes(234) + data[two_thirds:]


def _long_line(data: bytes) -> bytes:
    """A UTF-8 byte-order mark, and a 70,000-character line in the middle."""
    middle = data.index(b"\n", len(data) // 2) + 1
    return codecs.BOM_UTF8 + data[:middle] + b"x" * 70_000 + b"\n" + data[middle:]


#: which trace (a glob and its place among the matches) -> how it is rewritten, and the finding
#: the reader's repair gives
REPAIRS = {
    ("sales1_nss2_*", 0): (
        lambda data: data.decode().encode("utf-16"),
        "decoded from UTF-16-LE (its byte-order mark)",
    ),
    ("sales2_nss2_*", 0): (
        lambda data: data.decode().encode("utf-16-be"),
        "decoded from UTF-16-BE (the zero bytes of every other position)",
    ),
    ("salesdr1_rfs_*", 0): (
        lambda data: codecs.BOM_UTF32_BE + data.decode().encode("utf-32-be"),
        "decoded from UTF-32-BE (its byte-order mark)",
    ),
    ("salesdr1_rfs_*", 1): (
        lambda data: _nul_runs(data).replace(b"\n", b"\r"),
        "line(s) ended by CR alone (classic Mac OS) read as line ends; 1,234 NUL byte(s) in 2 run(s) removed",
    ),
    ("sales1_lgwr_*", 0): (
        _long_line,
        "UTF-8 byte-order mark removed; 1 line(s) longer than 65,536 characters cut to that length",
    ),
}


@pytest.fixture(scope="module")
def repaired(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    """A simulated set whose traces come in other encodings and line ends, with NUL runs and a long
    line (one trace left as it is); the ending of the finding expected for each changed file."""
    folder = tmp_path_factory.mktemp("repaired") / "set"
    simulate(folder, SimOptions(writes=200, seed=3))
    expected: dict[str, str] = {}
    for (pattern, n), (change, words) in REPAIRS.items():
        trace = sorted(folder.rglob(pattern))[n]
        trace.write_bytes(change(trace.read_bytes()))
        expected[str(trace)] = words
    assert len(list(folder.rglob("*.trc"))) == len(expected) + 1
    return folder, expected


def test_every_repaired_file_is_said_in_the_notes_of_every_report(
    repaired: tuple[Path, dict[str, str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    folder, expected = repaired
    a = analyze([str(folder)], Options())
    assert int(a.writes["matched"].sum()) == len((folder / "truth.csv").read_text().splitlines()) - 1
    said = {f.split(": ", 1)[0]: f.split(": ", 1)[1] for f in inventory.findings(a) if f.startswith(str(folder))}
    assert said.keys() == expected.keys()  # the file left as it is has no finding
    for label, words in expected.items():
        assert said[label].endswith(words), (label, said[label])
    monkeypatch.setenv("COLUMNS", "1000")  # one note a line in the text report
    for output_format in (OutputFormat.TEXT, OutputFormat.MARKDOWN, OutputFormat.JSON):
        out = io.StringIO()
        RENDERERS[output_format](a, out, 10)
        text = out.getvalue()
        notes = json.loads(text)["summary"]["notes"] if output_format is OutputFormat.JSON else text
        for label in expected:
            assert f"{label}: {said[label]}" in notes, (output_format, label)


def test_an_rfs_trace_names_the_redo_thread_it_received() -> None:
    """chicago1 is the standby's one instance (its own thread 1); its RFS 8802 receives boston2's thread 2."""
    rows = {r["file"].rsplit("/", 1)[-1]: r["thread"] for r in inventory.table(analyze([PAPER], Options())).to_dicts()}
    assert rows["chicago1_rfs_8801.trc"] == 1 and rows["chicago1_rfs_8802.trc"] == 2
    assert rows["boston2_nss2_4402.trc"] == 2


def test_an_awr_report_or_oratcptest_output_given_as_a_trace_is_named_with_its_flag() -> None:
    awr = "tests/fixtures/awr/awr-12.2-primary-load.txt"
    tcp = "tests/fixtures/oratcptest/async.txt"
    a = analyze([PAPER, awr, tcp], Options())
    notes = inventory.findings(a)
    assert f"{awr}: not a trace: an AWR report; give it with --awr (dgtrace analyze TRACES --awr FILE)" in notes
    assert any(n.startswith(tcp) and "give it with --baseline" in n for n in notes)
    assert not any("no event 16410" in n for n in notes)
    alone = invoke(["analyze", awr], code=3)
    assert "not a trace: an AWR report; give it with --awr" in alone.stderr


def test_unparsed_lines_by_shape(tmp_path: Path) -> None:
    trace = write(
        tmp_path / "x_rfs_1.trc",
        [
            "WAIT #0: nam='RFS write' ela= 12 p1=0 p2=0 p3=0 obj#=-1 tim=99",
            "WAIT #0: nam='RFS write' ela= x12 p1=0",
            "WAIT #0: nam='RFS write' ela= x75 p1=0",
            "WAIT #7: nam='RFS random i/o' ela= y",
        ],
    )
    shapes = inventory.unparsed_shapes(analyze([str(trace)], Options()).files)
    assert shapes.select("family", "shape", "count", "line").rows() == [
        ("wait", "WAIT #N: nam='…' ela= xN pN=N", 2, 2),
        ("wait", "WAIT #N: nam='…' ela= y", 1, 4),
    ]
    assert shapes["example"][0] == "WAIT #0: nam='RFS write' ela= x12 p1=0"
    listed = _inventory(str(trace))["unparsed_shapes"]
    assert [s["count"] for s in listed] == [2, 1]  # type: ignore[index]
