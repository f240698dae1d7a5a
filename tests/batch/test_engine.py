"""Engines: the same dataset, row for row, inline, on a local process pool and on a real Dask cluster."""

from __future__ import annotations

import multiprocessing
import os
import struct
import subprocess
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from analyzer.base.errors import UsageError
from analyzer.batch.engine import EngineName, EngineSpec, run_units, stop_pool
from tests.batch.helpers import batch, check_against_truth, same_rows, truth


@pytest.mark.slow
def test_process_pool_gives_the_rows_of_one_process(one_day: Path, tmp_path: Path) -> None:
    batch(one_day, tmp_path / "inline")
    summary = batch(one_day, tmp_path / "pool", EngineSpec(EngineName.LOCAL, workers=2))
    assert summary.engine == "local, 2 workers"
    same_rows(tmp_path / "inline", tmp_path / "pool")


@pytest.mark.slow
def test_dask_local_cluster_gives_the_same_rows(share_master: Path, tmp_path: Path) -> None:
    batch(share_master, tmp_path / "local", EngineSpec(EngineName.LOCAL, workers=2))
    summary = batch(share_master, tmp_path / "dask", EngineSpec(EngineName.DASK, workers=2))
    assert summary.engine == "dask, 2 workers" and not summary.failed
    check_against_truth(tmp_path / "dask", truth(share_master))
    same_rows(tmp_path / "local", tmp_path / "dask")


@pytest.mark.slow
def test_dask_existing_cluster_by_address(one_day: Path, tmp_path: Path) -> None:
    from distributed import Client, LocalCluster

    with LocalCluster(n_workers=1, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        summary = batch(one_day, tmp_path / "ds", EngineSpec(EngineName.DASK, scheduler=cluster.scheduler_address))
        with Client(cluster) as client:
            assert client.scheduler_info()["workers"]  # the units ran there, on its own worker
    assert summary.engine == f"dask at {cluster.scheduler_address}"
    check_against_truth(tmp_path / "ds", truth(one_day))


def test_engine_options_that_cannot_work() -> None:
    with pytest.raises(UsageError, match="--engine dask only"):
        EngineSpec(EngineName.LOCAL, scheduler="tcp://127.0.0.1:8786")
    with pytest.raises(UsageError, match="existing one"):
        EngineSpec(EngineName.DASK, workers=2, scheduler="tcp://127.0.0.1:8786")
    assert list(run_units([], EngineSpec())) == []


def test_a_scheduler_without_tls_is_warned_about() -> None:
    for address in ("tcp://sched01:8786", "sched01:8786", "ws://sched01:8786"):
        warning = EngineSpec(EngineName.DASK, scheduler=address).warning()
        assert warning is not None and "without TLS" in warning and address in warning
    for address in ("tls://sched01:8786", "wss://sched01:8786"):
        assert EngineSpec(EngineName.DASK, scheduler=address).warning() is None
    assert EngineSpec(EngineName.DASK).warning() is None  # the local cluster is authenticated


@pytest.mark.slow
def test_a_pool_stopped_while_a_result_is_half_written_lets_its_thread_end() -> None:
    """A worker stopped in the middle of writing a unit's result: the pool's thread, which waits for the
    rest of it, ends once the pool is stopped, so the interpreter does not wait for it forever at exit
    (a batch stopped by SIGTERM then never ended)."""
    pool = ProcessPoolExecutor(2, multiprocessing.get_context("spawn"))
    futures = [pool.submit(time.sleep, 30) for _ in range(2)]
    deadline = time.monotonic() + 60
    while not all(f.running() for f in futures) and time.monotonic() < deadline:
        time.sleep(0.05)  # both workers busy with a unit
    internals: Any = pool  # its thread and result pipe: no public API
    thread, writer = internals._executor_manager_thread, internals._result_queue._writer
    os.write(writer.fileno(), struct.pack("!i", 1 << 20) + bytes(16))  # a result of 1 MiB, cut after 16 bytes
    time.sleep(0.5)  # the pool's thread reads the header and waits for the rest
    assert thread.is_alive()
    started = time.monotonic()
    stop_pool(pool, waiting=True)
    assert not thread.is_alive()
    assert time.monotonic() - started < 20


WORKER = """
import os, sys, time
from analyzer.batch.engine import watch_parent
watch_parent(int(sys.argv[1]), every_s=0.05)
print(os.getpid(), flush=True)
time.sleep(30)
"""
PARENT = """
import subprocess, sys, time
child = subprocess.Popen([sys.executable, "-c", sys.argv[1], str(__import__("os").getpid())], stdout=sys.stdout)
time.sleep(30)
"""


@pytest.mark.slow
def test_a_worker_exits_when_its_parent_is_killed() -> None:
    parent = subprocess.Popen([sys.executable, "-c", PARENT, WORKER], stdout=subprocess.PIPE, text=True)
    assert parent.stdout is not None
    child = int(parent.stdout.readline())
    parent.kill()
    parent.wait()
    parent.stdout.close()
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        try:
            os.kill(child, 0)
        except ProcessLookupError:
            return
        time.sleep(0.05)
    pytest.fail("the orphaned worker is still running")
