"""Devices, FIFOs and sockets named on the command line: skipped, or read once as the data come (`--read-special`)."""

from __future__ import annotations

import gzip
import os
import socket
import stat
import threading
import time
from pathlib import Path

import pytest

from analyzer.base.errors import CorruptInput, LimitExceeded
from analyzer.inputs.pipes import special_kind
from analyzer.inputs.sources import Limits, Skipped, discover
from tests.conftest import zip_bytes
from tests.uploads import read

TRACE = b"Trace file /u01/app/oracle/diag/rdbms/cdb1/cdb1/trace/cdb1_lgwr_1234.trc\nline 2\n"
needs_fifo = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs named pipes")


def _feed(pipe: Path, data: bytes, hold: float = 0.0) -> threading.Thread:
    """A writer that opens the FIFO, writes `data`, keeps it open `hold` seconds more, then closes it."""

    def run() -> None:
        with pipe.open("wb") as out:
            out.write(data)
            out.flush()
            time.sleep(hold)

    writer = threading.Thread(target=run)
    writer.start()
    return writer


@pytest.mark.parametrize(
    ("mode", "kind"),
    [
        (stat.S_IFCHR, "character device"),
        (stat.S_IFBLK, "block device"),
        (stat.S_IFIFO, "FIFO (named pipe)"),
        (stat.S_IFSOCK, "socket"),
        (stat.S_IFREG, "not a regular file"),
    ],
)
def test_special_files_are_named_in_words(mode: int, kind: str) -> None:
    assert special_kind(mode | 0o644) == kind


@needs_fifo
def test_a_pipe_named_on_the_command_line_is_skipped_unless_asked_for(tmp_path: Path) -> None:
    pipe = tmp_path / "pipe"
    os.mkfifo(pipe)
    assert discover([str(pipe)]) == ([], [Skipped(str(pipe), "FIFO (named pipe): not read (--read-special reads it)")])
    sources, skipped = discover([str(pipe)], limits=Limits(read_special=True))
    assert len(sources) == 1 and not sources[0].rereadable and skipped == []
    writer = _feed(pipe, gzip.compress(TRACE))
    assert read(sources[0]) == TRACE  # decompressed: its first bytes say gzip
    writer.join(timeout=10)


@needs_fifo
def test_a_pipe_without_writer_waits_no_longer_than_the_time_budget(tmp_path: Path) -> None:
    pipe = tmp_path / "pipe"
    os.mkfifo(pipe)
    sources, _ = discover([str(pipe)], limits=Limits(read_special=True, max_seconds_per_input=0.5))
    with pytest.raises(LimitExceeded, match=r"no data came within 0.5 s \(--max-seconds-per-input\)"):
        read(sources[0])


@pytest.mark.slow  # waits out its time budget
@needs_fifo
def test_a_writer_that_stops_sending_is_waited_for_no_longer_than_the_time_budget(tmp_path: Path) -> None:
    pipe = tmp_path / "pipe"
    os.mkfifo(pipe)
    sources, _ = discover([str(pipe)], limits=Limits(read_special=True, max_seconds_per_input=0.5))
    writer = _feed(pipe, TRACE, hold=1.5)  # (its first bytes are read at once: what they are decides)
    with pytest.raises(LimitExceeded, match=r"the data stopped coming within 0.5 s \(--max-seconds-per-input\)"):
        read(sources[0])
    writer.join(timeout=10)


@needs_fifo
def test_an_archive_sent_through_a_pipe_is_refused_with_what_to_do(tmp_path: Path) -> None:
    pipe = tmp_path / "pipe"
    os.mkfifo(pipe)
    sources, _ = discover([str(pipe)], limits=Limits(read_special=True))
    writer = _feed(pipe, zip_bytes({"a.trc": TRACE}))
    refused = rf"^{pipe}: a zip or tar archive cannot be read from a pipe or device; save it to a file$"
    with pytest.raises(CorruptInput, match=refused):
        read(sources[0])
    writer.join(timeout=10)


def test_a_socket_is_never_read(tmp_path: Path) -> None:
    path = tmp_path / "s"
    with socket.socket(socket.AF_UNIX) as listening:
        listening.bind(str(path))
        expected = [Skipped(str(path), "socket: nothing to read as a file")]
        assert discover([str(path)]) == ([], expected)
        assert discover([str(path)], limits=Limits(read_special=True)) == ([], expected)


def test_devices_are_skipped_unless_asked_for_and_binary_data_is_refused(tmp_path: Path) -> None:
    sources, skipped = discover(["/dev/zero", "/dev/null"])
    assert sources == [] and {s.reason for s in skipped} == {"character device: not read (--read-special reads it)"}
    sources, skipped = discover(["/dev/zero", "/dev/null"], limits=Limits(read_special=True))
    assert skipped == [] and len(sources) == 2
    with pytest.raises(CorruptInput, match="/dev/zero: not a text trace: only NUL bytes"):
        read(sources[0])
    assert read(sources[1]) == b""
