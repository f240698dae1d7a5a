"""Where a receiver's RFS I/O waits fall, tallied chunk by chunk while its trace is read: inside a write
(between `Server received` and `Server finished`) or after its `Server finished`, which tells Fast Sync
(`analyzer.match.transport`)."""

from __future__ import annotations

from dataclasses import dataclass, field

import polars as pl

from analyzer.base.vocab import RFS_IO_EVENTS, MessageKind

#: a SYNC link is Fast Sync when at least this share of its RFS I/O waits follow `Server finished`
AFTER_FINISH_SHARE = 0.9


@dataclass(frozen=True)
class WaitPlacement:
    """Where a receiver's RFS I/O waits fall: inside a write (between `Server received` and
    `Server finished`: the ack waited for them) or after its `Server finished` (it did not)."""

    inside: int = 0
    after_finish: int = 0

    def __add__(self, other: WaitPlacement) -> WaitPlacement:
        return WaitPlacement(self.inside + other.inside, self.after_finish + other.after_finish)


@dataclass
class PlacementTally:
    """`WaitPlacement` of one file, chunk by chunk (a chunk may end between a message and its waits)."""

    placement: WaitPlacement = field(default_factory=WaitPlacement)
    #: the kind of the last server message seen
    last: str | None = None

    def add(self, messages: pl.DataFrame, waits: pl.DataFrame) -> None:
        """Count the RFS I/O waits of one chunk (its parse tables) by the server message before each.

        Both tables are in line order: a binary search of each wait's line among the server messages'
        finds the message before it (none: the last one of the chunks before).
        """
        if not messages.height and not waits.height:  # most chunks of most small files: no query
            return
        server = messages.filter(pl.col("kind").is_in([str(MessageKind.SERVER_RECV), str(MessageKind.SERVER_DONE)]))
        io = waits.filter(pl.col("event").is_in(RFS_IO_EVENTS))["line"]
        received = server["kind"] == str(MessageKind.SERVER_RECV)
        if io.len():
            at = server["line"].search_sorted(io, side="left").cast(pl.Int64) - 1
            placed = at.filter(at >= 0)
            inside = int(received.gather(placed).sum()) if placed.len() else 0
            after_finish = placed.len() - inside
            first = io.len() - placed.len()  # before the chunk's first server message
            if self.last == str(MessageKind.SERVER_RECV):
                inside += first
            elif self.last == str(MessageKind.SERVER_DONE):
                after_finish += first
            self.placement += WaitPlacement(inside, after_finish)
        if server.height:
            self.last = str(MessageKind.SERVER_RECV) if received[-1] else str(MessageKind.SERVER_DONE)
