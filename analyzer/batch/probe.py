"""What each input is, before any unit of work reads it: content digest, identity and time span.

One pass over the decompressed content hashes it (SHA-256) and keeps its first and last 16 KiB;
those two ends are parsed with the trace grammars (`analyzer.parse.families`) for the header (role, process,
instance, host, the `Trace file` path), the sending host an RFS session names (`MODULE NAME`), and
the first and last time stamps, which place the file in its days. A source is probed again only
when its file's size or modification time changed since the manifest recorded it.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from datetime import date, datetime, timedelta
from pathlib import Path
from typing import Any

import polars as pl

from analyzer.base.errors import AnalyzerError
from analyzer.base.schemas import LINES
from analyzer.base.vocab import FileKind, Role
from analyzer.base.zones import TimeZones, Zone, value_to_utc
from analyzer.inputs.sources import Source
from analyzer.parse import families as parse
from analyzer.parse.identify import HEAD_LINES, file_identity, identify_file, session_values

#: bytes kept from each end of a source for its header and its first and last time stamps
END_BYTES = 16 * 1024
_BLOCK = 1 << 20
#: a file's days reach this far past its first and last stamp: the other side's lines of a write
#: near midnight (transit, clock offset) fall in the same unit
MARGIN = timedelta(hours=1)
#: ... and this far when the file's stamps carry no zone and --tz names none (any zone on Earth)
MARGIN_NO_ZONE = timedelta(hours=15)
#: `.../diag/rdbms/<db_unique_name>/<sid>/trace/...` in a path or in the `Trace file` line
_ADR = re.compile(r"(?:^|[/\\!])diag[/\\]rdbms[/\\](?P<db>[^/\\!]+)[/\\]")
_DATE = re.compile(r"^\d{4}-?\d{2}-?\d{2}$")
_NOT_HOSTS = {"u01", "u02", "app", "oracle", "opt", "orabase", ""}
#: the session block of an RFS process names the sending instance's host and process
_MODULE = re.compile(r"^\*\*\* MODULE NAME:\(oracle@(?P<host>[^\s()]+) \((?P<image>[A-Z][A-Z0-9]*)\)\)", re.MULTILINE)


@dataclass(frozen=True)
class SourceInfo:
    """What a trace source is (JSON-serialisable: the manifest keeps it)."""

    label: str
    #: the file on disk that holds it (an archive for an archive member)
    path: str
    sha256: str
    #: decompressed bytes
    bytes: int
    role: str
    process: str | None
    instance: str | None
    #: short host name (domain dropped)
    host: str | None
    #: db_unique_name from the ADR path of the label or of the `Trace file` line
    db: str | None
    #: RFS: the host of the sender that opened the session (`MODULE NAME:(oracle@host (NSS2))`)
    peer_host: str | None
    #: first and last time stamp, UTC, ISO-8601
    first_at: str | None
    last_at: str | None
    #: the stamps carry a zone, or --tz gave one for this host
    zone_known: bool
    #: what its path and head tell (`analyzer.parse.identify.FileIdentity`, its fields as JSON values):
    #: what the configuration grouping of the analysis (`analyzer.match.links`) reads
    identity: dict[str, Any] | None = None

    def days(self) -> list[date]:
        """The UTC days whose units read this source (its span, widened by the margin)."""
        if self.first_at is None or self.last_at is None:
            return []
        margin = MARGIN if self.zone_known else MARGIN_NO_ZONE
        first = (datetime.fromisoformat(self.first_at) - margin).date()
        last = (datetime.fromisoformat(self.last_at) + margin).date()
        return [first + timedelta(days=n) for n in range((last - first).days + 1)]

    def core_days(self) -> set[date]:
        """The days its stamps fall on (all of `days()` when their zone is unknown): a unit
        needs one source with stamps on its day, else it has no row to keep."""
        if not self.zone_known or self.first_at is None or self.last_at is None:
            return set(self.days())
        first, last = datetime.fromisoformat(self.first_at).date(), datetime.fromisoformat(self.last_at).date()
        return {first + timedelta(days=n) for n in range((last - first).days + 1)}

    def home_day(self) -> date | None:
        """The day of its first stamp: where its rows without a time of their own are kept."""
        return datetime.fromisoformat(self.first_at).date() if self.first_at else None

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> SourceInfo:
        return cls(**data)


class ProbeError(AnalyzerError):
    """A source that cannot be read to its end (corrupt, truncated, a limit, an OS error)."""


def file_of(label: str) -> str:
    """The file on disk that holds a source (the part of an archive member's label before `!`)."""
    return label.split("!", 1)[0]


def adr_db(text: str) -> tuple[str | None, str | None]:
    """(db_unique_name, host) from a path in the ADR layout; the host is the directory above
    `diag` (or the one above that, when housekeeping put a dated directory in between)."""
    found = _ADR.search(text)
    if not found:
        return None, None
    above = [part for part in re.split(r"[/\\!]", text[: found.start() + 1]) if part]
    while above and _DATE.match(above[-1]):
        above.pop()
    host = above[-1] if above and above[-1].lower() not in _NOT_HOSTS else None
    return found["db"], host


@dataclass(frozen=True)
class Ends:
    """A source's content digest, size and its two ends (the tail empty when the head holds it all)."""

    sha256: str
    size: int
    head: bytes
    tail: bytes


def probe(source: Source, zones: TimeZones) -> SourceInfo:
    """Hash a source and identify it from its two ends.

    Raises:
        ProbeError: the source cannot be read to its end.
    """
    return identify_all([(source, read_ends(source))], zones)[0]


def read_ends(source: Source) -> Ends:
    """One pass over a source's decompressed content: its SHA-256, size and two ends.

    Raises:
        ProbeError: the source cannot be read to its end.
    """
    digest = hashlib.sha256()
    size = 0
    head = bytearray()
    tail = b""
    try:
        with source.opener() as stream:
            while block := stream.read(_BLOCK):
                digest.update(block)
                size += len(block)
                if len(head) < END_BYTES:
                    head += block[: END_BYTES - len(head)]
                tail = (tail + block)[-END_BYTES:]
    except (AnalyzerError, OSError, EOFError) as err:
        raise ProbeError(str(err) if isinstance(err, AnalyzerError) else f"{type(err).__name__}: {err}") from err
    return Ends(digest.hexdigest(), size, bytes(head), tail if size > END_BYTES else b"")


def identify_all(probed: Sequence[tuple[Source, Ends]], zones: TimeZones) -> list[SourceInfo]:
    """Each source identified from its ends. The ends of all traces are parsed together, and those
    of all alert logs (`parse.parse_files`): a parse costs a few hundred polars queries however few
    its lines, and a nightly share holds hundreds of files, so they pay it once, not once per file."""
    lines = [_lines(ends.head, ends.tail) for _, ends in probed]
    alert = [FileKind.of(source.name) is FileKind.ALERT_LOG for source, _ in probed]
    frames = [frame for frame, _ in lines]
    # an alert log as the analysis reads it: its time lines are its stamps
    parsed = {
        log: iter(parse.parse_files([f for f, is_log in zip(frames, alert, strict=True) if is_log == log], alert=log))
        for log in (False, True)
    }
    return [
        _identify(source, ends, next(parsed[log]), head_lines, zones)
        for (source, ends), (_, head_lines), log in zip(probed, lines, alert, strict=True)
    ]


def _lines(head: bytes, tail: bytes) -> tuple[pl.DataFrame, list[str]]:
    """The lines of both ends, to parse at once (the parse stage's cost is mostly per call), and
    those of the head."""
    first = head.decode("utf-8", "replace").replace("\r", "").split("\n")
    first = first[:-1] if len(first) > 1 else first  # the last line may be cut by the window
    text = list(first)
    if tail:
        more = tail.decode("utf-8", "replace").replace("\r", "").split("\n")[1:]  # the first may be cut
        text += more[:-1] if more and more[-1] == "" else more
    return pl.DataFrame({"line": range(1, len(text) + 1), "text": text}, schema=LINES), first


def _identify(source: Source, ends: Ends, parsed: parse.Parsed, head_lines: list[str], zones: TimeZones) -> SourceInfo:
    tables, head = parsed.tables, ends.head
    identity = file_identity(source.label, source.name, tables["header"], session_values(head_lines[:HEAD_LINES]))
    info = identify_file(source.label, source.name, tables["header"], tables["messages"])
    trace_file = tables["header"].filter(pl.col("kind") == "trace_file")["value"]
    db, path_host = adr_db(source.label)
    if db is None and len(trace_file):
        db = adr_db(str(trace_file[0]))[0]
    host = info.host if info.host and not info.host.startswith("instance:") else path_host
    host = host.split(".")[0] if host else None
    module = _MODULE.search(head.decode("utf-8", "replace"))
    peer = module["host"].split(".")[0] if module and info.role == Role.STANDBY else None
    stamps = pl.concat([tables[name].select("local") for name in ("adr", "krs")])
    offsets = tables["adr"]["utc_offset_min"].drop_nulls()
    zone: Zone
    if len(offsets):
        zone, known = int(offsets[0]), True
    else:
        zone, where = zones.for_host(host)
        known = not where.startswith("assumed")
    first_at = last_at = None
    if stamps.height:
        low, high = stamps["local"].min(), stamps["local"].max()
        assert isinstance(low, datetime) and isinstance(high, datetime)
        first_at = value_to_utc(low, zone).isoformat()  # an IANA zone: the offset of that date
        last_at = value_to_utc(high, zone).isoformat()
    return SourceInfo(
        label=source.label,
        path=file_of(source.label),
        sha256=ends.sha256,
        bytes=ends.size,
        role=str(info.role),
        process=info.process,
        instance=info.instance,
        host=host,
        db=db,
        peer_host=peer,
        first_at=first_at,
        last_at=last_at,
        zone_known=known,
        identity={k: str(v) if k == "duty" else v for k, v in asdict(identity).items()},
    )


def stat_key(path: str | Path) -> tuple[int, int] | None:
    """(size, modification time in ns) of a file, or None when it is gone."""
    try:
        st = Path(path).stat()
    except OSError:
        return None
    return st.st_size, st.st_mtime_ns
