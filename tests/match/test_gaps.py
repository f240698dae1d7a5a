"""Segments missing from an upload: reported as gaps, and the messages in them not as unmatched."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from analyzer.api import Options, analyze, analyze_files
from analyzer.findings import inventory
from analyzer.simulate.options import SimOptions
from analyzer.simulate.runner import simulate
from tests.builders import krs, primary_lines, read_trace, recv, send, standby_lines


@pytest.fixture(scope="module")
def dropped(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """23ai RFS and NSS traces cut into segments, the second segment after the first of each deleted."""
    out = tmp_path_factory.mktemp("gaps") / "set"
    options = SimOptions(writes=2500, threads=1, format_version="23ai", segment_bytes=80 * 1024, drop_segment=2, seed=4)
    simulate(out, options)
    return out


def test_deleted_segments_are_gaps_and_their_writes_are_not_unmatched(dropped: Path) -> None:
    truth = pl.read_csv(dropped / "truth.csv")
    analysis = analyze([str(dropped)], Options())
    lost = truth.filter(pl.col("evidence") == "missing_segment")
    assert lost.height > 100
    assert analysis.unmatched.height == 0
    complete = truth.filter(pl.col("evidence") == "complete").select("thread", "seq", "msgid")
    matched = analysis.writes.filter("matched").select("thread", "seq", "msgid")
    assert complete.join(matched, on=["thread", "seq", "msgid"], how="anti").height == 0
    gaps = analysis.gaps
    assert not list(dropped.rglob("*_2.trc"))  # the simulator deleted them
    assert set(gaps["missing"]) == {_missing(dropped, "sales1_nss2_"), _missing(dropped, "salesdr1_rfs_")}
    assert gaps["messages"].sum() == lost.height  # one surviving message per write that lost its other side
    for gap in gaps.iter_rows(named=True):
        assert gap["from_at"] < gap["to_at"] and gap["before_file"] and gap["after_file"]
    words = " ".join(inventory.findings(analysis))
    assert all(f"segment {name} of" in words for name in gaps["missing"])


def _missing(root: Path, prefix: str) -> str:
    """The name of the deleted second segment of the process whose files start with `prefix`."""
    first = next(p for p in root.rglob(f"{prefix}*.trc") if p.stem.count("_") == 2)
    return f"{first.stem}_2.trc"


CONTINUES = "*** TRACE CONTINUES IN FILE /u01/app/oracle/diag/rdbms/db/db1/trace/{name} ***"
CONTINUED = "*** TRACE CONTINUED FROM FILE /u01/app/oracle/diag/rdbms/db/db1/trace/{name} ***"


def test_a_missing_last_segment_is_a_gap_to_the_end_of_the_upload() -> None:
    """The upload's last file says it continues in a file nobody collected."""
    p = primary_lines([(1, "2024-01-01 00:00:00.100000", "2024-01-01 00:00:00.103000")])
    p += [send(2), krs("2024-01-01 00:00:01.000000", "[krsu.c:5837]"), CONTINUES.format(name="db1_nss2_7_1.trc")]
    s = standby_lines([(1, "2024-01-01 00:00:00.101000", "2024-01-01 00:00:00.102000", [("RFS write", 500)])])
    s += [recv(2), krs("2024-01-01 00:00:01.001000", "[krsr.c:826]")]
    analysis = analyze_files([read_trace(p, "db1_nss2_7.trc"), read_trace(s, "sb1_rfs_9.trc")], [], Options())
    gap = analysis.gaps.row(0, named=True)
    assert (gap["missing"], gap["side"], gap["to_at"], gap["after_file"]) == ("db1_nss2_7_1.trc", "primary", None, None)
    # the write sent last has its opening messages only, on both hosts, after the gap opened: in the gap
    assert gap["messages"] == 2 and analysis.unmatched.height == 0
    assert any("and the end of the upload have no evidence" in f for f in inventory.findings(analysis))


def test_a_segment_present_in_the_upload_is_no_gap() -> None:
    first = [*primary_lines([(1, "2024-01-01 00:00:00.100000", "2024-01-01 00:00:00.103000")])]
    first.append(CONTINUES.format(name="db1_nss2_7_1.trc"))
    second = [CONTINUED.format(name="db1_nss2_7.trc")]
    second += primary_lines([(2, "2024-01-01 00:00:01.100000", "2024-01-01 00:00:01.103000")])
    files = [read_trace(first, "db1_nss2_7.trc"), read_trace(second, "db1_nss2_7_1.trc")]
    assert analyze_files(files, [], Options()).gaps.height == 0


def test_a_missing_first_segment_is_a_gap_from_the_start() -> None:
    later = [CONTINUED.format(name="db1_nss2_7_3.trc")]
    later += primary_lines([(2, "2024-01-01 00:00:01.100000", "2024-01-01 00:00:01.103000")])
    gap = analyze_files([read_trace(later, "db1_nss2_7_4.trc")], [], Options()).gaps.row(0, named=True)
    assert (gap["missing"], gap["from_at"], gap["after_file"]) == ("db1_nss2_7_3.trc", None, "db1_nss2_7_4.trc")


def test_the_gap_finding_names_an_unknown_process_and_asserts_no_cause() -> None:
    """A file of a process nothing names (no 16410 message, no process in its name) that continues
    in a file nobody collected: "a process on <host>", and both ways a trace goes on in a new file
    are named, without claiming either."""
    head = ["Trace file /u01/app/oracle/diag/rdbms/db/db1/trace/odd.trc", "Node name:\tprim01"]
    odd = [*head, krs("2024-01-01 00:00:00.100000"), CONTINUES.format(name="odd_1.trc")]
    nss = primary_lines([(1, "2024-01-01 00:00:00.100000", "2024-01-01 00:00:00.103000")])
    analysis = analyze_files([read_trace(odd, "odd.trc"), read_trace(nss, "db1_nss2_7.trc")], [], Options())
    [words] = [f for f in inventory.findings(analysis) if f.startswith("segment ")]
    assert words.startswith("segment odd_1.trc of a process on prim01 is missing: writes between 2024-01-01 00:00:00")
    assert " of on " not in words
    assert "MAX_DUMP_FILE_SIZE" in words and "tracefile_identifier changes" in words
    assert "the traces do not say which" in words and "as MAX_DUMP_FILE_SIZE leaves" not in words
