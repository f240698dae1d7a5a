"""Grammar stage: cached lark parsers for grammars/*.lark and the records they produce.

The grammars are the specification of every line shape we read. Each family has one LALR
parser with an inline Transformer, so parsing a line yields a frozen record and no tree. The
hot shapes also have a vectorised fast path (`analyzer.parse.families`) that is tested to agree with
these parsers on every golden case.
"""

from __future__ import annotations

import functools
import re
from enum import StrEnum
from pathlib import Path
from typing import Any

from lark import Lark, Token, Transformer, UnexpectedInput, UnexpectedToken
from lark.exceptions import VisitError

from analyzer.base.oracodes import error_class
from analyzer.base.vocab import MessageKind
from analyzer.parse import tables
from analyzer.parse.records import (
    MAX_LGWR,
    MAX_MICROS,
    MAX_OFFSET_MIN,
    YEARS,
    AdrStamp,
    AlertEvent,
    FileMarker,
    HeaderLine,
    KrsStamp,
    LgwrLine,
    LineError,
    Message,
    Record,
    SessionLine,
    Wait,
    check,
    parse_iso,
    parse_local,
)

__all__ = [
    "ALERT_LINE",
    "LGWR_PREFIXES",
    "MAX_LGWR",
    "MAX_MICROS",
    "MAX_OFFSET_MIN",
    "MESSAGE_PREFIXES",
    "YEARS",
    "AdrStamp",
    "AlertEvent",
    "Family",
    "FileMarker",
    "HeaderLine",
    "KrsStamp",
    "LgwrLine",
    "LineError",
    "Message",
    "Record",
    "SessionLine",
    "Wait",
    "cache_dir",
    "cache_file",
    "check",
    "describe",
    "grammar_dir",
    "grammar_path",
    "parse_iso",
    "parse_line",
    "parse_local",
    "parser",
]


class Family(StrEnum):
    """Line families, one grammar file each."""

    TRANSPORT = "transport"
    STAMPS = "stamps"
    WAIT = "wait"
    LGWR = "lgwr"
    HEADER = "header"
    ALERT = "alert"


#: the four event-16410 message texts, by kind (grammars/transport.lark; a test parses each)
MESSAGE_PREFIXES = {
    MessageKind.CLIENT_SEND: "Client sending SQLNET request data",
    MessageKind.CLIENT_RECV: "Client received SQLNET call",
    MessageKind.SERVER_RECV: "Server received SQLNET data",
    MessageKind.SERVER_DONE: "Server finished processing SQLNET data",
}
#: literal starts of log writer lines (grammars/lgwr.lark)
LGWR_PREFIXES = ("Warning: log write ", "kcrfw_alfs_update_mode:", "Log file sync switching to ")
#: the alert-log lines the alert grammar reads (grammars/alert.lark), one alternative per shape; the
#: others are ignored. A transport error names a destination with a word of failure, or is an ORA- error
#: of Data Guard (16xxx), Oracle Net (12xxx) or a lost connection (03113, 03114, 03135)
_FAILURE = r"(?i:error|fail|time ?out|timed out|hung|reconnect|unsynchronized|abandon|terminat|disconnect|unable)"
_DESTINATION = r"(?:LOG_ARCHIVE_DEST_[0-9]+|LAD:[0-9]+)"
ALERT_LINE = "|".join(
    [
        r"^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}",
        r"^[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2}(?:\.[0-9]+)? [+-][0-9]{2}:[0-9]{2}$",
        r"^(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun) (?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) [ 0-9][0-9] [0-9]{2}:",
        r"advanced to log sequence",
        r"SRL selected for |Standby redo logfile selected for ",
        r": Selected (?:log |LNO:)",
        r"Assigned to RFS process |Identified database type as ",
        r"(?:Primary|Standby) database is in ",
        rf"{_DESTINATION}.*{_FAILURE}|{_FAILURE}.*{_DESTINATION}",
        r"(?:^|: )ORA-(?:16[0-9]{3}|12[0-9]{3}|0311[34]|03135)",
        r": Error [0-9]+ received logging on to the standby",
        r"^[ \t]+[A-Za-z_][A-Za-z0-9_#$]*[ \t]*=",
        r"^(?i:alter system set )",
        r"^Oracle .*Release [0-9]",
        r"^Version [0-9]",
        r"^Node name:",
        r"^Starting ORACLE instance",
    ]
)


# ---------------------------------------------------------------------------- transformers
class _Base(Transformer[Token, Record]):
    def start(self, children: list[Record]) -> Record:
        return children[0]


