"""Tests of the trace simulator: layout, per-generation text shapes, truth, scenarios, scale."""

from __future__ import annotations

import csv
import itertools
import json
import re
import sys
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from analyzer.errors import UsageError
from analyzer.simulate import SimOptions, SimResult, parse_size, runner, simulate
from analyzer.units import parse_offset
from tests.simulate.readers import (
    EPOCH,
    KRS,
    MSG,
    Key,
    Remote,
    expected_values,
    local_us,
    read_rfs,
    read_sender,
    text_lines,
)

GENERATIONS = ("11.2", "12.1", "19c", "23ai")
TRUTH_HEADER = [
    "thread", "seq", "msgid", "sent_at", "total_ms", "network_ms",
    "rfs_ms", "rfs_io_ms", "rfs_other_ms", "verdict",
]  # fmt: skip

WAIT = re.compile(r"^WAIT #0: nam='(?P<name>[^']+)' ela=(?P<sp> ?)(?P<ela>\d+) .*tim=(?P<tim>\d+)$")
ADR_OLD = re.compile(r"^\*\*\* \d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3}$")
ADR_ISO = re.compile(r"^\*\*\* \d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}(?P<zone>[+-]\d\d:\d\d) \(CDB\$ROOT\(1\)\)$")


def run(tmp_path: Path, name: str = "set", **options: object) -> SimResult:
    """Simulate into tmp_path/name with small defaults."""
    settings: dict[str, object] = {"writes": 300, "noise": 0.2}
    settings.update(options)
    return simulate(tmp_path / name, SimOptions(**settings))  # type: ignore[arg-type]


def files_of(result: SimResult, pname: str) -> list[Path]:
    return [f for f in result.files if f"_{pname}_" in f.name]


def read_truth(result: SimResult) -> list[dict[str, str]]:
    with result.truth.open(newline="") as handle:
        return list(csv.DictReader(handle))


def us(value: str) -> int:
    return round(float(value) * 1000)


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


def test_refuses_a_non_empty_directory(tmp_path: Path) -> None:
    (tmp_path / "set").mkdir()
    (tmp_path / "set" / "old.trc").write_text("x")
    with pytest.raises(UsageError, match="not an empty directory"):
        run(tmp_path)


@pytest.mark.parametrize(
    "options",
    [
        {"writes": 10, "size_bytes": 1000},
        {"format_version": "10.2"},
        {"scenario": "nope"},
        {"primary_tz": "Europe/Paris"},
        {"standby_tz": "+15:00"},
        {"noise": 1.5},
        {"threads": 0},
    ],
)
def test_bad_options_are_usage_errors(options: dict[str, object]) -> None:
    with pytest.raises(UsageError):
        SimOptions(**options)  # type: ignore[arg-type]


def test_parse_size_and_offset() -> None:
    assert parse_size("500MB") == 500 * 2**20
    assert parse_size("2g") == 2 * 2**30
    assert parse_size("1.5KB") == 1536
    assert parse_size("4096") == 4096
    assert parse_offset("-07:00") == -420 and parse_offset("+05:30") == 330
    with pytest.raises(UsageError):
        parse_size("lots")


# --- per-generation text shapes -----------------------------------------------------------

HEADER_SHAPES = {
    "11.2": [
        r"^Oracle Database 11g Enterprise Edition Release 11\.2\.0\.4\.0 - 64bit Production$",
        r"^ORACLE_HOME = /\S+$",
    ],
    "12.1": [
        r"^Oracle Database 12c Enterprise Edition Release 12\.1\.0\.2\.0 - 64bit Production$",
        r"^ORACLE_HOME = /\S+$",
        r"^\*\*\* CLIENT DRIVER:\(\) \d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3}$",
    ],
    "19c": [
        r"^Oracle Database 19c Enterprise Edition Release 19\.0\.0\.0\.0 - Production$",
        r"^Version 19\.\d+\.\d+\.\d+\.\d+$",
        r"^Build label:    RDBMS_19\S+$",
        r"^ORACLE_HOME:    /\S+$",
        r"^\*\*\* CONTAINER ID:\(1\) \d{4}-\d\d-\d\dT[\d:.]{15}[+-]\d\d:\d\d$",
    ],
    "23ai": [
        r"^Oracle Database 23ai Enterprise Edition Release 23\.0\.0\.0\.0 - Production$",
        r"^Version 23\.\d+\.\d+\.\d+\.\d+$",
        r"^CLID:\tP$",
        r"^Unix process pid: \d+, NID: \d+, image: oracle@\S+( \(\w+\))?$",
    ],
}
COMMON_HEADER = [
    r"^Trace file /u01/app/oracle/diag/rdbms/\w+/\w+/trace/\w+\.trc$",
    r"^System name:\tLinux$",
    r"^Node name:\t(prim|stby)\d\d\.\S+$",
    r"^Instance name: \w+$",
    r"^Redo thread mounted by this instance: \d$",
    r"^Oracle process number: \d+$",
    r"^\*\*\* SESSION ID:\(\d+\.\d+\) \d{4}-",
    r"^\*\*\* SERVICE NAME:\(SYS\$(BACKGROUND|USERS)\) \d{4}-",
]


