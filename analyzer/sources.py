"""Input discovery: the user's files, folders, globs and archives as trace sources to stream."""

from __future__ import annotations

import glob
import hashlib
import io
import os
import stat
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import cached_property, partial
from pathlib import Path
from typing import BinaryIO, Literal

from analyzer import archives
from analyzer.archives import (
    CHUNK,
    COMPRESSION_SUFFIXES,
    CORRUPT_ERRORS,
    Layer,
    Limits,
    Member,
    Meter,
    Refusal,
    Region,
    Session,
    corrupt,
    decompressing,
    describe,
    printable,
    reason_of,
    tar_members,
    zip_members,
)
from analyzer.errors import CorruptInput, LimitExceeded, UsageError
from analyzer.vocab import ALERT_LOG_NAME

__all__ = ["Limits", "Skipped", "Source", "discover"]

#: short archive suffixes, spelled out so the compression suffix can be peeled off
_ALIASES = {".tgz": ".tar.gz", ".tbz2": ".tar.bz2", ".txz": ".tar.xz"}
_TRACE_MAP = "trace map (.trm) file: ADR metadata, nothing to parse"
_NOT_TRACE = "not a trace file (*.trc) or alert log (alert_*.log) by its name"
#: buffer of the streams handed out (fewer, larger reads through the decompression stages)
_BUFFER = 128 * 1024
#: bytes hashed to tell contents apart before a full comparison
_HEAD = 64 * 1024

_Kind = Literal["trace", "zip", "tar"]


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

    @property
    def name(self) -> str:
        """The base file name without compression suffix (used for classification)."""
        return _split(_basename(self.label.rsplit("!", 1)[-1]))[0]


@dataclass(frozen=True)
class Skipped:
    """An input member that was found but not read, with the reason."""

    label: str
    reason: str
    #: content was lost (limit, corruption, encryption, permission): the run is only partial
    partial: bool = False


def discover(
    paths: Sequence[str], *, limits: Limits | None = None, dedupe: bool = True
) -> tuple[list[Source], list[Skipped]]:
    """Expand files, directories, globs and archives into sources and skipped members.

    A file named on the command line is read whatever its name, unless the name says it is a
    zip or tar archive; in folders and archives only `*.trc` names (after `.gz`, `.bz2`, `.xz`,
    `.zst`) are read and every other member is listed as skipped. With `dedupe`, content seen
    twice (a folder and a zip of it) is kept once: the later copies are skipped as duplicates.

    Raises:
        UsageError: a path that names nothing (no file, no directory, no glob match).
    """
    targets = [path for raw in paths for path in _matches(raw)]
    session = Session(limits or Limits())
    sources: list[Source] = []
    skipped: list[Skipped] = []
    labels: set[str] = set()
    for path in targets:
        for found in _discover_path(path, session):
            if isinstance(found, Skipped):
                skipped.append(found)
            elif found.label not in labels:
                labels.add(found.label)
                sources.append(found)
    return (_dedupe(sources, skipped) if dedupe else sources), skipped


def _matches(raw: str) -> list[Path]:
    if glob.has_magic(raw):
        matches = [Path(match) for match in sorted(glob.glob(raw, recursive=True))]
    else:
        matches = [Path(raw)] if os.path.lexists(raw) else []
    if not matches:
        raise UsageError(f"{raw}: no such file or directory")
    return matches


def _basename(name: str) -> str:
    return name.replace("\\", "/").rstrip("/").rsplit("/", 1)[-1]


def _split(name: str) -> tuple[str, tuple[str, ...]]:
    """A file name without its compression suffixes, and those suffixes, outermost first."""
    for alias, spelled in _ALIASES.items():
        if name.lower().endswith(alias) and len(name) > len(alias):
            name = name[: -len(alias)] + spelled
    suffixes: list[str] = []
    while suffix := next((s for s in COMPRESSION_SUFFIXES if name.lower().endswith(s) and len(name) > len(s)), None):
        suffixes.append(suffix)
        name = name[: -len(suffix)]
    return name, tuple(suffixes)


