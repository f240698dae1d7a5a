"""Trace file headers and session blocks of the simulated processes, per Oracle generation."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import PurePosixPath

from analyzer.simulate.formats import ORACLE_BASE, Generation, HostClock, segment_file_name

#: DNS domain of the simulated hosts (reserved `.example` name)
DOMAIN = "dbnet.example"
#: 23c namespace id printed in the pid line
_NID = 4026531836


@dataclass(frozen=True)
class Process:
    """Identity of one traced Oracle process, as its file name and header show it."""

    #: short host name, e.g. prim01; the trace tree starts with it
    host: str
    #: db_unique_name in lower case (directory under diag/rdbms)
    db: str
    sid: str
    #: process name in the file name: nss2, lns1, lgwr, rfs
    pname: str
    #: background name shown after the image (NSS2, LGWR); empty for RFS
    image: str
    pid: int
    #: `Oracle process number:`
    number: int
    #: `Redo thread mounted by this instance:`
    thread: int
    #: `sid.serial` of the SESSION ID line
    session: str
    service: str
    module: str
    #: 23c+ session-block lines of a remote client; empty when not shown
    client_ip: str = ""
    connection_id: str = ""
    #: `YYYY-MM-DD` directory between the host and `diag` (a share that housekeeping fills per day)
    day: str = ""
    #: segment of the process's trace (0: the first file)
    segment: int = 0

    @property
    def fqdn(self) -> str:
        """Host name with domain, as `Node name:` prints it."""
        return f"{self.host}.{DOMAIN}"

    @property
    def stem(self) -> str:
        """`<sid>_<pname>_<pid>`."""
        return f"{self.sid}_{self.pname}_{self.pid}"

    @property
    def file_name(self) -> str:
        """`<sid>_<pname>_<pid>.trc`, or the name of a later segment."""
        return segment_file_name(self.stem, self.segment)

    @property
    def trace_dir(self) -> PurePosixPath:
        """Directory below the output directory: `<host>[/<day>]/diag/rdbms/<db>/<sid>/trace`."""
        day = (self.day,) if self.day else ()
        return PurePosixPath(self.host, *day, "diag", "rdbms", self.db, self.sid, "trace")

    @property
    def oracle_path(self) -> str:
        """Full path of the file on its host, as `Trace file` and the continuation lines print it."""
        return f"{ORACLE_BASE}/diag/rdbms/{self.db}/{self.sid}/trace/{self.file_name}"


def header(generation: Generation, process: Process, clock: HostClock, t: int) -> str:
    """File header and session block of a trace file opened at true time `t`."""
    return "\n".join((*_file_header(generation, process), *_session_block(generation, process, clock, t))) + "\n"


def _file_header(gen: Generation, proc: Process) -> list[str]:
    lines = [f"Trace file {proc.oracle_path}", *gen.banner]
    if gen.version is not None:
        lines.append(f"Version {gen.version}")
    if gen.build_label is not None:
        lines.append(f"Build label:    {gen.build_label}")
    lines.append(f"ORACLE_HOME:    {gen.oracle_home}" if gen.iso else f"ORACLE_HOME = {gen.oracle_home}")
    lines += [
        "System name:\tLinux",
        f"Node name:\t{proc.fqdn}",
        f"Release:\t{gen.kernel[0]}",
        f"Version:\t{gen.kernel[1]}",
        "Machine:\tx86_64",
    ]
    if gen.nid:
        lines.append("CLID:\tP")
    image = f"oracle@{proc.fqdn}" + (f" ({proc.image})" if proc.image else "")
    nid = f"NID: {_NID}, " if gen.nid else ""
    lines += [
        f"Instance name: {proc.sid}",
        f"Redo thread mounted by this instance: {proc.thread}",
        f"Oracle process number: {proc.number}",
        f"Unix process pid: {proc.pid}, {nid}image: {image}",
        "",
        "",
    ]
    return lines


def _session_block(gen: Generation, proc: Process, clock: HostClock, t: int) -> list[str]:
    keys = [
        ("SESSION ID", proc.session),
        ("CLIENT ID", ""),
        ("SERVICE NAME", proc.service),
        ("MODULE NAME", proc.module),
        ("ACTION NAME", ""),
    ]
    if gen.name == "12.1":
        keys.insert(4, ("CLIENT DRIVER", ""))  # 12.1.0.2 prints it before ACTION NAME
    if gen.iso:
        keys += [("CLIENT DRIVER", ""), ("CONTAINER ID", "1")]
    if gen.nid and proc.client_ip:
        keys += [("CLIENT IP", proc.client_ip), ("CONNECTION ID", proc.connection_id)]
    lines = [clock.adr(t).strip("\n")]
    lines += [f"*** {key}:({value}) {clock.wall(t + 7 * (i + 1))}" for i, (key, value) in enumerate(keys)]
    lines.append(" ")
    return lines
