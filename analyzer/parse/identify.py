"""What a trace file is: role, process, instance, host, thread, version, database (from its own evidence).

Taken from the header when there is one, else from the file name, else from the content (a
file trimmed by TFA has no header, but its `Server received` lines make it RFS).

`FileIdentity` is what the file's path and head (header and first session block) tell alone,
before the rest is read: its database (db_unique_name), instance, host and process, and for a
receiver the client its session names. `analyzer.match.links` groups files into Data Guard
configurations and decides who sends to whom from these identities.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime

import polars as pl

from analyzer.base.errors import AnalyzerError
from analyzer.base.schemas import LINES
from analyzer.base.vocab import ALERT_LOG_NAME, CLIENT_KINDS, SERVER_KINDS, Duty, FileKind, Role, Transport
from analyzer.inputs.sources import Source
from analyzer.parse.families import parse_chunk, parse_files
from analyzer.parse.lines import ReadStats, read_lines

#: process name -> role (primary senders and log writers; standby receivers)
PRIMARY_PROCESSES = re.compile(r"^(LGWR|LG\d\d|NSS\d+|NSA\d+|LNS\d*|TT\d\d)$")
STANDBY_PROCESSES = re.compile(r"^(RFS)$")
#: `<sid>_<pname>_<pid>[_<identifier>].trc`
_NAME = re.compile(
    r"^(?P<sid>.+?)_(?P<pname>lgwr|lg\d\d|nss\d+|nsa\d+|lns\d*|tt\d\d|rfs|arc\d+|ora|[a-z]{3,4}\d?)_(?P<pid>\d+)(?:_[^.]*)?\.trc$",
    re.IGNORECASE,
)
#: `[.../<host>[/<YYYY-MM-DD>...]]/diag/rdbms/<db>/<sid>/trace/<file>`: the ADR layout, in a path, an archive
#: member's name (after `!`) or the `Trace file` line; inside TFA collections the folder above `diag`
#: names the host, and archive shares keep a copy of the trace directory per day (`2024-10-22`, `20241022`)
_ADR_PATH = re.compile(
    r"(?:^|[/!\\])(?:(?!\d{4}-?\d\d-?\d\d[/\\])(?P<host>[^/!\\]+)[/\\](?:\d{4}-?\d\d-?\d\d[/\\])*)?"
    r"diag[/\\]rdbms[/\\](?P<db>[^/!\\]+)[/\\](?P<sid>[^/!\\]+)[/\\]trace[/\\]"
)
#: folders above `diag` that are an Oracle base, not a host (`/u01/app/oracle/diag/...`)
NOT_HOSTS = frozenset({"u01", "u02", "app", "oracle", "opt"})
#: senders and receivers by process name; LGWR ships redo itself only in old releases (LGWR SYNC)
SENDER_PROCESSES = re.compile(r"^(NSS\d+|NSA\d+|LNS\d*|TT\d\d)$")
LOG_WRITERS = re.compile(r"^(LGWR|LG\d\d)$")
#: ASYNC transport processes: NSAn (11.2, 12.1) and TTnn (from 12.1); NSSn and LNSn ship SYNC
ASYNC_PROCESSES = re.compile(r"^(NSA\d+|TT\d\d)$")
#: a session-block line: `*** MODULE NAME:(oracle@prim01 (NSS2)) 2024-10-22T16:18:49.116807+00:00`
_SESSION_LINE = re.compile(r"^\*\*\* (?P<key>[A-Z][A-Z_ ]*[A-Z]):\((?P<value>.*)\) (?=\d{4}-\d\d-\d\d)")
#: an RFS session's module names the client that connected: `oracle@<host> (<process>)`
_CLIENT_MODULE = re.compile(r"^\S+@(?P<host>[^\s()]+) \((?P<process>[A-Z][A-Z0-9]{1,5})\)$")
#: head of a file read for its identity: header and first session block fit in far less
HEAD_BYTES = 64 * 1024
#: lines of a file's first chunk searched for its session block
HEAD_LINES = 400
_IMAGE_PROCESS = re.compile(r"\((?P<pname>[A-Z][A-Z0-9]{2,4})\)\s*$")
_RELEASE = re.compile(r"Release (\d+(?:\.\d+){3,4})")


@dataclass(frozen=True)
class FileInfo:
    """What a trace file is; `evidence` says where each fact came from."""

    label: str
    role: Role
    process: str | None
    instance: str | None
    host: str | None
    thread: int | None
    version: str | None
    evidence: str
    #: OS process id (Windows: thread id), from the header or the file name
    pid: int | None = None
    #: a process's trace, or an instance's alert log (by the file name)
    kind: FileKind = FileKind.TRACE


@dataclass(frozen=True)
class _Header:
    """A file's header lines (schema HEADER) as Python values: a few lines, looked up several times
    each, for which one conversion costs less than a polars query per lookup."""

    rows: tuple[tuple[str | None, str | None, str | None], ...]

    @classmethod
    def of(cls, header: pl.DataFrame) -> _Header:
        columns = (header[name].to_list() for name in ("kind", "key", "value"))  # no query, as `select` would be
        return cls(tuple(zip(*columns, strict=True)))

    def value(self, key: str) -> str | None:
        """The value of the first line of `key`."""
        return next((value for _, k, value in self.rows if k == key), None)

    def of_kind(self, kind: str) -> list[str]:
        """The values of the lines of `kind`, in order."""
        return [value for k, _, value in self.rows if k == kind and value is not None]


def _process_from_header(header: _Header) -> str | None:
    proc = header.of_kind("process")
    if not proc:
        return None
    image = proc[0].split("|", 1)[1]
    found = _IMAGE_PROCESS.search(image)
    return found["pname"] if found else None


def _pid(header: _Header) -> int | None:
    proc = header.of_kind("process")
    raw = proc[0].split("|", 1)[0] if proc else ""
    return int(raw) if raw.isdigit() and len(raw) < 19 else None


def _version(header: _Header, latest: bool = False) -> str | None:
    """The release update (`Version 19.22.0.0.0`, 18c+), else the banner's release; `latest`: the last
    one (an alert log prints one at each startup, an upgrade included), else the first."""
    pick = -1 if latest else 0
    version = header.of_kind("version")
    if version:
        return str(version[pick])
    banner = header.of_kind("banner")
    found = _RELEASE.search(banner[pick]) if banner else None
    return found[1] if found else None


def _thread(header: _Header) -> int | None:
    words = (header.value("Redo thread mounted by this instance") or "").split()
    if not words or not words[0].isdigit() or len(words[0]) > 6:  # "1", "0 <none>"; no value, or noise
        return None
    return int(words[0]) or None


def _host(label: str, header: _Header, instance: str | None, evidence: list[str], from_header: str) -> str | None:
    """A file's host: `Node name:`, else the ADR path's host folder, else its instance stands in (evidence noted)."""
    host = header.value("Node name")
    adr_host = adr_location(label)[1]
    if host:
        evidence.append(from_header)
    elif adr_host:
        host = adr_host
        evidence.append("host from ADR path")
    elif instance:
        host = f"instance:{instance}"
        evidence.append("host unknown: instance name stands in")
    return host


def _alert_log(label: str, name: str, header: _Header) -> FileInfo:
    """An instance's alert log: its instance from the name, its host from `Node name:` or the path."""
    found = ALERT_LOG_NAME.match(name)
    instance = found["sid"] if found else None
    evidence = ["alert log by its name"]
    host = _host(label, header, instance, evidence, "host from Node name")
    version = _version(header, latest=True)
    return FileInfo(
        label=label,
        role=Role.OTHER,
        process=None,
        instance=instance,
        host=host,
        thread=None,
        version=version,
        evidence="; ".join(evidence),
        kind=FileKind.ALERT_LOG,
    )


