"""Grammar stage: cached lark parsers for grammars/*.lark and the records they produce.

The grammars are the specification of every line shape we read. Each family has one LALR
parser with an inline Transformer, so parsing a line yields a frozen record and no tree. The
hot shapes also have a vectorised fast path (`analyzer.parse`) that is tested to agree with
these parsers on every golden case.
"""

from __future__ import annotations

import functools
import hashlib
import os
import re
import stat
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from pathlib import Path
from typing import Any

from lark import Lark, Token, Transformer, UnexpectedInput, UnexpectedToken
from lark import __version__ as lark_version
from lark.exceptions import VisitError


class Family(StrEnum):
    """Line families, one grammar file each."""

    TRANSPORT = "transport"
    STAMPS = "stamps"
    WAIT = "wait"
    LGWR = "lgwr"
    HEADER = "header"


#: the four event-16410 message texts, by kind (grammars/transport.lark; a test parses each)
MESSAGE_PREFIXES = {
    "client_send": "Client sending SQLNET request data",
    "client_recv": "Client received SQLNET call",
    "server_recv": "Server received SQLNET data",
    "server_done": "Server finished processing SQLNET data",
}
#: literal starts of log writer lines (grammars/lgwr.lark)
LGWR_PREFIXES = ("Warning: log write ", "kcrfw_alfs_update_mode:", "Log file sync switching to ")


# ---------------------------------------------------------------------------- records
@dataclass(frozen=True, slots=True)
class Message:
    """An event-16410 message (`kind` is client_send, client_recv, server_recv, server_done)."""

    kind: str
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


Record = Message | KrsStamp | AdrStamp | SessionLine | FileMarker | Wait | LgwrLine | HeaderLine


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

    def client_send(self, _: list[Any]) -> str:
        return "client_send"

    def client_recv(self, _: list[Any]) -> str:
        return "client_recv"

    def server_recv(self, _: list[Any]) -> str:
        return "server_recv"

    def server_done(self, _: list[Any]) -> str:
        return "server_done"


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


_TRANSFORMERS: dict[Family, type[_Base]] = {
    Family.TRANSPORT: _Transport,
    Family.STAMPS: _Stamps,
    Family.WAIT: _Wait,
    Family.LGWR: _Lgwr,
    Family.HEADER: _Header,
}


def grammar_dir() -> Path:
    """Where the .lark files are: inside the installed wheel (analyzer/grammars), or grammars/ in a checkout."""
    here = Path(__file__).resolve().parent
    for candidate in (here / "grammars", here.parent / "grammars"):
        if (candidate / "transport.lark").is_file():
            return candidate
    raise FileNotFoundError(f"grammars not found next to {here}")  # broken installation


def grammar_path(family: Family) -> Path:
    """Path of one family's grammar file."""
    return grammar_dir() / f"{family.value}.lark"


@functools.cache
def parser(family: Family, *, strict: bool = False) -> Lark:
    """The cached LALR parser of one family, transforming inline (no tree is built).

    lark can keep the built LALR tables in a file (~0.2 s saved per process). It unpickles that
    file, so the file must be one nobody else can write: a private per-user cache directory
    (`cache_file`), never the shared temporary folder lark would use by default. Without such a
    directory the tables are built every time.
    """
    text = grammar_path(family).read_text(encoding="utf-8")
    cache = False if strict else cache_file(family, text)
    return Lark(text, parser="lalr", transformer=_TRANSFORMERS[family](), strict=strict, cache=cache or False)


def cache_dir() -> Path | None:
    """`$XDG_CACHE_HOME/dgtrace` (else `~/.cache/dgtrace`), created mode 0700, when it is this user's
    own directory that no other user can write to; else None (no cache)."""
    getuid = getattr(os, "getuid", None)
    if getuid is None:  # no POSIX owners to check (Windows): build the tables every time
        return None
    try:
        base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
        directory = base / "dgtrace"
        directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        info = directory.lstat()
    except (OSError, RuntimeError):  # no home, read-only home: no cache
        return None
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != getuid() or info.st_mode & 0o022:
        return None
    return directory


def cache_file(family: Family, text: str) -> str | None:
    """The parser-table cache file of one grammar (named by lark's version and the grammar's hash),
    or None when there is no private cache directory or the file there is not a regular file of ours."""
    directory = cache_dir()
    if directory is None:
        return None
    digest = hashlib.sha256(f"{lark_version}\0{text}".encode()).hexdigest()[:24]
    path = directory / f"{family.value}-{digest}.lark-tables"
    try:
        info = path.lstat()
    except FileNotFoundError:
        return str(path)
    except OSError:
        return None
    ours = stat.S_ISREG(info.st_mode) and info.st_uid == os.getuid() and not info.st_mode & 0o022
    return str(path) if ours else None


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
