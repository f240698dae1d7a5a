"""The inputs of a run: what is new, changed, unchanged, moved or gone since the manifest's record.

Every file found under the command line's paths, and every file an earlier run recorded (a nightly
run may be given only the new day's folder: the earlier days stay in the dataset), is compared with
its record by size and modification time; a file that differs is probed again (content digest and
identity, `analyzer.batch.probe`). A recorded file that is gone keeps its record, so that the rows
read from it stay; the same content found at another path (a file gzipped or moved by housekeeping)
is that file moved, not a new one. The same content at two paths is read once.
"""

from __future__ import annotations

import os
import types
import typing
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from typing import Any, TypeVar

from analyzer.api import Limits, Skipped, Source, discover
from analyzer.base.zones import TimeZones
from analyzer.batch.plan import SkippedInput, skipped_input
from analyzer.batch.probe import Ends, ProbeError, SourceInfo, file_of, identify_all, read_ends, stat_key
from analyzer.batch.schemas import MIGRATES_FROM, SCHEMA_VERSION

_T = TypeVar("_T")
#: called as (what is being done, done, in all)
ProgressHook = Callable[[str, int, int], None]
#: sources whose ends are parsed together: 32 KiB of lines each at most, 8 MiB a batch
IDENTIFY_BATCH = 256


@dataclass
class FileRecord:
    """One input file as the manifest records it."""

    size: int
    mtime_ns: int
    sources: list[SourceInfo] = field(default_factory=list)
    skipped: list[SkippedInput] = field(default_factory=list)
    gone: bool = False

    def labels(self) -> set[str]:
        """The labels of its sources, read or skipped."""
        return {s.label for s in self.sources} | {s.label for s in self.skipped}

    def to_json(self) -> dict[str, Any]:
        return {
            "size": self.size,
            "mtime_ns": self.mtime_ns,
            "gone": self.gone,
            "sources": [s.to_json() for s in self.sources],
            "skipped": [s.to_json() for s in self.skipped],
        }

    @classmethod
    def from_json(cls, data: Any) -> FileRecord:
        """The record of an input file in inputs.json.

        Raises:
            TypeError, ValueError, KeyError: not a record dgtrace wrote (a field missing or of another type).
        """
        size, mtime, sources, skipped = data["size"], data["mtime_ns"], data["sources"], data["skipped"]
        gone = data.get("gone", False)
        if not (_fits(size, int) and _fits(mtime, int) and isinstance(gone, bool)):
            raise TypeError("size, mtime_ns and gone are a count, a time and true or false")
        if not isinstance(sources, list) or not isinstance(skipped, list):
            raise TypeError("sources and skipped are lists")
        record = cls(
            size, mtime, [_typed(SourceInfo, s) for s in sources], [_typed(SkippedInput, s) for s in skipped], gone
        )
        for source in record.sources:
            source.days()  # its stamps are times
        return record


def _typed(cls: type[_T], data: Any) -> _T:
    """`cls(**data)` when each of `data`'s values has the type its field declares."""
    if not isinstance(data, dict):
        raise TypeError(f"a {cls.__name__} is a JSON object")
    hints = typing.get_type_hints(cls)
    for name, value in data.items():
        if name in hints and not _fits(value, hints[name]):
            declared = getattr(hints[name], "__name__", str(hints[name]))
            raise TypeError(f"the {name} of a {cls.__name__} is {type(value).__name__}, not {declared}")
    return cls(**data)


def _fits(value: Any, hint: Any) -> bool:
    """Whether a JSON value has the declared type (`int`, `str | None`, `dict[str, Any]`, ...)."""
    if typing.get_origin(hint) in (types.UnionType, typing.Union):
        return any(_fits(value, arg) for arg in typing.get_args(hint))
    if hint is type(None) or hint is None:
        return value is None
    if hint is Any:
        return True
    kind = typing.get_origin(hint) or hint
    if kind is float:
        return isinstance(value, int | float) and not isinstance(value, bool)
    if kind is int:
        return isinstance(value, int) and not isinstance(value, bool)
    return isinstance(value, kind)


@dataclass
class Scan:
    """The inputs after comparison with the manifest."""

    files: dict[str, FileRecord]
    #: file path -> new, changed, unchanged, moved, gone
    status: dict[str, str]
    #: files found under this run's paths
    seen: int
    #: sources that hold the same content as another (read once), with the label of the other
    duplicates: list[SkippedInput]

    def sources(self) -> list[SourceInfo]:
        """Every known source, duplicates left out (they are listed as skipped)."""
        dup = {d.label for d in self.duplicates}
        return [s for r in self.files.values() for s in r.sources if s.label not in dup]

    def skipped(self) -> list[SkippedInput]:
        return [s for r in self.files.values() for s in r.skipped] + self.duplicates

    def manifest(self) -> dict[str, Any]:
        return {"schema_version": SCHEMA_VERSION, "files": {p: r.to_json() for p, r in sorted(self.files.items())}}


def load_records(document: Any) -> dict[str, FileRecord]:
    """The file records of inputs.json (none when there is none yet); its layout has not changed since
    the versions a dataset is migrated from.

    Raises:
        ValueError: a document that is not a record of inputs dgtrace wrote (the reason, in a few words).
    """
    if document is None:
        return {}
    if not isinstance(document, dict) or not isinstance(document.get("files"), dict):
        raise ValueError("not a JSON object with the recorded files")
    if document.get("schema_version") not in (SCHEMA_VERSION, *MIGRATES_FROM):
        raise ValueError(f"of schema version {document.get('schema_version')!r}")
    records = {}
    for path, data in document["files"].items():
        try:
            records[path] = FileRecord.from_json(data)
        except KeyError as err:
            raise ValueError(f"the record of {path} has no {err.args[0]}") from None
        except (TypeError, ValueError, AttributeError) as err:
            raise ValueError(f"the record of {path}: {err}") from None
    return records


