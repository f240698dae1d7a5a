"""Input discovery: turn the user's paths into readable trace sources (read stage, part 1).

A `Source` is a label (what reports print) plus an opener that yields the decompressed bytes.
Nothing is ever extracted to disk. Files that are clearly not traces (`.trm` maps, alert logs
found while walking a directory) are returned as `Skipped` so the inventory can list them.
"""

from __future__ import annotations

import bz2
import glob
import gzip
import lzma
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

from analyzer.errors import UsageError

#: compressed single-file wrappers, by suffix
_DECOMPRESSORS: dict[str, Callable[[str], BinaryIO]] = {
    ".gz": lambda p: gzip.open(p, "rb"),
    ".bz2": lambda p: bz2.open(p, "rb"),
    ".xz": lambda p: lzma.open(p, "rb"),
}
#: names taken when walking a directory (explicitly named files are always read)
_TRACE_SUFFIXES = (".trc",)
#: names listed as skipped when walking a directory
_SKIP_REASONS = {".trm": "trace map (.trm) file: ADR metadata, nothing to parse"}


@dataclass(frozen=True)
class Source:
    """One trace file to read, possibly inside an archive or compressed."""

    label: str
    opener: Callable[[], BinaryIO] = field(compare=False, repr=False)

    @property
    def name(self) -> str:
        """The base file name without compression suffix (used for classification)."""
        base = self.label.replace("\\", "/").rsplit("!", 1)[-1].rsplit("/", 1)[-1]
        for suffix in _DECOMPRESSORS:
            if base.endswith(suffix):
                return base[: -len(suffix)]
        return base


@dataclass(frozen=True)
class Skipped:
    """An input member that was found but not read, with the reason."""

    label: str
    reason: str


def _open_file(path: Path) -> Callable[[], BinaryIO]:
    suffix = path.suffix.lower()
    if suffix in _DECOMPRESSORS:
        return lambda: _DECOMPRESSORS[suffix](str(path))
    return lambda: path.open("rb")


def _walk(directory: Path) -> Iterator[Source | Skipped]:
    for path in sorted(p for p in directory.rglob("*") if p.is_file() or p.is_symlink()):
        name = path.name.lower()
        stem = name
        for suffix in _DECOMPRESSORS:
            if stem.endswith(suffix):
                stem = stem[: -len(suffix)]
        if path.is_symlink():
            yield Skipped(str(path), "symbolic link: not followed")
        elif stem.endswith(_TRACE_SUFFIXES):
            yield Source(str(path), _open_file(path))
        else:
            reason = _SKIP_REASONS.get(Path(stem).suffix, "not a trace file (*.trc) by its name")
            yield Skipped(str(path), reason)


def discover(paths: Sequence[str]) -> tuple[list[Source], list[Skipped]]:
    """Expand files, directories and globs into sources and skipped members.

    Raises:
        UsageError: a path that names nothing (no file, no directory, no glob match).
    """
    sources: list[Source] = []
    skipped: list[Skipped] = []
    for raw in paths:
        matches = [Path(m) for m in sorted(glob.glob(raw))] if glob.has_magic(raw) else [Path(raw)]
        if not matches or not all(m.exists() for m in matches):
            raise UsageError(f"{raw}: no such file or directory")
        for path in matches:
            if path.is_dir():
                for item in _walk(path):
                    (sources if isinstance(item, Source) else skipped).append(item)  # type: ignore[arg-type]
            else:
                sources.append(Source(str(path), _open_file(path)))
    seen: set[str] = set()
    unique = [s for s in sources if not (s.label in seen or seen.add(s.label))]
    return unique, skipped
