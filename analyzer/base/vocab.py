"""The words every stage shares: message kinds, file roles, the components of a write's time.

Each is a `StrEnum`, so a value is also the plain string that tables, JSON and CSV carry
(`MessageKind.CLIENT_SEND == "client_send"`). See docs/architecture.md for the glossary
(message, exchange, write, pending, unpairable, boundary waits).
"""

from __future__ import annotations

import re
from enum import StrEnum


class MessageKind(StrEnum):
    """An event-16410 message: which host printed it and at which moment of a remote write."""

    #: t1: the primary's sender hands the redo to the network (`Client sending SQLNET request data`)
    CLIENT_SEND = "client_send"
    #: t4: the primary gets the standby's acknowledgement (`Client received SQLNET call`)
    CLIENT_RECV = "client_recv"
    #: t2: RFS has the redo (`Server received SQLNET data`)
    SERVER_RECV = "server_recv"
    #: t3: RFS is done with it (`Server finished processing SQLNET data`)
    SERVER_DONE = "server_done"

    @property
    def on_client(self) -> bool:
        """Printed by the primary's sender (the client of the transport connection)."""
        return self in (MessageKind.CLIENT_SEND, MessageKind.CLIENT_RECV)

    @property
    def opens(self) -> bool:
        """Opens an exchange (its partner comes later in the same process)."""
        return self in OPENING

    @property
    def stamp_after(self) -> bool:
        """Takes the transport stamp printed after it (the MAA paper's rule); else the one before."""
        return self is not MessageKind.CLIENT_RECV


#: the message that opens an exchange on each host -> the one that closes it
OPENING = {MessageKind.CLIENT_SEND: MessageKind.CLIENT_RECV, MessageKind.SERVER_RECV: MessageKind.SERVER_DONE}

# Groups of kinds as plain strings: polars takes them in `is_in` against string and categorical
# columns alike (a list of enum members would become an Enum series, which a categorical refuses).
OPENING_KINDS = tuple(str(k) for k in OPENING)
CLIENT_KINDS = tuple(str(k) for k in MessageKind if k.on_client)
SERVER_KINDS = tuple(str(k) for k in MessageKind if not k.on_client)
#: messages that take the stamp after them, and those that take the one before
FORWARD_KINDS = tuple(str(k) for k in MessageKind if k.stamp_after)
BACKWARD_KINDS = tuple(str(k) for k in MessageKind if not k.stamp_after)


class Role(StrEnum):
    """What a trace file is to the analysis."""

    #: the primary's sender (NSS, LNS, LGWR) or log writer
    PRIMARY = "primary"
    #: a standby's receiver (RFS)
    STANDBY = "standby"
    #: neither (a foreground trace, an alert log, ...)
    OTHER = "other"
    #: both client and server messages: contradictory evidence
    UNKNOWN = "unknown"


class FileKind(StrEnum):
    """What kind of text a file holds: a process's trace, or an instance's alert log."""

    TRACE = "trace"
    #: `alert_<SID>.log` in the instance's trace directory
    ALERT_LOG = "alert_log"

    @staticmethod
    def of(name: str) -> FileKind:
        """The kind of a file by its name (without compression suffix)."""
        return FileKind.ALERT_LOG if ALERT_LOG_NAME.match(name) else FileKind.TRACE


#: an alert log's file name: `alert_<SID>.log`
ALERT_LOG_NAME = re.compile(r"^alert_(?P<sid>[^/\\]+)\.log$", re.IGNORECASE)


#: the sides of a remote write (the roles that carry messages)
SIDES = (Role.PRIMARY, Role.STANDBY)


class Component(StrEnum):
    """A part of a write's total time; a write's verdict names its largest component."""

    NETWORK = "network"
    RFS_IO = "rfs_io"
    RFS_OTHER = "rfs_other"

    @property
    def column(self) -> str:
        """Its column in the writes table (milliseconds)."""
        return f"{self.value}_ms"

    @property
    def label(self) -> str:
        """How a sentence names it."""
        return _LABELS[self]


_LABELS = {
    Component.NETWORK: "network",
    Component.RFS_IO: "standby I/O (RFS write)",
    Component.RFS_OTHER: "other RFS time",
}
#: the components in the order reports list them (a tie of the verdict goes to the first)
COMPONENTS = tuple(Component)
#: what the statistics describe, in report order: the total, its components, and RFS time
MEASURES = ("total", *COMPONENTS, "rfs")
#: the total and its components (histograms, per-minute series, plots)
TOTAL_AND_COMPONENTS = ("total", *COMPONENTS)


def ms_column(measure: str) -> str:
    """The writes-table column of a measure (`total` -> `total_ms`)."""
    return f"{measure}_ms"


class Transport(StrEnum):
    """How a destination acknowledges the redo it receives (a link's transport)."""

    #: SYNC AFFIRM: the ack waits for the standby redo log write (standby I/O is in the commit path)
    SYNC = "SYNC"
    #: SYNC NOAFFIRM (Fast Sync, 12c+): the ack comes once the redo is received, the write follows
    FASTSYNC = "FASTSYNC"
    #: ASYNC: the sender ships redo after the commit; none of it is in the commit path
    ASYNC = "ASYNC"

    @property
    def commit_path(self) -> bool:
        """Its remote writes are waited for by commits (SYNC and Fast Sync)."""
        return self is not Transport.ASYNC


class Duty(StrEnum):
    """What a process does in redo transport, as its name (or its messages) tells."""

    #: ships redo: NSSn, NSAn, LNSn, TTnn, or LGWR itself (LGWR SYNC of old releases)
    SENDER = "sender"
    #: receives redo on a standby or far sync instance: RFS
    RECEIVER = "receiver"
    #: the log writer (LGWR, LGnn): long-write warnings, no messages
    LOG_WRITER = "log_writer"
    OTHER = "other"


class Decider(StrEnum):
    """The evidence that decided which sender a receiver's trace belongs to (strongest first)."""

    #: the RFS session's `MODULE NAME:(oracle@<host> (<process>))` names its client
    CLIENT_MODULE = "client module"
    #: the sending database's LOG_ARCHIVE_DEST_n names the receiver (DB_UNIQUE_NAME=)
    DESTINATION = "destination parameter"
    #: the writes of one candidate match the receiver's consistently (one clock offset), the others' do not
    MATCH_RATE = "match rate"
    #: the receiver's db_unique_name extends exactly one sending database's name (salesdr, sales)
    NAMES = "names"
    #: one sender is left (often the only one in the input)
    ONLY_CANDIDATE = "only candidate"
    #: several senders fit and nothing tells them apart: the receiver is matched with none
    AMBIGUOUS = "ambiguous"
    #: no sender trace in the input (or no receiver for a sender)
    NONE = "none"


#: the RFS wait events that are standby I/O (class System I/O)
RFS_IO_EVENTS = ("RFS write", "RFS random i/o", "RFS sequential i/o")
