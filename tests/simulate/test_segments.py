"""Trace segments (`--segment-bytes`, `--drop-segment`) and the extra LGWR lines (lgwr_events.csv)."""

from __future__ import annotations

import itertools
import json
import re
from collections import defaultdict
from datetime import datetime
from pathlib import Path

import pytest

from analyzer.simulate import SimOptions, SimResult, simulate
from tests.simulate.readers import (
    EPOCH,
    MSG,
    check_truth,
    local_us,
    processes,
    read_truth,
    text_lines,
    utc_text,
)

ORACLE_TRACE = "/u01/app/oracle/diag/rdbms/{db}/{sid}/trace/{name}"


def run(tmp_path: Path, name: str = "set", **options: object) -> SimResult:
    settings: dict[str, object] = {"writes": 1500, "noise": 0.2, "threads": 1, "log_switch_every": 400}
    settings.update(options)
    return simulate(tmp_path / name, SimOptions(**settings))  # type: ignore[arg-type]


def full_path(path: Path) -> str:
    """The path a trace line names for a file of the set (`<host>/diag/rdbms/<db>/<sid>/trace/<name>`)."""
    parts = path.parts
    i = parts.index("diag")
    return ORACLE_TRACE.format(db=parts[i + 2], sid=parts[i + 3], name=path.name)


def messages(lines: list[str]) -> list[tuple[str, tuple[int, int, int]]]:
    return [(m["kind"], (int(m["thrd"]), int(m["seq"]), int(m["msgid"]))) for line in lines if (m := MSG.match(line))]


