"""scripts/bench.py's CPU columns: the CPU seconds of a timed command, and what they say about parallelism."""

from __future__ import annotations

import sys

import pytest

from scripts.bench import CORES, Run, cpu_figures, timed
from scripts.reliability_table import command_environ

#: a child that keeps one core busy for a while, then one that sleeps as long
BUSY = [sys.executable, "-c", "import time\nend = time.process_time() + 0.4\nwhile time.process_time() < end: pass"]
IDLE = [sys.executable, "-c", "import time; time.sleep(0.4)"]


def test_a_timed_command_counts_the_cpu_seconds_of_the_child() -> None:
    busy, idle = timed(BUSY), timed(IDLE)
    assert busy.cpu_s >= 0.4  # the loop alone burns that much
    assert busy.cpu_s <= busy.seconds * CORES + 0.05
    assert idle.seconds >= 0.4 and idle.cpu_s < 0.3  # waiting is no CPU time


def test_cpu_figures_take_medians_and_the_time_on_every_core() -> None:
    runs = [Run(10.0, 500.0, 9.0), Run(12.0, 510.0, 10.5), Run(11.0, 505.0, 10.0)]  # runs on one core
    figures = cpu_figures(runs, grep_s=0.5)
    assert figures["cpu_s"] == 10.0
    assert figures["cores"] == pytest.approx(10.0 / 11.0, abs=0.01)
    assert figures["best_ratio_to_grep"] == pytest.approx(10.0 / CORES / 0.5, abs=0.01)
    # spread over every core, work done on one at most goes as fast as it did: never a higher ratio
    assert figures["best_ratio_to_grep"] <= 11.0 / 0.5


@pytest.mark.parametrize(
    ("inherited", "passed"),
    [
        ("dirty_decay_ms:500,muzzy_decay_ms:1000", None),  # what `import polars` wrote: not passed on
        ("dirty_decay_ms:500,muzzy_decay_ms:1000,thp:always,metadata_thp:always", None),  # with POLARS_THP=1
        ("dirty_decay_ms:500,muzzy_decay_ms:1000,narenas:1", "narenas:1"),  # the setting given, as given
        ("narenas:1", "narenas:1"),
    ],
)
def test_commands_run_with_the_allocator_setting_given_not_polars_own(
    monkeypatch: pytest.MonkeyPatch, inherited: str, passed: str | None
) -> None:
    monkeypatch.setenv("_RJEM_MALLOC_CONF", inherited)
    assert command_environ(TMPDIR="/tmp").get("_RJEM_MALLOC_CONF") == passed
    # the child itself sees it so: exit 0 when its setting is the expected one
    check = f"import os, sys; sys.exit(0 if os.environ.get('_RJEM_MALLOC_CONF') == {passed!r} else 3)"
    timed([sys.executable, "-c", check])  # raises SystemExit on any other exit code
