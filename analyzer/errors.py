"""Exceptions meant for the user, and the named exit codes of the command line."""

from __future__ import annotations

from enum import IntEnum


class ExitCode(IntEnum):
    """Exit codes of `dgtrace` (documented in the README)."""

    OK = 0
    #: some input was unusable (a limit hit, a corrupt member, an unreadable file); results cover the rest
    PARTIAL = 1
    #: the command line itself was wrong (typer also uses 2 for usage errors)
    USAGE = 2
    #: nothing usable was found in the inputs
    NO_INPUT = 3
    #: a bug in dgtrace (the message says so; --debug shows the traceback)
    INTERNAL = 4
    #: `dgtrace batch`: another run is writing the same dataset (try again later)
    BUSY = 5


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
    """A safety limit (decompressed bytes, ratio, depth, member count) stopped one input."""

    exit_code = ExitCode.PARTIAL


class CorruptInput(AnalyzerError):
    """An input could not be read to its end: corrupt or truncated data, or an OS read error.

    The message names the file or archive member; the results cover the other inputs.
    """

    exit_code = ExitCode.PARTIAL