def _kind(core: str) -> _Kind:
    lower = core.lower()
    return "zip" if lower.endswith(".zip") else "tar" if lower.endswith(".tar") else "trace"


def _skip_reason(name: str) -> str | None:
    """Why a file found in a folder or an archive is not read, or None to read it."""
    core = _split(_basename(name))[0].lower()
    if core.endswith((".trc", ".zip", ".tar")) or ALERT_LOG_NAME.match(core):
        return None
    return _TRACE_MAP if core.endswith(".trm") else _NOT_TRACE


def _discover_path(path: Path, session: Session) -> Iterator[Source | Skipped]:
    """A path named by the user: a folder to walk, or a file read whatever its name."""
    label = printable(str(path))
    try:
        mode = path.stat().st_mode
    except OSError as exc:
        yield Skipped(label, f"cannot read: {describe(exc)}", partial=True)
        return
    if stat.S_ISDIR(mode):
        yield from _walk(path, session)
    elif stat.S_ISREG(mode):
        yield from _disk_file(path, label, session)
    else:  # a pipe or a device: read once, as it comes
        member = Member(label, path.name, partial(_open_disk, path, label), None)
        yield from _expand(member, 0, session, rereadable=False)


def _walk(root: Path, session: Session) -> Iterator[Source | Skipped]:
    """Every file under a folder, in name order; links are not followed."""
    pending = [root]
    while pending:
        directory = pending.pop()
        try:
            with os.scandir(directory) as scan:
                entries = sorted(scan, key=lambda entry: entry.name)
        except OSError as exc:
            label = printable(str(directory))
            yield Skipped(label, f"cannot read directory: {describe(exc)}", partial=True)
            continue
        subdirectories: list[Path] = []
        for entry in entries:
            try:
                yield from _walk_entry(entry, session, subdirectories)
            except OSError as exc:  # gone, or not stat-able, since the folder was listed
                yield Skipped(printable(entry.path), f"cannot read: {describe(exc)}", partial=True)
        pending.extend(reversed(subdirectories))


def _walk_entry(entry: os.DirEntry[str], session: Session, subdirectories: list[Path]) -> Iterator[Source | Skipped]:
    """One folder entry: a file to read or to list as skipped, or a folder to walk later."""
    label = printable(entry.path)
    if entry.is_symlink():
        yield Skipped(label, "symbolic link: not followed")
    elif entry.is_dir(follow_symlinks=False):
        subdirectories.append(Path(entry.path))
    elif not entry.is_file(follow_symlinks=False):
        yield Skipped(label, "not a regular file (device, FIFO or socket)")
    elif (reason := _skip_reason(entry.name)) is not None:
        yield Skipped(label, reason)
    else:
        yield from _disk_file(Path(entry.path), label, session)


def _disk_file(path: Path, label: str, session: Session) -> Iterator[Source | Skipped]:
    try:
        size = path.stat().st_size
        archives.open_file(path).close()
    except OSError as exc:
        yield Skipped(label, f"cannot read: {describe(exc)}", partial=True)
        return
    member = Member(label, path.name, partial(_open_disk, path, label), Region(session, path, 0, size))
    yield from _expand(member, 0, session)


def _open_disk(path: Path, label: str) -> Layer:
    return Layer(archives.open_file(path), label)


def _expand(member: Member, depth: int, session: Session, *, rereadable: bool = True) -> Iterator[Source | Skipped]:
    """A trace becomes a source; an archive is listed and its members expanded in turn.

    `depth` counts the archive and compression layers already opened to reach `member`.
    """
    core, suffixes = _split(_basename(member.name))
    kind = _kind(core)
    depth += len(suffixes) + (kind != "trace")
    if depth > session.limits.max_depth:
        reason = f"nesting depth over the limit ({session.limits.max_depth}): not opened"
        yield Skipped(member.label, reason, partial=True)
        return
    meters = [Meter(session, member.label) for _ in suffixes]
    stream = partial(_open_stages, member, suffixes, meters)
    if kind == "trace":
        stored = member.region.length if member.region else None
        yield Source(member.label, partial(_public_stream, stream), rereadable, stored)
    else:
        yield from _list_archive(kind, member, stream, bool(suffixes), depth, session)