def adr_location(path: str) -> tuple[str | None, str | None]:
    """(db_unique_name in lower case, host) from a path in the ADR layout (`_ADR_PATH`): the host is
    the folder above `diag` (dated folders between them skipped), None when it is an Oracle base
    (NOT_HOSTS) or there is none; (None, None) for a path outside the ADR layout."""
    found = _ADR_PATH.search(path)
    if not found:
        return None, None
    host = found["host"]
    return found["db"].lower(), host if host and host.lower() not in NOT_HOSTS else None


def identify_file(label: str, name: str, header: pl.DataFrame, messages: pl.DataFrame) -> FileInfo:
    """Identify one file from its header lines, its name and its 16410 messages."""
    return _identified(label, name, _Header.of(header), messages)


def _identified(label: str, name: str, header: _Header, messages: pl.DataFrame) -> FileInfo:
    if FileKind.of(name) is FileKind.ALERT_LOG:
        return _alert_log(label, name, header)
    evidence: list[str] = []
    by_name = _NAME.match(name)
    process = _process_from_header(header)
    if process:
        evidence.append("process from header image")
    elif by_name and by_name["pname"].lower() != "ora":
        process = by_name["pname"].upper()
        evidence.append("process from file name")
    kinds = set(messages["kind"].unique().to_list()) if messages.height else set()
    client = bool(kinds & set(CLIENT_KINDS))
    server = bool(kinds & set(SERVER_KINDS))
    if client and server:
        role = Role.UNKNOWN
        evidence.append("both client and server 16410 messages: role unclear")
    elif client or (process and PRIMARY_PROCESSES.match(process)):
        role = Role.PRIMARY
    elif server or (process and STANDBY_PROCESSES.match(process)):
        role = Role.STANDBY
    else:
        role = Role.OTHER
    if (client or server) and not process:
        process = "RFS" if server else "NSS"
        evidence.append("process from content (16410 messages)")
    instance = header.value("Instance name") or (by_name["sid"] if by_name else None)
    host = _host(label, header, instance, evidence, "host from header")
    pid = _pid(header) or (int(by_name["pid"]) if by_name and len(by_name["pid"]) < 19 else None)
    return FileInfo(
        label=label,
        role=role,
        process=process,
        instance=instance,
        host=host,
        thread=_thread(header),
        version=_version(header),
        evidence="; ".join(evidence),
        pid=pid,
    )