class _Transport(_Base):
    def message(self, c: list[Any]) -> Message:
        kind, func, *rest = c
        oper = str(rest[0]) if len(rest) == 5 else ""
        flag, thread, seq, msgid = rest[-4:]
        return Message(kind, str(func), oper, str(flag), int(thread), int(seq), int(msgid))

    def client_send(self, _: list[Any]) -> MessageKind:
        return MessageKind.CLIENT_SEND

    def client_recv(self, _: list[Any]) -> MessageKind:
        return MessageKind.CLIENT_RECV

    def server_recv(self, _: list[Any]) -> MessageKind:
        return MessageKind.SERVER_RECV

    def server_done(self, _: list[Any]) -> MessageKind:
        return MessageKind.SERVER_DONE


class _Stamps(_Base):
    def adr_local(self, c: list[Token]) -> AdrStamp:
        local, digits = parse_local(c[0], c[1])
        return AdrStamp(local, digits, None, None)

    def adr_iso(self, c: list[Token]) -> AdrStamp:
        local, digits, offset = parse_iso(c[0])
        return AdrStamp(local, digits, offset, str(c[1])[1:-1] if len(c) > 1 else None)

    def krs_stamp(self, c: list[Token]) -> KrsStamp:
        local, digits = parse_local(c[0], c[1])
        first, second = c[2], c[3]
        line, src = (first, second) if first.type == "INT" else (second, first)
        return KrsStamp(local, digits, str(src), int(line))

    def session_line(self, c: list[Token]) -> SessionLine:
        key, value = str(c[0]), str(c[1])[1:-1]
        if c[2].type == "ISO_TS":
            local, digits, offset = parse_iso(c[2])
            return SessionLine(key, value, local, digits, offset)
        local, digits = parse_local(c[2], c[3])
        return SessionLine(key, value, local, digits, None)

    def continued(self, c: list[Token]) -> FileMarker:
        return FileMarker("continued", str(c[0]))

    def continues(self, c: list[Token]) -> FileMarker:
        return FileMarker("continues", str(c[0]))

    def recreated(self, _: list[Token]) -> FileMarker:
        return FileMarker("recreated", None)

    def process(self, c: list[Token]) -> FileMarker:
        return FileMarker("process", None, int(c[1]))


class _Wait(_Base):
    def wait(self, c: list[Any]) -> Wait:
        cursor, *rest = c
        event = str(rest[0]) if len(rest) == 4 else ""
        ela, params, tim = rest[-3:]
        return Wait(int(cursor), event, check("ela", int(ela), MAX_MICROS), params, check("tim", int(tim), MAX_MICROS))

    def params(self, c: list[str]) -> str:
        return " ".join(c)

    def param(self, c: list[Token]) -> str:
        return f"{c[0].lstrip()}={c[1]}"


class _Lgwr(_Base):
    def log_write(self, c: list[Token]) -> LgwrLine:
        return LgwrLine("log_write", check("elapsed", int(c[0]), MAX_LGWR), check("size", int(c[1]), MAX_LGWR), None)

    def broadcast_wait(self, c: list[Token]) -> LgwrLine:
        elapsed = check("elapsed", int(c[0]), MAX_LGWR)
        return LgwrLine("broadcast_wait", elapsed, None, str(c[1]) if len(c) > 1 else None)

    def alfs_update(self, c: list[Token]) -> LgwrLine:
        detail = f"{c[0]}->{c[1]}" + (f" {str(c[2]).strip()}" if len(c) > 2 else "")
        return LgwrLine("alfs_update", None, None, detail)

    def sync_switch(self, c: list[Token]) -> LgwrLine:
        return LgwrLine("sync_switch", None, None, str(c[0]))


class _Header(_Base):
    def trace_file(self, c: list[Token]) -> HeaderLine:
        return HeaderLine("trace_file", "Trace file", str(c[0]).strip())

    def banner(self, c: list[Token]) -> HeaderLine:
        return HeaderLine("banner", "banner", str(c[0]).strip())

    def banner_more(self, c: list[Token]) -> HeaderLine:
        return HeaderLine("banner_more", "banner", str(c[0]).strip())

    def version(self, c: list[Token]) -> HeaderLine:
        return HeaderLine("version", "Version", str(c[0]))

    def process(self, c: list[Token]) -> HeaderLine:
        ints = [str(t) for t in c if t.type == "INT"]
        image = next((str(t).strip() for t in c if t.type == "IMAGE"), "")
        return HeaderLine("process", str(c[0]), f"{ints[0]}|{image}")

    def field(self, c: list[Token]) -> HeaderLine:
        return HeaderLine("field", str(c[0]).strip(), str(c[1]).strip() if len(c) > 1 else "")

    def os_line(self, c: list[Token]) -> HeaderLine:
        return HeaderLine("os_line", "OS", str(c[0]).strip())


