"""The commit path: each redo write once, as its slowest SYNC destination's write; against the simulator's
per-write truth (commit_path.csv) and on hand-built writes (pairing, DATA_GUARD_SYNC_LATENCY, missing sides)."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from analyzer.api import Options, analyze
from analyzer.findings.commit_path import commit_path, pairing_sentence, slower_sentence
from analyzer.report.model import document
from analyzer.simulate import SimOptions, simulate
from tests.write_rows import THRESHOLD, frame, row


def _two(rows: list[tuple[str, int, float, float]]) -> pl.DataFrame:
    """Writes of two destinations: (standby db, msgid, sent seconds, network ms) each."""
    out = []
    for db, msgid, at, network in rows:
        r = row(msgid, at, network=network) | {"primary_db": "sales", "standby_db": db}
        out.append(r | {"fastsync_ms": r["total_ms"] - r["rfs_io_ms"]})  # type: ignore[operator]
    return frame(out)


def test_one_destination_is_its_own_commit_path() -> None:
    writes = _two([("boston", 1, 0.0, 1.0), ("boston", 2, 1.0, 150.0)])
    c = commit_path(writes, ["boston"], THRESHOLD)
    assert c.writes is writes and not c.several and pairing_sentence(c) == ""


def test_each_redo_write_counts_once_as_its_slowest_destination() -> None:
    writes = _two(
        [
            ("boston", 10, 0.0, 1.0),
            ("chicago", 10, 0.0001, 150.0),  # the same redo write, 0.1 ms later: chicago is slower
            ("boston", 11, 1.0, 200.0),
            ("chicago", 11, 1.0002, 2.0),
            ("boston", 12, 2.0, 1.0),  # chicago's write of this one is not in the upload
        ]
    )
    c = commit_path(writes, ["boston", "chicago"], THRESHOLD)
    assert c.redo_writes == 3 and (c.paired, c.partial, c.left_out) == (2, 1, 0)
    assert c.writes.select("standby_db", "msgid", "slow").rows() == [
        ("chicago", 10, True),
        ("boston", 11, True),
        ("boston", 12, False),
    ]
    assert [(s.standby_db, s.slower, s.slower_when_slow) for s in c.links] == [("boston", 1, 1), ("chicago", 1, 1)]
    # with Fast Sync the commit still waits for the slower destination's network
    assert c.writes["fastsync_ms"].to_list()[:2] == [150.1, 200.1]
    assert "2 redo writes seen on every destination, 1 on only some" in pairing_sentence(c)
    assert slower_sentence(c) == (
        "The slowest destination of the 2 redo writes seen on every one: boston 50%, chicago 50%;"
        " of the slow ones: boston 1, chicago 1."
    )


def test_a_write_seen_on_the_standby_only_is_left_out() -> None:
    writes = _two([("boston", 10, 0.0, 1.0), ("chicago", 10, 0.0001, 2.0)])
    writes = pl.concat([writes, writes.head(1).with_columns(sent_at=None, msgid=pl.lit(99, pl.Int64))])
    c = commit_path(writes, ["boston", "chicago"], THRESHOLD)
    assert (c.redo_writes, c.left_out) == (1, 1)
    assert "1 remote write seen on the standby only left out" in pairing_sentence(c)


def test_data_guard_sync_latency_bounds_the_wait_beyond_the_first_acknowledgement() -> None:
    writes = _two([("boston", 10, 0.0, 1.0), ("chicago", 10, 0.0001, 3000.0)])
    c = commit_path(writes, ["boston", "chicago"], THRESHOLD, sync_latency_s=2)
    (total,) = c.writes["total_ms"].to_list()
    assert total == pytest.approx(1.6 + 2000.0) and c.capped == 1
    assert "DATA_GUARD_SYNC_LATENCY = 2 s (alert log)" in pairing_sentence(c)
    plain = commit_path(writes, ["boston", "chicago"], THRESHOLD)
    assert plain.writes["total_ms"].to_list() == [3000.6] and "NET_TIMEOUT" in pairing_sentence(plain)


@pytest.mark.slow
def test_the_commit_path_of_two_sync_standbys_is_the_truths(tmp_path: Path) -> None:
    result = simulate(tmp_path / "set", SimOptions(topology="two-sync", scenario="mixed", writes=400, seed=7))
    assert result.commit_path is not None
    truth = pl.read_csv(result.commit_path, schema_overrides={"sent_at": pl.String})
    a = analyze([str(tmp_path / "set")], Options())
    summary = document(a, 5)["summary"]
    (conf,) = summary["configurations"]
    path = conf["commit_path"]
    slow = truth.filter(pl.col("commit_ms") >= THRESHOLD)
    assert a.writes.height == 2 * truth.height  # two remote writes per redo write ...
    assert (path["writes"], path["slow_writes"], path["paired"]) == (truth.height, slow.height, truth.height)
    assert conf["slow_writes"] == slow.height  # ... and the configuration's figures count each once
    assert path["p99_ms"] == pytest.approx(float(truth["commit_ms"].quantile(0.99, "nearest")), abs=0.002)  # type: ignore[arg-type]
    # per redo write: the slowest destination's write, with the truth's commit time
    c = commit_path(a.writes, ["salesdr", "salesbc"], THRESHOLD)
    slowest = (
        truth.with_columns(db=pl.col("standby_dbs").str.split(";"), msgid=pl.col("msgids").str.split(";"))
        .explode("db", "msgid")
        .with_columns(pl.col("msgid").cast(pl.Int64))
    )
    mine = c.writes.select("thread", "seq", "msgid", "total_ms", db=pl.col("standby_db").cast(pl.String)).with_columns(
        pl.col("thread", "seq", "msgid").cast(pl.Int64)
    )
    joined = mine.join(slowest, on=["thread", "seq", "db", "msgid"], how="left")
    assert joined["commit_ms"].null_count() == 0  # every row is a write of its redo write
    assert (joined["total_ms"] - joined["commit_ms"]).abs().max() < 0.002  # and the slowest one
    untied = truth.filter(pl.col("totals_ms").str.split(";").list.n_unique() > 1)
    expected = dict(untied.group_by("slowest_db").len().iter_rows())
    slower = {link["standby_db"]: link["slower"] for link in path["links"]}
    ties = truth.height - untied.height
    assert all(abs(slower[db] - n) <= ties for db, n in expected.items())
