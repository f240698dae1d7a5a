"""Runs a whole trace set: plans it, simulates each primary thread, writes truth.csv and scenario.json."""

from __future__ import annotations

import base64
import json
import os
import pickle
import shutil
import subprocess
import sys
from dataclasses import asdict, replace
from datetime import UTC, datetime
from pathlib import Path
from random import Random
from subprocess import PIPE

from analyzer.errors import UsageError
from analyzer.simulate.formats import GENERATIONS
from analyzer.simulate.headers import Process
from analyzer.simulate.model import SCENARIOS, Profile
from analyzer.simulate.options import SimOptions, SimResult
from analyzer.simulate.writer import SetPlan, ThreadJob, run_thread

TRUTH_COLUMNS = "thread,seq,msgid,sent_at,total_ms,network_ms,rfs_ms,rfs_io_ms,rfs_other_ms,verdict"
PRIMARY_DB, STANDBY_DB = "sales", "salesdr"
#: sets expected to be smaller than this run their threads in this process (no start-up cost)
PARALLEL_MIN_BYTES = 32 * 2**20
#: rough trace bytes per remote write, to estimate a set given by --writes
_BYTES_PER_WRITE = 850


def simulate(outdir: Path, options: SimOptions) -> SimResult:
    """Write a trace set with its truth under `outdir`, which must be new or empty."""
    _prepare(outdir)
    plan = _plan(options)
    set_rng = Random(f"{options.seed}:set")
    jobs = [
        ThreadJob(plan, thread, _processes(options, thread, set_rng), outdir)
        for thread in range(1, options.threads + 1)
    ]
    counts = _run_jobs(jobs)
    _join_truth(outdir / "truth.csv", jobs)
    files = tuple(outdir / p.trace_dir / p.file_name for job in jobs for p in job.processes)
    result = SimResult(
        files,
        outdir / "truth.csv",
        outdir / "scenario.json",
        sum(done for done, _ in counts),
        sum(written for _, written in counts),
    )
    _write_scenario(plan, result, outdir)
    return result


def _prepare(outdir: Path) -> None:
    if outdir.exists() and (not outdir.is_dir() or any(outdir.iterdir())):
        raise UsageError(f"{outdir} exists and is not an empty directory; choose a new one")
    outdir.mkdir(parents=True, exist_ok=True)


def _plan(options: SimOptions) -> SetPlan:
    gen = GENERATIONS[options.format_version]
    rng = Random(f"{options.seed}:clock")
    start = int(gen.start.timestamp()) * 1_000_000 + rng.randrange(6 * 3600 * 1_000_000)
    skew = round(options.standby_skew_s * 1_000_000)
    # Linux up to 12.1: tim is the standby's gettimeofday(); later: a counter since some boot
    tim_shift = skew if gen.epoch_tim else rng.randrange(10**11, 9 * 10**12) - start
    first_msgid = rng.randrange(10_000, 200_000)
    return SetPlan(options, gen, _resolve_profile(options), start, skew, tim_shift, first_msgid)


def _resolve_profile(options: SimOptions) -> Profile:
    """The scenario's profile with the command-line overrides applied."""
    p = SCENARIOS[options.scenario]
    return replace(
        p,
        rtt_ms=p.rtt_ms if options.rtt_ms is None else options.rtt_ms,
        net_spike_rate=p.net_spike_rate if options.net_spike_rate is None else options.net_spike_rate,
        io_spike_rate=p.io_spike_rate if options.io_spike_rate is None else options.io_spike_rate,
        log_switch_every=p.log_switch_every if options.log_switch_every is None else options.log_switch_every,
    )


def _run_jobs(jobs: list[ThreadJob]) -> list[tuple[int, int]]:
    """Run the threads here, or in parallel processes when the set is large.

    Threads are independent (own processes, files and random stream), so the bytes are the same either way.
    """
    options = jobs[0].plan.options
    expected = options.size_bytes or (options.writes_per_thread or 0) * len(jobs) * _BYTES_PER_WRITE
    if len(jobs) < 2 or (os.cpu_count() or 1) < 2 or not sys.executable or expected < PARALLEL_MIN_BYTES:
        return [run_thread(job) for job in jobs]
    return _run_in_children(jobs)


