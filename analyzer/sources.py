"""Input discovery: the user's files, folders, globs and archives as trace sources to stream.

Every input is classified before it is read: a folder (walked), a regular file (opened as what
its first bytes say: a zip, a tar, a gzip / bzip2 / xz / zstd stream, text, or binary data that
is not a trace), a device, FIFO or socket (skipped unless `Limits.read_special`), or something
that cannot be read (skipped with the OS's reason). Folder walks and globs visit each folder
once, follow a symbolic link only when it stays inside the folder (or the glob's fixed part)
given, and skip the kernel's pseudo file systems (/proc, /sys, /dev).
"""

from __future__ import annotations

import fnmatch
import glob
import hashlib
import io
import os
import re
import select
import stat
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import cache, partial
from pathlib import Path
from typing import BinaryIO, Literal

from analyzer import streams
from analyzer.errors import CorruptInput, LimitExceeded, UsageError
from analyzer.limits import InputStopped, Limits, Session, Tree
from analyzer.skips import CORRUPT_ERRORS, Skipped, corrupt, describe, printable, reason_of
from analyzer.sniff import archive_of, compression_of, not_text, zip_document
from analyzer.spill import check_stop
from analyzer.streams import (
    CHUNK,
    COMPRESSION_SUFFIXES,
    ByteReader,
    Layer,
    Member,
    Meter,
    Region,
    decompressing,
    spool,
)
from analyzer.tar_archives import tar_members
from analyzer.zip_archives import zip_members

__all__ = ["Limits", "Skipped", "Source", "discover"]

#: short archive suffixes, spelled out so the compression suffix can be peeled off
_ALIASES = {".tgz": ".tar.gz", ".tbz2": ".tar.bz2", ".txz": ".tar.xz"}
_TRACE_MAP = "trace map (.trm) file: ADR metadata, nothing to parse"
_NOT_TRACE = "not a trace file (*.trc) by its name"
#: buffer of the streams handed out (fewer, larger reads through the decompression stages)
_BUFFER = 128 * 1024
#: bytes read at discovery: enough to tell text from binary, and to tell contents apart
_HEAD = 64 * 1024
#: how long a pipe's reader sleeps between checks of the time budget and of stop signals
_POLL_SECONDS = 0.2
#: file systems of the kernel's own objects: a walk does not go into them
_PSEUDO_FILE_SYSTEMS = {
    "proc",
    "sysfs",
    "devtmpfs",
    "devpts",
    "cgroup",
    "cgroup2",
    "debugfs",
    "tracefs",
    "securityfs",
    "pstore",
    "bpf",
    "configfs",
    "fusectl",
    "mqueue",
    "hugetlbfs",
    "autofs",
    "binfmt_misc",
    "efivarfs",
    "selinuxfs",
    "rpc_pipefs",
    "nsfs",
}
#: a member label made unique by streams.Labels ends with " [N]"
_ENTRY = re.compile(r" \[\d+\]$")

#: what a name found in a folder or an archive asks for: read it as a trace or archive
#: ("trace"), list it as an archive ("archive"), or look at its first bytes for an archive ("probe")
_Mode = Literal["named", "trace", "archive", "probe"]


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
        return _split(_basename(_ENTRY.sub("", self.label.rsplit("!", 1)[-1])))[0]


def discover(
    paths: Sequence[str], *, limits: Limits | None = None, dedupe: bool = True
) -> tuple[list[Source], list[Skipped]]:
    """Expand files, directories, globs and archives into sources and skipped inputs.

    A file named on the command line is read whatever its name (as what its first bytes say);
    in folders and archives, `*.trc` names are read, `*.zip` / `*.tar` (and their compressed
    forms) are listed, names without an extension are opened only when they are archives, and
    every other member is listed as skipped. With `dedupe`, content seen twice (a folder and a
    zip of it) is kept once: the later copies are skipped as duplicate content.

    Raises:
        UsageError: a path that names nothing (no file, no directory, no glob match).
    """
    session = Session(limits or Limits())
    finder = _Finder(session)
    targets = [target for raw in paths for target in finder.expand(raw)]
    for target in targets:
        finder.discover(target)
    sources = finder.dedupe() if dedupe else [found.source for found in finder.found]
    return sources, finder.skipped