@pytest.mark.parametrize("gen", GENERATIONS)
def test_headers_per_generation(tmp_path: Path, gen: str) -> None:
    result = run(tmp_path, format_version=gen, writes=5)
    images = {"nss2": r"\(NSS2\)$", "lgwr": r"\(LGWR\)$", "rfs": r"image: oracle@stby01\.\S+$"}
    for path in result.files:
        head = path.read_text()[:3000]
        for shape in [*COMMON_HEADER, *HEADER_SHAPES[gen]]:
            assert re.search(shape, head, re.M), (gen, path.name, shape)
        pname = path.name.split("_")[1]
        assert re.search(r"^Unix process pid: .*" + images[pname], head, re.M), path.name
        assert ("Build label:" in head) == (gen in ("19c", "23ai"))
        assert ("NID:" in head) == (gen == "23ai")
    (rfs_1, rfs_2) = files_of(result, "rfs")
    assert "Redo thread mounted by this instance: 1\n" in rfs_2.read_text()[:3000]
    assert "thrd=2 " in rfs_2.read_text() and "thrd=1 " not in rfs_2.read_text()
    if gen == "23ai":
        assert re.search(r"^\*\*\* CLIENT IP:\(10\.\d+\.\d+\.\d+\) ", rfs_1.read_text(), re.M)


@pytest.mark.parametrize("gen", GENERATIONS)
def test_stamp_and_adr_shapes_per_generation(tmp_path: Path, gen: str) -> None:
    result = run(tmp_path, format_version=gen, writes=600, threads=1, primary_tz="-07:00")
    krs_digits = 3 if gen == "11.2" else 6
    adr_shape = ADR_ISO if gen in ("19c", "23ai") else ADR_OLD
    for path in files_of(result, "nss2") + files_of(result, "rfs"):
        stamps, adr = [], 0
        for line in path.read_text().splitlines():
            if m := KRS.match(line):
                stamps.append(local_us(m["ts"], 0))
                assert len(m["frac"]) == krs_digits, line
                assert m["tail"].startswith(" [") == (gen in ("19c", "23ai")), line
            elif line.startswith("*** ") and not re.match(r"\*\*\* [A-Z ]+:\(", line):
                assert adr_shape.match(line), line
                adr += 1
        assert len(stamps) >= 2 * result.writes
        seconds = (max(stamps) - min(stamps)) / 1e6
        assert 0.8 * seconds <= adr <= 1.5 * seconds + 2, (path.name, seconds, adr)


@pytest.mark.parametrize("gen", GENERATIONS)
def test_wait_lines_ela_spacing_obj_and_tim(tmp_path: Path, gen: str) -> None:
    result = run(tmp_path, format_version=gen, writes=200, standby_skew_s=3.0, threads=1)
    (rfs,) = files_of(result, "rfs")
    text = rfs.read_text()
    waits = [WAIT.match(line) for line in text.splitlines() if line.startswith("WAIT #0: ")]
    assert waits and all(waits)
    assert {m["sp"] for m in waits if m} == ({""} if gen == "23ai" else {" "})
    assert ("obj#=4294967295 " in text) == (gen == "23ai")
    assert ("obj#=-1 " in text) == (gen != "23ai")
    names = {m["name"] for m in waits if m}
    assert {"RFS write", "SQL*Net message from client"} <= names
    # tim is epoch µs of the standby clock (skew included) up to 12.1, a host counter after
    stamp = next(m["ts"] for line in text.splitlines() if (m := KRS.match(line)))
    standby_epoch = local_us(stamp, 0)
    tim = max(int(m["tim"]) for m in waits if m)
    if gen in ("11.2", "12.1"):
        assert abs(tim - standby_epoch) < 5_000_000
    else:
        assert tim < 10**13 and abs(tim - standby_epoch) > 10**14


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
    rows = read_truth(result)
    assert len(rows) == len(writes) == result.writes == 800
    for row in rows:
        key = (int(row["thread"]), int(row["seq"]), int(row["msgid"]))
        assert list(row.values()) == expected_row(key, writes[key]), row


