"""What an ORA- error of an alert log means for redo transport: the class of each code the alert
grammar reads (`grammars/alert.lark`, rule `transport_error`), from the message Oracle documents for it
(Database Error Messages, https://docs.oracle.com/en/error-help/db/ora-NNNNN).

- `transport`: redo could not be sent or acknowledged (the network, the connection, the standby's
  receiving side): these make a SYNC destination drop out of the commit path or stall it;
- `apply`: the standby's recovery (MRP) stopped or cannot go on: no effect on the commit path;
- `archiving`: a log could not be archived locally (no destination left, the recovery area full);
- `operator`: an administrator asked for it (a cancelled recovery): a fact, not a fault.

A code not listed is `other` (its line stays an alert event, with its text).
"""

from __future__ import annotations

from enum import StrEnum


class ErrorClass(StrEnum):
    """What an ORA- error says went wrong (the alert event's kind is `<class>_error`, `operator_action`)."""

    TRANSPORT = "transport"
    APPLY = "apply"
    ARCHIVING = "archiving"
    OPERATOR = "operator"
    OTHER = "other"

    @property
    def event(self) -> str:
        """The alert event kind of an error of this class."""
        return "operator_action" if self is ErrorClass.OPERATOR else f"{self.value}_error"


#: code -> (class, the documented message in short)
CODES: dict[str, tuple[ErrorClass, str]] = {
    # the connection to the standby: Oracle Net and the session
    "ORA-03113": (ErrorClass.TRANSPORT, "end-of-file on communication channel"),
    "ORA-03114": (ErrorClass.TRANSPORT, "not connected to ORACLE"),
    "ORA-03135": (ErrorClass.TRANSPORT, "connection lost contact"),
    # redo transport
    "ORA-16009": (ErrorClass.TRANSPORT, "invalid redo transport destination"),
    "ORA-16040": (ErrorClass.TRANSPORT, "destination archive log file is locked"),
    "ORA-16047": (ErrorClass.TRANSPORT, "DGID mismatch between destination setting and target database"),
    "ORA-16055": (ErrorClass.TRANSPORT, "FAL request rejected"),
    "ORA-16057": (ErrorClass.TRANSPORT, "DGID from server not in Data Guard configuration"),
    "ORA-16058": (ErrorClass.TRANSPORT, "standby database instance is not mounted"),
    "ORA-16072": (ErrorClass.TRANSPORT, "a minimum of one standby database destination is required"),
    "ORA-16086": (ErrorClass.TRANSPORT, "redo data cannot be written to the standby redo log"),
    "ORA-16191": (ErrorClass.TRANSPORT, "primary log shipping client not logged on standby"),
    "ORA-16198": (ErrorClass.TRANSPORT, "timeout incurred on internal channel during remote archival"),
    "ORA-16401": (ErrorClass.TRANSPORT, "archive log rejected by Remote File Server (RFS)"),
    # the standby's recovery
    "ORA-16004": (ErrorClass.APPLY, "backup database requires recovery"),
    "ORA-16016": (ErrorClass.APPLY, "archived log unavailable"),
    "ORA-16043": (ErrorClass.APPLY, "Redo Apply has been canceled"),
    "ORA-16136": (ErrorClass.APPLY, "managed standby recovery not active"),
    "ORA-16766": (ErrorClass.APPLY, "Redo Apply is stopped"),
    # local archiving
    "ORA-16014": (ErrorClass.ARCHIVING, "log not archived, no available destinations"),
    "ORA-16038": (ErrorClass.ARCHIVING, "log cannot be archived"),
    "ORA-16145": (ErrorClass.ARCHIVING, "archival in progress"),
    # an administrator's request
    "ORA-16037": (ErrorClass.OPERATOR, "user requested cancel of managed recovery operation"),
}


def error_class(code: str | None) -> ErrorClass:
    """The class of an ORA- code (`ORA-16198`); Oracle Net's `ORA-12xxx` errors are transport; a line
    without a code (`Destination LOG_ARCHIVE_DEST_2 is UNSYNCHRONIZED`, `Error 12541 received logging
    on to the standby`) is a transport message by the grammar's own shapes."""
    if code is None:
        return ErrorClass.TRANSPORT
    found = CODES.get(code.upper())
    if found is not None:
        return found[0]
    return ErrorClass.TRANSPORT if code.upper().startswith("ORA-12") else ErrorClass.OTHER


#: every alert event kind an error line can have
ERROR_EVENTS = tuple(c.event for c in ErrorClass)
