"""Output files of a simulated set: chunked writers, and trace files cut into segments."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from itertools import islice
from pathlib import Path

from analyzer.simulate.formats import TRACE_CONTINUED, TRACE_CONTINUES
from analyzer.simulate.headers import Process


class ChunkWriter:
    """Collects text pieces and writes them out in one chunk per batch."""

    def __init__(self, path: Path) -> None:
        """Create (truncate) `path`."""
        path.parent.mkdir(parents=True, exist_ok=True)
        self.parts: list[str] = []
        self.bytes = 0
        self._file = path.open("wb")

    def flush(self) -> None:
        """Write the pending pieces."""
        data = "".join(self.parts).encode("ascii")
        self.parts.clear()
        self._file.write(data)
        self.bytes += len(data)

    def close(self) -> None:
        """Flush and close the file."""
        self.flush()
        self._file.close()


@contextmanager
def chunk_writer(path: Path) -> Iterator[ChunkWriter]:
    """A ChunkWriter that is closed (flushed) at the end of the block."""
    writer = ChunkWriter(path)
    try:
        yield writer
    finally:
        writer.close()


@dataclass(frozen=True)
class Segmenting:
    """How traces are cut: a new segment once one holds `bytes`; segment `drop` (>= 1) is deleted."""

    bytes: int
    #: 0: no segment is deleted
    drop: int = 0


class TraceFile(ChunkWriter):
    """The trace of one process: its first file and, when segmenting, the segments after it.

    The caller says where a write (or another unit of rows) ends with `mark`; a segment that has
    reached its size is closed there with `TRACE CONTINUES IN FILE`, and the next one starts with a
    header and `TRACE CONTINUED FROM FILE`. Rows are numbered by the caller (0, 1, ...), so that the
    rows whose lines were in a deleted segment can be told afterwards (`dropped`).
    """

    def __init__(
        self,
        outdir: Path,
        process: Process,
        segmenting: Segmenting | None,
        header: Callable[[Process, int], str],
    ) -> None:
        """Create the first file of `process` under `outdir`; `header(process, t)` opens each later segment."""
        super().__init__(outdir / process.trace_dir / process.file_name)
        self.process = process
        self._outdir = outdir
        self._rule = segmenting
        self._header = header
        #: every segment written, in order (a deleted one included)
        self.paths = [outdir / process.trace_dir / process.file_name]
        #: [first, end) row ranges and paths of deleted segments
        self.dropped: list[tuple[int, int]] = []
        self.deleted: list[Path] = []
        self._segment_bytes = 0
        self._pending = 0
        self._mark = 0
        self._first_row = 0

    def flush(self) -> None:
        """Write the pending pieces (they count for the current segment)."""
        before = self.bytes
        super().flush()
        self._segment_bytes += self.bytes - before
        self._pending = self._mark = 0

    def mark(self, rows: int, t: int) -> None:
        """`rows` rows are complete at true time `t`: cut here if the segment is full."""
        rule = self._rule
        if rule is None:
            return
        parts = self.parts
        end = len(parts)
        self._pending += sum(map(len, islice(parts, self._mark, end)))
        self._mark = end
        if self._segment_bytes + self._pending >= rule.bytes:
            self._cut(rule, rows, t)

    def _cut(self, rule: Segmenting, rows: int, t: int) -> None:
        old = self.process
        new = replace(old, segment=old.segment + 1)
        self.parts.append(TRACE_CONTINUES.format(path=new.oracle_path))
        super().close()
        if rule.drop and old.segment == rule.drop:
            self.paths[-1].unlink()
            self.deleted.append(self.paths[-1])
            self.dropped.append((self._first_row, rows))
        path = self._outdir / new.trace_dir / new.file_name
        self._file = path.open("wb")
        self.paths.append(path)
        self.process = new
        self._segment_bytes = 0
        self._first_row = rows
        self.parts.append(self._header(new, t))
        self.parts.append(TRACE_CONTINUED.format(path=old.oracle_path))

    @property
    def segmenting(self) -> bool:
        """True when this trace is cut into segments."""
        return self._rule is not None

    @property
    def kept(self) -> list[Path]:
        """The segments that were not deleted."""
        return [p for p in self.paths if p not in self.deleted]
