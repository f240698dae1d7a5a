"""Simulated trace sets of every generation, analysed and compared with the simulator's truth.

Two RAC threads, a standby clock seconds off, and different UTC offsets on each side: every
write is matched and every component agrees with truth.csv within 2x the timestamp resolution
+ 0.01 ms; every slow write whose dominant component is >= 60% of its total gets that verdict.
"""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from analyzer.api import Options, analyze
from analyzer.base.units import parse_offset
from analyzer.base.zones import TimeZones
from analyzer.match.clock import merged_timeline
from analyzer.simulate.options import SimOptions
from analyzer.simulate.runner import simulate

COMPONENTS = ("total_ms", "network_ms", "rfs_ms", "rfs_io_ms", "rfs_other_ms")
#: stamp resolution (ms) per generation: 11.2 prints milliseconds, later releases microseconds
RESOLUTION_MS = {"11.2": 1.0, "12.1": 0.001, "19c": 0.001, "23ai": 0.001}
CASES = [
    ("11.2", "standby-io", -2.5, "-07:00", "-05:00"),
    ("12.1", "network", 4.0, "+01:00", "+00:00"),
    ("19c", "mixed", 3.5, "-07:00", "+02:00"),
    ("23ai", "log-switch", -40.0, "+05:30", "-03:00"),
]


def _zones(primary_tz: str, standby_tz: str) -> TimeZones:
    """The --tz a user would give for files without ISO lines (standby host by name)."""
    return TimeZones(default_min=parse_offset(primary_tz), per_host={"stby01": parse_offset(standby_tz)})


@pytest.mark.slow
@pytest.mark.parametrize(("generation", "scenario", "skew", "ptz", "stz"), CASES, ids=[c[0] for c in CASES])
def test_analysis_agrees_with_truth(
    tmp_path: Path, generation: str, scenario: str, skew: float, ptz: str, stz: str
) -> None:
    sim = simulate(
        tmp_path / "set",
        SimOptions(
            scenario=scenario,
            format_version=generation,
            writes=600,
            threads=2,
            standby_skew_s=skew,
            primary_tz=ptz,
            standby_tz=stz,
            seed=11,
        ),
    )
    result = analyze([str(tmp_path / "set")], Options(zones=_zones(ptz, stz)))
    truth = pl.read_csv(sim.truth, schema_overrides={"sent_at": pl.String})
    assert result.unmatched.height == 0
    assert result.writes.height == truth.height == result.primary_exchanges
    assert sorted(result.writes["thread"].unique().to_list()) == [1, 2]
    assert all(f.parsed.unparsed == 0 for f in result.files)

    got = result.writes.with_columns(pl.col("sent_at").dt.strftime("%Y-%m-%dT%H:%M:%S%.6fZ"))
    both = truth.join(got, on=["thread", "seq", "msgid"], how="left", suffix="_got")
    assert both["total_ms_got"].null_count() == 0
    tolerance = 2 * RESOLUTION_MS[generation] + 0.01
    for name in COMPONENTS:
        worst = both.select((pl.col(name) - pl.col(f"{name}_got")).abs().max()).item()
        assert worst <= tolerance, f"{name}: off by {worst} ms"
    assert (both["sent_at"] == both["sent_at_got"]).all(), "sent_at must be the same UTC instant"

    clock = result.clock
    assert clock.height == 2 and (clock["causal_violations"] == 0).all()
    for row in clock.iter_rows(named=True):  # the standby clock runs `skew` s ahead of the primaries
        assert abs(row["offset_ms"] - skew * 1000) <= row["bound_ms"] + 1e-6, row

    slow = both.filter(pl.col("slow")).with_columns(
        dominant=pl.max_horizontal("network_ms", "rfs_io_ms", "rfs_other_ms") / pl.col("total_ms")
    )
    clear = slow.filter(pl.col("dominant") >= 0.6)
    assert clear.height > 0
    assert (clear["verdict"] == clear["verdict_got"]).all()


@pytest.mark.slow
def test_lgwr_warnings_of_a_simulated_set_are_tied(tmp_path: Path) -> None:
    simulate(tmp_path / "set", SimOptions(scenario="standby-io", format_version="19c", writes=800, seed=5))
    result = analyze([str(tmp_path / "set")])
    warnings = result.warnings
    assert warnings.height > 0
    assert warnings["writes"].min() >= 1, "every LGWR warning covers a remote write"
    assert (warnings["remote_total_ms"] <= warnings["elapsed_ms"] + 1).all()


@pytest.mark.slow
@pytest.mark.parametrize("skew", [-40.0, 40.0])
def test_merged_timeline_is_in_causal_order(tmp_path: Path, skew: float) -> None:
    """Standby 40 s off either way and at another zone: shifted by the estimated offset, every write
    reads send, receive, finish, ack in time order (microsecond stamps)."""
    simulate(tmp_path / "set", SimOptions(writes=400, standby_skew_s=skew, standby_tz="+03:00", seed=2))
    result = analyze([str(tmp_path / "set")])
    timeline = merged_timeline(result.writes, result.clock)
    assert timeline.height == 4 * result.writes.height
    order = timeline.group_by("thread", "msgid", maintain_order=True).agg(pl.col("event").str.join(","))
    assert (order["event"] == "send,receive,finish,ack").all()
    received = timeline.filter(event="receive").join(result.writes, on=["thread", "msgid"])
    shift = (received["at"] - received["received_at"]).dt.total_milliseconds()
    assert shift.min() > -skew * 1000 - 10 and shift.max() < -skew * 1000 + 10  # the skew, taken back
