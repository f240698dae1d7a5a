"""Runs a whole trace set: plans it, simulates each primary thread, writes truth.csv and scenario.json."""

from __future__ import annotations

import json
import os
import pickle
import shutil
import subprocess
import sys
from collections.abc import Mapping
from dataclasses import asdict, replace
from datetime import UTC, datetime
from pathlib import Path
from random import Random
from subprocess import PIPE
from typing import Any

from analyzer.base.errors import UsageError
from analyzer.base.units import parse_offset
from analyzer.simulate.alert import write_alert_logs
from analyzer.simulate.extras import write_extras
from analyzer.simulate.formats import GENERATIONS
from analyzer.simulate.model import LATER_PROFILE, SCENARIOS, Profile
from analyzer.simulate.options import CLASSIC_FIELDS, LATER_OPTIONS, SimOptions, SimResult
from analyzer.simulate.topology import Clocks, ClockSpec, TopologyOptions, base_processes, thread_layout
from analyzer.simulate.truth import (
    COMMIT_COLUMNS,
    EXTENDED_COLUMNS,
    LGWR_EVENT_COLUMNS,
    TRUTH_COLUMNS,
    TruthPart,
    join_parts,
)
from analyzer.simulate.writer import SetPlan, ThreadJob, ThreadOutcome, run_thread

#: sets expected to be smaller than this run their threads in this process (no start-up cost)
PARALLEL_MIN_BYTES = 32 * 2**20
#: rough trace bytes per remote write, to estimate a set given by --writes
_BYTES_PER_WRITE = 850


def simulate(outdir: Path, options: SimOptions) -> SimResult:
    """Write a trace set with its truth under `outdir`, which must be new or empty.

    Raises:
        UsageError: `outdir` is not new or empty, or the set would not fit in the free disk space.
    """
    check_room(outdir, expected_bytes(options, options.threads))
    prepare(outdir)
    plan = _plan(options)
    jobs = set_jobs(plan, outdir)
    outcomes = run_jobs(jobs)
    return finish_set(plan, outdir, jobs, outcomes)


def set_jobs(plan: SetPlan, outdir: Path, day: str = "", tag: str = "", key: str = "") -> list[ThreadJob]:
    """One job per primary thread of `plan`; `day`, `tag` and `key` tell apart the sets of a share."""
    options = plan.options
    gen = plan.generation
    seed = key or str(options.seed)
    set_rng = Random(f"{seed}:set")
    clocks = Clocks(
        ClockSpec(0, parse_offset(options.primary_tz), 0),
        ClockSpec(plan.standby_skew_us, parse_offset(options.standby_tz), plan.tim_shift),
        seed,
        gen.epoch_tim,
        plan.start,
    )
    topo = TopologyOptions(gen, options.transport, options.topology, options.async_sender, plan.profile.rtt_ms)
    jobs = []
    for thread in range(1, options.threads + 1):
        base = base_processes(plan.names, thread, options.sender, set_rng, day)
        layout = thread_layout(topo, plan.names, clocks, thread, base, Random(f"{seed}:topology:{thread}"))
        jobs.append(ThreadJob(plan, thread, layout, outdir, f"{seed}:thread:{thread}", f"{tag}{thread}"))
    return jobs


