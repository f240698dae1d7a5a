"""Tests of the trace simulator: layout, per-generation text shapes, truth, scenarios, scale."""

from __future__ import annotations

import itertools
import json
import re
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from analyzer.base.units import parse_offset
from analyzer.simulate import SimResult
from tests.simulate.readers import (
    ADR_ISO,
    EPOCH,
    MSG,
    WAIT,
    Key,
    Remote,
    expected_values,
    read_rfs,
    read_sender,
    text_lines,
)
from tests.simulate.sets import GENERATIONS, TRUTH_HEADER, files_of, run, truth_of, us


def reread(result: SimResult, primary_tz: str = "+00:00", standby_tz: str = "+00:00") -> dict[Key, Remote]:
    """Every write as the printed text says it (`tests.simulate.readers`), each host's stamps read at its zone."""
    writes: dict[Key, Remote] = {}
    for path in files_of(result, "nss2"):
        writes.update(read_sender(text_lines(path), parse_offset(primary_tz)))
    for path in files_of(result, "rfs"):
        for key, w in read_rfs(text_lines(path), parse_offset(standby_tz)).items():
            sent = writes[key]
            sent.t2, sent.t3, sent.io = w.t2, w.t3, w.io
    return writes


def expected_row(key: Key, w: Remote) -> list[str]:
    """truth.csv's row for one write (its columns of the first generations: no srl_write_ms)."""
    values = expected_values(key, w)
    return [values[name] for name in TRUTH_HEADER]


# --- determinism and layout ---------------------------------------------------------------


def test_same_seed_same_bytes_and_other_seed_differs(tmp_path: Path) -> None:
    a, b = run(tmp_path, "a", seed=7), run(tmp_path, "b", seed=7)
    c = run(tmp_path, "c", seed=8)
    names = [f.relative_to(tmp_path / "a") for f in a.files]
    assert names == [f.relative_to(tmp_path / "b") for f in b.files]
    for x, y in zip(a.files, b.files, strict=True):
        assert x.read_bytes() == y.read_bytes()
    assert a.truth.read_bytes() == b.truth.read_bytes()
    assert a.truth.read_bytes() != c.truth.read_bytes()


def test_layout_file_names_and_scenario_json(tmp_path: Path) -> None:
    result = run(tmp_path, threads=3, seed=3)
    out = tmp_path / "set"
    rel = sorted(f.relative_to(out).as_posix() for f in result.files)
    assert len(rel) == 9
    for thread in (1, 2, 3):
        trace = f"prim0{thread}/diag/rdbms/sales/sales{thread}/trace/"
        assert sum(re.fullmatch(trace + rf"sales{thread}_nss2_\d+\.trc", r) is not None for r in rel) == 1
        assert sum(re.fullmatch(trace + rf"sales{thread}_lgwr_\d+\.trc", r) is not None for r in rel) == 1
    rfs = [r for r in rel if r.startswith("stby01/diag/rdbms/salesdr/salesdr1/trace/")]
    assert len(rfs) == 3 and all(re.search(r"/salesdr1_rfs_\d+\.trc$", r) for r in rfs)
    assert all(f.stat().st_size > 0 for f in result.files)
    scenario = json.loads(result.scenario.read_text())
    assert sorted(scenario["files"]) == rel
    assert scenario["options"]["threads"] == 3 and scenario["options"]["seed"] == 3
    assert scenario["profile"]["log_switch_every"] == 2000
    assert scenario["truth"] == "truth.csv" and result.truth == out / "truth.csv"
    assert scenario["writes"] == result.writes == 900
    assert scenario["trace_bytes"] == sum(f.stat().st_size for f in result.files)


def test_lns_sender_naming(tmp_path: Path) -> None:
    result = run(tmp_path, format_version="11.2", sender="lns", threads=1)
    (lns,) = files_of(result, "lns1")
    assert re.fullmatch(r"sales1_lns1_\d+\.trc", lns.name)
    assert re.search(r"^Unix process pid: \d+, image: oracle@prim01\.\S+ \(LNS1\)$", lns.read_text(), re.M)


