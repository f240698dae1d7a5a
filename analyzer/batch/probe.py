"""What each input is, before any unit of work reads it: content digest, identity and time span.

One pass over the decompressed content hashes it (SHA-256) and keeps its first and last 16 KiB;
those two ends tell what the file is and the first and last time stamps, which place the file in its
days, as the analysis reads them (`analyzer.api.identify_ends`: the header's role, process, instance
and host, the database of its ADR path or `Trace file` line, the sender an RFS session names). A
source is probed again only when its file's size or modification time changed since the manifest
recorded it.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from datetime import date, datetime, timedelta
from pathlib import Path
from typing import Any

from analyzer.api import EndsIdentity, Source, identify_ends
from analyzer.base.errors import AnalyzerError
from analyzer.base.zones import TimeZones, Zone, value_to_utc

#: bytes kept from each end of a source for its header and its first and last time stamps
END_BYTES = 16 * 1024
_BLOCK = 1 << 20
#: a file's days reach this far past its first and last stamp: the other side's lines of a write
#: near midnight (transit, clock offset) fall in the same unit
MARGIN = timedelta(hours=1)
#: ... and this far when the file's stamps carry no zone and --tz names none (any zone on Earth)
MARGIN_NO_ZONE = timedelta(hours=15)


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
    #: short host name (domain dropped), as the analysis reads it (`Node name:`, else the ADR path's)
    host: str | None
    #: db_unique_name (lower case) as the analysis reads it: the header, the `Trace file` line, the ADR path
    db: str | None
    #: RFS: the host of the sender that opened the session (`MODULE NAME:(oracle@host (NSS2))`; lower case)
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
    """Each source identified from its ends (`identify_ends`: those of all traces parsed together, and
    those of all alert logs)."""
    ends = [(source.label, source.name, *_lines(e.head, e.tail)) for source, e in probed]
    return [_info(source, e, found, zones) for (source, e), found in zip(probed, identify_ends(ends), strict=True)]


def _lines(head: bytes, tail: bytes) -> tuple[list[str], list[str]]:
    """The lines of the head and those of the tail (a line cut by either window left out)."""
    first = head.decode("utf-8", "replace").replace("\r", "").split("\n")
    first = first[:-1] if len(first) > 1 else first  # the last line may be cut by the window
    more: list[str] = []
    if tail:
        more = tail.decode("utf-8", "replace").replace("\r", "").split("\n")[1:]  # the first may be cut
        more = more[:-1] if more and more[-1] == "" else more
    return first, more


def _info(source: Source, ends: Ends, found: EndsIdentity, zones: TimeZones) -> SourceInfo:
    info, identity = found.info, found.identity
    host = info.host.split(".")[0] if info.host and not info.host.startswith("instance:") else None
    zone: Zone
    if found.utc_offset_min is not None:
        zone, known = found.utc_offset_min, True
    else:
        zone, where = zones.for_host(host)
        known = not where.startswith("assumed")
    # an IANA zone: the offset of that date
    first_at = value_to_utc(found.first_local, zone).isoformat() if found.first_local else None
    last_at = value_to_utc(found.last_local, zone).isoformat() if found.last_local else None
    return SourceInfo(
        label=source.label,
        path=file_of(source.label),
        sha256=ends.sha256,
        bytes=ends.size,
        role=str(info.role),
        process=info.process,
        instance=info.instance,
        host=host,
        db=identity.db,
        peer_host=identity.client_host,
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
