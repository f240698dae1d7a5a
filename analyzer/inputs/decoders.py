"""Decompressors that give every byte that decodes before an error: gzip (every member, through
ISA-L's inflater when the `fast-gzip` extra is installed) and Unix `compress` (`.Z`, LZW, through
the `lzw` extra).

The standard library's readers (`gzip.GzipFile` and the like) gather several decoder calls into one
read and lose them all when the last fails: a truncated stream loses up to a read's worth of text,
and a complete `.gz` followed by data that are not gzip loses its tail, which `gzip -d` keeps. Here
each read is one decoder call; what decoded before an error is returned first, the error is raised
on the next read. Data that follow the last gzip member and are not gzip are named (`gzip -d`
warns of "trailing garbage" and ignores it); NUL padding (tape blocks) is ignored silently.
"""

from __future__ import annotations

import queue
import threading
import zlib
from collections.abc import Callable
from typing import Protocol, cast

from analyzer.base.errors import CorruptInput, Interrupted, LimitExceeded
from analyzer.inputs.limits import KiB
from analyzer.inputs.skips import GZIP_ERRORS, Damaged, corrupt

try:  # optional: the `fast-gzip` extra
    from isal import isal_zlib
except ImportError:  # pragma: no cover - the tests install the extra
    isal_zlib = None  # type: ignore[assignment]
try:  # optional: the `lzw` extra
    import ncompress  # type: ignore[import-untyped]
except ImportError:  # pragma: no cover - the tests install the extra
    ncompress = None

#: python-isal is there: gzip inputs are inflated by ISA-L
FAST_GZIP = isal_zlib is not None
#: compressed bytes handed to the inflater at a time: with ISA-L (whose inflater cannot be copied), what an
#: error in the middle of the data can take back with it
PIECE = 16 * KiB
_GZIP_MAGIC = b"\x1f\x8b"
_GZIP_WBITS = 16 + zlib.MAX_WBITS  # a gzip header and trailer (CRC-32 and length checked)
#: what the standard library says of gzip data that end early (said the same way here)
_TRUNCATED = EOFError("Compressed file ended before the end-of-stream marker was reached")
_INFLATE_ERRORS: tuple[type[Exception], ...] = (zlib.error, *GZIP_ERRORS)
#: why the `.Z` data of an input are not read without the `lzw` extra
NO_LZW = "compressed with Unix compress (.Z): not read (install the `lzw` extra: pip install 'dgtrace[lzw]')"


class Reader(Protocol):
    def read(self, size: int = ..., /) -> bytes: ...
    def close(self) -> object: ...


class _Inflater(Protocol):
    eof: bool
    unused_data: bytes
    unconsumed_tail: bytes

    def decompress(self, data: bytes, max_length: int = ..., /) -> bytes: ...
    def flush(self) -> bytes: ...


def _inflater(fast: bool) -> _Inflater:
    if fast and isal_zlib is not None:
        return cast(_Inflater, isal_zlib.decompressobj(_GZIP_WBITS))
    return cast(_Inflater, zlib.decompressobj(_GZIP_WBITS))


class GzipReader:
    """The bytes of a gzip stream of one or more members, `read(size)` being one inflater call.

    Truncated data give every byte before the cut, then raise `Damaged`; corrupt data give what
    decoded before the damage (all of it with the standard library's inflater, which is copied
    before each piece and replayed byte by byte after an error; with ISA-L's, up to the piece
    before), then raise.
    """

    def __init__(self, below: Reader, label: str, *, fast: bool = True) -> None:
        self._below, self._label, self._fast = below, label, fast
        self._inflate = _inflater(fast)
        self._input = b""  # compressed bytes read from below and not yet given to the inflater
        self._ended = False  # below has nothing more
        self._failed: CorruptInput | None = None
        self._broken: CorruptInput | None = None  # what ended the data below early
        self._done = False

    def read(self, size: int = -1, /) -> bytes:
        size = 1024 * KiB if size is None or size < 0 else max(size, 1)
        while True:
            if self._failed is not None:
                raise self._failed
            if self._done:
                return b""
            if self._inflate.eof:
                self._next_member()
                continue
            data = self._inflate.unconsumed_tail or self._take()
            if not data:  # the data end inside a member: what the inflater still holds, then the damage
                self._failed = self._broken or corrupt(self._label, _TRUNCATED)
                try:
                    held = self._inflate.flush()
                except _INFLATE_ERRORS:
                    continue
                if held:
                    return held
                continue
            out = self._decompress(data, size)
            if out:
                return out

    def _take(self) -> bytes:
        """The next compressed piece (empty at the end of the data below)."""
        if not self._input and not self._ended:
            self._input = self._below_read()
        data, self._input = self._input[:PIECE], self._input[PIECE:]
        return data

    def _below_read(self) -> bytes:
        """The next compressed bytes; at the end of the data, or where they break, nothing more (the
        damage kept for after what the inflater still holds)."""
        try:
            data = self._below.read(PIECE)
        except CorruptInput as exc:
            self._broken, data = exc, b""
        self._ended = not data
        return data

    def _decompress(self, data: bytes, size: int) -> bytes:
        copy = getattr(self._inflate, "copy", None)
        saved = copy() if copy is not None else None
        try:
            return self._inflate.decompress(data, size)
        except _INFLATE_ERRORS as exc:
            self._failed = corrupt(self._label, exc)
            return self._replayed(saved, data) if saved is not None else b""

    @staticmethod
    def _replayed(inflate: _Inflater, data: bytes) -> bytes:
        """What a copy of the inflater taken before `data` gives of them, byte by byte, up to the error."""
        parts = []
        for at in range(len(data)):
            try:
                parts.append(inflate.decompress(data[at : at + 1]))
            except _INFLATE_ERRORS:
                break
        return b"".join(parts)

    def _next_member(self) -> None:
        """After a member's end: the next member, NUL padding (ignored), or data that are not gzip (named)."""
        rest = self._inflate.unused_data + self._input
        self._input = b""
        while True:
            rest = rest.lstrip(b"\x00")
            if rest or self._ended:
                break
            rest = self._below_read()
        if not rest:
            self._done = True
            self._failed = self._broken
            return
        if len(rest) < len(_GZIP_MAGIC) and not self._ended:
            rest += self._below_read()
        if not rest.startswith(_GZIP_MAGIC):
            self._done = True
            self._failed = Damaged(
                self._label, "data that are not gzip follow the end of the compressed data: ignored (as gzip -d does)"
            )
            return
        self._inflate = _inflater(self._fast)
        self._input = rest

    def close(self) -> None:
        self._below.close()


