"""Writing the report: stdout, a file replaced only once complete, errors in words, a closed pipe."""

from __future__ import annotations

import errno
import os
import signal
import tempfile
from pathlib import Path
from typing import Any, TextIO

import pytest

from analyzer.base.errors import ExitCode, Interrupted, OutputError
from analyzer.base.spill import stop_on_signals
from analyzer.cli.output import os_errno, write_report
from analyzer.simulate.options import SimOptions
from analyzer.simulate.runner import simulate
from tests.conftest import stop_while_writing


def test_os_errors_in_words_keep_their_number() -> None:
    assert os_errno(BrokenPipeError(errno.EPIPE, "Broken pipe")) == errno.EPIPE
    assert os_errno(OSError("Broken pipe (os error 32)")) == errno.EPIPE  # as polars reports it
    assert os_errno(RuntimeError("boom")) is None


def test_a_report_replaces_the_file_only_once_complete(tmp_path: Path) -> None:
    target = tmp_path / "r.txt"
    target.write_text("old")
    target.chmod(0o640)

    def render(out: TextIO) -> None:
        assert target.read_text() == "old"  # still the old one while writing
        out.write("new")

    write_report(render, target)
    assert target.read_text() == "new" and target.stat().st_mode & 0o777 == 0o640
    assert sorted(tmp_path.iterdir()) == [target]


@pytest.mark.parametrize(
    ("where", "says"),
    [("missing/r.txt", "the folder"), (".", "it is a directory")],
)
def test_what_cannot_be_written_is_said(tmp_path: Path, where: str, says: str) -> None:
    with pytest.raises(OutputError) as err:
        write_report(lambda out: out.write("x"), tmp_path / where)
    assert says in str(err.value) and err.value.exit_code == ExitCode.OUTPUT


def test_a_closed_pipe_is_passed_on_as_it_is(tmp_path: Path) -> None:
    def render(out: TextIO) -> None:
        raise BrokenPipeError(errno.EPIPE, "Broken pipe")

    with pytest.raises(BrokenPipeError):
        write_report(render, tmp_path / "r.txt")
    assert list(tmp_path.iterdir()) == []


def test_sigterm_while_the_report_is_written_keeps_the_earlier_one(tmp_path: Path) -> None:
    """The HTML report of 6,000 writes takes a second or two to write: SIGTERM then removes the
    temporary file and leaves the earlier report as it was (exit 143, one line)."""
    simulate(tmp_path / "set", SimOptions(writes=3000, seed=2))
    target = tmp_path / "out" / "report.html"
    target.parent.mkdir()
    target.write_text("earlier report")
    done = stop_while_writing(["analyze", str(tmp_path / "set"), "--format", "html", "-o", str(target)], target)
    assert (done.returncode, done.stderr) == (128 + signal.SIGTERM, "dgtrace: stopped by SIGTERM\n")
    assert target.read_text() == "earlier report" and sorted(target.parent.iterdir()) == [target]


def test_a_stop_signal_just_as_the_temporary_file_is_created_leaves_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The signal's handler runs as soon as the file exists, before its name is returned; the file's
    descriptor is closed too."""
    real = tempfile.mkstemp
    handles = []

    def created_then_stopped(*args: Any, **kwargs: Any) -> tuple[int, str]:
        handle, name = real(*args, **kwargs)
        handles.append(handle)
        os.kill(os.getpid(), signal.SIGTERM)
        return handle, name

    def render(out: TextIO) -> None:
        out.write("new")

    monkeypatch.setattr(tempfile, "mkstemp", created_then_stopped)
    target = tmp_path / "r.txt"
    target.write_text("earlier report")
    with stop_on_signals(), pytest.raises(Interrupted):
        write_report(render, target)
    assert target.read_text() == "earlier report" and sorted(tmp_path.iterdir()) == [target]
    assert len(handles) == 1
    with pytest.raises(OSError, match="Bad file descriptor"):  # closed, and nothing opened since took its number
        os.fstat(handles[0])


def test_a_stop_signal_as_the_file_object_takes_the_descriptor_leaves_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The signal's handler runs once the file object owns the descriptor, before it is returned (a
    SIGTERM landed there now and then while the HTML report was written): the stop is said as a stop,
    not as a descriptor closed twice, and neither file nor descriptor is left."""
    real = os.fdopen
    handles = []

    def opened_then_stopped(handle: int, *args: Any, **kwargs: Any) -> Any:
        handles.append(handle)
        out = real(handle, *args, **kwargs)
        os.kill(os.getpid(), signal.SIGTERM)
        return out

    monkeypatch.setattr(os, "fdopen", opened_then_stopped)
    target = tmp_path / "r.txt"
    target.write_text("earlier report")
    with stop_on_signals(), pytest.raises(Interrupted):
        write_report(lambda out: out.write("new"), target)
    assert target.read_text() == "earlier report" and sorted(tmp_path.iterdir()) == [target]
    assert len(handles) == 1
    with pytest.raises(OSError, match="Bad file descriptor"):
        os.fstat(handles[0])
