"""Devices, FIFOs and sockets: skipped, or with `Limits.read_special` read once as the data come
(a FIFO's writer may come late), never blocking longer than the input's time budget.
"""

from __future__ import annotations

import os
import select
import stat
import time
from functools import partial
from pathlib import Path
from typing import BinaryIO, cast

from analyzer.base.errors import CorruptInput, LimitExceeded
from analyzer.base.spill import check_stop
from analyzer.inputs.classify import BUFFER, HEAD_BYTES, Found, Source
from analyzer.inputs.limits import InputStopped, Session, Tree
from analyzer.inputs.skips import Skipped, cannot_read
from analyzer.inputs.sniff import archive_of, compression_of, not_text
from analyzer.inputs.streams import CHUNK, ByteReader, Layer, Meter, Whole, decompressing, read_up_to

#: how long a pipe's reader sleeps between checks of the time budget and of stop signals
_POLL_SECONDS = 0.2


def special_input(path: Path, label: str, mode: int, session: Session) -> Found | Skipped:
    """A device, FIFO or socket named on the command line: a source to read once (with
    `Limits.read_special`), or skipped."""
    if stat.S_ISSOCK(mode):
        return Skipped(label, "socket: nothing to read as a file")
    if not session.limits.read_special:
        return Skipped(label, f"{special_kind(mode)}: not read (--read-special reads it)")
    tree = Tree(session, label, None)
    opener = partial(_open_special, path, label, tree)
    return Found(Source(label, opener, rereadable=False, tree=tree), None)


def special_kind(mode: int) -> str:
    """What a file that is not a folder or a regular file is, in words."""
    if stat.S_ISCHR(mode):
        return "character device"
    if stat.S_ISBLK(mode):
        return "block device"
    if stat.S_ISFIFO(mode):
        return "FIFO (named pipe)"
    if stat.S_ISSOCK(mode):
        return "socket"
    return "not a regular file"


def _open_special(path: Path, label: str, tree: Tree) -> BinaryIO:
    """A device or pipe named with --read-special: read once as it comes, bounded by the bytes
    budget of the run and the input's time budget; compressed data are decompressed (by their
    first bytes); binary data and archives are refused."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0))
    except OSError as exc:
        raise cannot_read(label, exc) from exc
    pipe = Layer(_Pipe(fd, label, tree), label, meter=Meter(tree.session, label, tree, ratio=False))
    top, head = _decompressed(pipe, label, tree)
    refusal = _refusal(head)
    if refusal is not None:
        top.close()
        raise CorruptInput(f"{label}: {refusal}")
    return cast(BinaryIO, Whole(top, BUFFER))


def _refusal(head: bytes) -> str | None:
    """Why a pipe's or device's first (decompressed) bytes cannot be read as a trace, or None."""
    if archive_of(head) is not None:
        return "a zip or tar archive cannot be read from a pipe or device; save it to a file"
    return not_text(head)


def _decompressed(top: Layer, label: str, tree: Tree) -> tuple[Layer, bytes]:
    """A stream through every compression its first bytes announce (read once, so they are
    replayed at each stage), and its first decompressed bytes."""
    limits = tree.session.limits
    depth = 0
    while True:
        head = read_up_to(top, HEAD_BYTES + 1)
        top = Layer(_Replay(head, top), label, tree=tree, below=top)
        suffix = compression_of(head)
        if suffix is None:
            return top, head
        depth += 1
        if depth > limits.max_depth:
            top.close()
            raise LimitExceeded(f"{label}: nesting depth over the limit ({limits.max_depth})")
        top = decompressing(top, suffix, Meter(tree.session, label, tree))


class _Pipe(ByteReader):
    """A device or FIFO read without ever blocking for long: the wait for data is bounded by the
    input's time budget and broken by stop signals. A FIFO nobody has opened for writing yet is
    waited for; once a writer came and went, an empty read is the end."""

    def __init__(self, fd: int, label: str, tree: Tree) -> None:
        super().__init__()
        self._fd, self._label, self._tree = fd, label, tree
        self._poll = select.poll()
        self._poll.register(fd, select.POLLIN | select.POLLPRI)
        self._connected = False

    def read(self, size: int | None = -1, /) -> bytes:
        size = CHUNK if size is None or size < 0 else max(size, 1)
        budget = self._tree.remaining_seconds()
        started = time.perf_counter()
        while True:
            check_stop()
            left = budget - (time.perf_counter() - started)
            if left <= 0:
                limit = self._tree.session.limits.max_seconds_per_input
                what = "no data came" if not self._connected else "the data stopped coming"
                raise InputStopped(f"{self._label}: {what} within {limit:g} s (--max-seconds-per-input)")
            events = self._poll.poll(1000 * min(left, _POLL_SECONDS))
            try:
                data = os.read(self._fd, size)
            except BlockingIOError:
                continue
            except OSError as exc:
                raise cannot_read(self._label, exc) from exc
            if data:
                self._connected = True
                return data
            if events or self._connected:
                return b""

    def close(self) -> None:
        if not self.closed:
            os.close(self._fd)
        super().close()


class _Replay(ByteReader):
    """The bytes already read from a stream, then the rest of the stream."""

    def __init__(self, head: bytes, rest: Layer) -> None:
        super().__init__()
        self._head, self._rest = head, rest

    def read(self, size: int | None = -1, /) -> bytes:
        if self._head:
            size = len(self._head) if size is None or size < 0 else size
            data, self._head = self._head[:size], self._head[size:]
            return data
        return self._rest.read(size)

    def close(self) -> None:
        super().close()
