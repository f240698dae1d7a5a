"""Pieces of a table kept between stages: in memory, or spilled to a temporary directory.

The tables stage leaves one piece of exchanges per chunk of input. Kept in memory, millions of
writes cost hundreds of megabytes before matching starts; spilled (Arrow IPC, uncompressed:
written and read back at memory speed), memory holds only the piece being built and the
pieces one batch of the match stage reads back.
"""

from __future__ import annotations

import itertools
import threading
from dataclasses import dataclass
from pathlib import Path

import polars as pl

#: columns a piece is indexed by: the match stage reads back only the pieces holding a key
INDEX = ["thread", "seq"]


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
        return pl.read_ipc(self.path, columns=columns)


class Spill:
    """A directory that pieces are written to (None keeps them in memory); thread-safe."""

    def __init__(self, directory: Path | None) -> None:
        self.directory = directory
        self._names = itertools.count()
        self._lock = threading.Lock()

    def put(self, frame: pl.DataFrame) -> Piece:
        """Keep a piece (an empty frame still gives a piece, with no keys)."""
        keys = frame.group_by(INDEX).len()
        if self.directory is None or not frame.height:
            return Piece(frame, None, keys, frame.height)
        with self._lock:
            path = self.directory / f"piece-{next(self._names)}.arrow"
        frame.write_ipc(path, compression="uncompressed")
        return Piece(None, path, keys, frame.height)


#: pieces kept in memory (tests, the library API without a spill directory)
IN_MEMORY = Spill(None)