@dataclass(frozen=True)
class _Target:
    """A path to discover: named on the command line, or matched by a glob (then it must stay
    inside the glob's fixed part, `boundary`, when it is a symbolic link)."""

    path: Path
    boundary: str | None = None


@dataclass
class _Found:
    """A source, and what is known of its content to recognise it uploaded again."""

    source: Source
    #: length (up to _HEAD + 1) and SHA-256 of the first bytes; None for a pipe or device
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


class _Finder:
    """One discovery: the session, what was found and skipped, the folders and files visited."""

    def __init__(self, session: Session) -> None:
        self.session = session
        self.limits = session.limits
        self.found: list[_Found] = []
        self.skipped: list[Skipped] = []
        self._folders: set[tuple[int, int]] = set()
        self._files: dict[tuple[int, int], str] = {}

    # --- command-line arguments ---------------------------------------------------------------

    def expand(self, raw: str) -> list[_Target]:
        """A path as given (taken literally when it exists, even with `[` or `*` in it), or the
        matches of a glob."""
        if os.path.lexists(raw):
            return [_Target(Path(raw))]
        if glob.has_magic(raw):
            matches, stopped = self._glob(raw)
            if matches or stopped:  # a glob cut short by its time budget is reported as skipped
                return matches
        raise UsageError(f"{raw}: no such file or directory")

    def _glob(self, pattern: str) -> tuple[list[_Target], bool]:
        """The matches of a glob, found by the walk's rules (each folder once, links only inside
        the fixed part of the pattern, no pseudo file systems, within the time budget)."""
        parts = Path(pattern).parts
        first = next(i for i, part in enumerate(parts) if glob.has_magic(part))
        base = Path(*parts[:first]) if first else Path(os.curdir)
        boundary = os.path.realpath(base)
        rest = parts[first:]
        deadline = time.monotonic() + self.limits.max_seconds_per_input
        matches: list[Path] = []
        seen: set[tuple[int, int, int]] = set()
        pending: list[tuple[Path, int]] = [(base, 0)]
        stopped = False
        while pending:
            if time.monotonic() > deadline:
                limit = self.limits.max_seconds_per_input
                reason = f"glob expansion stopped after {limit:g} s (--max-seconds-per-input)"
                self.skipped.append(Skipped(printable(pattern), reason, True))
                stopped = True
                break
            check_stop()
            directory, index = pending.pop()
            identity = _identity(directory)
            if identity is None or (*identity, index) in seen:
                continue
            seen.add((*identity, index))
            part = rest[index]
            last = index == len(rest) - 1
            if part == "**":
                if last:
                    matches.append(directory)
                else:
                    pending.append((directory, index + 1))
            for entry in _entries(directory):
                if not _glob_match(entry.name, part):
                    continue
                child = directory / entry.name  # (no "./" in front of a relative pattern's matches)
                if last:
                    matches.append(child)
                if (part == "**" or not last) and self._enterable(entry, boundary):
                    pending.append((child, index if part == "**" else index + 1))
        return [_Target(path, boundary) for path in sorted(set(matches), key=str)], stopped

    def _enterable(self, entry: os.DirEntry[str], boundary: str) -> bool:
        """A folder a walk may go into: a real folder, or a link to one inside `boundary`; not a
        pseudo file system."""
        try:
            if entry.is_symlink():
                if not _inside(os.path.realpath(entry.path), boundary):
                    return False
                if not entry.is_dir(follow_symlinks=True):
                    return False
            elif not entry.is_dir(follow_symlinks=False):
                return False
        except OSError:
            return False
        return _pseudo(entry.path) is None

    # --- one target ---------------------------------------------------------------------------

    def discover(self, target: _Target) -> None:
        """Classify a target and collect what it yields."""
        path = target.path
        label = printable(str(path))
        outside = target.boundary is not None and not _inside(os.path.realpath(path), target.boundary)
        if outside and path.is_symlink():
            self.skipped.append(Skipped(label, "symbolic link leading outside the glob's folder: not followed"))
            return
        try:
            info = path.stat()
        except OSError as exc:
            self.skipped.append(Skipped(label, f"cannot read: {describe(exc)}", partial=True))
            return
        if stat.S_ISDIR(info.st_mode):
            self._walk(path)
        elif stat.S_ISREG(info.st_mode):
            self._file(path, label, info, "named")
        else:
            self._special(path, label, info.st_mode)

    def _special(self, path: Path, label: str, mode: int) -> None:
        kind = _special_kind(mode)
        if stat.S_ISSOCK(mode):
            self.skipped.append(Skipped(label, "socket: nothing to read as a file"))
        elif not self.limits.read_special:
            self.skipped.append(Skipped(label, f"{kind}: not read (--read-special reads it)"))
        else:
            tree = Tree(self.session, label, None)
            opener = partial(_open_special, path, label, tree)
            self.found.append(_Found(Source(label, opener, rereadable=False), None))

    def _walk(self, root: Path) -> None:
        """Every file under a folder, in name order; each folder once, links only inside the root."""
        boundary = os.path.realpath(root)
        deadline = time.monotonic() + self.limits.max_seconds_per_input
        identity = _identity(root)
        if identity is None or identity in self._folders:
            return
        self._folders.add(identity)
        pending = [root]
        while pending:
            if time.monotonic() > deadline:
                limit = self.limits.max_seconds_per_input
                left = len(pending)
                reason = f"folder walk stopped after {limit:g} s (--max-seconds-per-input): {left} folder(s) left"
                self.skipped.append(Skipped(printable(str(root)), reason, True))
                return
            check_stop()
            directory = pending.pop()
            try:
                with os.scandir(directory) as scan:
                    entries = sorted(scan, key=lambda entry: entry.name)
            except OSError as exc:
                label = printable(str(directory))
                self.skipped.append(Skipped(label, f"cannot read directory: {describe(exc)}", partial=True))
                continue
            folders: list[Path] = []
            for entry in entries:
                if time.monotonic() > deadline:
                    pending.append(directory)
                    break
                try:
                    self._entry(entry, boundary, folders)
                except OSError as exc:  # gone, or not stat-able, since the folder was listed
                    self.skipped.append(Skipped(printable(entry.path), f"cannot read: {describe(exc)}", partial=True))
            pending.extend(reversed(folders))

    def _entry(self, entry: os.DirEntry[str], boundary: str, folders: list[Path]) -> None:
        """One folder entry: a folder to walk later, a file to read, or something to skip."""
        label = printable(entry.path)
        if entry.is_symlink():
            if not _inside(os.path.realpath(entry.path), boundary):
                self.skipped.append(Skipped(label, "symbolic link leading outside the folder given: not followed"))
                return
            try:
                info = os.stat(entry.path)
            except OSError as exc:
                self.skipped.append(Skipped(label, f"broken symbolic link: {describe(exc)}"))
                return
        else:
            info = entry.stat(follow_symlinks=False)
        if stat.S_ISDIR(info.st_mode):
            identity = (info.st_dev, info.st_ino)
            if (kind := _pseudo(entry.path)) is not None:
                self.skipped.append(Skipped(label, f"system folder ({kind} file system): not walked"))
            elif identity in self._folders:
                if entry.is_symlink():
                    self.skipped.append(Skipped(label, "symbolic link to a folder already walked: not followed twice"))
            else:
                self._folders.add(identity)
                folders.append(Path(entry.path))
        elif stat.S_ISREG(info.st_mode):
            mode, reason = _rule(entry.name)
            if mode is None:
                self.skipped.append(Skipped(label, reason))
            else:
                self._file(Path(entry.path), label, info, mode)
        else:
            self.skipped.append(Skipped(label, f"{_special_kind(info.st_mode)}: not read in a folder walk"))

    def _file(self, path: Path, label: str, info: os.stat_result, mode: _Mode) -> None:
        identity = (info.st_dev, info.st_ino)
        first = self._files.get(identity)
        if first is not None:
            if first != label:
                self.skipped.append(Skipped(label, f"the same file as {first}"))
            return
        if mode == "probe" and info.st_size == 0:  # (also every file of /proc: reading may block)
            self.skipped.append(Skipped(label, _NOT_TRACE))
            return
        tree = Tree(self.session, label, info.st_size)
        try:
            streams.open_file(path).close()
        except OSError as exc:
            self.skipped.append(Skipped(label, f"cannot read: {describe(exc)}", partial=True))
            return
        self._files[identity] = label
        region = Region(self.session, path, 0, info.st_size)
        member = Member(label, path.name, partial(_open_disk, path, label, tree), region, tree)
        self._collect(member, mode)

    def _collect(self, member: Member, mode: _Mode) -> None:
        """Expand one input; a limit of the whole input ends it with one skipped entry (when the
        input's own budget is spent, the members found before cannot be read either: they are
        dropped, and counted there)."""
        first = len(self.found)
        try:
            for found in _expand(member, 0, mode, self.session):
                if isinstance(found, Skipped):
                    self.skipped.append(found)
                else:
                    self.found.append(found)
        except InputStopped as exc:
            label = member.tree.label
            dropped = len(self.found) - first if member.tree.stopped is not None else 0
            del self.found[len(self.found) - dropped :]
            also = f" ({dropped} member(s) found before that are not read either)" if dropped else ""
            self.skipped.append(Skipped(label, reason_of(exc, label) + also, True))

    # --- duplicates ---------------------------------------------------------------------------

    def dedupe(self) -> list[Source]:
        """Keep the first copy of each content; the others are skipped as duplicate content.

        Contents are told apart by their first 64 KiB, read at discovery; two sources with the
        same head are compared by a hash of their whole content (a source that cannot be read to
        its end is kept: the reader reports it). Linear in the number of sources.
        """
        kept: list[Source] = []
        by_head: dict[tuple[int, bytes], _Found] = {}
        by_digest: dict[tuple[tuple[int, bytes], bytes], _Found] = {}
        for found in self.found:
            original = by_head.setdefault(found.key, found) if found.key is not None else found
            if original is not found and found.key is not None and found.key[0] > _HEAD:
                digest, first = found.full_digest(), original.full_digest()
                if digest is None:
                    original = found
                else:
                    if first is not None:
                        by_digest.setdefault((found.key, first), original)
                    original = by_digest.setdefault((found.key, digest), found)
            if original is found:
                kept.append(found.source)
            else:
                reason = f"duplicate content: the same bytes as {original.source.label}"
                self.skipped.append(Skipped(found.source.label, reason))
        return kept


