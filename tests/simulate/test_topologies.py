"""Topologies and transports of `simulate`: FASTSYNC, two SYNC standbys, far sync, an ASYNC sender.

Every truth row is checked against what small regex readers of the written text compute.
"""

from __future__ import annotations

import csv
import json
import re
from collections import Counter
from pathlib import Path

import pytest

from analyzer.simulate import SimOptions, SimResult, runner, simulate
from tests.simulate.readers import (
    IO_EVENTS,
    MSG,
    WAIT,
    check_truth,
    processes,
    read_truth,
    text_lines,
)


def run(tmp_path: Path, name: str = "set", **options: object) -> SimResult:
    settings: dict[str, object] = {"writes": 250, "noise": 0.2, "log_switch_every": 60}
    settings.update(options)
    return simulate(tmp_path / name, SimOptions(**settings))  # type: ignore[arg-type]


@pytest.mark.parametrize("gen", ["12.1", "19c", "23ai"])
def test_fastsync_acknowledges_before_the_standby_redo_log_write(tmp_path: Path, gen: str) -> None:
    result = run(tmp_path, format_version=gen, transport="fastsync", scenario="standby-io", extras=True)
    rows = read_truth(result.truth)
    assert len(rows) == result.writes == 500
    assert {r["transport"] for r in rows} == {"FASTSYNC"}
    assert {r["rfs_io_ms"] for r in rows} == {"0.000"}
    assert all(float(r["srl_write_ms"]) > 0 for r in rows)
    assert check_truth(tmp_path / "set", rows) == 500
    # on the RFS, no I/O wait lies between a write's received and finished messages
    for rfs in (p for p in processes(tmp_path / "set") if p.pname == "rfs"):
        inside = False
        for line in rfs.lines():
            if m := MSG.match(line):
                inside = m["kind"] == "Server received"
            elif (w := WAIT.match(line)) and w["name"] in IO_EVENTS:
                assert not inside, line
    # a slow standby write does not slow its own commit: the I/O spikes are all in srl_write_ms
    assert max(float(r["srl_write_ms"]) for r in rows) > 50 > max(float(r["rfs_ms"]) for r in rows)
    alert = next(p for p in result.extras if p.name == "alert_sales1.log").read_text()
    assert 'log_archive_dest_2       = "SERVICE=salesdr SYNC NOAFFIRM ' in alert


def test_two_sync_standbys_each_with_their_own_sender_and_rfs(tmp_path: Path) -> None:
    result = run(tmp_path, topology="two-sync", threads=2)
    out = tmp_path / "set"
    procs = processes(out)
    by_image = Counter((p.host, p.image) for p in procs)
    assert by_image[("prim01", "NSS2")] == by_image[("prim01", "NSS3")] == 1
    assert by_image[("prim02", "NSS3")] == 1
    nss3 = next(p for p in procs if p.image == "NSS3" and p.host == "prim01")
    assert re.fullmatch(r"sales1_nss3_\d+", nss3.stem)
    assert any(re.fullmatch(r"Unix process pid: \d+, image: oracle@prim01\.\S+ \(NSS3\)", x) for x in nss3.header)
    second = [p for p in procs if p.host == "salesbc01"]
    assert {p.pname for p in second} == {"rfs"} and {p.client for p in second} == {
        ("prim01", "NSS3"),
        ("prim02", "NSS3"),
    }
    rows = read_truth(result.truth)
    assert Counter((r["standby_db"], r["sender"]) for r in rows) == {("salesdr", "NSS2"): 500, ("salesbc", "NSS3"): 500}
    assert check_truth(out, rows) == 1000
    # the two streams of a thread use overlapping msgids for the same log sequences
    keys = {
        db: {(r["thread"], r["seq"], r["msgid"]) for r in rows if r["standby_db"] == db}
        for db in ("salesdr", "salesbc")
    }
    assert len(keys["salesdr"] & keys["salesbc"]) > 200
    # every write of a thread waits for both acks: the next send comes after both
    for thread in ("1", "2"):
        sends = sorted((r["sent_at"], r["standby_db"]) for r in rows if r["thread"] == thread)
        assert all(a[1] != b[1] for a, b in zip(sends[::2], sends[1::2], strict=True))
    # the commit path: one row per redo write, the slower of its two remote writes
    assert result.commit_path is not None
    with result.commit_path.open(newline="") as handle:
        commits = list(csv.DictReader(handle))
    assert len(commits) == 500
    by_key = {(r["standby_db"], r["thread"], r["seq"], r["msgid"]): float(r["total_ms"]) for r in rows}
    for c in commits:
        totals = [
            by_key[(db, c["thread"], c["seq"], m)]
            for db, m in zip(c["standby_dbs"].split(";"), c["msgids"].split(";"), strict=True)
        ]
        assert [float(t) for t in c["totals_ms"].split(";")] == totals
        assert float(c["commit_ms"]) == max(totals) and c["slowest_db"] in ("salesdr", "salesbc")
    assert {c["slowest_db"] for c in commits} == {"salesdr", "salesbc"}