@pytest.mark.parametrize("gen", ["11.2", "19c", "23ai"])
def test_segments_are_linked_have_headers_and_cut_between_writes(tmp_path: Path, gen: str) -> None:
    limit = 48 * 1024
    result = run(tmp_path, format_version=gen, segment_bytes=limit, async_sender=True)
    out = tmp_path / "set"
    cut = 0
    for proc in processes(out):
        names = [f.name for f in proc.files]
        assert names == [f"{proc.stem}.trc"] + [f"{proc.stem}_{i}.trc" for i in range(1, len(names))]
        for i, path in enumerate(proc.files):
            lines = text_lines(path)
            assert lines[0] == f"Trace file {full_path(path)}"
            blank = lines.index(" ")
            if i > 0:
                previous = full_path(proc.files[i - 1])
                assert lines[blank + 1 : blank + 4] == ["", f"*** TRACE CONTINUED FROM FILE {previous} ***", ""]
            if i < len(proc.files) - 1:
                assert lines[-3:] == ["", f"*** TRACE CONTINUES IN FILE {full_path(proc.files[i + 1])} ***", ""]
                assert limit <= path.stat().st_size <= limit + 4096
                cut += 1
            # a write's messages never straddle two files
            found = messages(lines)
            if proc.pname == "rfs":
                kinds = [k for k, _ in found if k.startswith("Server")]
                assert kinds == ["Server received", "Server finished"] * (len(kinds) // 2)
                assert all(found[j][1] == found[j + 1][1] for j in range(0, len(found), 2))
            elif proc.pname not in ("lgwr", "ora"):
                assert [k for k, _ in found] == ["Client sending", "Client received"] * (len(found) // 2)
    assert cut >= 10
    rows = read_truth(result.truth)
    assert {r["evidence"] for r in rows} == {"complete"}
    assert check_truth(out, rows) == len(rows) == result.writes
    assert sorted(result.files) == sorted(p for proc in processes(out) for p in proc.files)


@pytest.mark.slow
def test_dropped_segment_is_gone_and_its_writes_are_marked(tmp_path: Path) -> None:
    result = run(tmp_path, threads=2, writes=2500, segment_bytes=40 * 1024, drop_segment=2, topology="two-sync")
    out = tmp_path / "set"
    assert result.deleted and all(re.search(r"_2\.trc$", p.name) and not p.exists() for p in result.deleted)
    scenario = json.loads(result.scenario.read_text())
    assert sorted(scenario["deleted"]) == sorted(p.relative_to(out).as_posix() for p in result.deleted)
    keys: dict[tuple[str, str], set[tuple[int, int, int]]] = defaultdict(set)  # (host, process) -> keys seen
    for proc in processes(out):
        numbers = [int(m[1]) if (m := re.search(r"_(\d+)\.trc$", f.name[len(proc.stem) :])) else 0 for f in proc.files]
        if max(numbers) >= 3:  # a long process: segment 2 was deleted, the others kept
            assert numbers == [0, 1, *range(3, max(numbers) + 1)]
            third = text_lines(proc.files[2])
            assert f"*** TRACE CONTINUED FROM FILE {full_path(proc.files[1])[:-6]}_2.trc ***" in third
        else:
            assert numbers == list(range(len(numbers)))
        name = proc.image if proc.pname != "rfs" else f"rfs<-{proc.client}"
        keys[(proc.host, name)].update(key for _, key in messages(list(proc.lines())))
    rows = read_truth(result.truth)
    missing = 0
    for row in rows:
        key = (int(row["thread"]), int(row["seq"]), int(row["msgid"]))
        sender = key in keys[(row["primary_host"], row["sender"])]
        receiver = key in keys[(row["standby_host"], f"rfs<-{(row['primary_host'], row['sender'])}")]
        expected = "complete" if sender and receiver else "missing_segment"
        assert row["evidence"] == expected, row
        missing += expected != "complete"
    assert 50 <= missing < len(rows) // 2
    assert check_truth(out, rows) == len(rows) - missing


ADR_ISO = re.compile(r"^\*\*\* (\d{4}-\d\d-\d\dT[\d:.]+[+-]\d\d:\d\d) \(CDB\$ROOT\(1\)\)$")
ADR_OLD = re.compile(r"^\*\*\* (\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3})$")
LONG = re.compile(r"^Warning: log write elapsed time (\d+)ms, size (\d+)KB$")
BROADCAST = re.compile(r"^Warning: log write broadcast wait time (\d+)ms(?: \(SCN (0x[0-9a-f]+)\))?$")
ALFS = re.compile(r"^kcrfw_alfs_update_mode: (post|poll)->(post|poll) (\S+=\d+)( \S+=\d+)+$")


def lgwr_events(lines: list[str], host: str, thread: int, offset: int) -> list[dict[str, str]]:
    """lgwr_events.csv rows as a reader of an LGWR trace sees them (the ADR line above each event)."""
    events = []
    body = lines[lines.index(" ") + 1 :]
    for i, line in enumerate(body):
        kind, elapsed = "", ""
        if m := LONG.match(line):
            kind, elapsed = "log_write", m[1]
        elif m := BROADCAST.match(line):
            kind, elapsed = "broadcast_wait", m[1]
        elif line == "Log file sync switching to polling":
            kind = "switch_to_polling"
            assert ALFS.match(body[i - 3]) and body[i - 3].startswith("kcrfw_alfs_update_mode: post->poll ")
            assert re.fullmatch(r"Current scheduling delay is \d+ usec", body[i + 1])
        elif line == "Log file sync switching to post/wait":
            kind = "switch_to_post_wait"
            assert body[i - 3].startswith("kcrfw_alfs_update_mode: poll->post curr_sched_delay=")
        if not kind:
            continue
        if iso := ADR_ISO.match(body[i - 1]):
            at = (datetime.fromisoformat(iso[1]) - EPOCH).total_seconds()
            at_us = round(at * 1_000_000)
        else:
            old = ADR_OLD.match(body[i - 1])
            assert old, body[i - 1]
            at_us = local_us(old[1], offset)
        row = {"at": utc_text(at_us), "host": host, "thread": str(thread), "kind": kind, "elapsed_ms": elapsed}
        events.append(row | {"evidence": "complete"})
    return events


@pytest.mark.parametrize("gen", ["11.2", "12.1", "19c", "23ai"])
def test_lgwr_events_are_what_the_lgwr_trace_says(tmp_path: Path, gen: str) -> None:
    result = run(
        tmp_path,
        format_version=gen,
        threads=2,
        scenario="standby-io",
        lgwr_broadcast_rate=0.03,
        lgwr_mode_switch_every=300,
        primary_tz="-04:00",
    )
    assert result.lgwr_events is not None
    rows = read_truth(result.lgwr_events)
    expected = []
    for thread in (1, 2):
        (lgwr,) = [p for p in processes(tmp_path / "set") if p.pname == "lgwr" and p.host == f"prim0{thread}"]
        expected += lgwr_events(list(lgwr.lines()), lgwr.host, thread, -240)
    assert rows == expected
    kinds = [r["kind"] for r in rows if r["thread"] == "1"]
    switches = [k for k in kinds if k.startswith("switch")]
    assert switches == ["switch_to_polling", "switch_to_post_wait"] * 2 + ["switch_to_polling"]
    assert kinds.count("broadcast_wait") >= 20 and kinds.count("log_write") >= 20
    text = "\n".join(text_lines(next(p for p in result.files if "_lgwr_" in p.name)))
    assert ("(SCN 0x" in text) == (gen != "11.2")
    assert all(a["at"] <= b["at"] for a, b in itertools.pairwise(rows) if a["thread"] == b["thread"])


def test_lgwr_events_are_off_by_default_and_can_be_lost_with_a_segment(tmp_path: Path) -> None:
    plain = run(tmp_path, "plain", writes=300)
    assert plain.lgwr_events is None and not (tmp_path / "plain" / "lgwr_events.csv").exists()
    result = run(
        tmp_path, writes=4000, scenario="standby-io", lgwr_broadcast_rate=0.2, segment_bytes=4096, drop_segment=1
    )
    assert result.lgwr_events is not None
    rows = read_truth(result.lgwr_events)
    lost = [r for r in rows if r["evidence"] == "missing_segment"]
    (lgwr,) = [p for p in processes(tmp_path / "set") if p.pname == "lgwr"]
    kept = lgwr_events(list(lgwr.lines()), "prim01", 1, 0)
    assert lost and [r for r in rows if r["evidence"] == "complete"] == kept