# --- expanding one input: probe, list, read -----------------------------------------------------


def _expand(member: Member, depth: int, mode: _Mode, session: Session) -> Iterator[_Found | Skipped]:
    """What a file or member holds: a source, an archive's members (expanded in turn), or the
    reason it is skipped. `depth` counts the layers already opened to reach `member`.

    Raises:
        InputStopped: a limit of the whole input.
    """
    limits = session.limits
    suffixes: list[str] = []
    meters: list[Meter] = []
    while True:
        try:
            head = _head(member, suffixes, meters)
        except InputStopped:
            raise
        except LimitExceeded as exc:
            yield Skipped(member.label, reason_of(exc, member.label), True)
            return
        except CorruptInput as exc:
            if mode in ("trace", "named"):  # the lines before the damage are still worth reading
                yield _Found(_source(member, suffixes, meters), None)
            else:
                yield Skipped(member.label, reason_of(exc, member.label), True)
            return
        suffix = compression_of(head)
        if suffix is None:
            break
        if depth + len(suffixes) + 1 > limits.max_depth:
            yield Skipped(member.label, f"nesting depth over the limit ({limits.max_depth}): not opened", True)
            return
        suffixes.append(suffix)
        meters.append(Meter(session, member.label, member.tree))
    kind = archive_of(head) or _archive_by_name(member.name)
    if kind is not None:
        if kind == "zip" and zip_document(head):
            yield Skipped(member.label, "not a text trace: a document or Java archive (zip of XML or classes)")
            return
        depth += len(suffixes) + 1
        if depth > limits.max_depth:
            yield Skipped(member.label, f"nesting depth over the limit ({limits.max_depth}): not opened", True)
            return
        yield from _list_archive(kind, member, suffixes, meters, depth, session)
        return
    if mode in ("archive", "probe"):
        yield Skipped(member.label, _NOT_TRACE)
        return
    if (reason := not_text(head)) is not None:
        yield Skipped(member.label, reason)
        return
    yield _Found(_source(member, suffixes, meters), (len(head), hashlib.sha256(head).digest()))


