"""10046 tim: epoch or counter, anchored to ADR lines; the ns >> 10 unit bug; zone from epoch tim."""

from __future__ import annotations

import re
from datetime import datetime, timedelta
from pathlib import Path

import polars as pl
import pytest

from analyzer.api import Options, analyze
from analyzer.base.schemas import ANCHORS
from analyzer.base.zones import TimeZones
from analyzer.parse.families import parse_chunk
from analyzer.parse.tim import wait_times
from analyzer.simulate.options import SimOptions
from analyzer.simulate.runner import simulate
from tests.conftest import PAPER, lines_frame


def _standby(result):  # type: ignore[no-untyped-def]
    return [f for f in result.files if f.reduced.info.role == "standby"]


def test_paper_rfs_tim_is_epoch_and_gives_the_zone() -> None:
    """The paper's host ran at UTC-7: its epoch tim says so, without --tz."""
    result = analyze([str(PAPER / "stby01")])
    for f in _standby(result):
        assert (f.reduced.tim.kind, f.reduced.tim.inferred_zone_min) == ("epoch", -420)
        assert f.reduced.zone == "inferred from epoch tim (-07:00)"
    w = result.writes.filter(msgid=117468).row(0, named=True)
    assert w["received_at"].isoformat() == "2014-12-02T15:46:34.598323+00:00"  # refined by tim (below)


@pytest.mark.parametrize(("generation", "zone_min"), [("12.1", 330), ("19c", 330)])
def test_wait_ends_are_anchored_to_the_wall_clock(tmp_path: Path, generation: str, zone_min: int) -> None:
    """Each `RFS write` wait, anchored, ends just before the krs stamp that follows it (< 1 ms)."""
    simulate(tmp_path / "set", SimOptions(format_version=generation, writes=300, standby_tz="+05:30", seed=3))
    result = analyze([str(tmp_path / "set")], Options(zones=TimeZones(per_host={"stby01": zone_min})))
    for f in _standby(result):
        assert f.reduced.tim.kind == ("epoch" if generation == "12.1" else "counter")
        parsed, _ = parse_chunk(lines_frame(Path(f.source.label).read_text().removesuffix("\n")), in_header=False)
        stamps = parsed.tables["krs"].select(
            stamp_line="line", stamp_at=(pl.col("local") - pl.duration(minutes=zone_min)).dt.replace_time_zone("UTC")
        )
        ends = wait_times(parsed.tables["waits"], f.reduced.tim)
        writes = ends.filter(pl.col("event") == "RFS write").sort("line")
        paired = writes.join_asof(stamps, left_on="line", right_on="stamp_line", strategy="forward")
        lead = (paired["stamp_at"] - paired["end_at"]).dt.total_microseconds()
        assert lead.min() >= -1 and lead.max() < 1_000, (lead.min(), lead.max())


def test_unit_bug_is_detected_and_corrected(tmp_path: Path) -> None:
    """tim and ela counting 1024 ns units: detected from the ADR anchors, ela scaled back."""
    simulate(tmp_path / "set", SimOptions(format_version="19c", writes=2000, seed=9))
    clean = analyze([str(tmp_path / "set")])
    for rfs in (tmp_path / "set").rglob("*_rfs_*.trc"):
        text = rfs.read_text()
        first = int(re.search(r"tim=(\d+)", text).group(1))  # type: ignore[union-attr]

        def slow(m: re.Match[str]) -> str:
            return f"ela={m.group(1)}{round(int(m.group(2)) / 1.024)}"

        def slow_tim(m: re.Match[str], first: int = first) -> str:
            return f"tim={first + round((int(m.group(1)) - first) / 1.024)}"

        text = re.sub(r"tim=(\d+)", slow_tim, text)
        rfs.write_text(re.sub(r"ela=( ?)(\d+)", slow, text))
    bugged = analyze([str(tmp_path / "set")])
    for f in _standby(bugged):
        assert f.reduced.tim.factor == 1.024
        assert "unit bug" in (f.reduced.tim.warning or "")
    both = clean.writes.join(bugged.writes, on=["thread", "msgid"], suffix="_bug")
    assert (both["rfs_io_ms"] - both["rfs_io_ms_bug"]).abs().max() < 0.01  # type: ignore[operator]


def test_millisecond_rfs_stamps_are_refined_by_tim() -> None:
    """11.2: RFS received before its first wait started and finished after its last one ended."""
    result = analyze([str(PAPER)], Options(zones=TimeZones(default_min=-420)))
    w = result.writes.filter(msgid=117468).row(0, named=True)
    # stamp .598 and the first wait (RFS random i/o, 298 us ending at .598944) started at .598646
    assert w["received_at"].isoformat() == "2014-12-02T15:46:34.598323+00:00"
    # stamp .761 and the RFS write ended at .761203
    assert w["finished_at"].isoformat() == "2014-12-02T15:46:34.761601+00:00"
    assert w["rfs_ms"] == 163.0  # the components stay those of the stamps, as the paper reads them
    stamps = result.writes.filter("matched").select(
        inside=(pl.col("received_at") - pl.col("received_at").dt.truncate("1ms")).dt.total_microseconds() < 1000
    )
    assert stamps["inside"].all()


@pytest.mark.parametrize(
    ("generation", "scenario"), [("11.2", "network"), ("19c", "standby-io"), ("23ai", "mixed"), ("19c", "network")]
)
def test_no_false_warning_on_good_data(tmp_path: Path, generation: str, scenario: str) -> None:
    """The session-start ADR line is anchored to the end of a long idle wait: that one anchor must
    not make tim and the wall clock look as if they disagree (sets of 300 writes have 4 anchors)."""
    simulate(tmp_path / "set", SimOptions(format_version=generation, scenario=scenario, writes=300, seed=1))
    result = analyze([str(tmp_path / "set")])
    for f in _standby(result):
        assert (f.reduced.tim.factor, f.reduced.tim.warning) == (1.0, None)


def test_a_biased_anchor_does_not_move_the_slope() -> None:
    """Anchors one second apart, exact but for the first (written 0.47 s before its wait ended)."""
    from analyzer.parse.tim import read_tim

    base = 7_127_240_000_000
    rows = [(10 + 9 * i, base + i * 1_000_000, 11 + 9 * i) for i in range(6)]
    rows[0] = (1, base - 470_000, 10)
    anchors = pl.DataFrame(
        {
            "line": [r[0] for r in rows],
            "local": [datetime(2024, 10, 22, 16, 18, 49) + timedelta(seconds=i) for i in range(6)],
            "utc_offset_min": [0] * 6,
            "tim": [r[1] + 470_000 if i == 0 else r[1] for i, r in enumerate(rows)],
            "wait_line": [r[2] for r in rows],
        },
        schema=ANCHORS,
    )
    clock = read_tim(anchors, has_waits=True, zone=0, zone_known=True)
    assert (clock.kind, clock.factor, clock.warning) == ("counter", 1.0, None)
