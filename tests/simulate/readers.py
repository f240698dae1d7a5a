"""Small readers of simulated trace sets for the tests: regexes over the lines, independent of the analyzer
and of the simulator's code. They compute what truth.csv must say from the printed text alone."""

from __future__ import annotations

import csv
import gzip
import re
from collections import defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

KRS = re.compile(
    r"^\*\*\* (?P<ts>\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.(?P<frac>\d+))"
    r"(?P<tail> \d+ \w+\.c| \[\w+\.c:\d+\])$"
)
MSG = re.compile(
    r"^(?:\.\.\. )?(?P<kind>Client sending|Client received|Server received|Server finished)"
    r"[A-Za-z ]* \[\w+\] (?:response )?oper='Write' flag=67111042 "
    r"thrd=(?P<thrd>\d+) seq=(?P<seq>\d+) msgid=(?P<msgid>\d+)$"
)
WAIT = re.compile(r"^WAIT #(?P<cursor>\d+): nam='(?P<name>[^']+)' ela=(?P<sp> ?)(?P<ela>\d+) .*tim=(?P<tim>\d+)$")
#: a bare ADR line up to 12.1 (milliseconds, no zone) and from 12.2 on (ISO microseconds with the offset)
ADR_OLD = re.compile(r"^\*\*\* \d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3}$")
ADR_ISO = re.compile(r"^\*\*\* \d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}(?P<zone>[+-]\d\d:\d\d) \(CDB\$ROOT\(1\)\)$")
IMAGE = re.compile(
    r"^Unix process pid: (?P<pid>\d+), (?:NID: \d+, )?image: oracle@(?P<fqdn>\S+)(?: \((?P<name>\w+)\))?$"
)
MODULE = re.compile(r"^\*\*\* MODULE NAME:\(oracle@(?P<host>[\w-]+) \((?P<name>\w+)\)\) ")
TRACE_NAME = re.compile(r"^(?P<stem>[a-z0-9]+_(?P<pname>[a-z0-9]+)_\d+)(?:_(?P<segment>\d+))?\.trc(?:\.gz)?$")
IO_EVENTS = {"RFS write", "RFS random i/o", "RFS sequential i/o"}
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)

Key = tuple[int, int, int]


def text_lines(path: Path) -> list[str]:
    """Lines of a plain or gzipped file."""
    data = gzip.decompress(path.read_bytes()) if path.suffix == ".gz" else path.read_bytes()
    return data.decode("ascii").splitlines()


def local_us(stamp: str, offset_min: int = 0) -> int:
    """µs since the epoch (UTC) of a zone-less local stamp printed at `offset_min`."""
    naive = datetime.strptime(stamp, "%Y-%m-%d %H:%M:%S.%f").replace(tzinfo=UTC)
    return (naive - EPOCH) // timedelta(microseconds=1) - offset_min * 60_000_000


@dataclass
class Process:
    """One process's trace: its segment files in order (deleted ones simply absent)."""

    host: str
    stem: str
    pname: str
    files: list[Path] = field(default_factory=list)

    def lines(self) -> Iterator[str]:
        """Every line of every segment, in order."""
        for path in self.files:
            yield from text_lines(path)

    @property
    def header(self) -> list[str]:
        """The first file's header and session block."""
        lines = text_lines(self.files[0])
        return lines[: lines.index(" ") + 1]

    @property
    def image(self) -> str:
        """The process name after the image (NSS2, TT02, LGWR), or '' for RFS."""
        for line in self.header:
            if m := IMAGE.match(line):
                return m["name"] or ""
        raise AssertionError(f"no pid line in {self.files[0]}")

    @property
    def client(self) -> tuple[str, str]:
        """An RFS's client (host, process name) from its MODULE NAME line."""
        for line in self.header:
            if m := MODULE.match(line):
                return m["host"], m["name"]
        raise AssertionError(f"no module line in {self.files[0]}")


def processes(root: Path, day: str = "") -> list[Process]:
    """Every traced process under `root` (its first directory level is the host), of one `day` directory if given."""
    found: dict[tuple[Path, str], Process] = {}
    segments: dict[Path, int] = {}
    for path in sorted(root.rglob("*.trc*")):
        m = TRACE_NAME.match(path.name)
        if not m or (day and path.relative_to(root).parts[1] != day):
            continue
        host = path.relative_to(root).parts[0]
        proc = found.setdefault((path.parent, m["stem"]), Process(host, m["stem"], m["pname"]))
        proc.files.append(path)
        segments[path] = int(m["segment"] or 0)
    for proc in found.values():
        proc.files.sort(key=lambda p: segments[p])
    return list(found.values())


@dataclass
class Remote:
    """One write as a reader following the paper's stamp rules sees it (host clock µs, UTC)."""

    t1: int = 0
    t4: int = 0
    t2: int = 0
    t3: int = 0
    io: int = 0
    #: I/O waits after the finished message, before the next message (FASTSYNC's standby redo log write)
    late_io: int = 0


