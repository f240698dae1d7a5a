"""Writing the report: to stdout, or to a file through a temporary file renamed over it once complete.

A report that cannot be written is the user's or the system's problem, not a bug: one line naming
the file and why (`OutputError`, exit code 6). A reader that goes away (`| head`) is no error at all
(`os_errno(err) == EPIPE`: the command line stops quietly).

Everything goes through descriptors (docs/security.md): the folder is opened without following a
link another user could have made (`analyzer.base.safefs`), must be this user's or root's and not
writable by others without the sticky bit, and the temporary file is created exclusively in it,
given its mode with `fchmod` and renamed relative to the folder's descriptor. A device or a pipe is
written directly only when the user named it (`-o -`, `/dev/stdout`, `/dev/null`, a FIFO of this
user or root): a link or a FIFO another user planted is refused (`UnsafeLocation`, exit code 8).
`check_output` does the same checks before any input is read.
"""

from __future__ import annotations

import errno
import os
import re
import stat
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import NoReturn, TextIO

from analyzer.base import safefs
from analyzer.base.errors import OutputError, UnsafeLocation
from analyzer.base.spill import stop_deferred

#: what names stdout on the command line (`-o -`)
STDOUT = "-"


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


def write_report(render: Callable[[TextIO], None], output: Path | None, *, private: bool = False) -> None:
    """Render to stdout, or to `output` through a temporary file renamed over it once complete (a
    device or a pipe the user named: written directly). `private`: the file is made mode 0600.

    Raises:
        OutputError: the report could not be written (the message names the file and why).
        UnsafeLocation: `output` is in a folder, or is a link or FIFO, that another user controls.
    """
    if output is None or str(output) == STDOUT:
        try:
            render(sys.stdout)
            sys.stdout.flush()
        except OSError as err:
            _output_failed(err, "stdout")
        return
    with _destination(output, open_device=True) as place:
        if place.device is not None:
            try:
                with os.fdopen(os.dup(place.device), "w", encoding="utf-8") as out:
                    render(out)
            except OSError as err:
                _output_failed(err, str(output))
            return
        _write_replacing(render, place, 0o600 if private else place.mode)


def check_output(output: Path | None) -> None:
    """The checks of `write_report`, before any input is read (nothing is created or opened for writing).

    Raises:
        OutputError, UnsafeLocation: as `write_report` would.
    """
    if output is not None and str(output) != STDOUT:
        with _destination(output, open_device=False):
            pass


@dataclass
class _Place:
    """Where a report goes: a name in an open folder (`mode`: of the file it replaces), or an open device."""

    folder: int
    name: str
    label: str
    mode: int
    device: int | None = None


@contextmanager
def _destination(output: Path, *, open_device: bool) -> Iterator[_Place]:
    """The open folder and name of `output`, following only links this user or root made where no
    other user can replace them (at most `safefs.MAX_LINKS`); the descriptors are closed on exit."""
    label, path, start = str(output), os.fspath(output), None
    opened: list[int] = []
    try:
        for _ in range(safefs.MAX_LINKS):
            folder = _open_parent(label, path, start)
            opened.append(folder)
            name = os.path.basename(path.rstrip("/")) or "."
            info = _entry(folder, name)
            if info is None or stat.S_ISREG(info.st_mode):
                safefs.check_folder(folder, os.path.dirname(label) or ".", f"the report to {label}")
                yield _Place(folder, name, label, _mode(info))
                return
            if stat.S_ISDIR(info.st_mode):
                raise OutputError(f"cannot write the report to {label}: it is a directory")
            if not safefs.trusted(info.st_uid) or safefs.replaceable(os.fstat(folder), info.st_uid):
                kind = "a symbolic link" if stat.S_ISLNK(info.st_mode) else "a device or FIFO"
                raise UnsafeLocation(
                    f"refusing to write the report to {label}: it is {kind} that {safefs.owner(info.st_uid)} made or"
                    " another user can replace; dgtrace writes only to devices and links of this user or root"
                )
            if stat.S_ISLNK(info.st_mode) and not safefs.on_procfs(folder):
                path, start = os.readlink(name, dir_fd=folder), folder  # a link made by this user or root
                continue
            # a device, a FIFO, or /proc/<pid>/fd/N (which names an open object): written directly
            device = _open_device(folder, name, info, label) if open_device else None
            if device is not None:
                opened.append(device)
            yield _Place(folder, name, label, 0, device)
            return
        raise OutputError(f"cannot write the report to {label}: {os.strerror(errno.ELOOP)}")
    except OSError as err:
        _output_failed(err, label)
    finally:
        for fd in opened:
            os.close(fd)


