"""How a link acknowledges its writes: SYNC, Fast Sync (SYNC NOAFFIRM) or ASYNC, with the evidence.

A destination's attributes (`Destination`: LOG_ARCHIVE_DEST_n as a parameter listing or an alert
log shows it) decide when known. Else the sender's name does: NSAn (11.2, 12.1) and TTnn ship
ASYNC; NSSn, LNSn and LGWR ship SYNC. A SYNC link is Fast Sync when its RFS writes the standby
redo log after it acknowledged the write: the RFS I/O waits come after `Server finished`
(`WaitPlacement`, tallied while the RFS trace is read), so standby I/O is not in the commit path.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import polars as pl

from analyzer.identify import ASYNC_PROCESSES
from analyzer.pairing import RFS_IO_EVENTS
from analyzer.vocab import MessageKind, Transport

#: a SYNC link is Fast Sync when at least this share of its RFS I/O waits follow `Server finished`
AFTER_FINISH_SHARE = 0.9


@dataclass(frozen=True)
class Destination:
    """A LOG_ARCHIVE_DEST_n of a sending database, as a parameter listing or an alert log shows it:
    `SERVICE=salesdr SYNC AFFIRM ... DB_UNIQUE_NAME=salesdr` (SYNC NOAFFIRM is Fast Sync)."""

    db: str
    target_db: str
    number: int | None = None
    transport: Transport | None = None
    #: where it was read (`file:line`)
    source: str = ""


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


def dest_fits(dest: Destination, process: str | None) -> bool:
    """NSSn / NSAn / LNSn serve LOG_ARCHIVE_DEST_n; TTnn and others are not numbered by destination."""
    name = process or ""
    digits = "".join(ch for ch in name if ch.isdigit())
    numbered = name.startswith(("NSS", "NSA", "LNS")) and bool(digits)
    return dest.number is None or not numbered or int(digits) == dest.number


def transport_of(
    sender: str | None, destination: Destination | None, placement: WaitPlacement
) -> tuple[Transport, str]:
    """A link's transport and the evidence: the destination's attributes, else the sender's name;
    a SYNC link whose RFS I/O waits come after `Server finished` is Fast Sync."""
    if destination is not None and destination.transport is not None:
        where = f"LOG_ARCHIVE_DEST_{destination.number or '?'} of {destination.db} ({destination.source})"
        return destination.transport, f"{where}: {destination.transport}"
    if sender and ASYNC_PROCESSES.match(sender):
        return Transport.ASYNC, f"sender {sender} is an ASYNC transport process (NSAn, TTnn)"
    said = f"sender {sender} ships SYNC" if sender else "sender unknown: SYNC assumed"
    io = placement.inside + placement.after_finish
    if not io:
        return Transport.SYNC, f"{said}; no RFS I/O wait to tell AFFIRM from NOAFFIRM"
    if placement.after_finish >= AFTER_FINISH_SHARE * io:
        return Transport.FASTSYNC, (
            f"{said}; {placement.after_finish} of {io} RFS I/O waits come after `Server finished`: the"
            " acknowledgement did not wait for the standby redo log write"
        )
    return Transport.SYNC, f"{said}; {placement.inside} of {io} RFS I/O waits come before `Server finished` (AFFIRM)"