class _Stop(Exception):
    """The reader of an LZW stream was closed: its decoder thread ends."""


class LzwReader:
    """The bytes of a `.Z` stream (Unix compress), decoded by `ncompress` on a thread of its own as
    they are read (ncompress reads from and writes to file objects: its output goes through a small
    queue, so at most about a MiB waits). An LZW stream has no end marker: a truncated one gives
    what it holds, without an error."""

    _BATCH = 256 * KiB

    def __init__(self, below: Reader, label: str) -> None:
        if ncompress is None:
            raise Damaged(label, NO_LZW)
        self._below, self._label = below, label
        self._queue: queue.Queue[bytes | BaseException | None] = queue.Queue(maxsize=4)
        self._closed = threading.Event()
        self._left = b""
        self._ended = False
        self._thread = threading.Thread(target=self._decode, name="dgtrace-lzw", daemon=True)
        self._thread.start()

    def _decode(self) -> None:
        sink = _Sink(self._put, self._BATCH)
        try:
            assert ncompress is not None
            ncompress.decompress(_Source(self._below, self._closed), sink)
            sink.flush()
            self._put(None)
        except _Stop:
            return
        except BaseException as exc:  # handed to the reader, which raises it as its own
            try:
                self._put(exc)
            except _Stop:
                return

    def _put(self, item: bytes | BaseException | None) -> None:
        while not self._closed.is_set():
            try:
                self._queue.put(item, timeout=0.1)
                return
            except queue.Full:
                continue
        raise _Stop

    def read(self, size: int = -1, /) -> bytes:
        size = self._BATCH if size is None or size < 0 else max(size, 1)
        while not self._left and not self._ended:
            item = self._queue.get()
            if item is None:
                self._ended = True
            elif isinstance(item, BaseException):
                self._ended = True
                if isinstance(item, (CorruptInput, LimitExceeded, Interrupted)):
                    raise item
                raise corrupt(self._label, item) from item
            else:
                self._left = item
        data, self._left = self._left[:size], self._left[size:]
        return data

    def close(self) -> None:
        self._closed.set()
        while self._thread.is_alive():
            try:
                self._queue.get(timeout=0.05)
            except queue.Empty:
                continue
        self._below.close()


class _Source:
    """The compressed bytes ncompress reads (on the decoder thread)."""

    def __init__(self, below: Reader, closed: threading.Event) -> None:
        self._below, self._closed = below, closed

    def read(self, size: int = -1, /) -> bytes:
        if self._closed.is_set():
            raise _Stop
        return self._below.read(size if size is not None and size > 0 else PIECE)

    def readinto(self, buffer: bytearray | memoryview) -> int:
        view = memoryview(buffer).cast("B")
        data = self.read(len(view))
        view[: len(data)] = data
        return len(data)


class _Sink:
    """Where ncompress writes its output: gathered, and put on the queue a batch at a time."""

    def __init__(self, put: Callable[[bytes], None], batch: int) -> None:
        self._put, self._batch = put, batch
        self._gathered = bytearray()

    def write(self, data: bytes) -> int:
        self._gathered += data
        if len(self._gathered) >= self._batch:
            self.flush()
        return len(data)

    def flush(self) -> None:
        if self._gathered:
            self._put(bytes(self._gathered))
            self._gathered.clear()
