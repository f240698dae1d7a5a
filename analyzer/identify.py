"""What a trace file is: role, process, instance, host, thread, version (from its own evidence).

Taken from the header when there is one, else from the file name, else from the content (a
file trimmed by TFA has no header, but its `Server received` lines make it RFS).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import polars as pl

from analyzer.vocab import ALERT_LOG_NAME, CLIENT_KINDS, SERVER_KINDS, FileKind, Role

#: process name -> role (primary senders and log writers; standby receivers)
PRIMARY_PROCESSES = re.compile(r"^(LGWR|LG\d\d|NSS\d+|NSA\d+|LNS\d*|TT\d\d)$")
STANDBY_PROCESSES = re.compile(r"^(RFS)$")
#: `<sid>_<pname>_<pid>[_<identifier>].trc`
_NAME = re.compile(
    r"^(?P<sid>.+?)_(?P<pname>lgwr|lg\d\d|nss\d+|nsa\d+|lns\d*|tt\d\d|rfs|arc\d+|ora|[a-z]{3,4}\d?)_(?P<pid>\d+)(?:_[^.]*)?\.trc$",
    re.IGNORECASE,
)
#: `.../<host>/diag/rdbms/<db>/<sid>/trace/<file>` (ADR layout inside TFA collections)
_ADR_PATH = re.compile(
    r"(?:^|[/!\\])(?P<host>[^/!\\]+)[/\\]diag[/\\]rdbms[/\\](?P<db>[^/\\]+)[/\\](?P<sid>[^/\\]+)[/\\]trace[/\\]"
)
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


def _header_value(header: pl.DataFrame, key: str) -> str | None:
    values = header.filter(pl.col("key") == key)["value"]
    return values[0] if len(values) else None


def _process_from_header(header: pl.DataFrame) -> str | None:
    proc = header.filter(pl.col("kind") == "process")["value"]
    if not len(proc):
        return None
    image = proc[0].split("|", 1)[1]
    found = _IMAGE_PROCESS.search(image)
    return found["pname"] if found else None


def _pid(header: pl.DataFrame) -> int | None:
    proc = header.filter(pl.col("kind") == "process")["value"]
    raw = proc[0].split("|", 1)[0] if len(proc) else ""
    return int(raw) if raw.isdigit() and len(raw) < 19 else None


def _version(header: pl.DataFrame, latest: bool = False) -> str | None:
    """The release update (`Version 19.22.0.0.0`, 18c+), else the banner's release; `latest`: the last
    one (an alert log prints one at each startup, an upgrade included), else the first."""
    pick = -1 if latest else 0
    version = header.filter(pl.col("kind") == "version")["value"]
    if len(version):
        return str(version[pick])
    banner = header.filter(pl.col("kind") == "banner")["value"]
    found = _RELEASE.search(banner[pick]) if len(banner) else None
    return found[1] if found else None


def _thread(header: pl.DataFrame) -> int | None:
    words = (_header_value(header, "Redo thread mounted by this instance") or "").split()
    if not words or not words[0].isdigit() or len(words[0]) > 6:  # "1", "0 <none>"; no value, or noise
        return None
    return int(words[0]) or None


def _alert_log(label: str, name: str, header: pl.DataFrame) -> FileInfo:
    """An instance's alert log: its instance from the name, its host from `Node name:` or the path."""
    found = ALERT_LOG_NAME.match(name)
    instance = found["sid"] if found else None
    evidence = ["alert log by its name"]
    host = _header_value(header, "Node name")
    adr = _ADR_PATH.search(label)
    if host:
        evidence.append("host from Node name")
    elif adr and adr["host"].lower() not in {"u01", "u02", "app", "oracle", "opt"}:
        host = adr["host"]
        evidence.append("host from ADR path")
    elif instance:
        host = f"instance:{instance}"
        evidence.append("host unknown: instance name stands in")
    version = _version(header, latest=True)
    return FileInfo(
        label, Role.OTHER, None, instance, host, None, version, "; ".join(evidence), None, FileKind.ALERT_LOG
    )


def identify_file(label: str, name: str, header: pl.DataFrame, messages: pl.DataFrame) -> FileInfo:
    """Identify one file from its header lines, its name and its 16410 messages."""
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
    instance = _header_value(header, "Instance name") or (by_name["sid"] if by_name else None)
    adr = _ADR_PATH.search(label)
    host = _header_value(header, "Node name")
    if host:
        evidence.append("host from header")
    elif adr and adr["host"].lower() not in {"u01", "u02", "app", "oracle", "opt"}:
        host = adr["host"]
        evidence.append("host from ADR path")
    elif instance:
        host = f"instance:{instance}"
        evidence.append("host unknown: instance name stands in")
    pid = _pid(header) or (int(by_name["pid"]) if by_name and len(by_name["pid"]) < 19 else None)
    return FileInfo(label, role, process, instance, host, _thread(header), _version(header), "; ".join(evidence), pid)