def test_truth_columns_and_internal_consistency(tmp_path: Path) -> None:
    result = run(tmp_path, scenario="mixed", writes=1500)
    assert result.truth.read_text().splitlines()[0].split(",") == TRUTH_HEADER
    rows = read_truth(result)
    verdicts = set()
    for row in rows:
        total, network, rfs = us(row["total_ms"]), us(row["network_ms"]), us(row["rfs_ms"])
        io, other = us(row["rfs_io_ms"]), us(row["rfs_other_ms"])
        assert network + rfs == total and io + other == rfs
        assert total > 0 and io > 0
        parts = {"network": network, "rfs_io": io, "rfs_other": other}
        assert parts[row["verdict"]] == max(parts.values())
        assert row["sent_at"].endswith("Z")
        verdicts.add(row["verdict"])
    assert verdicts == {"network", "rfs_io", "rfs_other"}


def test_msgids_increase_and_seq_switches(tmp_path: Path) -> None:
    result = run(tmp_path, writes=1000, log_switch_every=250)
    rows = read_truth(result)
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
    slow = [r for r in read_truth(result) if us(r["total_ms"]) >= 100_000]
    assert len(slow) >= 20
    assert (
        len(slow)
        <= len(warnings)
        <= len(slow) + sum(1 for r in read_truth(result) if 99_000 <= us(r["total_ms"]) < 100_000)
    )
    for row in slow:  # its warning is printed when the write ends, a little after the ack
        ack = datetime.fromisoformat(row["sent_at"]) + timedelta(microseconds=us(row["total_ms"]))
        assert any(
            timedelta(0) <= when - ack <= timedelta(milliseconds=2) and ms >= us(row["total_ms"]) // 1000
            for when, ms in warnings
        ), row


# --- scenarios and clocks -----------------------------------------------------------------


def slow_verdicts(result: SimResult) -> list[str]:
    return [r["verdict"] for r in read_truth(result) if us(r["total_ms"]) >= 30_000]


@pytest.mark.parametrize(("scenario", "verdict"), [("standby-io", "rfs_io"), ("network", "network")])
def test_scenario_dominance(tmp_path: Path, scenario: str, verdict: str) -> None:
    verdicts = slow_verdicts(run(tmp_path, scenario=scenario, writes=2000, threads=1))
    assert len(verdicts) >= 30
    assert verdicts.count(verdict) >= 0.8 * len(verdicts)


def test_log_switch_scenario_slows_the_first_writes_of_each_log(tmp_path: Path) -> None:
    result = run(tmp_path, scenario="log-switch", writes=3000, threads=1)
    rows = read_truth(result)
    first_seq = rows[0]["seq"]
    position: dict[str, int] = {}
    slow_positions = []
    for row in rows:
        index = position.get(row["seq"], 0)
        position[row["seq"]] = index + 1
        if us(row["total_ms"]) >= 30_000 and row["seq"] != first_seq:
            slow_positions.append((index, row["verdict"]))
    assert len(slow_positions) >= 20
    early = [v for i, v in slow_positions if i < 4]
    assert len(early) >= 0.8 * len(slow_positions)
    assert early.count("rfs_io") == len(early)


def test_baseline_is_mostly_fast(tmp_path: Path) -> None:
    rows = read_truth(run(tmp_path, writes=2000, threads=1))
    assert sum(us(r["total_ms"]) >= 30_000 for r in rows) <= 0.02 * len(rows)


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


# --- scale and command line ---------------------------------------------------------------


def test_size_gives_roughly_the_requested_size(tmp_path: Path) -> None:
    result = run(tmp_path, writes=None, size_bytes=4 * 2**20)
    on_disk = sum(f.stat().st_size for f in result.files)
    assert on_disk == result.trace_bytes
    assert 4 * 2**20 <= on_disk <= 1.2 * 4 * 2**20
    assert len(read_truth(result)) == result.writes


def test_parallel_threads_write_the_same_bytes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    serial = run(tmp_path, "serial", threads=2, writes=500)
    monkeypatch.setattr(runner, "PARALLEL_MIN_BYTES", 0)
    parallel = run(tmp_path, "parallel", threads=2, writes=500)
    for a, b in zip((*serial.files, serial.truth), (*parallel.files, parallel.truth), strict=True):
        assert a.read_bytes() == b.read_bytes()
    assert not list((tmp_path / "parallel").glob(".*"))


def test_a_failing_child_process_is_reported(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(runner, "PARALLEL_MIN_BYTES", 0)
    monkeypatch.setattr(sys, "executable", "/bin/false")
    with pytest.raises(RuntimeError, match="simulating thread 1 failed in a child process"):
        run(tmp_path, threads=2, writes=10)
    assert not list((tmp_path / "set").glob(".job-*"))


def test_msgids_are_never_reused_within_a_set(tmp_path: Path) -> None:
    rows = read_truth(run(tmp_path, threads=3, writes=700))
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
