"""Writing the report: stdout, a file replaced only once complete, errors in words, a closed pipe."""

from __future__ import annotations

import errno
from pathlib import Path
from typing import TextIO

import pytest

from analyzer.errors import ExitCode, OutputError
from analyzer.output import os_errno, write_report


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
