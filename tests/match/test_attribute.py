"""Attribute stage: components, negative values explained, LGWR warnings tied to remote writes."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import polars as pl
from hypothesis import given
from hypothesis import strategies as st

from analyzer.match.attribute import fast_sync_ms, tie_warnings
from tests.builders import analyze_lines, primary_lines, reduced, standby_lines


def test_negative_component_is_explained() -> None:
    p = primary_lines([(1, "2024-01-01 00:00:00.000", "2024-01-01 00:00:00.001")])
    s = standby_lines([(1, "2024-01-01 00:00:00.000", "2024-01-01 00:00:00.002", [("RFS write", 1500)])])
    writes, _ = analyze_lines(p, s)
    assert writes["network_ms"][0] == -1.0
    assert "network_ms < 0" in writes["warning"][0] and "within timestamp resolution" in writes["warning"][0]


def test_each_negative_component_is_explained_in_its_own_words() -> None:
    """Within the stamps' resolution or beyond it, one component negative or both (then joined by `; `)."""
    from analyzer.match.attribute import _warning

    rows = pl.DataFrame(
        {
            "network_ms": [-0.5, -2.25, 1.0, -0.5, 3.0],
            "rfs_other_ms": [1.0, 1.0, -0.75, -4.0, 0.0],
            "resolution_ms": [1.0, 1.0, 1.0, 1.0, 1.0],
        }
    )
    net = "network_ms < 0: standby RFS time exceeds the round trip by "
    other = "rfs_other_ms < 0: RFS I/O waits exceed RFS time by "
    assert rows.select(warning=_warning())["warning"].to_list() == [
        f"{net}0.5 ms (within timestamp resolution)",
        f"{net}2.25 ms (beyond timestamp resolution: check the stamps of this write)",
        f"{other}0.75 ms (within timestamp resolution)",
        f"{net}0.5 ms (within timestamp resolution); {other}4.0 ms (overlapping or mis-attributed waits)",
        None,
    ]


def test_lgwr_warning_gets_the_breakdown_of_its_remote_write() -> None:
    p = primary_lines(
        [
            (1, "2024-01-01 00:00:00.000000", "2024-01-01 00:00:00.150000"),
            (2, "2024-01-01 00:00:00.400000", "2024-01-01 00:00:00.402000"),
        ]
    )
    s = standby_lines(
        [
            (1, "2024-01-01 00:00:00.100000", "2024-01-01 00:00:00.145000", [("RFS write", 40000)]),
            (2, "2024-01-01 00:00:00.400500", "2024-01-01 00:00:00.401500", []),
        ]
    )
    writes, _ = analyze_lines(p, s)
    lg = reduced(
        [
            "*** 2024-01-01T00:00:00.151000+00:00",
            "Warning: log write elapsed time 151ms, size 18KB",
            "*** 2024-01-01T00:00:09.000000+00:00",
            "Warning: log write elapsed time 120ms, size 1KB",
        ],
        "lgwr.trc",
    )
    frame = lg.lgwr.with_columns(host=pl.lit("p.trc"), wthread=pl.lit(1, pl.Int64)).select(
        "file", "line", "kind", "at", "elapsed_ms", "size_kb", "host", "wthread"
    )
    tied = tie_warnings(frame, writes)
    first, second = tied.to_dicts()
    assert (
        first["msgid"],
        first["writes"],
        first["remote_total_ms"],
        first["network_ms"],
        first["verdict"],
    ) == (1, 1, 150.0, 105.0, "network")
    assert (second["writes"], second["msgid"]) == (0, None)