# --- per-generation text shapes -----------------------------------------------------------


def test_wait_tim_is_the_end_and_ela_the_duration(tmp_path: Path) -> None:
    result = run(tmp_path, format_version="12.1", writes=300, threads=1, noise=0.0)
    (rfs,) = files_of(result, "rfs")
    previous_end = 0
    for line in rfs.read_text().splitlines():
        if m := WAIT.match(line):
            start, end = int(m["tim"]) - int(m["ela"]), int(m["tim"])
            assert start >= previous_end - 1, line
            previous_end = end


# --- truth ------------------------------------------------------------------------------


@pytest.mark.parametrize("gen", GENERATIONS)
def test_truth_is_what_a_reader_of_the_printed_text_computes(tmp_path: Path, gen: str) -> None:
    tz = {"primary_tz": "-07:00", "standby_tz": "+05:30"}
    result = run(
        tmp_path,
        format_version=gen,
        writes=400,
        scenario="mixed",
        noise=0.5,
        standby_skew_s=-2.25,
        **tz,
    )
    writes = reread(result, **tz)
    rows = truth_of(result)
    assert len(rows) == len(writes) == result.writes == 800
    for row in rows:
        key = (int(row["thread"]), int(row["seq"]), int(row["msgid"]))
        assert list(row.values()) == expected_row(key, writes[key]), row


def test_msgids_increase_and_seq_switches(tmp_path: Path) -> None:
    result = run(tmp_path, writes=1000, log_switch_every=250)
    rows = truth_of(result)
    for thread in ("1", "2"):
        mine = [r for r in rows if r["thread"] == thread]
        msgids = [int(r["msgid"]) for r in mine]
        assert all(b > a for a, b in itertools.pairwise(msgids))
        seqs = [int(r["seq"]) for r in mine]
        assert seqs[-1] - seqs[0] == 3 and all(seqs.count(s) == 250 for s in set(seqs))


def test_one_outstanding_write_per_nss(tmp_path: Path) -> None:
    result = run(tmp_path, writes=800, scenario="network", noise=0.5)
    for path in files_of(result, "nss2"):
        lines = text_lines(path)
        writes = read_sender(lines)
        events = [(m["kind"], (int(m["thrd"]), int(m["seq"]), int(m["msgid"]))) for x in lines if (m := MSG.match(x))]
        kinds = [kind for kind, _ in events]
        assert kinds == ["Client sending", "Client received"] * 800
        assert all(events[i][1] == events[i + 1][1] for i in range(0, len(events), 2))
        ordered = [writes[key] for kind, key in events if kind == "Client sending"]
        for before, after in itertools.pairwise(ordered):
            assert before.t1 <= before.t4 <= after.t1


def test_lgwr_warnings_exactly_for_writes_over_threshold(tmp_path: Path) -> None:
    result = run(tmp_path, scenario="standby-io", writes=1500, threads=1, primary_tz="+02:00")
    (lgwr,) = files_of(result, "lgwr")
    lines = lgwr.read_text().splitlines()
    body = lines[lines.index(" ") + 1 :]
    warnings = []
    for i, line in enumerate(body):
        if m := re.fullmatch(r"Warning: log write elapsed time (\d+)ms, size (\d+)KB", line):
            when = re.fullmatch(r"\*\*\* (\S+) \(CDB\$ROOT\(1\)\)", body[i - 1])
            assert when, body[i - 1]
            assert when[1].endswith("+02:00")
            warnings.append((datetime.fromisoformat(when[1]), int(m[1])))
    assert all(ms >= 100 for _, ms in warnings)
    assert len([line for line in body if line and not line.startswith("*** ")]) == len(warnings)
    slow = [r for r in truth_of(result) if us(r["total_ms"]) >= 100_000]
    assert len(slow) >= 20
    assert (
        len(slow)
        <= len(warnings)
        <= len(slow) + sum(1 for r in truth_of(result) if 99_000 <= us(r["total_ms"]) < 100_000)
    )
    for row in slow:  # its warning is printed when the write ends, a little after the ack
        ack = datetime.fromisoformat(row["sent_at"]) + timedelta(microseconds=us(row["total_ms"]))
        assert any(
            timedelta(0) <= when - ack <= timedelta(milliseconds=2) and ms >= us(row["total_ms"]) // 1000
            for when, ms in warnings
        ), row


