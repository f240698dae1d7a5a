"""Writing the report: to stdout, or to a file through a temporary file renamed over it once complete.

A report that cannot be written is the user's or the system's problem, not a bug: one line naming
the file and why (`OutputError`, exit code 6). A reader that goes away (`| head`) is no error at all
(`os_errno(err) == EPIPE`: the command line stops quietly).
"""

from __future__ import annotations

import errno
import os
import re
import stat
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import NoReturn, TextIO

from analyzer.base.errors import OutputError
from analyzer.base.spill import stop_deferred


def os_errno(err: BaseException) -> int | None:
    """The errno of an OS error, also when polars reports it in words (`... (os error 32)`)."""
    if isinstance(err, OSError) and err.errno:
        return err.errno
    found = re.search(r"os error (\d+)", str(err))
    return int(found.group(1)) if found else None


def quiet_stdout() -> None:
    """After a broken pipe: nothing more reaches stdout (not even Python's flush at exit)."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):  # no real file descriptor (a test's captured stream)
        pass


def write_report(render: Callable[[TextIO], None], output: Path | None) -> None:
    """Render to stdout, or to `output` through a temporary file renamed over it once complete.

    Raises:
        OutputError: the report could not be written (the message names the file and why).
    """
    if output is None:
        try:
            render(sys.stdout)
            sys.stdout.flush()
        except OSError as err:
            _output_failed(err, "stdout")
        return
    if output.is_dir():
        raise OutputError(f"cannot write the report to {output}: it is a directory")
    if output.exists() and not output.is_file():  # a device or a pipe: written directly
        try:
            with output.open("w", encoding="utf-8") as out:
                render(out)
        except OSError as err:
            _output_failed(err, str(output))
        return
    _write_replacing(render, output)


def _write_replacing(render: Callable[[TextIO], None], output: Path) -> None:
    """Into a new temporary file of a random name in the target folder (created exclusively, so
    it never follows a planted link and two runs never share it), renamed over `output` at the end:
    the report streams to disk, an earlier report stays until the new one is complete, and a failed
    render leaves no partial file."""
    folder = output.parent
    if not folder.is_dir():
        why = f"{folder} is not a folder" if folder.exists() else f"the folder {folder} does not exist"
        raise OutputError(f"cannot write the report to {output}: {why}")
    part: Path | None = None
    out: TextIO | None = None
    try:
        # a stop signal as the file is created, or as a file object takes its descriptor, is raised at
        # the end of the region: by then the name is known and one object owns the descriptor
        with stop_deferred():
            handle, name = tempfile.mkstemp(prefix=f".{output.name}.", suffix=".part", dir=folder)
            part = Path(name)
            try:
                out = os.fdopen(handle, "w", encoding="utf-8")
            except BaseException:
                os.close(handle)
                raise
        with out:
            render(out)
        os.chmod(part, _mode(output))
        part.replace(output)
    except OSError as err:
        _output_failed(err, str(output))
    finally:
        if out is not None:
            out.close()  # when the signal came before `with out` (closing twice does nothing)
        if part is not None:
            part.unlink(missing_ok=True)


def _mode(output: Path) -> int:
    """The permissions of the report: those of the file it replaces, else the umask's."""
    try:
        return stat.S_IMODE(output.stat().st_mode)
    except OSError:
        mask = os.umask(0o022)
        os.umask(mask)
        return 0o666 & ~mask


def _output_failed(err: BaseException, where: str) -> NoReturn:
    """Raise the error a failed write becomes: quiet after a broken pipe, else one line naming `where`."""
    code = os_errno(err)
    if code == errno.EPIPE:
        raise err
    reason = os.strerror(code) if code else str(err)
    raise OutputError(f"cannot write the report to {where}: {reason}") from None