def _archive_by_name(name: str) -> str | None:
    """A zip or tar by its name only (a self-extracting zip, a zip whose first bytes are damaged)."""
    core = _split(_basename(name))[0].lower()
    return "zip" if core.endswith(".zip") else "tar" if core.endswith(".tar") else None


def _head(member: Member, suffixes: list[str], meters: list[Meter]) -> bytes:
    """The first bytes of a member through its decompression stages."""
    with _open_stages(member, suffixes, meters) as stream:
        return _read_up_to(stream, _HEAD + 1)


def _read_up_to(stream: io.RawIOBase | Layer, size: int) -> bytes:
    parts: list[bytes] = []
    got = 0
    while got < size and (data := stream.read(size - got)):
        parts.append(data)
        got += len(data)
    return b"".join(parts)


def _source(member: Member, suffixes: list[str], meters: list[Meter]) -> Source:
    stored = member.region.length if member.region else None
    return Source(member.label, partial(_public_stream, member, tuple(suffixes), meters), stored_bytes=stored)


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
    return io.BufferedReader(_open_stages(member, suffixes, meters), _BUFFER)


def _open_disk(path: Path, label: str, tree: Tree) -> Layer:
    tree.check()
    try:
        return Layer(streams.open_file(path), label, tree=tree)
    except OSError as exc:
        raise CorruptInput(f"{label}: cannot read: {describe(exc)}") from exc


