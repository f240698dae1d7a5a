"""Segments of one process joined: a write spanning two files keeps its waits."""

from __future__ import annotations

from pathlib import Path

import pytest

from analyzer.api import Options, analyze
from analyzer.zones import TimeZones
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