# --- scenarios and clocks -----------------------------------------------------------------


@pytest.mark.parametrize("gen", ["11.2", "19c"])
def test_skew_and_time_zones_reach_the_printed_stamps(tmp_path: Path, gen: str) -> None:
    tz = {"primary_tz": "-07:00", "standby_tz": "+05:30"}
    result = run(tmp_path, format_version=gen, writes=200, standby_skew_s=2.5, noise=0.0, **tz)
    writes = reread(result, **tz)  # stamps read back to µs of each host's clock (UTC)
    tolerance = 1_000 if gen == "11.2" else 1
    for w in writes.values():
        assert 2_500_000 - tolerance < w.t2 - w.t1 < 2_500_000 + 200_000
        assert 2_500_000 - tolerance - 200_000 < w.t3 - w.t4 < 2_500_000 + tolerance
    texts = {p.name.split("_")[1]: p.read_text() for p in result.files}
    if gen == "19c":
        assert "-07:00 (CDB$ROOT(1))" in texts["nss2"] and "+05:30" not in texts["nss2"]
        assert "+05:30 (CDB$ROOT(1))" in texts["rfs"] and "-07:00" not in texts["rfs"]


def test_blank_and_other_noise_lines_appear(tmp_path: Path) -> None:
    result = run(tmp_path, writes=400, noise=1.0, threads=1)
    text = {p.name.split("_")[1]: p.read_text() for p in result.files}
    assert re.search(r"msgid=\d+\n\n\*\*\* ", text["nss2"])
    assert re.search(r"msgid=\d+\n\n\*\*\* ", text["rfs"])
    assert "nam='RFS dispatch'" in text["rfs"]
    assert "nam='control file sequential read'" in text["rfs"]
    assert re.search(r"^krsu_\w+: ", text["nss2"], re.M)
    assert re.search(r"^krsr_\w+: ", text["rfs"], re.M)


# --- scale ------------------------------------------------------------------------------------


def test_size_gives_roughly_the_requested_size(tmp_path: Path) -> None:
    result = run(tmp_path, writes=None, size_bytes=4 * 2**20)
    on_disk = sum(f.stat().st_size for f in result.files)
    assert on_disk == result.trace_bytes
    assert 4 * 2**20 <= on_disk <= 1.2 * 4 * 2**20
    assert len(truth_of(result)) == result.writes


def test_msgids_are_never_reused_within_a_set(tmp_path: Path) -> None:
    rows = truth_of(run(tmp_path, threads=3, writes=700))
    msgids = [int(r["msgid"]) for r in rows]
    assert len(set(msgids)) == len(msgids) == 2100
    first = {r["thread"]: int(r["msgid"]) for r in reversed(rows)}
    assert max(first.values()) - min(first.values()) == 2  # interleaved, like one shared counter


def test_rfs_adr_lines_are_anchored_by_the_next_tim(tmp_path: Path) -> None:
    result = run(tmp_path, format_version="19c", writes=1500, threads=1, standby_tz="+03:00")
    (rfs,) = files_of(result, "rfs")
    lines = rfs.read_text().splitlines()
    start = lines.index(" ")
    offsets = []  # wall clock minus tim, for every ADR line and the WAIT line after it
    for i, line in enumerate(lines[start:], start):
        if ADR_ISO.match(line):
            wall = datetime.fromisoformat(line[4:].split(" ")[0])
            wait = WAIT.match(lines[i + 1])
            assert wait, lines[i + 1]
            offsets.append((wall - EPOCH) // timedelta(microseconds=1) - int(wait["tim"]))
    assert len(offsets) >= 3
    assert max(offsets) - min(offsets) <= 20
