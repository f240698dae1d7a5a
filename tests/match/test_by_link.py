"""Matching in batches of log sequences gives the writes of matching at once."""

from __future__ import annotations

import random
import tempfile
from datetime import datetime, timedelta
from pathlib import Path

import polars as pl
import pytest

from analyzer import api
from analyzer.api import FileResult, Options, analyze, analyze_files
from analyzer.base.vocab import Decider, Role
from analyzer.base.zones import TimeZones
from analyzer.match import by_link as batches
from analyzer.match.links import CLEAR_MARGIN
from analyzer.match.segments import join_segments as segments_of
from analyzer.match.segments import side
from analyzer.simulate.options import SimOptions
from analyzer.simulate.runner import simulate
from tests.builders import primary_lines, read_trace, same_writes, standby_lines


def _indexes(path: Path) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The (thread, seq) index of each side of a trace set read in memory."""
    files = [api.read_file(source, TimeZones()) for source in api.discover([str(path)])[0]]
    primary, standby = api.sides(files)
    return primary.index(), standby.index()


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
    same_writes(whole, batched)
    assert (batched.primary_exchanges, batched.standby_exchanges) == (3000, 3000)
    assert list((tmp_path / "tmp").iterdir()) == []


def test_gaps_taken_on_a_sample_leave_the_writes_as_they_were(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """With several batches the typical gaps come from a sample of the keys. The standby clock is two
    minutes off, so a window centred anywhere but on the true gap loses writes. The sample here is one
    key, of one primary thread: the other thread's host pair takes each batch's own gaps, and every
    write matches as at once."""
    simulate(
        tmp_path / "set",
        SimOptions(format_version="19c", writes=600, log_switch_every=100, standby_skew_s=120.0, seed=4),
    )
    whole = analyze([str(tmp_path / "set")])
    monkeypatch.setattr(batches, "BATCH_ROWS", 150)
    monkeypatch.setattr(batches, "GAP_SAMPLE_ROWS", 1)
    monkeypatch.setattr(batches, "SAMPLE_GAPS", 1)
    indexes = _indexes(tmp_path / "set")
    assert len(batches.key_batches(*indexes)) > 4
    assert batches.sample_keys(*indexes).height == 1
    batched = analyze([str(tmp_path / "set")])
    same_writes(whole, batched)
    assert whole.writes["matched"].all() and whole.writes.height == 1200


def _index(rows_per_key: list[int]) -> pl.DataFrame:
    """An index of one piece holding keys (thread 1, seq 1..n) of these sizes."""
    n = len(rows_per_key)
    return pl.DataFrame(
        {"thread": [1] * n, "seq": list(range(1, n + 1)), "len": rows_per_key},
        schema={"thread": pl.Int64, "seq": pl.Int64, "len": pl.UInt32},
    )


def test_the_sample_keys_are_spread_evenly(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(batches, "GAP_SAMPLE_ROWS", 600)
    primary, standby = _index([100] * 10), _index([100] * 10)  # 2,000 rows: 3 keys of 200
    assert batches.sample_keys(primary, standby)["seq"].to_list() == [2, 6, 9]
    assert batches.sample_keys(primary.head(2), standby.head(2))["seq"].to_list() == [1, 2]  # all: 400 rows
    assert batches.sample_keys(_index([5000] * 3), _index([5000] * 3))["seq"].to_list() == [2]  # at least one


# --- link by link ---

T0 = datetime(2024, 10, 22, 14, 0, 0)


def _stamp(t: datetime) -> str:
    return t.strftime("%Y-%m-%d %H:%M:%S.%f")


def _pair(gaps_ms: list[float], rtt_ms: float, start: datetime = T0) -> tuple[list[str], list[str]]:
    """A sender's and its RFS's lines: writes with msgid 100, 101, ... sent after the given idle gaps."""
    writes, rfs, t = [], [], start
    for n, gap in enumerate(gaps_ms):
        t += timedelta(milliseconds=gap)
        t2 = t + timedelta(milliseconds=rtt_ms / 2)
        t3 = t2 + timedelta(microseconds=600)
        t4 = t3 + timedelta(milliseconds=rtt_ms / 2)
        writes.append((100 + n, _stamp(t), _stamp(t4)))
        rfs.append((100 + n, _stamp(t2), _stamp(t3), [("RFS write", 500)]))
        t = t4
    return primary_lines(writes), standby_lines(rfs)


def _configurations() -> list[FileResult]:
    """Two configurations at the same hour with the same keys (thread 1, seq 10, msgids 100...),
    their own timings, and RFS traces that name no client: their names tell them apart."""
    rng = random.Random(4)
    files = []
    for db, host, rtt in (("sales", "salesdb01", 1.0), ("hr", "hrdb01", 2.0)):
        p_lines, s_lines = _pair([rng.uniform(1.0, 9.0) for _ in range(60)], rtt)
        files.append(read_trace(p_lines, f"{host}/diag/rdbms/{db}/{db}1/trace/{db}1_nss2_11.trc"))
        files.append(read_trace(s_lines, f"{db}dr01/diag/rdbms/{db}dr/{db}dr1/trace/{db}dr1_rfs_22.trc"))
    return files


def test_the_match_rate_of_the_true_sender_stands_out() -> None:
    files = _configurations()
    segments = segments_of(files)
    sales, salesdr, hr = (
        side([files[i]], role, segments) for i, role in ((0, Role.PRIMARY), (1, Role.STANDBY), (2, Role.PRIMARY))
    )
    right, wrong = batches.link_score(sales, salesdr), batches.link_score(hr, salesdr)
    assert (right.receiver_writes, right.consistent) == (60, 60)
    assert wrong.receiver_writes == 60 and wrong.rate <= CLEAR_MARGIN * right.rate


def test_colliding_keys_of_two_configurations_are_matched_within_each() -> None:
    a = analyze_files(_configurations(), [], Options())
    assert a.writes.height == 120 and a.writes["matched"].all() and a.unmatched.height == 0
    dbs = a.writes.select(pl.col("primary_db", "standby_db", "primary_file", "standby_file").cast(pl.String))
    for row in dbs.iter_rows(named=True):
        assert row["standby_db"] == row["primary_db"] + "dr"
        assert f"/{row['primary_db']}/" in row["primary_file"] and f"/{row['standby_db']}/" in row["standby_file"]
    assert sorted(a.link_counts.values()) == [(60, 60), (60, 60)]
    assert (a.writes["transport"].cast(pl.String) == "SYNC").all()


def test_the_match_rate_overrules_misleading_names() -> None:
    """`hrdr` is named after hr, but its writes are sales's: the match rate decides, and says so."""
    files = _configurations()
    files[3] = read_trace(_lines_of(files[1]), "hrdr01/diag/rdbms/hrdr/hrdr1/trace/hrdr1_rfs_22.trc")
    topology = api.link_topology(files)
    hrdr = next(a for a in topology.assignments if "hrdr" in a.receiver)
    assert (hrdr.sender, hrdr.decided_by) == (("sales", "NSS2"), Decider.MATCH_RATE)


