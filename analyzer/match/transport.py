"""How a link acknowledges its writes: SYNC, Fast Sync (SYNC NOAFFIRM) or ASYNC, with the evidence.

A destination's attributes (`Destination`: LOG_ARCHIVE_DEST_n as a parameter listing or an alert
log shows it) decide when known. Else the sender's name does: NSAn (11.2, 12.1) and TTnn ship
ASYNC; NSSn, LNSn and LGWR ship SYNC. A SYNC link is Fast Sync when its RFS writes the standby
redo log after it acknowledged the write: the RFS I/O waits come after `Server finished`
(`WaitPlacement`, tallied while the RFS trace is read), so standby I/O is not in the commit path.
"""

from __future__ import annotations

from dataclasses import dataclass

from analyzer.base.vocab import Transport
from analyzer.parse.identify import ASYNC_PROCESSES
from analyzer.reduce.placement import AFTER_FINISH_SHARE, WaitPlacement


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