def scan(
    paths: Sequence[str],
    known: dict[str, FileRecord],
    zones: TimeZones,
    limits: Limits,
    progress: ProgressHook | None = None,
    dataset: str | None = None,
) -> Scan:
    """Compare the inputs with their records; probe what is new or changed. The files of the
    `dataset` folder (when a path holds it) are no inputs.

    Raises:
        UsageError: a path names nothing.
    """
    found, lost = discover([os.path.abspath(p) for p in paths], limits=limits, dedupe=False)
    if dataset is not None:
        inside = os.path.join(os.path.abspath(dataset), "")
        found = [s for s in found if not file_of(s.label).startswith(inside)]
        lost = [s for s in lost if not file_of(s.label).startswith(inside)]
    sources: dict[str, list[Source]] = {}
    skipped: dict[str, list[Skipped]] = {}
    for source in found:
        sources.setdefault(file_of(source.label), []).append(source)
    for item in lost:
        skipped.setdefault(file_of(item.label), []).append(item)
    seen = set(sources) | set(skipped)
    for path, rec in known.items():  # recorded files not under this run's paths: changed ones again
        if path not in seen and not rec.gone and stat_key(path) not in (None, (rec.size, rec.mtime_ns)):
            more, more_lost = discover([path], limits=limits, dedupe=False)
            sources.setdefault(path, []).extend(more)
            skipped.setdefault(path, []).extend(more_lost)
    files: dict[str, FileRecord] = {}
    status: dict[str, str] = {}
    to_probe: list[Source] = []
    for path in sorted(set(sources) | set(skipped)):
        key = stat_key(path) or (0, 0)
        record = known.get(path)
        labels = {s.label for s in sources.get(path, [])}
        if record and not record.gone and (record.size, record.mtime_ns) == key and labels <= record.labels():
            files[path], status[path] = record, "unchanged"
            continue
        files[path] = FileRecord(*key, skipped=[_skipped(s, key) for s in skipped.get(path, [])])
        status[path] = "changed" if record and not record.gone else "new"
        to_probe += sources.get(path, [])
    for path, earlier in known.items():
        if path not in files:
            present = stat_key(path) is not None
            files[path] = earlier if present else replace(earlier, gone=True)
            status[path] = "unchanged" if present else "gone"
    for source, result in zip(to_probe, _probe_all(to_probe, zones, progress), strict=True):
        record = files[file_of(source.label)]
        if isinstance(result, SourceInfo):
            record.sources.append(result)
        else:
            record.skipped.append(skipped_input(source.label, f"cannot be read: {result}", True, record.mtime_ns))
    _same_content(files, status, known)
    return Scan(files, status, len(seen), _duplicates(files))


def _skipped(item: Skipped, key: tuple[int, int]) -> SkippedInput:
    return skipped_input(item.label, item.reason, item.partial, key[1])


def _probe_all(sources: list[Source], zones: TimeZones, progress: ProgressHook | None) -> list[SourceInfo | str]:
    """Read every source's ends on every core (hashing and decompression release the GIL), then
    identify them `IDENTIFY_BATCH` at a time (their ends parsed together)."""

    def one(source: Source) -> Ends | str:
        try:
            return read_ends(source)
        except ProbeError as err:
            return str(err)

    results: list[SourceInfo | str] = []
    with ThreadPoolExecutor(max_workers=max(1, os.cpu_count() or 1)) as pool:
        for at in range(0, len(sources), IDENTIFY_BATCH):
            batch = sources[at : at + IDENTIFY_BATCH]
            read = list(pool.map(one, batch))
            probed = [(source, ends) for source, ends in zip(batch, read, strict=True) if isinstance(ends, Ends)]
            known = iter(identify_all(probed, zones))
            results += [ends if isinstance(ends, str) else next(known) for ends in read]
            if progress:
                progress("probing inputs", len(results), len(sources))
    return results


def _same_content(files: dict[str, FileRecord], status: dict[str, str], known: dict[str, FileRecord]) -> None:
    """A gone file whose content is now at another path moved there; a changed file whose content
    is what was recorded is unchanged (touched, not changed)."""
    present = {s.sha256 for path, r in files.items() if not r.gone for s in r.sources}
    for path, record in list(files.items()):
        digests = {s.sha256 for s in record.sources}
        if record.gone and digests and digests <= present:
            del files[path]
            status.pop(path)
            for other, st in status.items():
                if st == "new" and digests & {s.sha256 for s in files[other].sources}:
                    status[other] = "moved"
        elif status.get(path) == "changed" and digests == {s.sha256 for s in known[path].sources}:
            status[path] = "unchanged"


def _duplicates(files: dict[str, FileRecord]) -> list[SkippedInput]:
    """Sources whose content another source (first by label) holds already."""
    first: dict[str, str] = {}
    out = []
    for info in sorted((s for r in files.values() for s in r.sources), key=lambda s: s.label):
        original = first.setdefault(info.sha256, info.label)
        if original != info.label:
            item = skipped_input(info.label, f"duplicate of {original}", False, None)
            day = info.home_day()
            out.append(SkippedInput(item.label, item.reason, False, day.isoformat() if day else item.day, info.db))
    return out
