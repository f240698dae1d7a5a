"""One input classified before it is read, by its first bytes: a trace (a `Source`), an archive
whose members are classified in turn, or the reason it is skipped.

Compressed data (gzip, bzip2, xz, zstd, by their first bytes) are decompressed as they are read,
layer after layer; zip and tar archives are listed (a compressed or nested zip is copied to the
spool first, as zipfile needs to seek); nothing is ever extracted to disk.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import BinaryIO, cast

from analyzer.base.errors import CorruptInput, LimitExceeded
from analyzer.inputs.filenames import NOT_TRACE, Mode, archive_by_name, rule, trace_name, wanted
from analyzer.inputs.limits import InputStopped, KiB, Limits, Session, Tree
from analyzer.inputs.skips import CORRUPT_ERRORS, Skipped, corrupt, reason_of
from analyzer.inputs.sniff import archive_of, companion_of, compression_of, not_text, zip_document
from analyzer.inputs.streams import CHUNK, Layer, Member, Meter, Region, Whole, decompressing, read_up_to, spool
from analyzer.inputs.tar_archives import tar_members
from analyzer.inputs.zip_archives import zip_members

#: buffer of the streams handed out (fewer, larger reads through the decompression stages)
BUFFER = 128 * KiB
#: bytes read at discovery: enough to tell text from binary, and to tell contents apart
HEAD_BYTES = 64 * KiB


@dataclass(frozen=True)
class Source:
    """One trace to read: a file, or an archive member, possibly compressed, never extracted.

    `opener()` returns a binary stream of the decompressed content. The call and the stream
    raise only `LimitExceeded` (a safety limit stopped this member) or `CorruptInput` (corrupt,
    truncated or unreadable data), both naming the member; other sources keep working.
    """

    label: str
    opener: Callable[[], BinaryIO] = field(compare=False, repr=False)
    #: False for a pipe or device named on the command line: it can be opened only once
    rereadable: bool = field(default=True, compare=False)
    #: bytes as stored (compressed, for a compressed member), when known: big files are read first
    stored_bytes: int | None = field(default=None, compare=False)
    #: the input it belongs to, whose time budget the work on it (reading, parsing, reducing) spends
    tree: Tree | None = field(default=None, compare=False, repr=False)

    @property
    def name(self) -> str:
        """The base file name without compression suffix (used for classification)."""
        return trace_name(self.label)

    def spend(self, seconds: float) -> None:
        """Charge work done on this source (parsing, reducing) to its input's time budget.

        Raises:
            InputStopped: the input's time budget is spent (its later reads raise it too).
        """
        if self.tree is not None:
            self.tree.spend_time(seconds, self.label)


@dataclass
class Found:
    """A source, and what is known of its content to recognise it uploaded again."""

    source: Source
    #: length (up to HEAD_BYTES + 1) and SHA-256 of the first bytes; None for a pipe or device
    key: tuple[int, bytes] | None
    digest: bytes | None = None
    hashed: bool = False

    def full_digest(self) -> bytes | None:
        """SHA-256 of the whole content; None when it cannot be read to the end."""
        if not self.hashed:
            self.hashed = True
            sha = hashlib.sha256()
            try:
                with self.source.opener() as stream:
                    while chunk := stream.read(CHUNK):
                        sha.update(chunk)
            except (CorruptInput, LimitExceeded):
                return None
            self.digest = sha.digest()
        return self.digest


def expand(member: Member, depth: int, mode: Mode, session: Session) -> Iterator[Found | Skipped]:
    """What a file or member holds: a source, an archive's members (expanded in turn), or the
    reason it is skipped. `depth` counts the layers already opened to reach `member`.

    Raises:
        InputStopped: a limit of the whole input.
    """
    suffixes: list[str] = []
    meters: list[Meter] = []
    head = _decompressed_head(member, depth, mode, session, suffixes, meters)
    if not isinstance(head, bytes):
        yield head
        return
    kind = archive_of(head) or archive_by_name(member.name)
    if kind is not None:
        yield from _archive(kind, head, member, suffixes, meters, depth, session)
    elif mode in ("archive", "probe"):
        yield Skipped(member.label, NOT_TRACE)
    elif (reason := not_text(head) or companion_of(head)) is not None:
        yield Skipped(member.label, reason)
    else:
        yield Found(_source(member, suffixes, meters), (len(head), hashlib.sha256(head).digest()))


def _decompressed_head(
    member: Member, depth: int, mode: Mode, session: Session, suffixes: list[str], meters: list[Meter]
) -> bytes | Found | Skipped:
    """The first bytes of a member once every compression they announce is peeled off (a stage
    added to `suffixes` and `meters` for each); or what the member is when that fails."""
    while True:
        try:
            head = _head(member, suffixes, meters)
        except InputStopped:
            raise
        except LimitExceeded as exc:
            return Skipped(member.label, reason_of(exc, member.label), True)
        except CorruptInput as exc:
            if mode in ("trace", "named"):  # the lines before the damage are still worth reading
                return Found(_source(member, suffixes, meters), None)
            return Skipped(member.label, reason_of(exc, member.label), True)
        suffix = compression_of(head)
        if suffix is None:
            return head
        if depth + len(suffixes) + 1 > session.limits.max_depth:
            return _too_deep(member, session.limits)
        suffixes.append(suffix)
        meters.append(Meter(session, member.label, member.tree))


def _too_deep(member: Member, limits: Limits) -> Skipped:
    return Skipped(member.label, f"nesting depth over the limit ({limits.max_depth}): not opened", True)


def _head(member: Member, suffixes: list[str], meters: list[Meter]) -> bytes:
    """The first bytes of a member through its decompression stages."""
    with _open_stages(member, suffixes, meters) as stream:
        return read_up_to(stream, HEAD_BYTES + 1)


def _source(member: Member, suffixes: list[str], meters: list[Meter]) -> Source:
    stored = member.region.length if member.region else member.stored
    opener = partial(_public_stream, member, tuple(suffixes), meters)
    return Source(member.label, opener, stored_bytes=stored, tree=member.tree)


def _open_stages(member: Member, suffixes: Sequence[str], meters: list[Meter]) -> Layer:
    """The member's bytes through its decompression stages; errors say which member."""
    layer = member.open()
    try:
        for suffix, meter in zip(suffixes, meters, strict=False):
            layer = decompressing(layer, suffix, meter)
    except CORRUPT_ERRORS as exc:
        layer.close()
        raise corrupt(member.label, exc) from exc
    return layer


