"""Reading in chunks changes nothing: pairing, wait sums and stamps carry over chunk and segment edges.

The tables stage keeps only the writes of a chunk and the messages still waiting for their
partner (bounded memory). These tests read the same traces in one piece and in many small
chunks, cut before opening messages (the reader's rule) and at any newline (writes spanning
chunks), and across files of one process (segments); the writes must be the same to the digit.
"""

from __future__ import annotations

import functools
import io
import tempfile
from pathlib import Path

import polars as pl
import pytest

from analyzer import api, batches, read
from analyzer.api import Analysis, Options, analyze
from analyzer.simulate.options import SimOptions
from analyzer.simulate.runner import simulate
from analyzer.zones import TimeZones
from tests.conftest import PAPER


def _same(a: Analysis, b: Analysis) -> None:
    assert a.writes.height > 0
    assert a.writes.equals(b.writes), "writes differ"
    assert a.unmatched.equals(b.unmatched), "unmatched differ"
    assert a.warnings.equals(b.warnings), "warnings differ"


@pytest.mark.parametrize("generation", ["11.2", "19c"])
@pytest.mark.parametrize("cut_anywhere", [False, True])
def test_small_chunks_give_the_same_writes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, generation: str, cut_anywhere: bool
) -> None:
    """4 KiB chunks (dozens per file); with `cut_anywhere` the reader may cut inside a write."""
    simulate(tmp_path / "set", SimOptions(format_version=generation, writes=300, scenario="mixed", seed=5))
    options = Options(zones=TimeZones(default_min=0))
    whole = analyze([str(tmp_path / "set")], options)
    monkeypatch.setattr(api, "read_lines", functools.partial(read.read_lines, chunk_bytes=4096))
    if cut_anywhere:
        monkeypatch.setattr(read, "OPENING_LINES", ())
    chunked = analyze([str(tmp_path / "set")], options)
    _same(whole, chunked)
    assert chunked.writes.filter("matched").height == 600


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


def test_reader_cuts_before_an_opening_message() -> None:
    """Chunks end just before `Client sending` / `Server received`, else at a newline."""
    body = b"".join(
        b"... Server received SQLNET data [f] oper='Write' flag=1 thrd=1 seq=1 msgid=%d\n"
        b"WAIT #0: nam='RFS write' ela= 5 tim=1\n"
        b"... Server finished processing SQLNET data [f] oper='Write' flag=1 thrd=1 seq=1 msgid=%d\n" % (i, i)
        for i in range(200)
    )
    stats = read.ReadStats()
    frames = list(read.read_lines(io.BytesIO(body), stats, chunk_bytes=2048))
    assert len(frames) > 5
    assert all(f["text"][0].startswith("... Server received") for f in frames)
    assert pl.concat(frames)["line"].to_list() == list(range(1, 601))


def test_matching_in_batches_gives_the_same_writes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Batches of a few hundred exchanges (one per log sequence or so) match as the whole does,
    with the typical gap taken over all of them; the spilled pieces are removed afterwards."""
    simulate(tmp_path / "set", SimOptions(format_version="19c", writes=1500, log_switch_every=200, seed=8))
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    whole = analyze([str(tmp_path / "set")])
    monkeypatch.setattr(batches, "BATCH_ROWS", 150)
    assert len(batches.key_batches(*_indexes(tmp_path / "set"))) > 10
    batched = analyze([str(tmp_path / "set")])
    _same(whole, batched)
    assert (batched.primary_exchanges, batched.standby_exchanges) == (3000, 3000)
    assert list((tmp_path / "tmp").iterdir()) == []


def _indexes(path: Path) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The (thread, seq) index of each side of a trace set read in memory."""
    files = [api.read_file(source, TimeZones()) for source in api.discover([str(path)])[0]]
    primary, standby = api.sides(files)
    return primary.index(), standby.index()