def _list_archive(
    kind: str, member: Member, suffixes: list[str], meters: list[Meter], depth: int, session: Session
) -> Iterator[_Found | Skipped]:
    """List a zip or tar and expand what it holds; a compressed or nested zip is spooled first."""
    in_place = None if suffixes else member.region
    try:
        if kind == "zip":
            region = in_place or _spooled(member, suffixes, meters, session)
            listing = zip_members(region, member.label, member.tree, _wanted)
        else:
            source = in_place or _open_stages(member, suffixes, meters)
            listing = tar_members(session, source, member.label, member.tree, _wanted)
    except InputStopped:
        raise
    except (LimitExceeded, CorruptInput) as exc:
        yield Skipped(member.label, reason_of(exc, member.label), partial=True)
        return
    for entry in listing:
        if isinstance(entry, Skipped):
            yield entry
        else:
            yield from _expand(entry, depth, _rule(entry.name)[0] or "trace", session)


def _spooled(member: Member, suffixes: list[str], meters: list[Meter], session: Session) -> Region:
    with _open_stages(member, suffixes, meters) as layer:
        return spool(session, layer, member.label, member.tree)


def _wanted(name: str) -> str | None:
    """Why a member with this name is not read (or None to open it)."""
    mode, reason = _rule(name)
    return None if mode is not None else reason


# --- names ------------------------------------------------------------------------------------


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


def _rule(name: str) -> tuple[_Mode | None, str]:
    """What to do with a file found in a folder or an archive, by its name: (mode, "") with mode
    "trace" (`*.trc`), "archive" (`*.zip`, `*.tar`) or "probe" (no extension: read only if it
    is an archive); or (None, the reason it is skipped)."""
    core = _split(_basename(name))[0]
    lower = core.lower()
    if lower.endswith(".trc"):
        return "trace", ""
    if lower.endswith((".zip", ".tar")):
        return "archive", ""
    if "." not in core.lstrip("."):
        return "probe", ""
    return None, _TRACE_MAP if lower.endswith(".trm") else _NOT_TRACE


# --- pipes and devices ------------------------------------------------------------------------


def _special_kind(mode: int) -> str:
    if stat.S_ISCHR(mode):
        return "character device"
    if stat.S_ISBLK(mode):
        return "block device"
    if stat.S_ISFIFO(mode):
        return "FIFO (named pipe)"
    if stat.S_ISSOCK(mode):
        return "socket"
    return "not a regular file"


