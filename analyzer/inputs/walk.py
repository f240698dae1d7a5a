"""Folders and globs walked: each folder once, in name order, symbolic links followed only while
they stay inside the folder (or the glob's fixed part) given, the kernel's pseudo file systems
(/proc, /sys, /dev) never entered, within the time budget of one input.

A regular file a walk finds is read, listed or skipped by its name: `filenames.rule`, the same
filter as for archive members.
"""

from __future__ import annotations

import fnmatch
import glob
import os
import re
import stat
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from analyzer.base.spill import check_stop
from analyzer.inputs.filenames import Mode, rule
from analyzer.inputs.limits import Limits
from analyzer.inputs.pipes import special_kind
from analyzer.inputs.skips import Skipped, describe, printable, unreadable

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


@dataclass(frozen=True)
class Target:
    """A path to discover: named on the command line, or matched by a glob (then it must stay
    inside the glob's fixed part, `boundary`, when it is a symbolic link)."""

    path: Path
    boundary: str | None = None


#: what a discovery does with a regular file a walk keeps: (path, label, its stat, what its name asks for)
FileHandler = Callable[[Path, str, os.stat_result, Mode], None]


class Walker:
    """The walks and globs of one discovery: the folders visited (each once over all its walks),
    the entries skipped (appended to `skipped`), and `on_file` called for each file kept."""

    def __init__(self, limits: Limits, skipped: list[Skipped], on_file: FileHandler) -> None:
        self.limits = limits
        self.skipped = skipped
        self._on_file = on_file
        self._folders: set[tuple[int, int]] = set()

    # --- globs --------------------------------------------------------------------------------

    def glob(self, pattern: str) -> tuple[list[Target], bool]:
        """The matches of a glob, found by the walk's rules (each folder once, links only inside
        the fixed part of the pattern, no pseudo file systems, within the time budget), and
        whether the time budget cut the search short (then reported as skipped)."""
        parts = Path(pattern).parts
        first = next(i for i, part in enumerate(parts) if glob.has_magic(part))
        base = Path(*parts[:first]) if first else Path(os.curdir)
        boundary = os.path.realpath(base)
        matches, stopped = self._matches(base, parts[first:], boundary)
        if stopped:
            limit = self.limits.max_seconds_per_input
            reason = f"glob expansion stopped after {limit:g} s (--max-seconds-per-input)"
            self.skipped.append(Skipped(printable(pattern), reason, True))
        return [Target(path, boundary) for path in sorted(set(matches), key=str)], stopped

    def _matches(self, base: Path, rest: tuple[str, ...], boundary: str) -> tuple[list[Path], bool]:
        """The paths under `base` that match the pattern parts `rest`; True when out of time."""
        deadline = time.monotonic() + self.limits.max_seconds_per_input
        matches: list[Path] = []
        seen: set[tuple[int, int, int]] = set()
        pending: list[tuple[Path, int]] = [(base, 0)]
        while pending:
            if time.monotonic() > deadline:
                return matches, True
            check_stop()
            directory, index = pending.pop()
            identity = _identity(directory)
            if identity is None or (*identity, index) in seen:
                continue
            seen.add((*identity, index))
            pending += self._match_in(directory, rest, index, boundary, matches)
        return matches, False

    def _match_in(
        self, directory: Path, rest: tuple[str, ...], index: int, boundary: str, matches: list[Path]
    ) -> list[tuple[Path, int]]:
        """Pattern part `index` matched in one folder (the matches of the last part added to
        `matches`); the folders to search next, with the part to match there."""
        part = rest[index]
        last = index == len(rest) - 1
        pending: list[tuple[Path, int]] = []
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
        return pending

    def _enterable(self, entry: os.DirEntry[str], boundary: str) -> bool:
        """A folder a walk may go into: a real folder, or a link to one inside `boundary`; not a
        pseudo file system."""
        try:
            if entry.is_symlink():
                if not inside(os.path.realpath(entry.path), boundary):
                    return False
                if not entry.is_dir(follow_symlinks=True):
                    return False
            elif not entry.is_dir(follow_symlinks=False):
                return False
        except OSError:
            return False
        return _pseudo(entry.path) is None

    # --- folders ------------------------------------------------------------------------------

    def walk(self, root: Path) -> None:
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
            self._folder(pending.pop(), boundary, deadline, pending)

    def _folder(self, directory: Path, boundary: str, deadline: float, pending: list[Path]) -> None:
        """The entries of one folder, in name order; the folders in it are walked next (pushed on
        `pending`, and the folder itself again when the time runs out in the middle of it)."""
        try:
            entries = _listing(directory)
        except OSError as exc:
            label = printable(str(directory))
            self.skipped.append(Skipped(label, f"cannot read directory: {describe(exc)}", partial=True))
            return
        folders: list[Path] = []
        for entry in entries:
            if time.monotonic() > deadline:
                pending.append(directory)
                break
            try:
                self._entry(entry, boundary, folders)
            except OSError as exc:  # gone, or not stat-able, since the folder was listed
                self.skipped.append(unreadable(printable(entry.path), exc))
        pending.extend(reversed(folders))

    def _entry(self, entry: os.DirEntry[str], boundary: str, folders: list[Path]) -> None:
        """One folder entry: a folder to walk later, a file to read, or something to skip."""
        label = printable(entry.path)
        info = self._stat(entry, boundary, label)
        if info is None:
            return
        if stat.S_ISDIR(info.st_mode):
            self._subfolder(entry, info, label, folders)
        elif stat.S_ISREG(info.st_mode):
            self._file(entry, info, label)
        else:
            self.skipped.append(Skipped(label, f"{special_kind(info.st_mode)}: not read in a folder walk"))

    def _stat(self, entry: os.DirEntry[str], boundary: str, label: str) -> os.stat_result | None:
        """An entry's status, through a symbolic link that stays inside `boundary`; None (the
        entry skipped) for a link that leads outside or nowhere."""
        if not entry.is_symlink():
            return entry.stat(follow_symlinks=False)
        if not inside(os.path.realpath(entry.path), boundary):
            self.skipped.append(Skipped(label, "symbolic link leading outside the folder given: not followed"))
            return None
        try:
            return os.stat(entry.path)
        except OSError as exc:
            self.skipped.append(Skipped(label, f"broken symbolic link: {describe(exc)}"))
            return None

    def _subfolder(self, entry: os.DirEntry[str], info: os.stat_result, label: str, folders: list[Path]) -> None:
        identity = (info.st_dev, info.st_ino)
        if (kind := _pseudo(entry.path)) is not None:
            self.skipped.append(Skipped(label, f"system folder ({kind} file system): not walked"))
        elif identity in self._folders:
            if entry.is_symlink():
                self.skipped.append(Skipped(label, "symbolic link to a folder already walked: not followed twice"))
        else:
            self._folders.add(identity)
            folders.append(Path(entry.path))

    def _file(self, entry: os.DirEntry[str], info: os.stat_result, label: str) -> None:
        """A regular file in a folder: read or listed by its name (`filenames.rule`), else skipped."""
        mode, reason = rule(entry.name)
        if mode is None:
            self.skipped.append(Skipped(label, reason))
        else:
            self._on_file(Path(entry.path), label, info, mode)


def inside(path: str, boundary: str) -> bool:
    """A real path is `boundary` or below it."""
    return path == boundary or path.startswith(boundary.rstrip(os.sep) + os.sep)


def _identity(path: Path) -> tuple[int, int] | None:
    try:
        info = path.stat()
    except OSError:
        return None
    return (info.st_dev, info.st_ino) if stat.S_ISDIR(info.st_mode) else None


def _listing(directory: Path) -> list[os.DirEntry[str]]:
    """A folder's entries in name order."""
    with os.scandir(directory) as scan:
        return sorted(scan, key=lambda entry: entry.name)


def _entries(directory: Path) -> list[os.DirEntry[str]]:
    try:
        return _listing(directory)
    except OSError:
        return []


def _glob_match(name: str, part: str) -> bool:
    """A name matches a pattern part as in glob: hidden names only when the part starts with a dot."""
    if name.startswith(".") and not part.startswith("."):
        return False
    return part == "**" or fnmatch.fnmatchcase(name, part)


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
