"""Inputs not read, and why: the `Skipped` record, damaged data and the reasons said in words.

Every folder entry, archive member or whole input that is not read becomes a `Skipped` with a
reason a user can act on; data that cannot be decoded raise `CorruptInput` naming the member.
"""

from __future__ import annotations

import lzma
import struct
import tarfile
import zipfile
import zlib
from dataclasses import dataclass
from typing import cast

import zstandard

from analyzer.base.errors import CorruptInput

try:  # python-isal, the `fast-gzip` extra (see `streams.gzip_reader`): its inflater raises its own error
    from isal import isal_zlib

    GZIP_ERRORS: tuple[type[Exception], ...] = (cast(type[Exception], isal_zlib.error),)
except ImportError:  # pragma: no cover - the tests install the extra
    GZIP_ERRORS = ()

#: what the standard library and zstandard raise on corrupt, truncated or unreadable data
#: (zipfile raises NotImplementedError for a "version needed" or feature it does not know)
CORRUPT_ERRORS: tuple[type[Exception], ...] = (
    OSError,
    EOFError,
    ValueError,
    NotImplementedError,
    struct.error,
    zlib.error,
    lzma.LZMAError,
    zipfile.BadZipFile,
    tarfile.TarError,
    zstandard.ZstdError,
    *GZIP_ERRORS,
)


@dataclass(frozen=True)
class Skipped:
    """An input found but not read (a folder entry, an archive member, a whole archive), and why."""

    label: str
    reason: str
    #: content was lost (limit, corruption, encryption, permission): the run is only partial
    partial: bool = False


def printable(text: str) -> str:
    """A label safe to print: control and undecodable characters escaped."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


def describe(exc: BaseException) -> str:
    """One line saying what a decoder or the OS complained about."""
    text = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
    return " ".join((text or type(exc).__name__).split())


def unreadable(label: str, exc: OSError) -> Skipped:
    """An input the OS does not let us read (its content is lost: the run is partial)."""
    return Skipped(label, f"cannot read: {describe(exc)}", partial=True)


def reason_of(exc: Exception, label: str) -> str:
    """An exception's message as a skip reason for `label` (without repeating the label)."""
    return str(exc).removeprefix(f"{label}: ")


class Damaged(CorruptInput):
    """CorruptInput that also keeps its reason without the label (to say it of another member)."""

    def __init__(self, label: str, reason: str) -> None:
        super().__init__(f"{label}: {reason}")
        self.reason = reason


def cannot_read(label: str, exc: OSError) -> CorruptInput:
    """The documented exception for a file or device the OS does not let us open or read."""
    return CorruptInput(f"{label}: cannot read: {describe(exc)}")


def corrupt(label: str, exc: BaseException) -> CorruptInput:
    """The documented exception for data that cannot be decoded or read."""
    return Damaged(label, f"corrupt, truncated or unreadable data ({describe(exc)})")
