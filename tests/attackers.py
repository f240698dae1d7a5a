"""Another local user attacking a dgtrace run that runs as root: `nobody`, through `setpriv`.

The attacks run as a real other user (tests run as root here), so what the kernel lets `nobody` do
is what the test shows; without root or setpriv the tests that need them are skipped with the reason.
"""

from __future__ import annotations

import functools
import os
import pwd
import shutil
import site
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
NOBODY = ("setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups")


def need_nobody() -> tuple[int, int]:
    """The uid and gid of `nobody`; the test is skipped when it cannot act as that user."""
    if os.geteuid() != 0:
        pytest.skip("the attacks run as another user (nobody), which needs root to switch to")
    if shutil.which("setpriv") is None:
        pytest.skip("setpriv (util-linux) is not installed: cannot run the attacker as nobody")
    try:
        user = pwd.getpwnam("nobody")
    except KeyError:
        pytest.skip("no user nobody on this machine")
    return user.pw_uid, user.pw_gid


@functools.cache
def _python(modules: tuple[str, ...]) -> tuple[tuple[str, ...], tuple[tuple[str, str], ...]] | None:
    """A Python that nobody can run and that imports `modules`: this one, or the system's with this
    one's packages on its path (this interpreter may live in root's home)."""
    paths = os.pathsep.join([*site.getsitepackages(), str(ROOT)])
    check = f"import {', '.join(modules) or 'os'}"
    for argv, extra in (((sys.executable,), ()), (("/usr/bin/python3",), (("PYTHONPATH", paths),))):
        env = {"PATH": "/usr/bin:/bin", "HOME": "/nonexistent", **dict(extra)}
        try:
            done = subprocess.run([*NOBODY, *argv, "-c", check], env=env, capture_output=True, timeout=60, cwd="/")
        except (OSError, subprocess.TimeoutExpired):
            continue
        if done.returncode == 0:
            return argv, extra
    return None


def nobody_python(*modules: str) -> tuple[list[str], dict[str, str]]:
    """The command line and environment of a Python run as nobody that imports `modules` (skip when none)."""
    need_nobody()
    found = _python(tuple(modules))
    if found is None:
        pytest.skip(f"no Python that nobody can run imports {', '.join(modules) or 'os'}")
    argv, extra = found
    return [*NOBODY, *argv], {"PATH": "/usr/bin:/bin", "HOME": "/nonexistent", **dict(extra)}


def run_as_nobody(code: str, *args: str, modules: Sequence[str] = ()) -> subprocess.Popen[str]:
    """Start `python -c code args` as nobody (stdout and stderr piped, text)."""
    argv, env = nobody_python(*modules)
    return subprocess.Popen(
        [*argv, "-c", code, *args], env=env, cwd="/", stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


@contextmanager
def arena() -> Iterator[Path]:
    """A fresh folder of root's in /tmp that nobody may enter (pytest's own folders are private)."""
    folder = Path(tempfile.mkdtemp(prefix="dgtrace-arena-", dir="/tmp"))
    folder.chmod(0o755)
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def dgtrace(args: Sequence[str], timeout_s: float = 300.0) -> subprocess.CompletedProcess[str]:
    """`dgtrace ARGS` as a subprocess of this user (root), as a cron job would run it."""
    return subprocess.run(
        [sys.executable, "-m", "analyzer", "--quiet", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=timeout_s,
        check=False,
    )
