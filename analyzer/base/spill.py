"""Pieces of a table kept between stages: in memory, or spilled to a temporary directory.

The tables stage leaves one piece of exchanges per chunk of input. Kept in memory, millions of
writes cost hundreds of megabytes before matching starts; spilled (Arrow IPC, uncompressed:
written and read back at memory speed), memory holds only the piece being built and the
pieces one batch of the match stage reads back. A small piece (a small file's, `STREAM_ROWS`)
is an IPC stream, which polars reads back in a fraction of the time of an IPC file; a bigger one
is an IPC file, whose columns polars maps one by one (the match stage's first pass reads a few).

The spill directory's life: `spill_directory()` first sweeps the directories that dead runs
left behind (a run killed by SIGKILL or a power cut cannot clean up), then creates
`$TMPDIR/dgtrace-<pid>-<random>/` with an `owner` file (pid and process start time), and
removes it on the way out, also when a stop signal unwinds the run (`stop_on_signals`).
"""

from __future__ import annotations

import contextlib
import itertools
import os
import re
import shutil
import signal
import stat
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from types import FrameType

import polars as pl

from analyzer.base import safefs
from analyzer.base.errors import Interrupted, TempFileError

#: columns a piece is indexed by: the match stage reads back only the pieces holding a key
INDEX = ["thread", "seq"]
#: a spilled piece of fewer rows is an IPC stream (`.arrows`), a bigger one an IPC file (`.arrow`)
STREAM_ROWS = 10_000
#: the spill directories of dgtrace runs: dgtrace-<owner pid>-<mkdtemp suffix>
PREFIX = "dgtrace-"
_NAME = re.compile(r"dgtrace-(\d+)-[A-Za-z0-9_]+")
#: file inside a spill directory naming its owner: "<pid> <start time in clock ticks since boot>"
OWNER = "owner"
_ADVICE = "free some space there, or point TMPDIR to a folder with room for about a third of the input"


@dataclass(frozen=True)
class Piece:
    """One piece: its frame (in memory) or its file (spilled), and the (thread, seq) it holds
    with their row counts (`len`)."""

    frame: pl.DataFrame | None
    path: Path | None
    keys: pl.DataFrame
    rows: int

    def load(self, columns: list[str] | None = None) -> pl.DataFrame:
        """The piece's rows (only these columns when given)."""
        if self.frame is not None:
            return self.frame if columns is None else self.frame.select(columns)
        assert self.path is not None
        if self.path.suffix == ".arrows":
            return pl.read_ipc_stream(self.path, columns=columns)
        return pl.read_ipc(self.path, columns=columns)


class Spill:
    """A directory that pieces are written to (None keeps them in memory); thread-safe."""

    def __init__(self, directory: Path | None) -> None:
        self.directory = directory
        self._names = itertools.count()
        self._lock = threading.Lock()
        self._failed: TempFileError | None = None

    def put(self, frame: pl.DataFrame) -> Piece:
        """Keep a piece (an empty frame still gives a piece, with no keys).

        Raises:
            TempFileError: the piece could not be written (the partial file is removed; once one
                write failed, every later one fails the same way without trying).
        """
        check_stop()
        keys = frame.group_by(INDEX).len()
        if self.directory is None or not frame.height:
            return Piece(frame, None, keys, frame.height)
        with self._lock:
            if self._failed is not None:
                raise self._failed
            stream = frame.height < STREAM_ROWS
            path = self.directory / f"piece-{next(self._names)}.arrow{'s' if stream else ''}"
        try:
            if stream:
                frame.write_ipc_stream(path, compression="uncompressed")
            else:
                frame.write_ipc(path, compression="uncompressed")
        except OSError as exc:
            with self._lock:
                self._failed = TempFileError(f"cannot write temporary file {path}: {_reason(exc)}; {_ADVICE}")
            _remove(path)
            raise self._failed from exc
        return Piece(None, path, keys, frame.height)


#: pieces kept in memory (tests, the library API without a spill directory)
IN_MEMORY = Spill(None)


def _reason(exc: OSError) -> str:
    """The OS's words, without polars' "(os error 28)" suffix."""
    text = exc.strerror if exc.strerror else str(exc)
    return re.sub(r"\s*\(os error \d+\)$", "", " ".join(text.split())) or type(exc).__name__


def _remove(path: Path) -> None:
    with contextlib.suppress(OSError):  # the directory is removed at the end anyway
        path.unlink(missing_ok=True)


# --- the spill directory: created, owned, removed, swept ------------------------------------


@contextmanager
def spill_directory(parent: Path | None = None) -> Iterator[Spill]:
    """A fresh spill directory in `parent` (default: the system temporary folder), removed on exit.

    Stale directories of dead runs are swept first (see `sweep`).

    Raises:
        TempFileError: the directory cannot be created there.
        UnsafeLocation: `parent` is a folder another user controls (`_check_parent`).
    """
    base = Path(parent) if parent is not None else Path(tempfile.gettempdir())
    _check_parent(base)
    sweep(base)
    try:
        directory = Path(tempfile.mkdtemp(prefix=f"{PREFIX}{os.getpid()}-", dir=base))
    except OSError as exc:
        raise TempFileError(f"cannot create a temporary directory in {base}: {_reason(exc)}; {_ADVICE}") from exc
    try:
        try:
            (directory / OWNER).write_text(f"{os.getpid()} {_start_ticks(os.getpid()) or ''}\n")
        except OSError as exc:
            raise TempFileError(f"cannot write temporary file {directory / OWNER}: {_reason(exc)}; {_ADVICE}") from exc
        yield Spill(directory)
    finally:
        shutil.rmtree(directory, ignore_errors=True)