@pytest.mark.parametrize(("gen", "forwarder"), [("12.1", "NSA2"), ("19c", "TT02"), ("23ai", "TT02")])
def test_far_sync_forwards_async_to_the_terminal_standby(tmp_path: Path, gen: str, forwarder: str) -> None:
    result = run(tmp_path, topology="far-sync", format_version=gen, threads=2)
    out = tmp_path / "set"
    procs = processes(out)
    for n in (1, 2):
        fs = [p for p in procs if p.host == f"salesfs0{n}"]
        assert sorted(p.pname for p in fs) == sorted(["rfs", forwarder.lower()])
        tt = next(p for p in fs if p.pname != "rfs")
        assert re.fullmatch(rf"salesfs{n}_{forwarder.lower()}_\d+", tt.stem)
        assert any(x.endswith(f"image: oracle@salesfs0{n}.dbnet.example ({forwarder})") for x in tt.header)
    terminal = [p for p in procs if p.host == "stby01"]
    assert {p.client for p in terminal} == {("salesfs01", forwarder), ("salesfs02", forwarder)}
    rows = read_truth(result.truth)
    kinds = Counter((r["primary_db"], r["standby_db"], r["transport"]) for r in rows)
    assert kinds[("sales", "salesfs", "SYNC")] == 500
    assert kinds[("salesfs", "salesdr", "ASYNC")] >= 20  # redo that arrives while one is in flight is coalesced
    assert set(kinds) == {("sales", "salesfs", "SYNC"), ("salesfs", "salesdr", "ASYNC")}
    assert check_truth(out, rows) == len(rows)
    # the far sync forwards what it received: every forwarded message starts after its redo arrived there
    sync = [r for r in rows if r["transport"] == "SYNC" and r["thread"] == "1"]
    forwarded = [r for r in rows if r["transport"] == "ASYNC" and r["thread"] == "1"]
    assert min(r["sent_at"] for r in forwarded) > min(r["sent_at"] for r in sync)
    assert {r["seq"] for r in forwarded} == {r["seq"] for r in sync}
    scenario = json.loads(result.scenario.read_text())
    assert {(x["kind"], x["transport"]) for x in scenario["links"]} == {("first", "SYNC"), ("forward", "ASYNC")}


@pytest.mark.parametrize(("gen", "name"), [("11.2", "NSA3"), ("12.1", "NSA3"), ("19c", "TT02"), ("23ai", "TT02")])
def test_async_sender_beside_the_sync_one(tmp_path: Path, gen: str, name: str) -> None:
    result = run(tmp_path, async_sender=True, format_version=gen, threads=1, writes=400)
    out = tmp_path / "set"
    procs = processes(out)
    sender = next(p for p in procs if p.image == name)
    assert sender.host == "prim01" and re.fullmatch(rf"sales1_{name.lower()}_\d+", sender.stem)
    (ar,) = [p for p in procs if p.host == "salesar01"]
    assert ar.client == ("prim01", name)
    rows = read_truth(result.truth)
    sync = [r for r in rows if r["transport"] == "SYNC"]
    asynchronous = [r for r in rows if r["transport"] == "ASYNC"]
    assert len(sync) == 400 and 20 <= len(asynchronous) <= 400
    assert {r["standby_db"] for r in asynchronous} == {"salesar"} and {r["sender"] for r in asynchronous} == {name}
    # the ASYNC sender's msgids are its own sequence, in the SYNC sender's range
    sync_ids = sorted(int(r["msgid"]) for r in sync)
    async_ids = [int(r["msgid"]) for r in asynchronous]
    assert sync_ids[0] == async_ids[0] and all(sync_ids[0] <= i <= sync_ids[-1] for i in async_ids)
    assert check_truth(out, rows) == len(rows)
    # both senders print the same four message texts
    kinds = {MSG.match(x)["kind"] for x in sender.lines() if MSG.match(x)}  # type: ignore[index]
    assert kinds == {"Client sending", "Client received"}


def test_everything_at_once_is_exact_and_deterministic(tmp_path: Path) -> None:
    settings: dict[str, object] = {
        "topology": "two-sync",
        "async_sender": True,
        "transport": "fastsync",
        "scenario": "mixed",
        "noise": 0.5,
    }
    a, b = run(tmp_path, "a", **settings), run(tmp_path, "b", **settings)
    rows = read_truth(a.truth)
    assert check_truth(tmp_path / "a", rows) == len(rows) == a.writes
    assert Counter(r["transport"] for r in rows)["FASTSYNC"] == 1000
    for x, y in zip((*a.files, a.truth, a.scenario), (*b.files, b.truth, b.scenario), strict=True):
        assert x.read_bytes() == y.read_bytes()
    assert text_lines(a.truth)[0].split(",")[-8:] == [
        "transport", "srl_write_ms", "primary_db", "standby_db", "primary_host", "standby_host", "sender", "evidence",
    ]  # fmt: skip


def test_child_processes_write_the_same_bytes_for_every_option(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    settings: dict[str, object] = {
        "topology": "far-sync",
        "async_sender": True,
        "segment_bytes": 16 * 1024,
        "drop_segment": 1,
        "lgwr_broadcast_rate": 0.05,
        "lgwr_mode_switch_every": 100,
        "extras": True,
        "threads": 3,
    }
    serial = run(tmp_path, "serial", **settings)
    monkeypatch.setattr(runner, "PARALLEL_MIN_BYTES", 0)
    parallel = run(tmp_path, "parallel", **settings)
    a, b = tmp_path / "serial", tmp_path / "parallel"
    names = sorted(p.relative_to(a) for p in a.rglob("*") if p.is_file())
    assert names == sorted(p.relative_to(b) for p in b.rglob("*") if p.is_file())
    assert [p.relative_to(a) for p in serial.files] == [p.relative_to(b) for p in parallel.files]
    for name in names:
        assert (a / name).read_bytes() == (b / name).read_bytes(), name
    assert not list(b.rglob(".*"))
