"""`dgtrace batch` over a simulated archive share, checked against the simulator's truth: a first run,
a run that does nothing, a grown file, a standby whose primary arrives a night later and a new
day; runs killed with `kill -9` in chosen states (a partition file half written, a unit just
recorded, units spilling to the temporary folder) and a run stopped by SIGTERM, then finished."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import polars as pl
import pytest

from analyzer.base.errors import ExitCode
from tests.batch.helpers import check_against_truth, copy_share, snapshot, truth, writes

pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parents[2]


def dgtrace(*args: str, check: int | None = 0, tmp: Path | None = None) -> subprocess.CompletedProcess[str]:
    """`dgtrace ARGS` in a subprocess (with TMPDIR=tmp when given)."""
    env = {**os.environ, "TMPDIR": str(tmp)} if tmp else None
    done = subprocess.run([sys.executable, "-m", "analyzer", *args], capture_output=True, text=True, cwd=ROOT, env=env)
    if check is not None:
        assert done.returncode == check, (done.returncode, done.stdout[-2000:], done.stderr[-2000:])
    return done


def run_json(share: Path, out: Path, tmp: Path | None = None) -> dict[str, object]:
    args = ("batch", str(share), "--out", str(out), "--format", "json", "--workers", "2")
    return json.loads(dgtrace(*args, tmp=tmp).stdout)


def start_batch(share: Path, out: Path, tmp: Path) -> subprocess.Popen[bytes]:
    """`dgtrace batch` with 2 workers and TMPDIR=tmp, in a process group of its own (its workers with it)."""
    return subprocess.Popen(
        [sys.executable, "-m", "analyzer", "batch", str(share), "--out", str(out), "--workers", "2"],
        cwd=ROOT,
        env={**os.environ, "TMPDIR": str(tmp)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )


def _group(pgid: int) -> dict[int, str]:
    """The processes of a process group, with their state letter (R, S, T, Z...)."""
    found = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rpartition(")")[2].split()
        except OSError:
            continue  # ended meanwhile
        if int(fields[2]) == pgid:
            found[int(stat.parent.name)] = fields[0]
    return found


def kill_9_when(proc: subprocess.Popen[bytes], state: Callable[[], bool], timeout_s: float = 300.0) -> None:
    """Kill the run and its workers with SIGKILL in a given state: as soon as `state()` holds, the
    whole group is frozen (SIGSTOP, until every process of it is stopped), `state()` checked again
    (else the group goes on and the wait too), then killed. Fails if the run ends first."""
    deadline = time.monotonic() + timeout_s
    while True:
        assert proc.poll() is None, "the run ended before the state was seen"
        assert time.monotonic() < deadline, "the state was not seen in time"
        if state():
            os.killpg(proc.pid, signal.SIGSTOP)
            while any(s not in "TZ" for s in _group(proc.pid).values()):
                time.sleep(0.001)
            if state():
                break
            os.killpg(proc.pid, signal.SIGCONT)
        time.sleep(0.001)
    os.killpg(proc.pid, signal.SIGKILL)
    assert proc.wait() == -signal.SIGKILL
    while any(s != "Z" for s in _group(proc.pid).values()):  # its workers too (zombies until collected)
        time.sleep(0.01)


def _days(share: Path) -> list[str]:
    return sorted({p.name for host in share.iterdir() if host.is_dir() for p in host.iterdir()})


def test_nights_of_an_archive_share(share_master: Path, tmp_path: Path) -> None:
    share = copy_share(share_master, tmp_path / "share")
    expected = truth(share)
    first_day, _, last_day = _days(share)
    held = tmp_path / "held"
    # tonight: fin's last day is not there yet, hr's primary traces of that day come a night late,
    # and sales's thread-1 sender trace of that day is still being written (half of it)
    for host in [*share.glob("fin*"), *share.glob("hrdb0*")]:
        (held / host.name).mkdir(parents=True)
        shutil.move(host / last_day, held / host.name / last_day)
    nss = next(share.glob(f"salesdb01/{last_day}/**/sales1_nss*.trc"))
    full = nss.read_bytes()
    nss.write_bytes(full[: full.rfind(b"\n... Client sending", 0, len(full) // 2) + 1])

    out = tmp_path / "ds"
    first = run_json(share, out)
    assert first["exit_code"] == 0 and first["units"]["failed"] == 0  # type: ignore[index]
    got = writes(out)
    done_days = expected.filter(pl.col("day").cast(pl.String) != last_day)
    check_against_truth_subset(got, done_days, last_day)
    one_sided = got.filter(pl.col("day").cast(pl.String) == last_day)
    hr_tonight = one_sided.filter(pl.col("standby_db") == "hrdr")
    assert (
        hr_tonight.height
        == expected.filter((pl.col("primary_db") == "hr") & (pl.col("day").cast(pl.String) == last_day)).height
    )
    assert not hr_tonight["matched"].any()  # only the standby's half, kept until the primary's arrives
    sales = one_sided.filter(pl.col("primary_db") == "sales")
    assert sales["matched"].any() and not sales["matched"].all()
    assert one_sided.filter(pl.col("standby_db") == "findr").is_empty()

    before = snapshot(out)
    again = run_json(share, out)
    assert again["units"]["run"] == 0 and again["writes"]["added"] == 0  # type: ignore[index]
    assert snapshot(out) == before

    for host in held.iterdir():
        shutil.move(host / last_day, share / host.name / last_day)
    nss.write_bytes(full)
    later = run_json(share, out)
    inputs = later["inputs"]
    assert inputs["changed"] == 1 and inputs["new"] > 0  # type: ignore[index]
    check_against_truth(out, expected)
    assert not list((out / "_dgtrace" / "tmp").iterdir())
    assert first_day < last_day

    report = dgtrace("report", str(out), "--format", "json").stdout
    days = json.loads(report)["days"]
    per_config = expected.group_by("primary_db", "day").len()
    assert sorted((d["primary_db"], d["day"], d["writes"]) for d in days) == sorted(
        (db, str(day), n) for db, day, n in per_config.rows()
    )


def check_against_truth_subset(got: pl.DataFrame, expected: pl.DataFrame, open_day: str) -> None:
    """The finished days hold exactly their truth (the open day is checked by the caller)."""
    closed = got.filter(pl.col("day").cast(pl.String) != open_day)
    keys = ["primary_db", "thread", "seq", "msgid"]
    assert closed.height == expected.height
    assert sorted(closed.select(keys).rows()) == sorted(expected.select(keys).rows())
    assert closed["matched"].all()


def _records(meta: Path) -> set[tuple[str, int]]:
    """The unit records in place: name and inode (a record written again is a new file)."""
    return {(p.name, p.stat().st_ino) for p in (meta / "units").glob("*.json")}


def test_kill_9_while_a_file_is_written_and_after_a_unit_is_recorded_then_finish(
    share_master: Path, tmp_path: Path
) -> None:
    """Killed (the run and its workers) while a partition file is being written in `_dgtrace/tmp`,
    then, in the next run, just after that run recorded a unit and before its last one; a third run
    finishes: every write exactly once, as the truth has it, nothing left behind."""
    out, tmp = tmp_path / "ds", tmp_path / "tmp"
    tmp.mkdir()
    meta = out / "_dgtrace"

    def writing() -> bool:
        return (meta / "tmp").is_dir() and any((meta / "tmp").iterdir())

    kill_9_when(start_batch(share_master, out, tmp), writing)
    assert writing()  # the half-written file is still there: the kill came in that state

    earlier = _records(meta)
    kill_9_when(start_batch(share_master, out, tmp), lambda: bool(_records(meta) - earlier))
    recorded = _records(meta)
    assert recorded - earlier

    finished = run_json(share_master, out, tmp)
    units = finished["units"]
    assert finished["exit_code"] == 0 and units["failed"] == 0, finished  # type: ignore[index]
    assert len(recorded) < units["planned"] and units["run"] > 0  # type: ignore[index,operator]
    check_against_truth(out, truth(share_master))
    assert not list((meta / "tmp").iterdir())
    assert not list(tmp.iterdir())


def test_spill_folders_of_a_killed_batch_are_swept_by_later_runs(share_master: Path, tmp_path: Path) -> None:
    """A batch killed (with its workers) while units spill to TMPDIR leaves folders named as every
    spill folder of dgtrace (owner pid, `owner` file); the next run, `dgtrace analyze` as well as
    `dgtrace batch`, removes them."""
    out, tmp = tmp_path / "ds", tmp_path / "tmp"
    tmp.mkdir()
    nss = sorted(share_master.rglob("*_nss*.trc"))[0]

    def spilling() -> bool:
        return any(tmp.glob("dgtrace-*/piece-*.arrow*"))

    for later in ("analyze", "batch"):
        kill_9_when(start_batch(share_master, out, tmp), spilling)
        left = sorted(tmp.iterdir())
        assert left and any(folder.glob("piece-*.arrow*") for folder in left)
        for folder in left:
            assert re.fullmatch(r"dgtrace-\d+-\w+", folder.name) and (folder / "owner").is_file(), folder
        if later == "analyze":
            dgtrace("analyze", str(nss), "--format", "json", tmp=tmp)
        else:
            run_json(share_master, out, tmp)
        assert list(tmp.iterdir()) == [], later
    check_against_truth(out, truth(share_master))


def test_sigterm_removes_temporary_files_and_the_next_run_finishes(share_master: Path, tmp_path: Path) -> None:
    """Also the spill folders of the workers it stops in the middle of a unit."""
    out, tmp = tmp_path / "ds", tmp_path / "tmp"
    tmp.mkdir()
    proc = subprocess.Popen(
        [sys.executable, "-m", "analyzer", "batch", str(share_master), "--out", str(out), "--workers", "2"],
        cwd=ROOT,
        env={**os.environ, "TMPDIR": str(tmp)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 60
    while not list(out.glob("writes/*/*/*.parquet")) and time.monotonic() < deadline:
        time.sleep(0.05)  # until the first unit's rows are being put in place
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate()
    if proc.returncode != 0:  # it may have finished just before the signal
        assert proc.returncode == 128 + signal.SIGTERM, err
        assert "stopped by SIGTERM" in err
    assert not list((out / "_dgtrace" / "tmp").iterdir())
    assert not list(tmp.iterdir())
    run_json(share_master, out, tmp)
    check_against_truth(out, truth(share_master))
    assert not list(tmp.iterdir())


def test_second_run_at_once_is_refused(share_master: Path, tmp_path: Path) -> None:
    out = tmp_path / "ds"
    first = subprocess.Popen(
        [sys.executable, "-m", "analyzer", "batch", str(share_master), "--out", str(out), "--workers", "1"],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 60
        while not (out / "_dgtrace" / "lock").is_file() or not (out / "_dgtrace" / "lock").read_text():
            assert time.monotonic() < deadline and first.poll() is None
            time.sleep(0.02)
        second = dgtrace("batch", str(share_master), "--out", str(out), check=ExitCode.BUSY)
        assert f"pid {first.pid}" in second.stderr and "run again when it has finished" in second.stderr
    finally:
        first.wait()
    check_against_truth(out, truth(share_master))