def _check_parent(base: Path) -> None:
    """The temporary folder is one where no other user can rename the spill directory (docs/security.md):
    this user's or root's, and not writable by others unless it has the sticky bit (as /tmp has).

    Raises:
        UnsafeLocation: another user owns it or can write to it without the sticky bit.
        TempFileError: it cannot be opened.
    """
    try:
        fd = safefs.open_folder(base)
    except OSError as exc:
        raise TempFileError(f"cannot create a temporary directory in {base}: {_reason(exc)}; {_ADVICE}") from exc
    try:
        safefs.check_folder(fd, str(base), "temporary files (set TMPDIR to a folder of your own)")
    finally:
        os.close(fd)


def sweep(parent: Path) -> list[Path]:
    """Remove the spill directories in `parent` whose run is gone; the paths removed.

    Only directories named `dgtrace-<pid>-...` (not links), owned by the current user, are
    considered; one is removed when no process has that pid, or when the process that has it
    started at another time than the one its `owner` file records (the pid was reused).
    A live run's directory is never touched.
    """
    removed: list[Path] = []
    try:
        entries = list(os.scandir(parent))
    except OSError:
        return removed
    for entry in entries:
        match = _NAME.fullmatch(entry.name)
        if match is None:
            continue
        try:
            info = entry.stat(follow_symlinks=False)
        except OSError:
            continue
        if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.geteuid():
            continue
        if not _alive(int(match[1]), Path(entry.path)):
            shutil.rmtree(entry.path, ignore_errors=True)
            removed.append(Path(entry.path))
    return removed


def _alive(pid: int, directory: Path) -> bool:
    """Whether the run that owns `directory` may still be running (when unsure: yes)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # EPERM: a process of another user has this pid
        return True
    try:
        recorded = (directory / OWNER).read_text().split()
    except (OSError, UnicodeDecodeError):
        return True  # being created (no owner file yet), or unreadable: leave it
    state, started = _process_state(pid)
    if state == "Z":  # a zombie has ended: only its exit status is left for a parent to collect
        return False
    return len(recorded) < 2 or started is None or recorded[1] == str(started)


def _start_ticks(pid: int) -> int | None:
    """When a process started (clock ticks since boot, /proc/<pid>/stat field 22), if known."""
    return _process_state(pid)[1]


def _process_state(pid: int) -> tuple[str | None, int | None]:
    """A process's state letter (`R`, `S`, `Z`...) and start time (clock ticks since boot), from
    /proc/<pid>/stat (fields 3 and 22), each None when unknown."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None, None
    fields = text.rpartition(")")[2].split()  # after the command name, which may hold spaces
    state = fields[0] if fields else None
    try:
        return state, int(fields[19])
    except (IndexError, ValueError):
        return state, None


# --- stop signals ---------------------------------------------------------------------------

_stop = threading.Event()
_stop_signal = [int(signal.SIGINT)]
#: the signals that stop a run cleanly (SIGHUP does not exist on Windows)
STOP_SIGNALS = tuple(getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, name))


def check_stop() -> None:
    """Raise Interrupted when a stop signal has arrived (worker threads call this between blocks).

    Raises:
        Interrupted: a stop signal arrived.
    """
    if _stop.is_set():
        raise Interrupted(_stop_signal[0])


#: depth of the `stop_deferred` regions the main thread is in, and whether a stop signal waits for their end
_deferred = [0, False]


@contextmanager
def stop_deferred() -> Iterator[None]:
    """A short region that a stop signal does not interrupt (in the main thread, inside
    `stop_on_signals`): one that arrives there raises `Interrupted` as the region ends, so that a
    file created inside is known, by then, to the `finally` that removes it.

    Raises:
        Interrupted: a stop signal arrived inside the region.
    """
    _deferred[0] += 1
    try:
        yield
    finally:
        _deferred[0] -= 1
    if not _deferred[0] and _deferred[1]:
        _deferred[1] = False
        raise Interrupted(_stop_signal[0])


def stop_requested() -> bool:
    """Whether a stop signal has arrived."""
    return _stop.is_set()


@contextmanager
def stop_on_signals() -> Iterator[None]:
    """While inside: SIGINT, SIGTERM and SIGHUP raise `Interrupted` in the main thread (once: a
    second signal does not break the cleanup of the first) and make `check_stop` raise in the
    other threads, so that every `with` and `finally` on the way out runs and removes its files.

    Outside the main thread (where handlers cannot be installed) this does nothing.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum: int, frame: FrameType | None) -> None:
        if _stop.is_set():
            return  # the first signal's unwinding is under way: let it finish its cleanup
        _stop_signal[0] = signum
        _stop.set()
        if _deferred[0]:  # raised when the region ends (`stop_deferred`)
            _deferred[1] = True
            return
        raise Interrupted(signum)

    previous = {signum: signal.signal(signum, handler) for signum in STOP_SIGNALS}
    try:
        yield
    finally:
        for signum, old in previous.items():
            signal.signal(signum, old)
        _stop.clear()
        _deferred[1] = False
