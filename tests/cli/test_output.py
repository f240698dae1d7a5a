"""Writing the report: stdout, a file replaced only once complete, errors in words, a closed pipe."""

from __future__ import annotations

import errno
import os
import signal
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any, TextIO

import pytest

import analyzer.cli as cli
from analyzer.base import safefs
from analyzer.base.errors import ExitCode, Interrupted, OutputError, UnsafeLocation
from analyzer.base.spill import stop_on_signals
from analyzer.cli.output import os_errno, write_report
from analyzer.simulate.options import SimOptions
from analyzer.simulate.runner import simulate
from tests.conftest import PAPER, invoke, stop_while_writing


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


@pytest.mark.slow
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
    real = safefs.create_exclusive
    handles = []

    def created_then_stopped(*args: Any, **kwargs: Any) -> tuple[int, str]:
        handle, name = real(*args, **kwargs)
        handles.append(handle)
        os.kill(os.getpid(), signal.SIGTERM)
        return handle, name

    def render(out: TextIO) -> None:
        out.write("new")

    monkeypatch.setattr(safefs, "create_exclusive", created_then_stopped)
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


def test_a_temporary_file_swapped_while_rendering_is_not_renamed_into_place(tmp_path: Path) -> None:
    """Should anyone swap the `.part` file for a link (the folder's checks leave no one who could), the mode is
    set through the descriptor, not on the link's target, and the swapped name is not renamed over the report."""
    secret = tmp_path / "secret"
    secret.write_text("root only")
    secret.chmod(0o600)
    target = tmp_path / "r.txt"
    target.write_text("earlier report")
    target.chmod(0o644)

    def render(out: TextIO) -> None:
        (part,) = tmp_path.glob(".r.txt.*.part")
        part.unlink()
        part.symlink_to(secret)
        out.write("new")

    with pytest.raises(UnsafeLocation, match="temporary file was replaced") as err:
        write_report(render, target)
    assert err.value.exit_code == ExitCode.UNSAFE
    assert secret.read_text() == "root only" and secret.stat().st_mode & 0o7777 == 0o600
    assert target.read_text() == "earlier report" and sorted(tmp_path.iterdir()) == [target, secret]


def test_set_id_bits_of_the_file_replaced_are_not_copied_and_the_map_is_private(tmp_path: Path) -> None:
    target = tmp_path / "r.txt"
    target.write_text("old")
    target.chmod(0o4755)
    write_report(lambda out: out.write("new"), target)
    assert target.stat().st_mode & 0o7777 == 0o755
    write_report(lambda out: out.write("{}"), target, private=True)
    assert target.stat().st_mode & 0o7777 == 0o600


@pytest.mark.slow
def test_a_device_or_pipe_the_user_names_is_written_directly(tmp_path: Path) -> None:
    """`/dev/stdout` (a link of root's to /proc/self/fd/1), `-o -` and a FIFO of this user's."""
    script = "from analyzer.cli.output import write_report as w; from pathlib import Path; import sys;"
    script += "w(lambda out: out.write('via ' + sys.argv[1] + '\\n'), Path(sys.argv[1]))"
    for name in ("/dev/stdout", "-"):
        done = subprocess.run([sys.executable, "-c", script, name], capture_output=True, text=True, check=True)
        assert done.stdout == f"via {name}\n"
    into = tmp_path / "into"
    into.write_text("kept\n")
    with into.open("a") as out:  # `>> into`: appended, the start kept
        subprocess.run([sys.executable, "-c", script, "/dev/stdout"], stdout=out, check=True)
    assert into.read_text() == "kept\nvia /dev/stdout\n"
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    reader = subprocess.Popen(["cat", str(fifo)], stdout=subprocess.PIPE, text=True)
    write_report(lambda out: out.write("through the pipe"), fifo)
    assert reader.communicate(timeout=30)[0] == "through the pipe"
    assert stat.S_ISFIFO(fifo.lstat().st_mode)


def test_the_report_is_checked_before_any_input_is_read(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    def never(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("the input was read")

    monkeypatch.setattr(cli, "analyze", never)
    for option, path in (("-o", "missing/r.txt"), ("--redact-map", "missing/map.json")):
        extra = ["--redact"] if option == "--redact-map" else []
        result = invoke(["analyze", str(PAPER), *extra, option, str(tmp_path / path)], code=ExitCode.OUTPUT)
        assert "does not exist" in result.stderr and result.stderr.count("\n") == 1
    result = invoke(["report", str(tmp_path), "-o", str(tmp_path / "missing" / "r.txt")], code=ExitCode.OUTPUT)
    assert "does not exist" in result.stderr
