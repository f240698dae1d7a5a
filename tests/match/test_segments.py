"""Segments of one process joined: a write spanning two files keeps its waits."""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from analyzer.api import Options, analyze
from analyzer.base.spill import INDEX
from analyzer.base.vocab import Role
from analyzer.base.zones import TimeZones
from analyzer.inputs.sources import discover
from analyzer.match import segments
from analyzer.match.segments import Side, join_segments, side
from analyzer.reduce.ingest import read_files
from analyzer.simulate.options import SimOptions
from analyzer.simulate.runner import simulate
from tests.conftest import PAPER


def test_a_write_spanning_two_rfs_segments_keeps_its_waits(tmp_path: Path) -> None:
    """An RFS trace cut into two files between a `Server received` and its `Server finished`,
    with one I/O wait on each side of the cut: the write matches with both waits."""
    for src in PAPER.rglob("*.trc"):
        dest = tmp_path / src.relative_to(PAPER)
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_bytes(src.read_bytes())
    options = Options(zones=TimeZones(default_min=-420))
    whole = analyze([str(tmp_path)], options)
    rfs = next(tmp_path.rglob("chicago1_rfs_8801.trc"))
    lines = rfs.read_text().split("\n")
    recv = next(i for i, text in enumerate(lines) if "msgid=117468" in text and "Server received" in text)
    assert "RFS random i/o" in lines[recv + 2] and "RFS write" in lines[recv + 4]
    header = lines[:16]
    rfs.write_text("\n".join(lines[: recv + 3]) + "\n")  # received, its stamp, the first wait
    (rfs.parent / "chicago1_rfs_8801_2.trc").write_text("\n".join([*header, *lines[recv + 3 :]]))
    split = analyze([str(tmp_path)], options)
    columns = ["total_ms", "rfs_ms", "rfs_io_ms", "rfs_io_waits", "received_at", "finished_at", "verdict"]
    row = split.writes.filter(msgid=117468).select(columns)
    assert row.equals(whole.writes.filter(msgid=117468).select(columns))
    assert row["rfs_io_waits"][0] == 2 and row["rfs_io_ms"][0] == pytest.approx(162.679)
    assert split.writes.filter("matched").height == whole.writes.filter("matched").height == 66
    assert split.unmatched.height == 0


@pytest.mark.slow
@pytest.mark.parametrize(
    ("version", "zones", "together"),
    [
        ("19c", TimeZones(), True),  # ISO ADR lines: each file's own offset
        ("12.1", TimeZones(per_host={"stby01": -300}), True),  # no ISO lines: fixed offsets per host, tim anchored
        ("12.1", TimeZones(default_min="America/New_York"), False),  # an IANA zone: each piece on its own
    ],
)
def test_small_pieces_load_together_as_one_by_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, version: str, zones: TimeZones, together: bool
) -> None:
    """Traces cut into many small segments (a small piece each): a side's pieces that convert with
    their file's constants are loaded in a few queries for all of them, giving what loading them one
    by one gives, to the last row and column (the waits' UTC times too), narrow or whole."""
    options = SimOptions(
        writes=400,
        format_version=version,
        segment_bytes=12_000,
        log_switch_every=4,  # several log sequences in a segment: a batch of keys takes part of a piece
        primary_tz="+02:00",
        standby_tz="-05:00",
        seed=5,
    )
    simulate(tmp_path, options)
    files = read_files(discover([str(tmp_path)])[0], zones)
    assert len(files) > 20
    calls = []
    real = Side._together

    def counted(self: Side, *args: Any) -> pl.DataFrame:
        calls.append(1)
        return real(self, *args)

    monkeypatch.setattr(Side, "_together", counted)
    found = {}
    for small in (True, False):
        if not small:  # no piece is small: each is loaded on its own
            monkeypatch.setattr(segments, "STREAM_ROWS", 0)
        for role, narrow, half in itertools.product((Role.PRIMARY, Role.STANDBY), (False, True), (False, True)):
            one = side(files, role, join_segments(files))
            index = one.index()
            keys = index.select(INDEX).unique().sort(INDEX)  # a batch of keys: all of them, or every other
            keys = keys.filter(pl.int_range(pl.len()) % 2 == 0) if half else keys
            found[small, role, narrow, half] = one.load(index, keys, narrow=narrow)
        assert bool(calls) is (together and small)
        calls.clear()
    for (small, role, narrow, half), rows in found.items():
        if small:
            assert rows.height > (300 if half else 700) and rows.equals(found[False, role, narrow, half])
    assert found[True, Role.STANDBY, False, False]["last_end"].null_count() < 100  # the waits' times are there
