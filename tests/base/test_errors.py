"""Exceptions and the exit code each one ends a run with."""

from __future__ import annotations

import signal

import pytest

from analyzer.base.errors import (
    AnalyzerError,
    CorruptInput,
    ExitCode,
    Interrupted,
    LimitExceeded,
    NoInputError,
    OutputError,
    TempFileError,
    UsageError,
)
from tests.conftest import ROOT


@pytest.mark.parametrize(
    ("error", "code"),
    [
        (UsageError, 2),
        (NoInputError, 3),
        (LimitExceeded, 1),
        (CorruptInput, 1),
        (TempFileError, 5),
        (OutputError, 6),
    ],
)
def test_each_error_has_its_documented_exit_code(error: type[AnalyzerError], code: int) -> None:
    raised = error("what went wrong")
    assert isinstance(raised, AnalyzerError) and raised.exit_code == code and str(raised) == "what went wrong"


def test_the_exit_codes_are_distinct_and_signals_are_128_plus_their_number() -> None:
    codes = [int(c) for c in ExitCode]
    assert len(codes) == len(set(codes))
    assert (ExitCode.HANGUP, ExitCode.INTERRUPTED, ExitCode.TERMINATED) == (
        128 + signal.SIGHUP,
        128 + signal.SIGINT,
        128 + signal.SIGTERM,
    )
    assert ExitCode.BROKEN_PIPE == 128 + signal.SIGPIPE


@pytest.mark.parametrize(
    ("signum", "message", "code"),
    [
        (signal.SIGINT, "interrupted", 130),
        (signal.SIGTERM, "stopped by SIGTERM", 143),
        (signal.SIGHUP, "stopped by SIGHUP", 129),
    ],
)
def test_a_stop_signal_says_what_stopped_the_run(signum: int, message: str, code: int) -> None:
    stop = Interrupted(signum)
    assert (stop.message, stop.exit_code, stop.signum) == (message, code, signum)
    assert not isinstance(stop, Exception)  # no `except Exception` on the way swallows it


def test_the_readme_documents_every_exit_code_and_no_other() -> None:
    """The README's exit-code table is complete and exact: one row per code (signals may share a row)."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    table = text.split("\n## Exit codes\n", 1)[1].split("\n## ", 1)[0]
    rows = [line.split("|")[1].strip() for line in table.splitlines() if line.startswith("| ") and "---" not in line]
    documented = [int(code) for cell in rows[1:] for code in cell.split(",")]
    assert rows[0] == "code"
    assert sorted(documented) == sorted(int(c) for c in ExitCode)