_PREFIX = re.compile(r"(?P<name>[A-Za-z][A-Za-z0-9_]*)(?:\[\d+\])?(?: \(PID:(?P<pid>\d+)\))?: ")
_DEST = re.compile(r"LOG_ARCHIVE_DEST_(\d+)|LAD:(\d+)")
_T_S = re.compile(r"T-(\d+)\.S-(\d+)")
_MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]


def _of(c: list[Token], *types: str) -> list[str]:
    return [str(t) for t in c if t.type in types]


class _Alert(_Base):
    """Alert-log lines: each rule reads the tokens it has by type (a prefix, numbers, the tail)."""

    @staticmethod
    def _event(kind: str, c: list[Token], **fields: int | str | None) -> AlertEvent:
        """An AlertEvent with the process and pid of its prefixes and the message's tail as detail."""
        prefixes = [m for t in _of(c, "PREFIX") if (m := _PREFIX.fullmatch(t.lstrip()))]
        process = next((m["name"].upper() for m in prefixes if m["pid"] or m["name"].isupper()), None)
        pid = next((int(m["pid"]) for m in prefixes if m["pid"]), None)
        tail = " ".join(t.strip() for t in _of(c, "REST", "QUOTED", "TRANSPORT_TEXT")) or None
        values: dict[str, int | str | None] = {"process": process, "pid": pid, "detail": tail, **fields}
        return AlertEvent(kind, **values)  # type: ignore[arg-type]

    @staticmethod
    def _thread_seq(c: list[Token], ints: list[int]) -> tuple[int, int]:
        pair = next((m for t in _of(c, "T_S") if (m := _T_S.fullmatch(t))), None)
        return (int(pair[1]), int(pair[2])) if pair else (ints[0], ints[1])

    def time_iso(self, c: list[Token]) -> AdrStamp:
        local, digits, offset = parse_iso(c[0])
        return AdrStamp(local, digits, offset, None)

    def time_adrci(self, c: list[Token]) -> AdrStamp:
        date, clock, zone = str(c[0]).split()
        local, digits, offset = parse_iso(f"{date}T{clock}{zone}")
        return AdrStamp(local, digits, offset, None)

    def time_ctime(self, c: list[Token]) -> AdrStamp:
        _, month, day, clock, year = str(c[0]).split()
        local, _ = parse_local(f"{year}-{_MONTHS.index(month) + 1:02d}-{int(day):02d}", clock)
        return AdrStamp(local, 0, None, None)

    def log_switch(self, c: list[Token]) -> AlertEvent:
        thread, seq = (int(t) for t in _of(c, "INT"))
        return self._event("log_switch", c, thread=thread, seq=seq)

    def srl_selected(self, c: list[Token]) -> AlertEvent:
        ints = [int(t) for t in _of(c, "INT")]
        named = _of(c, "DEST")
        thread, seq = self._thread_seq(c, ints)
        dest = int(named[0].rsplit("_", 1)[1]) if named else ints[-1]
        return self._event("srl_selected", c, thread=thread, seq=seq, dest=dest)

    def rfs_selected(self, c: list[Token]) -> AlertEvent:
        log, *ints = (int(t) for t in _of(c, "INT"))
        thread, seq = self._thread_seq(c, ints)
        return self._event("rfs_selected", c, thread=thread, seq=seq, log=log)

    def rfs_attach(self, c: list[Token]) -> AlertEvent:
        ints = _of(c, "INT")  # `Assigned to RFS process <pid>`; 12.2+ names the pid in the prefix
        if ints:
            return self._event("rfs_attach", c, pid=int(ints[0]))
        told = "".join(_of(c, "QUOTED") + [" " * (not t.startswith(":")) + t.strip() for t in _of(c, "REST")])
        return self._event("rfs_attach", c, detail=told)

    def protection(self, c: list[Token]) -> AlertEvent:
        return self._event("protection", c, key=_of(c, "DB_ROLE")[0], detail=_of(c, "MODE")[0])

    def transport_error(self, c: list[Token]) -> AlertEvent:
        code = _of(c, "ORA")
        found = _DEST.search(" ".join(_of(c, "TRANSPORT_TEXT", "REST")))
        dest = int(found[1] or found[2]) if found else None
        kind = error_class(code[0] if code else None).event
        return self._event(kind, c, dest=dest, key=code[0] if code else None)

    def parameter(self, c: list[Token]) -> AlertEvent:
        value = _of(c, "VALUE")
        return AlertEvent("parameter", key=str(c[0]).strip().lower(), detail=value[0].strip() if value else "")

    def parameter_change(self, c: list[Token]) -> AlertEvent:
        return AlertEvent("parameter_change", key=_of(c, "NAME")[0].lower(), detail=_of(c, "SET_VALUE")[0])

    def startup(self, c: list[Token]) -> AlertEvent:
        return self._event("startup", c)

    def banner(self, c: list[Token]) -> HeaderLine:
        return HeaderLine("banner", "banner", str(c[0]).strip())

    def version(self, c: list[Token]) -> HeaderLine:
        return HeaderLine("version", "Version", str(c[0]).rstrip("."))

    def node(self, c: list[Token]) -> HeaderLine:
        return HeaderLine("field", "Node name", str(c[0]).strip() if c else "")


