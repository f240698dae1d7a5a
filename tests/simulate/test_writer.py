"""One primary thread streamed to its files: sender, LGWR and RFS traces and truth rows, within its budget."""

from __future__ import annotations

from pathlib import Path

from analyzer.simulate import SimOptions, runner
from analyzer.simulate.writer import SetPlan, ThreadJob, run_thread


def _jobs(outdir: Path, options: SimOptions) -> tuple[SetPlan, list[ThreadJob]]:
    runner.prepare(outdir)
    plan = runner._plan(options)
    return plan, runner.set_jobs(plan, outdir)


def test_a_thread_writes_its_sender_lgwr_and_rfs_traces_and_a_truth_row_per_write(tmp_path: Path) -> None:
    _, jobs = _jobs(tmp_path / "set", SimOptions(writes=25, threads=2, seed=4))
    outcome = run_thread(jobs[0])
    assert [p.name.split("_")[1] for p in outcome.files] == ["nss2", "lgwr", "rfs"]
    assert (outcome.writes, outcome.rows, outcome.deleted) == (25, (25,), ())
    assert outcome.trace_bytes == sum(p.stat().st_size for p in outcome.files)
    rows = jobs[0].truth_part(0).read_text().splitlines()
    assert len(rows) == 25 and all(row.startswith("1,") for row in rows)  # thread 1's rows
    assert not jobs[1].truth_part(0).exists()  # thread 2 not run


def test_a_byte_budget_is_shared_by_the_threads(tmp_path: Path) -> None:
    _, jobs = _jobs(tmp_path / "set", SimOptions(size_bytes=400_000, threads=2, seed=4))
    outcome = run_thread(jobs[0])
    assert 200_000 <= outcome.trace_bytes <= 1.2 * 200_000  # its half, ended on a whole write
    assert outcome.writes == len(jobs[0].truth_part(0).read_text().splitlines())


def test_the_plan_of_a_set_its_scn_and_whether_it_is_extended(tmp_path: Path) -> None:
    plan, jobs = _jobs(tmp_path / "set", SimOptions(seed=4))
    assert plan.scn(plan.scn_start + 1_000_000) - plan.scn_base == 25_000  # about 25,000 a second
    assert plan.scn(plan.scn_start - 1_000_000) == plan.scn_base
    assert not plan.extended and runner._plan(SimOptions(extras=True)).extended
    assert jobs[0].job_file == tmp_path / "set" / ".job-1.pickle"
    assert jobs[0].truth_part(2).name == ".truth-1-2.part" and jobs[1].lgwr_part.name == ".lgwr-2.part"
