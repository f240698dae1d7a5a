"""Input discovery: the user's files, folders, globs and archives as trace sources to stream.

Every input is classified before it is read: a folder (walked, `walk`), a regular file (opened
as what its first bytes say, `classify`: a zip, a tar, a gzip / bzip2 / xz / zstd stream, text,
or binary data that is not a trace), a device, FIFO or socket (skipped unless
`Limits.read_special`, `pipes`), or something that cannot be read (skipped with the OS's
reason). Folder walks and globs visit each folder once, follow a symbolic link only when it
stays inside the folder (or the glob's fixed part) given, and skip the kernel's pseudo file
systems (/proc, /sys, /dev). Content found twice is read once.
"""

from __future__ import annotations

import glob
import os
import stat
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO

from analyzer.base.errors import CorruptInput, LimitExceeded, UsageError
from analyzer.inputs import streams
from analyzer.inputs.classify import HEAD_BYTES, Found, Source, expand
from analyzer.inputs.filenames import NOT_TRACE, Mode, without_compression
from analyzer.inputs.limits import InputStopped, Limits, Session
from analyzer.inputs.pipes import special_input
from analyzer.inputs.skips import Skipped, printable, reason_of, unreadable
from analyzer.inputs.streams import CHUNK, Member, file_member, read_up_to
from analyzer.inputs.walk import Target, Walker, inside

__all__ = ["Limits", "Skipped", "Source", "discover"]


def discover(
    paths: Sequence[str], *, limits: Limits | None = None, dedupe: bool = True
) -> tuple[list[Source], list[Skipped]]:
    """Expand files, directories, globs and archives into sources and skipped inputs.

    A file named on the command line is read whatever its name (as what its first bytes say);
    in folders and archives, `*.trc` names are read, `*.zip` / `*.tar` (and their compressed
    forms) are listed, names without an extension are opened only when they are archives, and
    every other member is listed as skipped (`filenames.rule`). With `dedupe`, content seen twice
    (a folder and a zip of it) is kept once: the later copies are skipped as duplicate content.

    Raises:
        UsageError: a path that names nothing (no file, no directory, no glob match).
    """
    session = Session(limits or Limits())
    finder = _Finder(session)
    targets = [target for raw in paths for target in finder.expand(raw)]
    for target in targets:
        finder.discover(target)
    finder.one_form()
    sources = finder.dedupe() if dedupe else [found.source for found in finder.found]
    return sources, finder.skipped


class _Finder:
    """One discovery: the session, what was found and skipped, the files visited."""

    def __init__(self, session: Session) -> None:
        self.session = session
        self.found: list[Found] = []
        self.skipped: list[Skipped] = []
        self._files: dict[tuple[int, int], str] = {}
        self._walker = Walker(session.limits, self.skipped, self._file)

    def expand(self, raw: str) -> list[Target]:
        """A path as given (taken literally when it exists, even with `[` or `*` in it), or the
        matches of a glob."""
        if os.path.lexists(raw):
            return [Target(Path(raw))]
        if glob.has_magic(raw):
            matches, stopped = self._walker.glob(raw)
            if matches or stopped:  # a glob cut short by its time budget is reported as skipped
                return matches
        raise UsageError(f"{raw}: no such file or directory")

    def discover(self, target: Target) -> None:
        """Classify a target and collect what it yields."""
        path = target.path
        label = printable(str(path))
        outside = target.boundary is not None and not inside(os.path.realpath(path), target.boundary)
        if outside and path.is_symlink():
            self.skipped.append(Skipped(label, "symbolic link leading outside the glob's folder: not followed"))
            return
        try:
            info = path.stat()
        except OSError as exc:
            self.skipped.append(unreadable(label, exc))
            return
        if stat.S_ISDIR(info.st_mode):
            self._walker.walk(path)
        elif stat.S_ISREG(info.st_mode):
            self._file(path, label, info, "named")
        else:
            self._add(special_input(path, label, info.st_mode, self.session))

    def _file(self, path: Path, label: str, info: os.stat_result, mode: Mode) -> None:
        """A regular file, named or found in a folder: expanded, unless it was seen already."""
        identity = (info.st_dev, info.st_ino)
        first = self._files.get(identity)
        if first is not None:
            if first != label:
                self.skipped.append(Skipped(label, f"the same file as {first}"))
            return
        if mode == "probe" and info.st_size == 0:  # (also every file of /proc: reading may block)
            self.skipped.append(Skipped(label, NOT_TRACE))
            return
        try:
            streams.open_file(path).close()
        except OSError as exc:
            self.skipped.append(unreadable(label, exc))
            return
        self._files[identity] = label
        self._collect(file_member(self.session, path, label, info.st_size), mode)

    def _collect(self, member: Member, mode: Mode) -> None:
        """Expand one input; a limit of the whole input ends it with one skipped entry (when the
        input's own budget is spent, the members found before cannot be read either: they are
        dropped, and counted there)."""
        first = len(self.found)
        try:
            for found in expand(member, 0, mode, self.session):
                self._add(found)
        except InputStopped as exc:
            label = member.tree.label
            dropped = len(self.found) - first if member.tree.stopped is not None else 0
            del self.found[len(self.found) - dropped :]
            also = f" ({dropped} member(s) found before that are not read either)" if dropped else ""
            self.skipped.append(Skipped(label, reason_of(exc, label) + also, True))

    def _add(self, found: Found | Skipped) -> None:
        if isinstance(found, Skipped):
            self.skipped.append(found)
        elif found.key is not None and found.key[0] == 0:  # nothing to read, and no identity to give
            self.skipped.append(Skipped(found.source.label, "empty"))
        else:
            self.found.append(found)

    # --- duplicates ---------------------------------------------------------------------------

    def one_form(self) -> None:
        """Of the forms of one trace (`x.trc` beside `x.trc.gz`, a copy taken while housekeeping
        compressed it), one is read: the one whose content the others begin with, or else the
        longest; the others are skipped, the choice said."""
        forms: dict[str, list[Found]] = {}
        for found in self.found:
            if found.source.rereadable:
                forms.setdefault(without_compression(found.source.label), []).append(found)
        dropped: set[int] = set()
        for group in forms.values():
            if len(group) < 2:
                continue
            kept, others = _chosen(group)
            for other, why, partial in others:
                reason = f"another form of {kept.source.label}, which is read: {why}"
                self.skipped.append(Skipped(other.source.label, reason, partial))
                dropped.add(id(other))
        self.found = [found for found in self.found if id(found) not in dropped]

    def dedupe(self) -> list[Source]:
        """Keep the first copy of each content; the others are skipped as duplicate content.

        Contents are told apart by their first 64 KiB, read at discovery; two sources with the
        same head are compared by a hash of their whole content (a source that cannot be read to
        its end is kept: the reader reports it). Linear in the number of sources.
        """
        kept: list[Source] = []
        seen = _Seen()
        for found in self.found:
            original = seen.original(found)
            if original is found:
                kept.append(found.source)
            else:
                reason = f"duplicate content: the same bytes as {original.source.label}"
                self.skipped.append(Skipped(found.source.label, reason))
        return kept