# ---------------------------------------------------------------------------- identity before reading
@dataclass(frozen=True)
class FileIdentity:
    """What a file's path and head tell about it, before the rest is read (`identity_from_head`).

    `db` is the db_unique_name in lower case, the name of the ADR directory under diag/rdbms;
    `host` the short host name in lower case. `client_host` / `client_process` are the sender a
    receiver's session names (`MODULE NAME:(oracle@prim01 (NSS2))`). `evidence` says where each
    fact came from.
    """

    label: str
    duty: Duty
    db: str | None = None
    instance: str | None = None
    host: str | None = None
    process: str | None = None
    pid: int | None = None
    client_host: str | None = None
    client_process: str | None = None
    #: `Database role:` of 23.26 headers (PRIMARY, PHYSICAL STANDBY, FAR SYNC ...)
    database_role: str | None = None
    evidence: str = ""

    @property
    def process_transport(self) -> Transport | None:
        """What the sender's name tells of its transport: ASYNC for NSAn / TTnn, SYNC for NSSn / LNSn / LGWR."""
        if self.duty is not Duty.SENDER or not self.process:
            return None
        return Transport.ASYNC if ASYNC_PROCESSES.match(self.process) else Transport.SYNC


def short_host(name: str | None) -> str | None:
    """`prim01.dbnet.example` -> `prim01` (host names compared without their domain, in lower case)."""
    return name.split(".", 1)[0].lower() if name else None


def duty_of(process: str | None) -> Duty:
    """A process's part in redo transport, from its name."""
    if not process:
        return Duty.OTHER
    if SENDER_PROCESSES.match(process):
        return Duty.SENDER
    if LOG_WRITERS.match(process):
        return Duty.LOG_WRITER
    return Duty.RECEIVER if STANDBY_PROCESSES.match(process) else Duty.OTHER


def session_values(texts: Iterable[str]) -> dict[str, str]:
    """The first session block's values (`MODULE NAME` -> `oracle@prim01 (NSS2)`) among a file's first lines."""
    out: dict[str, str] = {}
    for text in texts:
        found = _SESSION_LINE.match(text)
        if found:
            out.setdefault(found["key"], found["value"].strip())
    return out


def _database(label: str, header: _Header) -> tuple[str | None, str]:
    """db_unique_name and where it came from: the 23.26 header line, the `Trace file` path, the file's location."""
    named = header.value("Database unique name")
    if named and named.strip():
        return named.strip().lower(), "db_unique_name from header"
    trace_file = header.of_kind("trace_file")
    db = adr_location(trace_file[0])[0] if trace_file else None
    if db:
        return db, "db_unique_name from the Trace file path"
    db = adr_location(label)[0]
    if db:
        return db, "db_unique_name from the file's ADR location"
    return None, "db_unique_name unknown"


def file_identity(label: str, name: str, header: pl.DataFrame, session: Mapping[str, str]) -> FileIdentity:
    """A file's identity from its label (path), base name, header lines (schema HEADER) and first
    session block (`session_values`); the duty comes from the process name only."""
    lines = _Header.of(header)
    info = _identified(label, name, lines, pl.DataFrame(schema={"kind": pl.String}))
    db, db_evidence = _database(label, lines)
    evidence = [db_evidence]
    duty = duty_of(info.process)
    client = _CLIENT_MODULE.match(session.get("MODULE NAME", "")) if duty is Duty.RECEIVER else None
    if client:
        evidence.append("client from the session's MODULE NAME")
    role = lines.value("Database role")
    host = short_host(None if info.host and info.host.startswith("instance:") else info.host)
    return FileIdentity(
        label=label,
        duty=duty,
        db=db,
        instance=info.instance,
        host=host,
        process=info.process,
        pid=info.pid,
        client_host=short_host(client["host"]) if client else None,
        client_process=client["process"] if client else None,
        database_role=role.strip().upper() if role else None,
        evidence="; ".join(evidence),
    )