def _open_parent(label: str, path: str, start: int | None) -> int:
    folder = os.path.dirname(path.rstrip("/")) or "."
    try:
        return safefs.open_folder(folder, start=start)
    except FileNotFoundError:
        raise OutputError(f"cannot write the report to {label}: the folder {folder} does not exist") from None
    except NotADirectoryError:
        raise OutputError(f"cannot write the report to {label}: {folder} is not a folder") from None


def _entry(folder: int, name: str) -> os.stat_result | None:
    try:
        return os.stat(name, dir_fd=folder, follow_symlinks=False)
    except FileNotFoundError:
        return None


def _open_device(folder: int, name: str, info: os.stat_result, label: str) -> int:
    """The device, FIFO or /proc fd entry `name`, opened for writing (appending: `-o /dev/stdout`
    onto a file that `>>` opened must not write over its start)."""
    magic = stat.S_ISLNK(info.st_mode)
    flags = os.O_WRONLY | os.O_APPEND | os.O_NOCTTY | os.O_CLOEXEC | (0 if magic else os.O_NOFOLLOW)
    fd = os.open(name, flags, dir_fd=folder)
    now = os.fstat(fd)
    if not magic and (now.st_dev, now.st_ino) != (info.st_dev, info.st_ino):
        os.close(fd)
        raise UnsafeLocation(f"refusing to write the report to {label}: it was replaced while dgtrace opened it")
    return fd


def _write_replacing(render: Callable[[TextIO], None], place: _Place, mode: int) -> None:
    """Into a new temporary file of a random name in the target folder (created exclusively, so
    it never follows a planted link and two runs never share it), given its mode through its
    descriptor and renamed over the target relative to the folder's descriptor at the end: the
    report streams to disk, an earlier report stays until the new one is complete, and a failed
    render leaves no partial file."""
    part: str | None = None
    out: TextIO | None = None
    try:
        # a stop signal as the file is created, or as a file object takes its descriptor, is raised at
        # the end of the region: by then the name is known and one object owns the descriptor
        with stop_deferred():
            handle, part = safefs.create_exclusive(place.folder, f".{place.name}.", ".part")
            try:
                out = os.fdopen(handle, "w", encoding="utf-8")
            except BaseException:
                os.close(handle)
                raise
        with out:
            render(out)
            out.flush()
            os.fchmod(out.fileno(), mode)
            written = os.fstat(out.fileno())
        now = os.stat(part, dir_fd=place.folder, follow_symlinks=False)
        if (now.st_dev, now.st_ino) != (written.st_dev, written.st_ino):  # the folder's checks make this impossible
            raise UnsafeLocation(f"refusing to write the report to {place.label}: its temporary file was replaced")
        os.replace(part, place.name, src_dir_fd=place.folder, dst_dir_fd=place.folder)
        part = None
    except OSError as err:
        _output_failed(err, place.label)
    finally:
        if out is not None:
            out.close()  # when the signal came before `with out` (closing twice does nothing)
        if part is not None:
            with suppress(OSError):
                os.unlink(part, dir_fd=place.folder)


def _mode(info: os.stat_result | None) -> int:
    """The permissions of the report: those of the file of this user it replaces (without set-id or
    sticky bits), else the umask's."""
    if info is not None and info.st_uid == os.geteuid():
        return stat.S_IMODE(info.st_mode) & 0o777
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
