"""The child process of a parallel simulation: one pickled thread job in, its outcome pickled on stdout."""

from __future__ import annotations

import pickle
import subprocess
import sys
from pathlib import Path

from analyzer.simulate import SimOptions, runner
from analyzer.simulate.writer import ThreadJob, ThreadOutcome, run_thread
from tests.conftest import ROOT


def _job(outdir: Path) -> ThreadJob:
    runner.prepare(outdir)
    plan = runner._plan(SimOptions(writes=30, threads=2, seed=4))
    return runner.set_jobs(plan, outdir)[1]  # thread 2


def test_the_worker_writes_what_the_thread_writes_in_process_and_pickles_its_outcome(tmp_path: Path) -> None:
    job = _job(tmp_path / "child")
    job.job_file.write_bytes(pickle.dumps(job))
    child = subprocess.run(
        [sys.executable, "-m", "analyzer.simulate.worker", str(job.job_file)], cwd=ROOT, capture_output=True, check=True
    )
    outcome: ThreadOutcome = pickle.loads(child.stdout)
    here = run_thread(_job(tmp_path / "here"))
    assert (
        (outcome.writes, outcome.rows, outcome.trace_bytes)
        == (here.writes, here.rows, here.trace_bytes)
        == (
            30,
            (30,),
            sum(p.stat().st_size for p in outcome.files),
        )
    )
    assert [p.relative_to(tmp_path / "child") for p in outcome.files] == [
        p.relative_to(tmp_path / "here") for p in here.files
    ]
    assert [p.read_bytes() for p in outcome.files] == [p.read_bytes() for p in here.files]
    assert {p.relative_to(tmp_path / "child").parts[0] for p in outcome.files} == {"prim02", "stby01"}  # thread 2
