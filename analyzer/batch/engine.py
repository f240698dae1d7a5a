"""Where the units of work run: a local process pool, or a Dask cluster.

Both run the same pure function (`analyzer.batch.unit.run_unit`) on the same units and hand back
its result to the one process that writes the dataset, so the dataset is the same, row for row,
whatever the engine. A unit that fails is reported with its error; the others go on.

- `local` (the default): a pool of processes, one per core (no dependency beyond dgtrace's own);
  a single unit, or `--workers 1`, runs in the calling process.
- `dask`: `--scheduler ADDRESS` sends the units to an existing Dask cluster (its workers must be
  able to read the inputs at the same paths; without `tls://` the command line warns: whoever
  can reach such a scheduler runs code on its workers); otherwise a local Dask cluster of
  `--workers` processes is started for the run, listening on loopback only and authenticated:
  mutual TLS with credentials made for the run and kept in memory (`Security.temporary()`, as Dask
  documents), so another local user cannot connect to it (docs/security.md). Needs
  `pip install 'dgtrace[dask]'`.
"""

from __future__ import annotations

import contextlib
import logging
import multiprocessing
import os
import threading
import time
from collections.abc import Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from analyzer.base.errors import UsageError
from analyzer.batch.plan import Unit
from analyzer.batch.unit import UnitOutput, run_unit

MISSING_DASK = "--engine dask needs Dask distributed: pip install 'dgtrace[dask]'"
#: address schemes whose connections are encrypted and authenticated (or never leave the process)
SECURE_SCHEMES = ("tls://", "wss://", "inproc://")


class EngineName(StrEnum):
    """Values of `dgtrace batch --engine`."""

    LOCAL = "local"
    DASK = "dask"


@dataclass(frozen=True)
class EngineSpec:
    """Which engine, with how many workers, or which existing cluster."""

    name: EngineName = EngineName.LOCAL
    workers: int | None = None
    scheduler: str | None = None

    def __post_init__(self) -> None:
        """Reject combinations that cannot work."""
        if self.scheduler and self.name is not EngineName.DASK:
            raise UsageError("--scheduler applies to --engine dask only")
        if self.scheduler and self.workers:
            raise UsageError("--workers starts a local cluster; an existing one (--scheduler) has its own workers")

    def warning(self) -> str | None:
        """What the user should know before the run: a scheduler reached without TLS."""
        if self.scheduler and not self.scheduler.startswith(SECURE_SCHEMES):
            return (
                f"the Dask scheduler {self.scheduler} is reached without TLS: whoever can reach it can run code on"
                " its workers and read what is sent; use a tls:// address with credentials (docs/security.md)"
            )
        return None

    def describe(self) -> str:
        n = self.size()
        where = f" at {self.scheduler}" if self.scheduler else f", {n} worker{'s' if n != 1 else ''}"
        return f"{self.name}{where}"

    def size(self) -> int:
        return self.workers or os.cpu_count() or 1


#: a unit with its output, or the error that stopped it (one line)
Outcome = tuple[Unit, UnitOutput | str]


def run_units(units: Sequence[Unit], spec: EngineSpec) -> Iterator[Outcome]:
    """Run every unit on the engine; outcomes as they complete (in no fixed order)."""
    if not units:
        return iter(())
    if spec.name is EngineName.DASK:
        return _dask(units, spec)
    if len(units) == 1 or spec.size() == 1:
        return (_inline(unit) for unit in units)
    return _pool(units, min(spec.size(), len(units)))


def _error(err: BaseException) -> str:
    return f"{type(err).__name__}: {err}"


def _inline(unit: Unit) -> Outcome:
    try:
        return unit, run_unit(unit)
    except Exception as err:  # one unit's failure is reported; the others go on
        return unit, _error(err)


