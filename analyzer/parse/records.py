"""The records the line grammars yield (one per parsed line), the ranges their numbers must keep, and
the time helpers their transformers share (`analyzer.parse.grammar` builds them from lark's tokens)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime

from analyzer.base.vocab import MessageKind


# ---------------------------------------------------------------------------- records
@dataclass(frozen=True, slots=True)
class Message:
    """An event-16410 message (`kind`: which of the four texts, `vocab.MessageKind`)."""

    kind: MessageKind
    func: str
    oper: str
    flag: str
    thread: int
    seq: int
    msgid: int


@dataclass(frozen=True, slots=True)
class KrsStamp:
    """A redo-transport stamp: naive local time plus the C source location that wrote it."""

    local: datetime
    digits: int
    src_file: str
    src_line: int


@dataclass(frozen=True, slots=True)
class AdrStamp:
    """An ADR wall-clock line; `utc_offset_min` only for the 12.2+ ISO form."""

    local: datetime
    digits: int
    utc_offset_min: int | None
    container: str | None


@dataclass(frozen=True, slots=True)
class SessionLine:
    """A session-block line such as `*** SESSION ID:(9.1) <timestamp>`."""

    key: str
    value: str
    local: datetime
    digits: int
    utc_offset_min: int | None


@dataclass(frozen=True, slots=True)
class FileMarker:
    """A line about the file itself: `continued` (`*** TRACE CONTINUED FROM FILE <path> ***`),
    `continues` (`*** TRACE CONTINUES IN FILE <path> ***`), `recreated` (`*** TRACE FILE RECREATED
    ... ***`) or `process` (trcsess's `*** [ Unix process pid: <pid> ]`)."""

    marker: str
    path: str | None
    pid: int | None = None


@dataclass(frozen=True, slots=True)
class Wait:
    """A 10046 WAIT line; `tim` is the wait's end time in the trace's own clock."""

    cursor: int
    event: str
    ela_us: int
    params: str
    tim: int


@dataclass(frozen=True, slots=True)
class LgwrLine:
    """A log writer line: `log_write`, `broadcast_wait`, `alfs_update` or `sync_switch`."""

    kind: str
    elapsed_ms: int | None
    size_kb: int | None
    detail: str | None


@dataclass(frozen=True, slots=True)
class HeaderLine:
    """One trace-header line: `kind` is the grammar rule, `key`/`value` its content."""

    kind: str
    key: str
    value: str


@dataclass(frozen=True, slots=True)
class AlertEvent:
    """An alert-log entry: `kind` is the grammar rule (log_switch, srl_selected, rfs_selected, rfs_attach,
    protection, parameter, parameter_change, startup; an error line's kind is its ORA- code's class,
    `base.oracodes`: transport_error, apply_error, archiving_error, operator_action, other_error).
    `process` and `pid` come from its prefix (`NSS2 (PID:4401): `; `pid` is the RFS pid of `Assigned to RFS
    process N`); `log` is the standby redo log RFS selected; `key` a parameter name, an ORA- code or the
    database role; `detail` the rest (a parameter's value, the protection mode)."""

    kind: str
    process: str | None = None
    pid: int | None = None
    thread: int | None = None
    seq: int | None = None
    dest: int | None = None
    log: int | None = None
    key: str | None = None
    detail: str | None = None


Record = Message | KrsStamp | AdrStamp | SessionLine | FileMarker | Wait | LgwrLine | HeaderLine | AlertEvent


class LineError(ValueError):
    """A line of a known family that its grammar rejects; the message is the reason."""


# ---------------------------------------------------------------------------- value ranges
# A number beyond these is a corrupt line (unparsed, with the reason), not a value to compute with:
# times and durations become UTC instants and durations further on, which must not overflow.
#: years of a stamp
YEARS = (1900, 2999)
#: `tim` and `ela` of a WAIT line (µs): 2^53 µs is 285 years, and exact in floating point
MAX_MICROS = 2**53
#: milliseconds and kilobytes of a log writer line (2^40 ms is 35 years)
MAX_LGWR = 2**40
#: a UTC offset, in minutes (UTC-12:00 to UTC+14:00 are the zones in use)
MAX_OFFSET_MIN = 14 * 60


def check(name: str, value: int, limit: int) -> int:
    """`value` when 0 <= value < limit; else ValueError naming the field (the line is unparsed)."""
    if not 0 <= value < limit:
        raise ValueError(f"{name}={value} out of range")
    return value


# ---------------------------------------------------------------------------- time helpers
def parse_local(date: str, time: str) -> tuple[datetime, int]:
    """Parse `YYYY-MM-DD` and `HH:MM:SS.fff[fff]` into a naive datetime and its digit count."""
    whole, _, frac = time.partition(".")
    micro = int((frac + "000000")[:6]) if frac else 0
    parsed = datetime.strptime(f"{date} {whole}", "%Y-%m-%d %H:%M:%S")
    if not YEARS[0] <= parsed.year <= YEARS[1]:
        raise ValueError(f"year {parsed.year} out of range ({YEARS[0]}-{YEARS[1]})")
    return parsed.replace(microsecond=micro), min(len(frac), 6)


_ZONE = re.compile(r"(Z|([+-])(\d\d):?(\d\d))$")


def parse_iso(text: str) -> tuple[datetime, int, int | None]:
    """Parse an ADR ISO timestamp into naive local time, digit count and UTC offset (minutes; None
    when the stamp has no zone)."""
    zone = _ZONE.search(text)
    offset: int | None = None
    if zone is not None:
        sign = -1 if zone[2] == "-" else 1
        offset = 0 if zone[1] == "Z" else sign * (int(zone[3]) * 60 + int(zone[4]))
        if zone[1] != "Z" and (int(zone[4]) >= 60 or abs(offset) > MAX_OFFSET_MIN):
            raise ValueError(f"UTC offset {zone[1]} out of range")
        text = text[: zone.start()]
    date, _, time = text.partition("T")
    local, digits = parse_local(date, time)
    return local, digits, offset
