"""The answer keys of a simulated set: truth rows from the printed values, and parts joined with their evidence."""

from __future__ import annotations

from pathlib import Path

from analyzer.simulate.truth import (
    EXTENDED_COLUMNS,
    TRUTH_COLUMNS,
    TruthPart,
    UtcText,
    commit_row,
    join_parts,
    truth_row,
)
from tests.simulate.sets import TRUTH_HEADER, run, truth_of, us


def test_truth_columns_and_internal_consistency(tmp_path: Path) -> None:
    result = run(tmp_path, scenario="mixed", writes=1500)
    assert result.truth.read_text().splitlines()[0].split(",") == TRUTH_HEADER
    rows = truth_of(result)
    verdicts = set()
    for row in rows:
        total, network, rfs = us(row["total_ms"]), us(row["network_ms"]), us(row["rfs_ms"])
        io, other = us(row["rfs_io_ms"]), us(row["rfs_other_ms"])
        assert network + rfs == total and io + other == rfs
        assert total > 0 and io > 0
        parts = {"network": network, "rfs_io": io, "rfs_other": other}
        assert parts[row["verdict"]] == max(parts.values())
        assert row["sent_at"].endswith("Z")
        verdicts.add(row["verdict"])
    assert verdicts == {"network", "rfs_io", "rfs_other"}


def test_a_row_from_printed_microseconds_with_the_largest_component_as_verdict() -> None:
    assert TRUTH_COLUMNS.split(",") == TRUTH_HEADER and EXTENDED_COLUMNS.startswith(TRUTH_COLUMNS + ",")
    sent = "2024-10-22T16:18:49.081732Z"
    assert (
        truth_row(1, 10, 7, sent, 163_000, 162_900, 162_679)
        == f"1,10,7,{sent},163.000,0.100,162.900,162.679,0.221,rfs_io\n"
    )
    assert truth_row(2, 5, 8, sent, 138_000, 1_000, 606).endswith(",137.000,1.000,0.606,0.394,network\n")
    assert truth_row(2, 5, 9, sent, 10_000, 9_000, 1_000).endswith(",rfs_other\n")


def test_utc_text_of_microsecond_readings() -> None:
    text = UtcText()
    assert text(1_729_613_929_081_732) == "2024-10-22T16:18:49.081732Z"
    assert text(1_729_613_929_999_999) == "2024-10-22T16:18:49.999999Z"  # the same second, from the cache
    assert text(1_729_613_930_000_000) == "2024-10-22T16:18:50.000000Z"


def test_parts_are_joined_under_the_columns_with_their_evidence_and_removed(tmp_path: Path) -> None:
    classic, extended = tmp_path / "a.part", tmp_path / "b.part"
    classic.write_text("1,row\n2,row\n")
    extended.write_text("3,row\n4,row\n5,row\n")
    out = tmp_path / "truth.csv"
    join_parts(out, "n,what", [TruthPart(classic), TruthPart(extended, dropped=((1, 2),), evidence=True, tail=",d1")])
    assert out.read_text().splitlines() == [
        "n,what",
        "1,row",
        "2,row",
        "3,row,complete,d1",
        "4,row,missing_segment,d1",  # its lines were in a deleted segment
        "5,row,complete,d1",
    ]
    assert not classic.exists() and not extended.exists()


def test_a_commit_row_is_the_slowest_destination_of_a_redo_write() -> None:
    row = commit_row("sales", 2, 1311, "2014-12-02T15:46:49.879000Z", [("boston", 124705, 138_000), ("chi", 9, 2_100)])
    assert row == "sales,2,1311,2014-12-02T15:46:49.879000Z,138.000,boston,boston;chi,124705;9,138.000;2.100\n"
    tie = commit_row("sales", 1, 7, "t", [("a", 1, 5_000), ("b", 2, 5_000)])
    assert tie.split(",")[5] == "a"  # on a tie, the first destination