def finish_set(plan: SetPlan, outdir: Path, jobs: list[ThreadJob], outcomes: list[ThreadOutcome]) -> SimResult:
    """Join the truth parts, write LGWR events, alert logs and extras, and scenario.json."""
    options = plan.options
    truth = outdir / "truth.csv"
    if plan.extended:
        parts = [
            TruthPart(job.truth_part(k), out.dropped[k], evidence=True)
            for job, out in zip(jobs, outcomes, strict=True)
            for k in range(len(job.layout.links))
        ]
        join_parts(truth, EXTENDED_COLUMNS, parts)
    else:
        join_parts(truth, TRUTH_COLUMNS, [TruthPart(job.truth_part(0)) for job in jobs])
    commit = None
    if any(spec.kind == "follower" for job in jobs for spec in job.layout.links):
        commit = outdir / "commit_path.csv"
        join_parts(commit, COMMIT_COLUMNS, [TruthPart(job.commit_part) for job in jobs])
    events = None
    if options.lgwr_events:
        events = outdir / "lgwr_events.csv"
        lgwr = [TruthPart(j.lgwr_part, o.lgwr_dropped, evidence=True) for j, o in zip(jobs, outcomes, strict=True)]
        join_parts(events, LGWR_EVENT_COLUMNS, lgwr)
    files = tuple(p for out in outcomes for p in out.files)
    extras: tuple[Path, ...] = ()
    if options.extras:
        startup = plan.start - 31 * 3_600_000_000
        extras = tuple(write_alert_logs(outdir, plan, jobs, startup)) + write_extras(outdir, plan, jobs, files)
    result = SimResult(
        files,
        truth,
        outdir / "scenario.json",
        sum(sum(out.rows) for out in outcomes),
        sum(out.trace_bytes for out in outcomes),
        tuple(p for out in outcomes for p in out.deleted),
        events,
        extras,
        commit,
    )
    _write_scenario(plan, result, outdir, jobs)
    return result


#: bytes of truth.csv per write (its rows are about 80 bytes)
_TRUTH_PER_WRITE = 100


def expected_bytes(options: SimOptions, threads: int) -> int:
    """About how many bytes a set of these options takes on disk (traces and truth)."""
    if options.size_bytes is not None:
        return options.size_bytes + options.size_bytes // _BYTES_PER_WRITE * _TRUTH_PER_WRITE
    return (options.writes_per_thread or 0) * threads * (_BYTES_PER_WRITE + _TRUTH_PER_WRITE)


def check_room(outdir: Path, needed: int) -> None:
    """Refuse, before anything is written, a set bigger than the free space where `outdir` is (or will be).

    Raises:
        UsageError: it would not fit.
    """
    place = outdir.absolute()
    while not place.exists() and place != place.parent:
        place = place.parent
    free = shutil.disk_usage(place).free
    if needed > free:
        raise UsageError(
            f"{outdir}: the set would take about {_size(needed)} and only {_size(free)} are free there;"
            " ask for fewer writes (--writes) or a smaller --size"
        )


def _size(count: int) -> str:
    for unit, name in ((1024**4, "TiB"), (1024**3, "GiB"), (1024**2, "MiB"), (1024, "KiB")):
        if count >= unit:
            return f"{count / unit:,.1f} {name}"
    return f"{count:,} bytes"


def prepare(outdir: Path) -> None:
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
    scn_base = Random(f"{options.seed}:scn").randrange(10**9, 10**12)
    profile = resolve_profile(options)
    return SetPlan(options, gen, profile, start, skew, tim_shift, first_msgid, scn_base=scn_base, scn_start=start)


def resolve_profile(options: SimOptions) -> Profile:
    """The scenario's profile with the command-line overrides applied."""
    p = SCENARIOS[options.scenario]
    return replace(
        p,
        rtt_ms=p.rtt_ms if options.rtt_ms is None else options.rtt_ms,
        net_spike_rate=p.net_spike_rate if options.net_spike_rate is None else options.net_spike_rate,
        io_spike_rate=p.io_spike_rate if options.io_spike_rate is None else options.io_spike_rate,
        log_switch_every=p.log_switch_every if options.log_switch_every is None else options.log_switch_every,
    )


def run_jobs(jobs: list[ThreadJob]) -> list[ThreadOutcome]:
    """Run the threads here, or in parallel processes when the set is large.

    Threads are independent (own processes, files and random stream), so the bytes are the same either way.
    """
    options = jobs[0].plan.options
    expected = options.size_bytes or (options.writes_per_thread or 0) * len(jobs) * _BYTES_PER_WRITE
    if len(jobs) < 2 or (os.cpu_count() or 1) < 2 or not sys.executable or expected < PARALLEL_MIN_BYTES:
        return [run_thread(job) for job in jobs]
    return _run_in_children(jobs)


