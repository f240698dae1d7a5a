"""Which files are read, by their names: the one filter of folder walks and archive listings.

A file named on the command line is read whatever its name (as what its first bytes say). A
file found in a folder or an archive is read, listed or skipped by `rule`, on its name without
its compression suffixes (`x.trc.gz` is a trace, `x.tar.zst` an archive).
"""

from __future__ import annotations

import re
from typing import Literal

from analyzer.base.vocab import ALERT_LOG_NAME
from analyzer.inputs.streams import COMPRESSION_SUFFIXES

#: what a name asks for: read whatever it is (a file named on the command line: "named"), read it
#: as a trace or archive ("trace"), list it as an archive ("archive"), or look at its first bytes
#: for an archive ("probe")
Mode = Literal["named", "trace", "archive", "probe"]

#: short archive suffixes, spelled out so the compression suffix can be peeled off
_ALIASES = {".tgz": ".tar.gz", ".tbz2": ".tar.bz2", ".txz": ".tar.xz"}
_TRACE_MAP = "trace map (.trm) file: ADR metadata, nothing to parse"
NOT_TRACE = "not a trace file (*.trc) or alert log (alert_*.log) by its name"
#: compression suffixes as a lower-cased name ends (`.Z`, Unix compress, is `.z` then)
_SUFFIXES = tuple(suffix.lower() for suffix in COMPRESSION_SUFFIXES)
#: a member label made unique by streams.Labels ends with " [N]"
_ENTRY = re.compile(r" \[\d+\]$")


def rule(name: str) -> tuple[Mode | None, str]:
    """What to do with a file found in a folder or an archive, by its name: (mode, "") with mode
    "trace" (`*.trc`, `alert_*.log`), "archive" (`*.zip`, `*.tar`) or "probe" (no extension: read only if it
    is an archive); or (None, the reason it is skipped)."""
    core = _split(_basename(name))[0]
    lower = core.lower()
    if lower.endswith(".trc") or ALERT_LOG_NAME.match(lower):
        return "trace", ""
    if _archive_kind(lower) is not None:
        return "archive", ""
    if "." not in core.lstrip("."):
        return "probe", ""
    return None, _TRACE_MAP if lower.endswith(".trm") else NOT_TRACE


def wanted(name: str) -> str | None:
    """Why an archive member with this name is not read (or None to open it)."""
    mode, reason = rule(name)
    return None if mode is not None else reason


def archive_by_name(name: str) -> str | None:
    """A zip or tar by its name only (a self-extracting zip, a zip whose first bytes are damaged)."""
    return _archive_kind(_split(_basename(name))[0].lower())


def _archive_kind(core: str) -> str | None:
    return "zip" if core.endswith(".zip") else "tar" if core.endswith(".tar") else None


def trace_name(label: str) -> str:
    """The base file name of a source's label, without its archive path, the mark that makes a
    member's label unique, and its compression suffixes: `up.zip!a/x.trc.gz [2]` -> `x.trc`."""
    return _split(_basename(_ENTRY.sub("", label.rsplit("!", 1)[-1])))[0]


def without_compression(label: str) -> str:
    """A label without its compression suffixes: `up.zip!a/x.trc.gz` -> `up.zip!a/x.trc` (two forms of
    one trace, compressed and not, have the same)."""
    return _split(label)[0]


def _basename(name: str) -> str:
    return name.replace("\\", "/").rstrip("/").rsplit("/", 1)[-1]


def _split(name: str) -> tuple[str, tuple[str, ...]]:
    """A file name without its compression suffixes, and those suffixes, outermost first."""
    for alias, spelled in _ALIASES.items():
        if name.lower().endswith(alias) and len(name) > len(alias):
            name = name[: -len(alias)] + spelled
    suffixes: list[str] = []
    while suffix := next((s for s in _SUFFIXES if name.lower().endswith(s) and len(name) > len(s)), None):
        suffixes.append(suffix)
        name = name[: -len(suffix)]
    return name, tuple(suffixes)
