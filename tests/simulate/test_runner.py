"""Running a whole set: the output directory, the scenario's profile with its overrides, threads here or in
child processes (the same bytes), scenario.json."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from analyzer.base.errors import UsageError
from analyzer.simulate import SimOptions, runner
from analyzer.simulate.model import SCENARIOS
from tests.simulate.sets import run


def test_refuses_a_non_empty_directory(tmp_path: Path) -> None:
    (tmp_path / "set").mkdir()
    (tmp_path / "set" / "old.trc").write_text("x")
    with pytest.raises(UsageError, match="not an empty directory"):
        run(tmp_path)


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


def test_the_command_line_overrides_replace_the_scenario_s_values() -> None:
    plain = runner.resolve_profile(SimOptions(scenario="network"))
    assert plain == SCENARIOS["network"]
    tuned = runner.resolve_profile(SimOptions(scenario="network", rtt_ms=7.5, log_switch_every=40, io_spike_rate=0.0))
    assert (tuned.rtt_ms, tuned.log_switch_every, tuned.io_spike_rate) == (7.5, 40, 0.0)
    assert tuned.net_spike_rate == SCENARIOS["network"].net_spike_rate


def test_a_classic_set_s_scenario_json_keeps_only_the_classic_options(tmp_path: Path) -> None:
    classic = json.loads(run(tmp_path, "classic", writes=20).scenario.read_text())
    assert "transport" not in classic["options"] and "links" not in classic
    extended = json.loads(run(tmp_path, "extended", writes=20, topology="two-sync").scenario.read_text())
    assert extended["options"]["topology"] == "two-sync"
    assert [(link["thread"], link["sender"]["process"], link["receiver"]["db"]) for link in extended["links"]][:2] == [
        (1, "NSS2", "salesdr"),
        (1, "NSS3", "salesbc"),
    ]


def test_a_file_where_the_directory_should_be_is_refused(tmp_path: Path) -> None:
    (tmp_path / "set").write_text("not a folder")
    with pytest.raises(UsageError, match="exists and is not an empty directory"):
        run(tmp_path)


def test_a_set_bigger_than_the_free_disk_is_refused_before_anything_is_written(tmp_path: Path) -> None:
    outdir = tmp_path / "new" / "set"
    with pytest.raises(UsageError, match=r"the set would take about .* TiB and only .* are free there"):
        runner.simulate(outdir, SimOptions(writes=99_999_999_999_999))
    assert not (tmp_path / "new").exists()
    with pytest.raises(UsageError, match="only"):
        runner.simulate(outdir, SimOptions(size_bytes=2**62))
    result = run(tmp_path, writes=50)  # a small one still fits, and takes about what was expected
    taken = sum(f.stat().st_size for f in result.files) + result.truth.stat().st_size
    assert 0.5 < taken / runner.expected_bytes(SimOptions(writes=50), 2) < 1.5
