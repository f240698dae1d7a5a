"""The process streams of one trace file: which process wrote each line.

A file is one process's trace, except where it says otherwise: a header repeated inside it (the
OS reused the pid) or `*** TRACE FILE RECREATED AFTER BEING REMOVED ***` starts a new process
incarnation, and trcsess output (`*** [ Unix process pid: 9850 ]` before the lines of each
process) mixes several processes, each coming back to its own stream when trcsess switches back.
Messages of different streams are never paired (`analyzer.reduce.pairing`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import polars as pl

#: streams of one file are numbered 1 .. MAX_STREAMS (`analyzer.match.segments` gives each file a range
#: of 1024); a file with more restarts than that keeps the last stream for the rest
MAX_STREAMS = 1023


@dataclass
class Streams:
    """The stream of every line of a file, built chunk by chunk (`add`, then `expr`)."""

    #: (line, stream): the lines after `line` are that stream's, up to the next break
    breaks: list[tuple[int, int]] = field(default_factory=list)
    #: trcsess processes by pid, in order of appearance -> their stream
    pids: dict[int, int] = field(default_factory=dict)
    last: int = 1

    def add(self, header: pl.DataFrame, markers: pl.DataFrame) -> None:
        """The breaks of one chunk: its header starts (HEADER rows) and file markers (MARKERS rows)."""
        if not header.height and not markers.height:  # most chunks: no query to find none
            return
        # a chunk has a few of them: read in Python, not with three polars queries
        kinds = zip(header["line"].to_list(), header["kind"].to_list(), strict=True)
        breaks: list[tuple[int, str, Any]] = [(line, "header", None) for line, kind in kinds if kind == "trace_file"]
        rows = zip(markers["line"].to_list(), markers["marker"].to_list(), markers["pid"].to_list(), strict=True)
        breaks += [(line, marker, pid) for line, marker, pid in rows if marker in ("recreated", "process")]
        for line, marker, pid in sorted(breaks, key=lambda found: found[0]):
            if marker == "process" and pid in self.pids:
                self.breaks.append((line, self.pids[pid]))
                continue
            stream = 1 if line == 1 else self._next()
            if marker == "process":
                self.pids[pid] = stream
            self.breaks.append((line, stream))

    def _next(self) -> int:
        self.last = min(self.last + 1, MAX_STREAMS)
        return self.last

    def expr(self) -> pl.Expr:
        """The stream of each row by its `line` (1 before the first break)."""
        if not self.breaks:
            return pl.lit(1, pl.Int64)
        lines = pl.Series([line for line, _ in self.breaks], dtype=pl.Int64)
        streams = pl.Series([1, *(stream for _, stream in self.breaks)], dtype=pl.Int64)
        return pl.lit(streams).gather(pl.lit(lines).search_sorted(pl.col("line"), side="left"))

    @property
    def single(self) -> bool:
        """Every line is stream 1 (one process, not restarted in the file)."""
        return all(stream == 1 for _, stream in self.breaks)

    @property
    def processes(self) -> tuple[int, ...]:
        """The pids of a trcsess file's processes, in order of appearance (empty for one process's trace)."""
        return tuple(self.pids)
