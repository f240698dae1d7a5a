"""The limits of one discovery over hostile uploads: the whole run (`Session`) and each input (`Tree`).

Every input (a file or device named by the user, or a file found in a folder) is a `Tree`: the
file and everything nested in it. Its limits hold for the whole tree, across all nesting levels:
the bytes every decompression stage and archive member produce (against `max_ratio` times the
input's size on disk, and against `max_total_bytes` for the whole run), the members listed, the
depth, and the seconds spent reading it. Each stage of each member also keeps its own ratio
(`streams.Meter`).
"""

from __future__ import annotations

import dataclasses
import tempfile
import threading
import time
import weakref
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Protocol

from analyzer.base.errors import LimitExceeded, UsageError
from analyzer.base.spill import check_stop

KiB, MiB, GiB = 1024, 1024**2, 1024**3


@dataclass(frozen=True)
class Limits:
    """Safety limits against hostile uploads; every one can be raised from the command line."""

    #: decompressed bytes over the whole run (every decompression stage and archive member counts,
    #: and so do devices and pipes read with `read_special`)
    max_total_bytes: int = 64 * GiB
    #: decompressed / compressed bytes of one stage of one member, and of a whole input: the bytes
    #: produced at every nesting level of a file, against its size on disk
    max_ratio: float = 1000.0
    #: the ratios are only checked once a stage (or an input) has produced this much
    ratio_grace_bytes: int = 1 * MiB
    #: archive and compression layers between a file on disk and a trace (upload.zip!n.zip!x.gz = 3)
    max_depth: int = 8
    #: archive members over the whole run
    max_members: int = 100_000
    #: temporary copies of nested archives and of members of compressed tarballs
    max_spool_bytes: int = 16 * GiB
    #: part of the spool held in memory before it moves to an anonymous temporary file
    spool_memory_bytes: int = 64 * MiB
    #: one metadata block read into memory: a zip central directory, a tar long-name or pax header
    max_header_bytes: int = 32 * MiB
    #: seconds spent on one input: listing and reading a file with everything nested in it, the
    #: walk of a folder or a glob, or waiting for a pipe's data
    max_seconds_per_input: float = 600.0
    #: read devices, FIFOs and sockets named on the command line (else they are skipped)
    read_special: bool = False

    def __post_init__(self) -> None:
        for item in dataclasses.fields(self):
            value = getattr(self, item.name)
            if not isinstance(value, bool) and not value > 0:
                raise UsageError(f"limit {item.name} must be positive, got {value}")


class InputStopped(LimitExceeded):
    """A limit of a whole input (its bytes, its ratio, its time; the run's bytes or members):
    nothing more of that input is listed or read."""


class _Closable(Protocol):
    def close(self) -> object: ...


def size_text(count: float) -> str:
    """Bytes for messages: 64 GiB, 1.5 MiB, 512 bytes."""
    for unit, name in ((GiB, "GiB"), (MiB, "MiB"), (KiB, "KiB")):
        if count >= unit:
            return f"{count / unit:.4g} {name}"
    return f"{count:g} bytes"


def _close_all(resources: list[_Closable]) -> None:
    for resource in reversed(resources):
        resource.close()


class Session:
    """What one discovery shares: limits, bytes budget, member count, spool, open archives.

    Nested archives (a zip inside a zip: zipfile needs to seek) and the wanted members of
    compressed tarballs (a tar.gz can only be read in order) are copied once (`streams.spool`)
    into the spool, a `SpooledTemporaryFile` that stays in memory up to
    `Limits.spool_memory_bytes` and then moves to an anonymous file in the system temporary
    directory (already unlinked, so nothing is left behind, even when the process is killed);
    what it takes is bounded by `Limits.max_spool_bytes` and by the bytes budget left. Open
    files and the spool are closed when the session is no longer referenced by any source or
    stream.
    """

    def __init__(self, limits: Limits) -> None:
        self.limits = limits
        self.lock = threading.RLock()
        self._spent = 0
        self._members = 0
        #: bytes copied to the spool so far (against `Limits.max_spool_bytes`)
        self.spooled = 0
        self._spool: tempfile.SpooledTemporaryFile[bytes] | None = None
        self._resources: list[_Closable] = []
        weakref.finalize(self, _close_all, self._resources)

    def keep(self, resource: _Closable) -> None:
        """Close `resource` when the session ends."""
        self._resources.append(resource)

    def spend(self, count: int, label: str) -> None:
        """Charge decompressed bytes to the budget of the whole run.

        Raises:
            InputStopped: the run's budget is spent.
        """
        with self.lock:
            self._spent += count
            if self._spent > self.limits.max_total_bytes:
                raise InputStopped(
                    f"{label}: decompressed bytes of the whole input over the limit "
                    f"({size_text(self.limits.max_total_bytes)}, --max-total-bytes)"
                )

    def remaining(self) -> int:
        """Bytes left in the run's budget."""
        return max(self.limits.max_total_bytes - self._spent, 0)

    def count_member(self, label: str) -> None:
        """Count one archive member against the limit for the whole run."""
        with self.lock:
            self._members += 1
            if self._members > self.limits.max_members:
                raise InputStopped(
                    f"{label}: archive members of the whole input over the limit "
                    f"({self.limits.max_members}, --max-members), the rest of this archive is not listed"
                )

    def spool_file(self) -> tempfile.SpooledTemporaryFile[bytes]:
        """The spool, created on first use."""
        if self._spool is None:
            size = self.limits.spool_memory_bytes
            # lives as long as the session: closed by keep()
            self._spool = tempfile.SpooledTemporaryFile(max_size=size)  # noqa: SIM115
            self.keep(self._spool)
        return self._spool


