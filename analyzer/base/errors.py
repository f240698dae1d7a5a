"""Exceptions meant for the user, and the named exit codes of the command line."""

from __future__ import annotations

import signal
from enum import IntEnum


class ExitCode(IntEnum):
    """Exit codes of `dgtrace` (documented in the README)."""

    OK = 0
    #: some input was unusable (a limit hit, a corrupt member, an unreadable file); results cover the rest
    PARTIAL = 1
    #: the command line itself was wrong (typer also uses 2 for usage errors), or names a batch dataset
    #: this dgtrace cannot use (another schema version, a damaged record of its inputs)
    USAGE = 2
    #: nothing usable was found in the inputs
    NO_INPUT = 3
    #: a bug in dgtrace (the message says so; --debug shows the traceback)
    INTERNAL = 4
    #: a temporary file could not be written (full disk, no permission); the message names it
    TEMP_FILES = 5
    #: the report could not be written (a folder that does not exist, no permission, a full disk); an
    #: earlier report of that name is kept and no partial file is left; `batch`: the dataset could not
    #: be written (no permission, a read-only file system, a full disk, `--out` naming a file), what is
    #: in place stays whole
    OUTPUT = 6
    #: `dgtrace batch`: another run is writing the same dataset (try again later)
    BUSY = 7
    #: refused before anything was written: an output or dataset folder that another user owns or can
    #: change, or a link or a device there that another user could have planted, or in a dataset
    #: something other than what dgtrace keeps there (its lock a folder) (docs/security.md)
    UNSAFE = 8
    #: stopped by SIGHUP, SIGINT (Ctrl-C) or SIGTERM: 128 + the signal number, temporary files removed
    HANGUP = 129
    INTERRUPTED = 130
    TERMINATED = 143
    #: the reader of the report went away (`| head`): 128 + SIGPIPE, as a shell reports a killed writer
    BROKEN_PIPE = 141


class AnalyzerError(Exception):
    """An error whose message is written for the user; the CLI prints it as one line."""

    exit_code: ExitCode = ExitCode.NO_INPUT


class UsageError(AnalyzerError):
    """A bad option value (time zone, threshold, path that does not exist)."""

    exit_code = ExitCode.USAGE


class NoInputError(AnalyzerError):
    """No trace file could be read at all."""

    exit_code = ExitCode.NO_INPUT


class LimitExceeded(AnalyzerError):
    """A safety limit (decompressed bytes, ratio, depth, member count, time) stopped one input."""

    exit_code = ExitCode.PARTIAL


class CorruptInput(AnalyzerError):
    """An input could not be read to its end: corrupt or truncated data, or an OS read error.

    The message names the file or archive member; the results cover the other inputs.
    """

    exit_code = ExitCode.PARTIAL


class TempFileError(AnalyzerError):
    """A temporary file could not be written (full disk, quota, permission); nothing partial is left."""

    exit_code = ExitCode.TEMP_FILES


class Interrupted(BaseException):
    """A stop signal (SIGINT, SIGTERM, SIGHUP) arrived: unwind, remove temporary files, exit 128 + signal.

    A BaseException, like KeyboardInterrupt, so that no `except Exception` on the way swallows it.
    """

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum

    @property
    def exit_code(self) -> int:
        """128 + the signal number, as shells report a process killed by it."""
        return 128 + self.signum

    @property
    def message(self) -> str:
        """The one line printed on stderr."""
        return "interrupted" if self.signum == signal.SIGINT else f"stopped by {signal.Signals(self.signum).name}"


class UnsafeLocation(AnalyzerError):
    """An output or dataset location another user controls: nothing is written there (docs/security.md)."""

    exit_code = ExitCode.UNSAFE


class OutputError(AnalyzerError):
    """The report, or the batch dataset, could not be written where it was asked for; the message names
    the file and why."""

    exit_code = ExitCode.OUTPUT