def _lines_of(f: FileResult) -> list[str]:
    """The lines a test trace was built from (labels of `read_trace` are not files: rebuild them)."""
    return f.source.opener().read().decode().splitlines()


def test_an_async_link_is_matched_apart_from_the_sync_one() -> None:
    """NSS2 and NSA3 of one primary reuse the same keys; each is matched with its own RFS only."""
    rng = random.Random(9)
    p_sync, s_sync = _pair([rng.uniform(1.0, 9.0) for _ in range(40)], 1.0)
    p_async, s_async = _pair([rng.uniform(1.0, 9.0) for _ in range(40)], 5.0)
    files = [
        read_trace(p_sync, "prim01/diag/rdbms/sales/sales1/trace/sales1_nss2_11.trc"),
        read_trace(p_async, "prim01/diag/rdbms/sales/sales1/trace/sales1_nsa3_12.trc"),
        read_trace(s_sync, "stby01/diag/rdbms/salesdr/salesdr1/trace/salesdr1_rfs_21.trc"),
        read_trace(s_async, "salesar01/diag/rdbms/salesar/salesar1/trace/salesar1_rfs_22.trc"),
    ]
    a = analyze_files(files, [], Options())
    assert (a.writes.height, a.primary_exchanges, a.standby_exchanges) == (40, 40, 40)
    assert a.writes["matched"].all() and a.shipments["matched"].all() and a.shipments.height == 40
    assert set(a.shipments["standby_db"].cast(pl.String)) == {"salesar"}
    assert set(a.shipments["transport"].cast(pl.String)) == {"ASYNC"}
    assert set(a.writes["standby_db"].cast(pl.String)) == {"salesdr"}