def _open_special(path: Path, label: str, tree: Tree) -> BinaryIO:
    """A device or pipe named with --read-special: read once as it comes, bounded by the bytes
    budget of the run and the input's time budget; compressed data are decompressed (by their
    first bytes); binary data and archives are refused."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0))
    except OSError as exc:
        raise CorruptInput(f"{label}: cannot read: {describe(exc)}") from exc
    session = tree.session
    meter = Meter(session, label, tree, ratio=False)
    top = Layer(_Pipe(fd, label, tree), label, meter=meter)
    depth = 0
    while True:
        head = _read_up_to(top, _HEAD + 1)
        top = Layer(_Replay(head, top), label, tree=tree, below=top)
        suffix = compression_of(head)
        if suffix is None:
            break
        depth += 1
        if depth > session.limits.max_depth:
            top.close()
            raise LimitExceeded(f"{label}: nesting depth over the limit ({session.limits.max_depth})")
        top = decompressing(top, suffix, Meter(session, label, tree))
    if archive_of(head) is not None:
        top.close()
        raise CorruptInput(f"{label}: a zip or tar archive cannot be read from a pipe or device; save it to a file")
    if (reason := not_text(head)) is not None:
        top.close()
        raise CorruptInput(f"{label}: {reason}")
    return io.BufferedReader(top, _BUFFER)


class _Pipe(ByteReader):
    """A device or FIFO read without ever blocking for long: the wait for data is bounded by the
    input's time budget and broken by stop signals. A FIFO nobody has opened for writing yet is
    waited for; once a writer came and went, an empty read is the end."""

    def __init__(self, fd: int, label: str, tree: Tree) -> None:
        super().__init__()
        self._fd, self._label, self._tree = fd, label, tree
        self._poll = select.poll()
        self._poll.register(fd, select.POLLIN | select.POLLPRI)
        self._connected = False

    def read(self, size: int | None = -1, /) -> bytes:
        size = CHUNK if size is None or size < 0 else max(size, 1)
        budget = self._tree.remaining_seconds()
        started = time.perf_counter()
        while True:
            check_stop()
            left = budget - (time.perf_counter() - started)
            if left <= 0:
                limit = self._tree.session.limits.max_seconds_per_input
                what = "no data came" if not self._connected else "the data stopped coming"
                raise InputStopped(f"{self._label}: {what} within {limit:g} s (--max-seconds-per-input)")
            events = self._poll.poll(1000 * min(left, _POLL_SECONDS))
            try:
                data = os.read(self._fd, size)
            except BlockingIOError:
                continue
            except OSError as exc:
                raise CorruptInput(f"{self._label}: cannot read: {describe(exc)}") from exc
            if data:
                self._connected = True
                return data
            if events or self._connected:
                return b""

    def close(self) -> None:
        if not self.closed:
            os.close(self._fd)
        super().close()


class _Replay(ByteReader):
    """The bytes already read from a stream, then the rest of the stream."""

    def __init__(self, head: bytes, rest: Layer) -> None:
        super().__init__()
        self._head, self._rest = head, rest

    def read(self, size: int | None = -1, /) -> bytes:
        if self._head:
            size = len(self._head) if size is None or size < 0 else size
            data, self._head = self._head[:size], self._head[size:]
            return data
        return self._rest.read(size)

    def close(self) -> None:
        super().close()


# --- walks ------------------------------------------------------------------------------------


def _identity(path: Path) -> tuple[int, int] | None:
    try:
        info = path.stat()
    except OSError:
        return None
    return (info.st_dev, info.st_ino) if stat.S_ISDIR(info.st_mode) else None


def _entries(directory: Path) -> list[os.DirEntry[str]]:
    try:
        with os.scandir(directory) as scan:
            return sorted(scan, key=lambda entry: entry.name)
    except OSError:
        return []


def _glob_match(name: str, part: str) -> bool:
    """A name matches a pattern part as in glob: hidden names only when the part starts with a dot."""
    if name.startswith(".") and not part.startswith("."):
        return False
    return part == "**" or fnmatch.fnmatchcase(name, part)


def _inside(path: str, boundary: str) -> bool:
    return path == boundary or path.startswith(boundary.rstrip(os.sep) + os.sep)


def _pseudo(path: str) -> str | None:
    """The kernel file system mounted at `path` (proc, sysfs, ...), if it is one."""
    return _pseudo_mounts().get(os.path.realpath(path))


@cache
def _pseudo_mounts() -> dict[str, str]:
    """Mount points of the kernel's pseudo file systems (Linux; empty elsewhere)."""
    try:
        lines = Path("/proc/self/mounts").read_text().splitlines()
    except OSError:
        return {}
    mounts: dict[str, str] = {}
    for line in lines:
        fields = line.split()
        if len(fields) >= 3 and fields[2] in _PSEUDO_FILE_SYSTEMS:
            point = re.sub(r"\\([0-7]{3})", lambda m: chr(int(m[1], 8)), fields[1])
            mounts[point] = fields[2]
    return mounts