_TRANSFORMERS: dict[Family, type[_Base]] = {
    Family.TRANSPORT: _Transport,
    Family.STAMPS: _Stamps,
    Family.WAIT: _Wait,
    Family.LGWR: _Lgwr,
    Family.HEADER: _Header,
    Family.ALERT: _Alert,
}


def grammar_dir() -> Path:
    """Where the .lark files are: inside the installed wheel (analyzer/grammars), or grammars/ in a checkout."""
    package = Path(__file__).resolve().parent.parent  # analyzer/
    for candidate in (package / "grammars", package.parent / "grammars"):
        if (candidate / "transport.lark").is_file():
            return candidate
    raise FileNotFoundError(f"grammars not found next to {package}")  # broken installation


def grammar_path(family: Family) -> Path:
    """Path of one family's grammar file."""
    return grammar_dir() / f"{family.value}.lark"


@functools.cache
def parser(family: Family, *, strict: bool = False) -> Lark:
    """The cached LALR parser of one family, transforming inline (no tree is built).

    Its tables are kept between runs as JSON in a private per-user folder, never as a pickle and
    never where another user could write (`analyzer.parse.tables`, docs/security.md).
    """
    text = grammar_path(family).read_text(encoding="utf-8")
    if strict:
        return Lark(text, parser="lalr", transformer=_TRANSFORMERS[family](), strict=True)
    return tables.load_or_build(family.value, text, _TRANSFORMERS[family]())


def cache_dir() -> Path | None:
    """The private folder the parsers' tables are kept in, or None (`analyzer.parse.tables.cache_dir`)."""
    return tables.cache_dir()


def cache_file(family: Family, text: str) -> str | None:
    """The tables file of one grammar, or None (`analyzer.parse.tables.cache_file`)."""
    return tables.cache_file(family.value, text)


def parse_line(family: Family, text: str) -> Record:
    """Parse one line with its family's grammar.

    Raises:
        LineError: the grammar rejects the line; the message says where and why.
    """
    try:
        result = parser(family).parse(text.rstrip())
    except UnexpectedInput as err:
        raise LineError(describe(err, text)) from None
    except VisitError as err:  # pragma: no cover - only raised by tree transformers
        raise LineError(f"{family.value}: {err.orig_exc}") from None
    except ValueError as err:  # the inline transformer rejected a grammatical line (2014-13-45)
        raise LineError(f"invalid value: {err}") from None
    if not isinstance(result, Record):
        raise LineError(f"{family.value}: unexpected parse result")  # pragma: no cover
    for name in result.__slots__:  # every number fits the tables' 64-bit integers
        value = getattr(result, name)
        if isinstance(value, int) and not -(2**63) <= value < 2**63:
            raise LineError(f"number out of range: {name}={value}")
    return result


def describe(err: UnexpectedInput, text: str) -> str:
    """Where and why lark rejected a line, in words (`line ends early ...`, `unexpected 'x' at column 7`)."""
    if isinstance(err, UnexpectedToken) and err.token.type == "$END":
        return f"line ends early (after column {len(text.rstrip())})"
    col = getattr(err, "column", "?")
    got = text[err.pos_in_stream : err.pos_in_stream + 12] if err.pos_in_stream is not None else ""
    if not got:
        return f"line ends early (column {col})"
    return f"unexpected {got!r} at column {col}"