def read_sender(lines: Iterable[str], offset: int = 0) -> dict[Key, Remote]:
    """Send stamp: next krs stamp after `Client sending`; ack: last one before `Client received`."""
    writes: dict[Key, Remote] = {}
    pending: Key | None = None
    last = ""
    for line in lines:
        if m := KRS.match(line):
            last = m["ts"]
            if pending is not None:
                writes.setdefault(pending, Remote()).t1 = local_us(last, offset)
                pending = None
        elif m := MSG.match(line):
            key = (int(m["thrd"]), int(m["seq"]), int(m["msgid"]))
            if m["kind"] == "Client sending":
                pending = key
            else:
                writes[key].t4 = local_us(last, offset)
    return writes


def read_rfs(lines: Iterable[str], offset: int = 0) -> dict[Key, Remote]:
    """RFS stamps follow their messages; I/O waits count inside [received, finished] or after finished."""
    writes: dict[Key, Remote] = {}
    pending: tuple[Key, str] | None = None
    inside: Key | None = None
    after: Key | None = None
    for line in lines:
        if m := KRS.match(line):
            if pending is not None:
                setattr(writes[pending[0]], pending[1], local_us(m["ts"], offset))
                pending = None
        elif m := MSG.match(line):
            key = (int(m["thrd"]), int(m["seq"]), int(m["msgid"]))
            received = m["kind"] == "Server received"
            writes.setdefault(key, Remote())
            pending = (key, "t2" if received else "t3")
            inside, after = (key, None) if received else (None, key)
        elif (w := WAIT.match(line)) and w["name"] in IO_EVENTS:
            if inside is not None:
                writes[inside].io += int(w["ela"])
            elif after is not None:
                writes[after].late_io += int(w["ela"])
    return writes


def utc_text(us: int) -> str:
    """ISO-8601 UTC with µs and Z, as truth.csv prints `sent_at`."""
    sent = datetime.fromtimestamp(us // 1_000_000, UTC)
    return f"{sent:%Y-%m-%dT%H:%M:%S}.{us % 1_000_000:06d}Z"


def expected_values(key: Key, w: Remote) -> dict[str, str]:
    """The truth columns a reader computes for one write."""
    total, rfs = w.t4 - w.t1, w.t3 - w.t2
    network, other = total - rfs, rfs - w.io
    parts = {"network": network, "rfs_io": w.io, "rfs_other": other}
    verdict = max(parts, key=lambda k: parts[k])
    values = dict(zip(("thread", "seq", "msgid"), map(str, key), strict=True))
    values["sent_at"] = utc_text(w.t1)
    names = ("total_ms", "network_ms", "rfs_ms", "rfs_io_ms", "rfs_other_ms", "srl_write_ms")
    values.update(zip(names, (f"{v / 1000:.3f}" for v in (total, network, rfs, w.io, other, w.late_io)), strict=True))
    values["verdict"] = verdict
    return values


def read_truth(path: Path) -> list[dict[str, str]]:
    """truth.csv (or lgwr_events.csv) as dictionaries."""
    with path.open(newline="") as handle:
        return list(csv.DictReader(handle))


@dataclass(frozen=True)
class LinkKey:
    """What identifies a link in truth rows: sender host and process, standby host, thread."""

    sender_host: str
    sender: str
    standby_host: str
    thread: int


def links(root: Path, day: str = "") -> dict[LinkKey, dict[Key, Remote]]:
    """Every sender -> RFS link under `root` (of one day), with each write as the text shows it (hosts at UTC)."""
    procs = processes(root, day)
    senders = {(p.host, p.image): p for p in procs if p.pname not in ("rfs", "lgwr", "ora")}
    result: dict[LinkKey, dict[Key, Remote]] = defaultdict(dict)
    for rfs in (p for p in procs if p.pname == "rfs"):
        host, name = rfs.client
        sides = read_rfs(rfs.lines())
        sent = read_sender(senders[host, name].lines())
        for key, w in sides.items():
            link = result[LinkKey(host, name, rfs.host, key[0])]
            s = sent.get(key)
            if s is not None and w.t2 and w.t3:
                link[key] = Remote(s.t1, s.t4, w.t2, w.t3, w.io, w.late_io)
    return result


def check_truth(root: Path, rows: list[dict[str, str]], day: str = "") -> int:
    """Assert that every complete truth row (of `day`) is what the text says; return how many were checked."""
    seen = links(root, day)
    checked = 0
    for row in rows:
        if row.get("evidence", "complete") != "complete" or row.get("day", "") != day:
            continue
        link = LinkKey(row["primary_host"], row["sender"], row["standby_host"], int(row["thread"]))
        key = (int(row["thread"]), int(row["seq"]), int(row["msgid"]))
        w = seen[link].get(key)
        assert w is not None, (link, key)
        expected = expected_values(key, w)
        got = {k: row[k] for k in expected}
        assert got == expected, (link, key, got, expected)
        checked += 1
    return checked
