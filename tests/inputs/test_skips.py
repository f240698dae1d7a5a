"""Inputs not read and why: labels safe to print, the OS's and the decoders' complaints in one line."""

from __future__ import annotations

import errno
import gzip
import io
import lzma
import os
import zipfile
import zlib
from collections.abc import Callable

import pytest
import zstandard

from analyzer.base.errors import CorruptInput, ExitCode
from analyzer.inputs.skips import (
    CORRUPT_ERRORS,
    Damaged,
    Skipped,
    cannot_read,
    corrupt,
    describe,
    printable,
    reason_of,
    unreadable,
)


def _denied() -> PermissionError:
    return PermissionError(errno.EACCES, os.strerror(errno.EACCES), "/up/x.trc")


def test_labels_escape_control_characters_and_undecodable_bytes() -> None:
    assert printable("up.zip!evil\x1b[2J\n.trc") == "up.zip!evil\\x1b[2J\\n.trc"
    assert printable("caf\udce9.trc") == "caf\\udce9.trc"  # a byte the file system name did not decode
    assert printable("Zürich/ünïcode.trc") == "Zürich/ünïcode.trc"


def test_a_complaint_is_one_line_in_the_os_s_words() -> None:
    assert describe(_denied()) == "Permission denied"  # not "[Errno 13] Permission denied: '/up/x.trc'"
    assert describe(ValueError("Error -3 while decompressing:\n  invalid   distance")) == (
        "Error -3 while decompressing: invalid distance"
    )
    assert describe(EOFError()) == "EOFError"


def test_an_unreadable_input_is_partial_and_says_why() -> None:
    assert unreadable("/up/x.trc", _denied()) == Skipped("/up/x.trc", "cannot read: Permission denied", partial=True)
    assert not Skipped("/up/x.trm", "trace map").partial


def test_a_reason_does_not_repeat_the_label_it_is_given_with() -> None:
    assert reason_of(CorruptInput("up.zip!a.trc: truncated"), "up.zip!a.trc") == "truncated"
    assert reason_of(CorruptInput("up.zip!a.trc: truncated"), "up.zip") == "up.zip!a.trc: truncated"


def test_the_documented_exceptions_name_the_input_and_exit_partial() -> None:
    error = cannot_read("/up/x.trc", _denied())
    assert str(error) == "/up/x.trc: cannot read: Permission denied" and error.exit_code == ExitCode.PARTIAL
    damaged = corrupt("up.zip!a.trc", zlib.error("Error -3 while decompressing data: invalid block type"))
    assert isinstance(damaged, Damaged) and damaged.exit_code == ExitCode.PARTIAL
    assert str(damaged) == (
        "up.zip!a.trc: corrupt, truncated or unreadable data (Error -3 while decompressing data: invalid block type)"
    )
    assert (
        damaged.reason
        == "corrupt, truncated or unreadable data (Error -3 while decompressing data: invalid block type)"
    )


@pytest.mark.parametrize(
    "decode",
    [
        lambda: gzip.decompress(gzip.compress(bytes(range(256)) * 100)[:200]),
        lambda: gzip.decompress(b"\x1f\x8b" + b"\xff" * 30),
        lambda: lzma.decompress(b"\xfd7zXZ\x00" + b"\x00" * 30),
        lambda: zstandard.ZstdDecompressor().decompress(b"\x28\xb5\x2f\xfd" + b"\xff" * 10),
        lambda: zipfile.ZipFile(io.BytesIO(b"PK\x05\x06 not a zip")),
        lambda: zlib.decompress(b"not deflate"),
    ],
    ids=["cut-gzip", "bad-gzip", "bad-xz", "bad-zstd", "bad-zip", "bad-deflate"],
)
def test_what_decoders_raise_on_damaged_data_is_among_the_corrupt_errors(decode: Callable[[], object]) -> None:
    with pytest.raises(CORRUPT_ERRORS):
        decode()