class Tree:
    """One input and everything nested in it: the bytes they produced and the time spent on them.

    `stored` is the input's size on disk (None for a pipe or device: no ratio then). Once a limit
    of the tree is hit, every later operation on it raises the same `InputStopped`.
    """

    def __init__(self, session: Session, label: str, stored: int | None) -> None:
        self.session, self.label, self.stored = session, label, stored
        self.produced = 0
        self.seconds = 0.0
        self.stopped: InputStopped | None = None

    def _stop(self, message: str) -> InputStopped:
        self.stopped = InputStopped(message)
        return self.stopped

    def check(self) -> None:
        """Raise the tree's stop, if any, and stop at a signal."""
        check_stop()
        if self.stopped is not None:
            raise self.stopped

    def remaining_bytes(self) -> int:
        """Bytes this input may still produce before its ratio limit."""
        if self.stored is None:
            return self.session.remaining()
        return max(int(self._allowed(self.stored)) - self.produced, 0)

    def _allowed(self, stored: int) -> float:
        """Bytes the tree may produce from `stored` bytes on disk: its ratio, after the grace."""
        limits = self.session.limits
        return max(limits.max_ratio * max(stored, 1), limits.ratio_grace_bytes)

    def charge(self, count: int, label: str) -> None:
        """Charge `count` bytes produced somewhere in the tree.

        Raises:
            InputStopped: the tree's ratio or the run's total is exceeded.
        """
        session = self.session
        with session.lock:
            self.check()
            self.produced += count
            try:
                session.spend(count, label)
            except InputStopped as exc:
                self.stopped = exc
                raise
            limits = session.limits
            if self.stored is not None and self.produced > self._allowed(self.stored):
                raise self._stop(
                    f"{label}: {size_text(self.produced)} decompressed from the {size_text(self.stored)} of "
                    f"{self.label}, over {limits.max_ratio:g} times its size (--max-ratio): a decompression "
                    f"bomb, not read further"
                )

    def spend_time(self, seconds: float, label: str, *, quiet: bool = False) -> None:
        """Add time spent on this input (`quiet`: an error is already on its way, do not raise).

        Raises:
            InputStopped: the input's time budget is spent.
        """
        with self.session.lock:
            self.seconds += seconds
            limit = self.session.limits.max_seconds_per_input
            if self.seconds > limit and self.stopped is None and not quiet:
                raise self._stop(
                    f"{label}: time spent on {self.label} over the limit ({limit:g} s, --max-seconds-per-input), "
                    f"not read further"
                )

    def remaining_seconds(self) -> float:
        """Seconds left in the input's time budget."""
        return self.session.limits.max_seconds_per_input - self.seconds


#: per thread: a timed operation is under way (the time of nested ones is counted once, by the outermost)
_timing = threading.local()


@contextmanager
def timed(tree: Tree | None, label: str) -> Iterator[None]:
    """Charge the time spent inside to `tree` (not again when an outer operation already does).

    Raises:
        InputStopped: the input's time budget is spent.
    """
    if tree is None or getattr(_timing, "active", False):
        yield
        return
    _timing.active = True
    started = time.perf_counter()
    try:
        yield
    except BaseException:
        _timing.active = False
        tree.spend_time(time.perf_counter() - started, label, quiet=True)
        raise
    _timing.active = False
    tree.spend_time(time.perf_counter() - started, label)
