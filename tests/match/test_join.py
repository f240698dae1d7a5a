"""Match stage: primary and standby exchanges of one write, msgid reuse and collisions, unmatched with reasons."""

from __future__ import annotations

import polars as pl

from analyzer.match.join import typical_gaps
from tests.builders import analyze_lines, primary_lines, send, standby_lines


def test_split_with_standby_clock_minutes_off() -> None:
    """Network = total - RFS time does not depend on the clock offset between hosts."""
    p = primary_lines([(1, "2024-01-01 00:00:00.000000", "2024-01-01 00:00:00.150000")])
    s = standby_lines(
        [
            (
                1,
                "2024-01-01 00:05:00.040000",
                "2024-01-01 00:05:00.140000",
                [("RFS write", 90000), ("RFS random i/o", 4000)],
            )
        ]
    )
    writes, unmatched = analyze_lines(p, s)
    row = writes.row(0, named=True)
    assert (
        row["total_ms"],
        row["rfs_ms"],
        row["network_ms"],
        row["rfs_io_ms"],
        row["rfs_other_ms"],
    ) == (150.0, 100.0, 50.0, 94.0, 6.0)
    assert row["verdict"] == "rfs_io" and row["slow"] and row["rfs_io_waits"] == 2
    assert (row["primary_line"], row["standby_line"]) == (1, 1)
    assert unmatched.height == 0


def test_msgid_reuse_is_told_apart_by_time() -> None:
    """After an NSS restart the same msgid comes back an hour later: each matches its own."""
    p = primary_lines(
        [
            (7, "2024-01-01 00:00:00.000000", "2024-01-01 00:00:00.005000"),
            (7, "2024-01-01 01:00:00.000000", "2024-01-01 01:00:00.200000"),
        ]
    )
    s = standby_lines(
        [
            (7, "2024-01-01 00:00:00.001000", "2024-01-01 00:00:00.004000", []),
            (
                7,
                "2024-01-01 01:00:00.001000",
                "2024-01-01 01:00:00.199000",
                [("RFS write", 190000)],
            ),
        ]
    )
    writes, unmatched = analyze_lines(p, s)
    assert writes["total_ms"].to_list() == [5.0, 200.0]
    assert writes["rfs_ms"].to_list() == [3.0, 198.0]
    assert unmatched.height == 0


def test_msgid_collision_is_reported_not_guessed() -> None:
    p = primary_lines([(7, "2024-01-01 00:00:00.000000", "2024-01-01 00:00:00.005000")])
    s = standby_lines(
        [
            (7, "2024-01-01 00:00:00.001000", "2024-01-01 00:00:00.004000", []),
            (7, "2024-01-01 00:00:00.011000", "2024-01-01 00:00:00.014000", []),
        ]
    )
    writes, unmatched = analyze_lines(p, s)
    assert writes.height == 0
    assert set(unmatched["reason"]) == {
        "msgid collision: several standby writes fit",
        "msgid collision: several primary writes fit",
    }


def test_unmatched_lists_each_side_with_reason() -> None:
    p = [
        *primary_lines(
            [
                (1, "2024-01-01 00:00:00.000000", "2024-01-01 00:00:00.005000"),
                (2, "2024-01-01 00:00:01.000000", "2024-01-01 00:00:01.005000"),
            ]
        ),
        send(3),
    ]
    s = standby_lines(
        [
            (1, "2024-01-01 00:00:00.001000", "2024-01-01 00:00:00.004000", []),
            (9, "2024-01-01 00:00:02.001000", "2024-01-01 00:00:02.004000", []),
        ]
    )
    writes, unmatched = analyze_lines(p, s)
    assert writes.filter("matched")["msgid"].to_list() == [1]
    one_sided = {r["msgid"]: r for r in writes.filter(~pl.col("matched")).to_dicts()}
    assert (one_sided[2]["total_ms"], one_sided[2]["network_ms"], one_sided[2]["verdict"]) == (5.0, None, None)
    assert (one_sided[9]["rfs_ms"], one_sided[9]["total_ms"], one_sided[9]["primary_file"]) == (3.0, None, None)
    reasons = {(r["side"], r["msgid"]): r["reason"] for r in unmatched.to_dicts()}
    assert reasons[("primary", 2)].startswith("no standby write")
    assert reasons[("standby", 9)].startswith("no primary write")
    assert reasons[("primary", 3)] == "no transport stamp after this message"


def test_typical_gaps_prefer_the_unique_candidates_and_can_ask_for_enough() -> None:
    """The median over candidates alone on both sides, else over all of a host pair's; `at_least`
    leaves out the pairs of fewer candidates (a sample's pair that another batch measures better)."""
    rows = pl.DataFrame(
        {
            "p_host": ["a", "a", "a", "a", "b"],
            "s_host": ["s"] * 5,
            "gap_ms": [1.0, 2.0, 3.0, 900.0, 5.0],
            "_unique": [True, True, False, False, False],
        }
    )
    assert typical_gaps(rows).sort("p_host").rows() == [("a", "s", 1.5), ("b", "s", 5.0)]
    assert typical_gaps(rows, at_least=2).rows() == [("a", "s", 1.5)]