def _public_stream(member: Member, suffixes: tuple[str, ...], meters: list[Meter]) -> BinaryIO:
    return cast(BinaryIO, Whole(_open_stages(member, suffixes, meters), BUFFER))


# --- archives ---------------------------------------------------------------------------------


def _archive(
    kind: str, head: bytes, member: Member, suffixes: list[str], meters: list[Meter], depth: int, session: Session
) -> Iterator[Found | Skipped]:
    """A zip or tar, unless it is a document or nested too deep: listed, its members expanded."""
    if kind == "zip" and zip_document(head):
        yield Skipped(member.label, "not a text trace: a document or Java archive (zip of XML or classes)")
        return
    depth += len(suffixes) + 1
    if depth > session.limits.max_depth:
        yield _too_deep(member, session.limits)
        return
    try:
        listing = _listing(kind, member, suffixes, meters, session)
    except InputStopped:
        raise
    except (LimitExceeded, CorruptInput) as exc:
        yield Skipped(member.label, reason_of(exc, member.label), partial=True)
        return
    for entry in listing:
        if isinstance(entry, Skipped):
            yield entry
        else:
            yield from expand(entry, depth, rule(entry.name)[0] or "trace", session)


def _listing(
    kind: str, member: Member, suffixes: list[str], meters: list[Meter], session: Session
) -> Iterator[Member | Skipped]:
    """The members of a zip or tar; a compressed or nested zip is spooled first."""
    in_place = None if suffixes else member.region
    if kind == "zip":
        region = in_place or _spooled(member, suffixes, meters, session)
        return zip_members(region, member.label, member.tree, wanted)
    source = in_place or _open_stages(member, suffixes, meters)
    reopen = None if in_place else partial(_open_stages, member, suffixes, meters)
    return tar_members(session, source, member.label, member.tree, wanted, reopen)


def _spooled(member: Member, suffixes: list[str], meters: list[Meter], session: Session) -> Region:
    with _open_stages(member, suffixes, meters) as layer:
        return spool(session, layer, member.label, member.tree)