def _run_in_children(jobs: list[ThreadJob]) -> list[tuple[int, int]]:
    """One `python -m analyzer.simulate.worker JOBFILE` per thread, all at once.

    Child interpreters, not multiprocessing: fork is unsafe once the caller runs threads (polars), and
    spawn re-imports the caller's main script, which breaks scripts without a `__main__` guard.
    """
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    children: list[subprocess.Popen[bytes]] = []
    try:
        for job in jobs:
            job.job_file.write_bytes(pickle.dumps(job))
            command = [sys.executable, "-m", "analyzer.simulate.worker", str(job.job_file)]
            children.append(subprocess.Popen(command, stdout=PIPE, stderr=PIPE, env=env))
        return [_collect(child, job) for child, job in zip(children, jobs, strict=True)]
    finally:
        for child in children:
            if child.returncode is None:  # only after a failure: stop the rest
                child.kill()
                child.communicate()
        for job in jobs:
            job.job_file.unlink(missing_ok=True)


def _collect(child: subprocess.Popen[bytes], job: ThreadJob) -> tuple[int, int]:
    out, err = child.communicate()
    if child.returncode != 0:
        detail = err.decode("utf-8", "replace").strip()
        raise RuntimeError(f"simulating thread {job.thread} failed in a child process:\n{detail}")
    counts: tuple[int, int] = pickle.loads(out)
    return counts


def _join_truth(truth: Path, jobs: list[ThreadJob]) -> None:
    with truth.open("wb") as out:
        out.write(f"{TRUTH_COLUMNS}\n".encode("ascii"))
        for job in jobs:
            with job.truth_part.open("rb") as part:
                shutil.copyfileobj(part, out, 1 << 20)
            job.truth_part.unlink()


def _processes(options: SimOptions, thread: int, rng: Random) -> tuple[Process, Process, Process]:
    """The NSS and LGWR of primary instance `thread`, and the RFS serving it on the standby."""
    sender = "NSS2" if options.sender == "nss" else "LNS1"
    nss = _background(thread, sender, rng.randrange(30, 60), rng)
    lgwr = _background(thread, "LGWR", rng.randrange(10, 30), rng)
    rfs = Process(
        host="stby01",
        db=STANDBY_DB,
        sid=f"{STANDBY_DB}1",
        pname="rfs",
        image="",
        pid=rng.randrange(2000, 99_999),
        number=rng.randrange(60, 400),
        thread=1,
        session=f"{rng.randrange(100, 5000)}.{rng.randrange(1, 60000)}",
        service="SYS$USERS",
        module=f"oracle@{nss.host} ({sender})",
        client_ip=f"10.20.30.{10 + thread}",
        connection_id=base64.b64encode(rng.randbytes(16)).decode("ascii"),
    )
    return nss, lgwr, rfs


def _background(thread: int, name: str, number: int, rng: Random) -> Process:
    """A background process (NSS2, LNS1, LGWR) of primary instance `thread`."""
    return Process(
        host=f"prim{thread:02d}",
        db=PRIMARY_DB,
        sid=f"{PRIMARY_DB}{thread}",
        pname=name.lower(),
        image=name,
        pid=rng.randrange(2000, 99_999),
        number=number,
        thread=thread,
        session=f"{rng.randrange(100, 2000)}.{rng.randrange(1, 60000)}",
        service="SYS$BACKGROUND",
        module="",
    )


def _write_scenario(plan: SetPlan, result: SimResult, outdir: Path) -> None:
    start = datetime.fromtimestamp(plan.start / 1_000_000, UTC).isoformat()
    document = {
        "options": asdict(plan.options),
        "profile": asdict(plan.profile),
        "start_utc": start,
        "files": [f.relative_to(outdir).as_posix() for f in result.files],
        "truth": result.truth.name,
        "writes": result.writes,
        "trace_bytes": result.trace_bytes,
    }
    result.scenario.write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")