def _open_stages(member: Member, suffixes: tuple[str, ...], meters: list[Meter]) -> Layer:
    """The member's bytes through its decompression stages; errors say which member."""
    try:
        layer = member.open()
        for suffix, meter in zip(suffixes, meters, strict=True):
            layer = decompressing(layer, suffix, meter)
    except CORRUPT_ERRORS as exc:
        raise corrupt(member.label, exc) from exc
    return layer


def _public_stream(stream: Callable[[], Layer]) -> BinaryIO:
    return io.BufferedReader(stream(), _BUFFER)


def _list_archive(
    kind: _Kind,
    member: Member,
    stream: Callable[[], Layer],
    compressed: bool,
    depth: int,
    session: Session,
) -> Iterator[Source | Skipped]:
    """List a zip or tar member and expand what it holds; a compressed zip is spooled first."""
    in_place = None if compressed else member.region
    try:
        if kind == "zip":
            listing = zip_members(in_place or _spooled(stream, member.label, session), member.label, _skip_reason)
        else:
            listing = tar_members(session, in_place or stream(), member.label, _skip_reason)
    except (LimitExceeded, CorruptInput) as exc:
        yield Skipped(member.label, reason_of(exc, member.label), partial=True)
        return
    for entry in listing:
        if isinstance(entry, Refusal):
            yield Skipped(entry.label, entry.reason, entry.partial)
        else:
            yield from _expand(entry, depth, session)


def _spooled(stream: Callable[[], Layer], label: str, session: Session) -> Region:
    with stream() as layer:
        return session.spool(layer, label)


@dataclass
class _Copy:
    """A kept source and what is known of its content, to recognise it uploaded again."""

    source: Source
    #: length (up to _HEAD + 1) and SHA-256 of the first bytes
    key: tuple[int, bytes]

    @classmethod
    def of(cls, source: Source) -> _Copy:
        with source.opener() as stream:
            head = stream.read(_HEAD + 1)
        return cls(source, (len(head), hashlib.sha256(head).digest()))

    @cached_property
    def digest(self) -> bytes | None:
        """SHA-256 of the whole content; None when it cannot be read to the end."""
        sha = hashlib.sha256()
        try:
            with self.source.opener() as stream:
                while chunk := stream.read(CHUNK):
                    sha.update(chunk)
        except (CorruptInput, LimitExceeded):
            return None
        return sha.digest()

    def same_as(self, other: _Copy) -> bool:
        """Same content: same head, and either nothing past it or the same full hash."""
        if self.key != other.key:
            return False
        return self.key[0] <= _HEAD or (self.digest is not None and self.digest == other.digest)


def _dedupe(sources: list[Source], skipped: list[Skipped]) -> list[Source]:
    """Keep the first copy of each content; a source that breaks early is kept (the reader reports it).

    Only the first 64 KiB of each source are read; two sources whose heads match are then
    compared by a full hash, so distinct traces cost one short read each.
    """
    kept: list[Source] = []
    copies: dict[tuple[int, bytes], list[_Copy]] = {}
    for source in sources:
        if not source.rereadable:
            kept.append(source)
            continue
        try:
            copy = _Copy.of(source)
        except (CorruptInput, LimitExceeded):
            kept.append(source)  # the lines before the damage are still worth reading
            continue
        same_key = copies.setdefault(copy.key, [])
        original = next((other for other in same_key if other.same_as(copy)), None)
        if original is not None:
            skipped.append(Skipped(source.label, f"duplicate of {original.source.label}"))
        else:
            same_key.append(copy)
            kept.append(source)
    return kept