def with_content(identity: FileIdentity, info: FileInfo, messages: int) -> FileIdentity:
    """The identity once the file was read: its 16410 messages (`messages` of them; `info.role` says
    which side printed them) tell sender from receiver and outrank the name (a trimmed file without
    header or name, LGWR shipping redo itself in old releases)."""
    if messages and info.role is Role.PRIMARY and identity.duty is not Duty.SENDER:
        return replace(identity, duty=Duty.SENDER, process=identity.process or info.process)
    if messages and info.role is Role.STANDBY and identity.duty is not Duty.RECEIVER:
        return replace(identity, duty=Duty.RECEIVER, process=identity.process or info.process)
    if info.role is Role.UNKNOWN and identity.duty in (Duty.SENDER, Duty.RECEIVER):
        return replace(identity, duty=Duty.OTHER, evidence=identity.evidence + "; role unclear from its messages")
    return identity


def identity_from_head(label: str, name: str, head: Sequence[str]) -> FileIdentity:
    """A file's identity from its first lines (header and first session block) and its path."""
    parsed, _ = parse_chunk(_numbered(head), in_header=False)
    return file_identity(label, name, parsed.tables["header"], session_values(head[:HEAD_LINES]))


def read_identity(source: Source) -> FileIdentity:
    """A source's identity from its first HEAD_BYTES only (what a batch engine needs before reading
    files whole); an unreadable head leaves what the path tells."""
    stats = ReadStats()
    head: list[str] = []
    try:
        with source.opener() as stream:
            for chunk in read_lines(stream, stats, chunk_bytes=HEAD_BYTES):
                head = chunk["text"].to_list()
                break
    except (AnalyzerError, OSError) as err:
        stats.error = str(err)
    identity = identity_from_head(source.label, source.name, head)
    return (
        replace(identity, evidence=f"{identity.evidence}; head unreadable: {stats.error}") if stats.error else identity
    )


# ---------------------------------------------------------------------------- identity from both ends
@dataclass(frozen=True)
class EndsIdentity:
    """What a file's first and last lines tell (`identify_ends`): what it is, and its time span."""

    info: FileInfo
    identity: FileIdentity
    #: its first and last time stamp, as written (no zone)
    first_local: datetime | None
    last_local: datetime | None
    #: the UTC offset of its first ISO ADR line (minutes), None when its stamps carry no zone
    utc_offset_min: int | None


def identify_ends(files: Sequence[tuple[str, str, Sequence[str], Sequence[str]]]) -> list[EndsIdentity]:
    """Each (label, base name, first lines, last lines) file identified from its two ends alone, as
    the analysis identifies it (`identify_file`, `file_identity`), with the span of its stamps (an
    alert log's are its time lines). The ends of all traces are parsed together, and those of all
    alert logs (`parse_files`): a parse costs a few hundred polars queries however few its lines,
    and a nightly share holds hundreds of files, so they pay it once, not once per file."""
    alert = [FileKind.of(name) is FileKind.ALERT_LOG for _, name, _, _ in files]
    frames = [_numbered([*head, *tail]) for _, _, head, tail in files]
    parsed = {
        log: iter(parse_files([f for f, is_log in zip(frames, alert, strict=True) if is_log == log], alert=log))
        for log in (False, True)
    }
    return [
        _from_ends(label, name, head, next(parsed[log]).tables)
        for (label, name, head, _), log in zip(files, alert, strict=True)
    ]


def _numbered(text: Sequence[str]) -> pl.DataFrame:
    return pl.DataFrame({"line": range(1, len(text) + 1), "text": list(text)}, schema=LINES)


def _from_ends(label: str, name: str, head: Sequence[str], tables: dict[str, pl.DataFrame]) -> EndsIdentity:
    identity = file_identity(label, name, tables["header"], session_values(head[:HEAD_LINES]))
    stamps = pl.concat([tables[table].select("local") for table in ("adr", "krs")])
    offsets = tables["adr"]["utc_offset_min"].drop_nulls()
    low, high = (stamps["local"].min(), stamps["local"].max()) if stamps.height else (None, None)
    assert low is None or isinstance(low, datetime)
    assert high is None or isinstance(high, datetime)
    return EndsIdentity(
        info=identify_file(label, name, tables["header"], tables["messages"]),
        identity=identity,
        first_local=low,
        last_local=high,
        utc_offset_min=int(offsets[0]) if len(offsets) else None,
    )