def _run_in_children(jobs: list[ThreadJob]) -> list[ThreadOutcome]:
    """One `python -m analyzer.simulate.worker JOBFILE` per thread, as many at once as there are cores.

    Child interpreters, not multiprocessing: fork is unsafe once the caller runs threads (polars), and
    spawn re-imports the caller's main script, which breaks scripts without a `__main__` guard.
    """
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    limit = max(2, os.cpu_count() or 2)
    outcomes: dict[int, ThreadOutcome] = {}
    running: list[tuple[int, subprocess.Popen[bytes]]] = []
    try:
        for index, job in enumerate(jobs):
            if len(running) == limit:
                done, child = running.pop(0)
                outcomes[done] = _collect(child, jobs[done])
            job.job_file.write_bytes(pickle.dumps(job))
            command = [sys.executable, "-m", "analyzer.simulate.worker", str(job.job_file)]
            running.append((index, subprocess.Popen(command, stdout=PIPE, stderr=PIPE, env=env)))
        while running:
            done, child = running.pop(0)
            outcomes[done] = _collect(child, jobs[done])
        return [outcomes[index] for index in range(len(jobs))]
    finally:
        for _, child in running:  # only after a failure: stop the rest
            child.kill()
            child.communicate()
        for job in jobs:
            job.job_file.unlink(missing_ok=True)


def _collect(child: subprocess.Popen[bytes], job: ThreadJob) -> ThreadOutcome:
    out, err = child.communicate()
    if child.returncode != 0:
        detail = err.decode("utf-8", "replace").strip()
        raise RuntimeError(f"simulating thread {job.thread} failed in a child process:\n{detail}")
    outcome: ThreadOutcome = pickle.loads(out)
    return outcome


def _write_scenario(plan: SetPlan, result: SimResult, outdir: Path, jobs: list[ThreadJob]) -> None:
    start = datetime.fromtimestamp(plan.start / 1_000_000, UTC).isoformat()
    options = asdict(plan.options)
    if not plan.extended:
        options = {k: v for k, v in options.items() if k in CLASSIC_FIELDS}
    document: dict[str, object] = {
        "options": _without_later(options, LATER_OPTIONS),
        "profile": _without_later(asdict(plan.profile), LATER_PROFILE),
        "start_utc": start,
        "files": [f.relative_to(outdir).as_posix() for f in result.files],
        "truth": result.truth.name,
        "writes": result.writes,
        "trace_bytes": result.trace_bytes,
    }
    if plan.extended:
        document["truth_columns"] = EXTENDED_COLUMNS.split(",")
        document["links"] = [link_document(job, k) for job in jobs for k in range(len(job.layout.links))]
        document["deleted"] = [f.relative_to(outdir).as_posix() for f in result.deleted]
        document["extras"] = [f.relative_to(outdir).as_posix() for f in result.extras]
        if result.lgwr_events is not None:
            document["lgwr_events"] = result.lgwr_events.name
        if result.commit_path is not None:
            document["commit_path"] = result.commit_path.name
    result.scenario.write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")


def _without_later(values: dict[str, Any], later: Mapping[str, object]) -> dict[str, Any]:
    """`values` without the fields added later that hold their default (sets that do not use them keep their bytes)."""
    return {k: v for k, v in values.items() if k not in later or v != later[k]}


def link_document(job: ThreadJob, index: int) -> dict[str, object]:
    """What scenario.json says about one link: its ends, transport and destination."""
    spec = job.layout.links[index]
    ends = {}
    for side, process in (("sender", spec.sender), ("receiver", spec.receiver)):
        ends[side] = {"host": process.host, "db": process.db, "sid": process.sid, "process": process.image or "RFS"}
    return {"thread": job.thread, "kind": spec.kind, "transport": spec.transport, "dest": spec.dest, **ends}