def _pool(units: Sequence[Unit], workers: int) -> Iterator[Outcome]:
    # spawn: a forked child would inherit polars' thread pool in an undefined state
    context = multiprocessing.get_context("spawn")
    pool = ProcessPoolExecutor(workers, context, initializer=watch_parent, initargs=(os.getpid(),))
    pending: dict[Future[UnitOutput], Unit] = {pool.submit(run_unit, unit): unit for unit in units}
    try:
        while pending:
            done, _ = wait(pending, return_when=FIRST_COMPLETED)
            for future in done:
                unit = pending.pop(future)
                try:
                    yield unit, future.result()
                except BrokenProcessPool as err:
                    yield unit, f"a worker process died ({err})"
                except Exception as err:
                    yield unit, _error(err)
    finally:
        # stopped early (a signal, an error while writing): do not wait for the units still running
        stop_pool(pool, waiting=bool(pending))


def stop_pool(pool: ProcessPoolExecutor, *, waiting: bool) -> None:
    """Shut the pool down; `waiting`: units are still running, whose workers are stopped, not waited for.

    A worker stopped while it writes a unit's result into the pool's result pipe leaves the pool's
    own thread waiting for the rest of that result: the parent holds the last write end of the pipe,
    so no end of file ever comes, and the interpreter waits for that thread at exit (a run stopped by
    SIGTERM would never end). With the workers gone, that write end is closed: the thread reads the
    end of file, takes the pool as broken and ends.
    """
    # the pool's own processes, thread and result pipe (no public API), taken before `shutdown` drops them
    workers_now: Any = getattr(pool, "_processes", None) or {}
    processes = list(workers_now.values()) if waiting else []
    thread: threading.Thread | None = getattr(pool, "_executor_manager_thread", None)
    writer: Any = getattr(getattr(pool, "_result_queue", None), "_writer", None)
    pool.shutdown(wait=not waiting, cancel_futures=True)
    for process in processes:
        process.terminate()
    for process in processes:  # gone and collected: the sweep at the end of the run takes their spill directories
        process.join(5.0)
    if not processes or thread is None:
        return
    thread.join(1.0)
    if thread.is_alive() and writer is not None:  # reading a result no worker will finish
        with contextlib.suppress(OSError):
            writer.close()  # the parent's write end was the last one open: the thread reads the end of file
        thread.join(5.0)


def watch_parent(parent: int, every_s: float = 1.0) -> None:
    """In a worker: exit as soon as the process that started it is gone (killed with -9, it cannot
    stop its pool; an orphaned worker would go on reading and writing its spill files)."""

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(every_s)
        os._exit(1)

    threading.Thread(target=watch, name="dgtrace-watch-parent", daemon=True).start()


def _dask(units: Sequence[Unit], spec: EngineSpec) -> Iterator[Outcome]:
    try:
        import distributed
    except ImportError as err:
        raise UsageError(MISSING_DASK) from err
    dask: Any = distributed  # partly typed: its calls are untyped
    Client, LocalCluster, as_completed = dask.Client, dask.LocalCluster, dask.as_completed
    cluster: Any = None
    if spec.scheduler:
        try:
            client = Client(spec.scheduler, timeout="20s")
        except (OSError, TimeoutError) as err:
            raise UsageError(f"cannot reach the Dask scheduler at {spec.scheduler}: {err}") from err
    else:
        try:  # a key and certificate for this run only, in memory: every connection is mutual TLS
            security = dask.Security.temporary()
        except ImportError as err:
            raise UsageError(MISSING_DASK) from err
        cluster = LocalCluster(
            n_workers=spec.size(),
            threads_per_worker=1,
            processes=True,
            host="127.0.0.1",
            protocol="tls://",
            security=security,
            dashboard_address=None,
            silence_logs=logging.ERROR,
        )
        client = Client(cluster, security=security)
    try:
        futures = client.map(run_unit, list(units), key=[f"dgtrace-unit-{u.fingerprint()}" for u in units])
        by_key = {future.key: unit for future, unit in zip(futures, units, strict=True)}
        for future in as_completed(futures):
            unit = by_key[future.key]
            try:
                yield unit, future.result()
            except Exception as err:
                yield unit, _error(err)
    finally:
        client.close()
        if cluster is not None:
            cluster.close()
