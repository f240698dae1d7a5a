"""Clock stage: offset of a standby host against a primary host, one-way delays, causal order."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import polars as pl
import pytest

from analyzer.base.schemas import WRITES
from analyzer.match.clock import _best, _violations, estimate_offsets, merged_timeline, one_way

T0 = datetime(2024, 5, 1, 12, 0, tzinfo=UTC)


def writes(
    offset_ms: float, out_ms: list[float], back_ms: list[float], rfs_ms: float = 0.5, standby: str = "stby01"
) -> pl.DataFrame:
    """Matched writes one second apart with these one-way delays, the standby clock `offset_ms` ahead."""
    rows = []
    for i, (out, back) in enumerate(zip(out_ms, back_ms, strict=True)):
        t1 = T0 + timedelta(seconds=i)
        t2 = t1 + timedelta(milliseconds=out + offset_ms)  # printed by the standby's clock
        t3 = t2 + timedelta(milliseconds=rfs_ms)
        t4 = t1 + timedelta(milliseconds=out + rfs_ms + back)
        rows.append(
            {
                "thread": 1,
                "seq": 7,
                "msgid": 100 + i,
                "sent_at": t1,
                "received_at": t2,
                "finished_at": t3,
                "acked_at": t4,
                "total_ms": out + rfs_ms + back,
                "rfs_ms": rfs_ms,
                "network_ms": out + back,
                "resolution_ms": 0.002,
                "matched": True,
                "primary_host": "prim01",
                "standby_host": standby,
                "primary_file": "p.trc",
                "standby_file": "s.trc",
                "primary_line": 10 * i + 1,
                "standby_line": 10 * i + 2,
            }
        )
    return pl.from_dicts(rows, schema=WRITES)


def test_symmetric_delays_give_the_offset_within_its_bound() -> None:
    w = writes(2500.0, out_ms=[1.0, 0.4, 0.9, 0.5, 2.0, 0.6], back_ms=[1.0, 0.4, 0.9, 0.5, 2.0, 0.6])
    clock = estimate_offsets(w).row(0, named=True)
    assert clock["source"] == "estimated"
    assert clock["offset_ms"] == pytest.approx(2500.0, abs=clock["bound_ms"] + 1e-6)
    assert clock["bound_ms"] < 0.5  # the smallest round trip (0.8 ms) bounds it best
    assert clock["writes_used"] == 5 and clock["causal_violations"] == 0


def test_the_offset_given_on_the_command_line_replaces_the_estimate() -> None:
    w = writes(2500.0, out_ms=[1.0] * 6, back_ms=[1.0] * 6)
    clock = estimate_offsets(w, {"stby01": 2400.0}).row(0, named=True)
    assert (clock["offset_ms"], clock["bound_ms"], clock["source"]) == (2400.0, 0.0, "--clock-offset")
    assert clock["causal_violations"] == 6  # 100 ms off: every receive now comes before its send


def test_a_whole_hour_looks_like_a_time_zone() -> None:
    w = writes(3_600_000.0, out_ms=[1.0] * 6, back_ms=[1.0] * 6)
    assert "looks like a time zone difference" in estimate_offsets(w)["warning"][0]


def test_one_way_delays_split_the_network_time_exactly() -> None:
    w = writes(-800.0, out_ms=[0.7, 0.7, 0.7, 0.7, 0.7], back_ms=[0.3, 0.3, 0.3, 0.3, 0.3])
    out = one_way(w, estimate_offsets(w))
    assert out.columns == WRITES.names()
    assert (out["net_out_ms"] + out["net_back_ms"] - out["network_ms"]).abs().max() < 1e-9
    # a constant asymmetry cannot be told from an offset: the estimate splits the round trip evenly
    assert out["net_out_ms"].to_list() == pytest.approx([0.5] * 5, abs=1e-6)


def test_merged_timeline_puts_standby_events_on_the_primary_clock() -> None:
    w = writes(60_000.0, out_ms=[1.0] * 6, back_ms=[1.0] * 6)
    events = merged_timeline(w, estimate_offsets(w))
    first = events.filter(pl.col("msgid") == 100)
    assert first["event"].to_list() == ["send", "receive", "finish", "ack"]
    assert first["at"].is_sorted()
    assert first["host"].to_list() == ["prim01", "stby01", "stby01", "prim01"]


def test_each_host_pair_gets_its_own_offset() -> None:
    w = pl.concat([writes(100.0, [1.0] * 6, [1.0] * 6), writes(-300.0, [1.0] * 6, [1.0] * 6, standby="stby02")])
    clock = estimate_offsets(w).sort("standby_host")
    assert clock["standby_host"].to_list() == ["stby01", "stby02"]
    assert clock["offset_ms"].to_list() == pytest.approx([100.0, -300.0], abs=0.01)


def test_the_best_round_trips_break_ties_by_the_earlier_write() -> None:
    """Many writes share a round trip: the best are the smallest, then the earliest at the cut, as a sort
    of every write by (round trip, row) would take them."""
    network = [3.0, 1.0, 2.0, 1.0, 2.0, 2.0, 5.0, 2.0, 1.0, 2.0] * 30
    rows = pl.DataFrame({"network_ms": network, "_offset": [float(i) for i in range(300)], "_half": [0.5] * 300})
    for take in (1, 5, 29, 30, 31, 90, 299, 300, 301):
        best = _best(rows, take)
        reference = rows.with_row_index("_at").bottom_k(take, by=["network_ms", "_at"])
        assert sorted(best["_offset"].to_list()) == sorted(reference["_offset"].to_list()), take


def test_one_way_delays_and_violations_per_host_pair_and_none_for_a_write_without_one() -> None:
    w = pl.concat([writes(100.0, [1.0] * 6, [1.0] * 6), writes(-300.0, [1.0] * 6, [1.0] * 6, standby="stby02")])
    lonely = w.head(1).with_columns(
        pl.lit(None, WRITES["standby_host"]).alias("standby_host"), matched=pl.lit(False), msgid=pl.lit(999, pl.Int64)
    )
    clock = estimate_offsets(pl.concat([w, lonely]))
    out = one_way(pl.concat([w, lonely]), clock)
    by_host = out.group_by("standby_host").agg(pl.col("net_out_ms").mean(), pl.col("clock_bound_ms").max())
    assert dict(by_host.select("standby_host", "net_out_ms").iter_rows()) == pytest.approx(
        {"stby01": 1.0, "stby02": 1.0, None: None}, abs=0.01
    )
    assert clock["causal_violations"].to_list() == [0, 0]
    shifted = clock.with_columns(
        offset_ms=pl.when(pl.col("standby_host") == "stby02").then(-200.0).otherwise("offset_ms")
    )
    assert dict(zip(shifted["standby_host"], _violations(w, shifted), strict=True)) == {"stby01": 0, "stby02": 6}