def test_writes_near_warnings_include_those_under_an_earlier_longer_warning() -> None:
    """A write inside a long warning's interval is a candidate even when a later, shorter warning
    starts before it ends; writes outside every interval are not."""
    from analyzer.match.attribute import _near_warnings

    t0 = datetime(2024, 1, 1, tzinfo=UTC)

    def at(seconds: float) -> datetime:
        return t0 + timedelta(seconds=seconds)

    warn = pl.DataFrame({"_from": [at(0), at(1)], "_to": [at(10), at(1.5)]})
    writes = pl.DataFrame(
        {"sent_at": [at(5), at(11), at(0.5), at(20)], "total_ms": [100.0, 5.0, 1.0, None], "msgid": [1, 2, 3, 4]}
    )
    assert writes[_near_warnings(writes, warn)]["msgid"].to_list() == [3, 1]  # in send order


@given(
    st.lists(st.tuples(st.integers(0, 60), st.integers(0, 20)), max_size=6),
    st.lists(st.tuples(st.one_of(st.none(), st.integers(0, 80)), st.integers(0, 9000)), max_size=30),
)
def test_writes_near_warnings_are_those_meeting_some_warning(
    warnings: list[tuple[int, int]], sends: list[tuple[int | None, int]]
) -> None:
    """The writes found are exactly those whose [sent, sent + total] meets some warning's [from, to]
    (by definition, one pair at a time), in send order, whatever the order of the writes."""
    from analyzer.match.attribute import _near_warnings

    t0 = datetime(2024, 1, 1, tzinfo=UTC)
    warn = pl.DataFrame(
        {
            "_from": [t0 + timedelta(seconds=a) for a, _ in warnings],
            "_to": [t0 + timedelta(seconds=a + d) for a, d in warnings],
        },
        schema={"_from": pl.Datetime("us", "UTC"), "_to": pl.Datetime("us", "UTC")},
    )
    writes = pl.DataFrame(
        {
            "sent_at": [None if s is None else t0 + timedelta(seconds=s) for s, _ in sends],
            "total_ms": [float(ms) for _, ms in sends],
            "msgid": list(range(len(sends))),
        },
        schema={"sent_at": pl.Datetime("us", "UTC"), "total_ms": pl.Float64, "msgid": pl.Int64},
    )
    meets = [s is not None and any(a <= s + ms / 1000 and s <= a + d for a, d in warnings) for s, ms in sends]
    found = writes[_near_warnings(writes, warn)]
    assert sorted(found["msgid"].to_list()) == [i for i, hit in enumerate(meets) if hit]
    assert found["sent_at"].is_sorted()  # in send order


def test_fast_sync_what_if_takes_out_standby_io_but_never_goes_below_the_network() -> None:
    rows = pl.DataFrame(
        {
            "transport": ["SYNC", "SYNC", "FASTSYNC", "ASYNC", "SYNC", "FASTSYNC"],
            "matched": [True, True, True, True, False, False],
            "total_ms": [150.0, 10.0, 3.0, 40.0, 12.0, 4.0],
            "network_ms": [105.0, 9.5, 2.0, 39.0, None, None],
            "rfs_io_ms": [40.0, 1.0, 0.0, 0.5, None, None],
        }
    )
    got = rows.select(fast_sync_ms())["fastsync_ms"].to_list()
    # total - rfs_io; not below network when rfs_other is negative (millisecond stamps); a Fast Sync
    # write keeps its total (seen on one side too); ASYNC and one-sided SYNC writes have no what-if
    assert got == [110.0, 9.5, 3.0, None, None, 4.0]


def test_the_writes_of_a_sync_link_carry_their_fast_sync_what_if() -> None:
    p = primary_lines([(1, "2024-01-01 00:00:00.000000", "2024-01-01 00:00:00.150000")])
    s = standby_lines([(1, "2024-01-01 00:00:00.100000", "2024-01-01 00:00:00.145000", [("RFS write", 40000)])])
    writes, _ = analyze_lines(p, s)
    w = writes.row(0, named=True)
    assert (w["transport"], w["total_ms"], w["rfs_io_ms"], w["fastsync_ms"]) == ("SYNC", 150.0, 40.0, 110.0)