def _chosen(group: list[Found]) -> tuple[Found, list[tuple[Found, str, bool]]]:
    """The form of a trace to read, and each other form with why it is not (and whether content is lost):
    read side by side in chunks, never whole in memory."""
    sizes = {id(found): _compared(found, None)[0] for found in group}
    plain = {id(found): without_compression(found.source.label) == found.source.label for found in group}
    kept = max(group, key=lambda found: (sizes[id(found)], plain[id(found)]))  # a tie: the uncompressed one
    others = []
    for found in group:
        if found is kept:
            continue
        size, begins = _compared(found, kept)
        whole = f"{sizes[id(kept)]:,} bytes"
        if begins and size == sizes[id(kept)]:
            others.append((found, f"the same content ({whole})", False))
        elif begins:
            others.append((found, f"its {size:,} bytes begin its {whole}", False))
        else:
            others.append((found, f"its {size:,} bytes differ from its {whole}: the longer is read", True))
    return kept, others


def _compared(found: Found, longer: Found | None) -> tuple[int, bool]:
    """The bytes a source gives (to its end, or to damage) and whether they begin `longer`'s."""
    size, begins = 0, True
    try:
        with found.source.opener() as stream, _opened(longer) as other:
            while chunk := stream.read(CHUNK):
                size += len(chunk)
                if begins and other is not None:
                    begins = read_up_to(other, len(chunk)) == chunk
    except (CorruptInput, LimitExceeded):
        pass
    return size, begins


@contextmanager
def _opened(found: Found | None) -> Iterator[_Quiet | None]:
    """A source's stream whose damage ends it quietly (None: no source)."""
    if found is None:
        yield None
        return
    with found.source.opener() as stream:
        yield _Quiet(stream)


class _Quiet:
    """A stream whose damage reads as its end."""

    def __init__(self, stream: BinaryIO) -> None:
        self._stream = stream

    def read(self, size: int = -1, /) -> bytes:
        try:
            return self._stream.read(size)
        except (CorruptInput, LimitExceeded):
            return b""

    def close(self) -> None:
        self._stream.close()


class _Seen:
    """The contents kept so far: by their first bytes, and by the digest of the whole."""

    def __init__(self) -> None:
        self._by_head: dict[tuple[int, bytes], Found] = {}
        self._by_digest: dict[tuple[tuple[int, bytes], bytes], Found] = {}

    def original(self, found: Found) -> Found:
        """The first source of the same content as `found` (itself when it is the first)."""
        if found.key is None:
            return found
        original = self._by_head.setdefault(found.key, found)
        if original is found or found.key[0] <= HEAD_BYTES:
            return original
        digest, first = found.full_digest(), original.full_digest()
        if digest is None:
            return found
        if first is not None:
            self._by_digest.setdefault((found.key, first), original)
        return self._by_digest.setdefault((found.key, digest), found)
