"""Shared fixtures: repository paths, a CLI runner helper, small trace builders; the hypothesis profiles;
an environment that does not depend on the terminal the tests are run from."""

from __future__ import annotations

import contextlib
import io
import os
import signal
import subprocess
import sys
import time
import zipfile
from collections.abc import Iterator, Sequence
from pathlib import Path

import polars as pl
import pytest
from hypothesis import settings
from typer.testing import CliRunner, Result

from analyzer.api import Analysis, Options, analyze
from analyzer.base.zones import TimeZones
from analyzer.cli import app

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "samples"
PAPER = SAMPLES / "paper-2014"
#: a folder of real trace files from real databases, named by $DGTRACE_REAL_TRACES: their licences do
#: not all allow copies here, so none is in this repository and the tests that read them skip without it
REAL_TRACES = Path(os.environ.get("DGTRACE_REAL_TRACES") or "/nonexistent-real-traces").resolve()
WITHOUT_REAL_TRACES = "DGTRACE_REAL_TRACES does not name a folder of real trace files"

# Hypothesis profiles: `dev` (the default) keeps `pytest -m "not slow"` quick; `ci` (`make test`, and
# wherever CI=true) runs at least as many examples as any property test ever asked for. A test's own
# @settings keeps only what it needs besides (deadline=None, health checks), never max_examples.
# HYPOTHESIS_PROFILE=ci (or dev) chooses one explicitly. Loaded here, before the test modules are
# imported, because a @settings decorator takes the values it does not set from the profile loaded then.
settings.register_profile("dev", max_examples=20)
settings.register_profile("ci", settings.get_profile("ci"), max_examples=250, derandomize=False)
settings.load_profile(
    os.environ.get("HYPOTHESIS_PROFILE")
    or ("ci" if os.environ.get("CI", "").lower() in ("1", "true", "yes") else "dev")
)

#: the variables by which a terminal changes the text report (its width, its colours): unset for the
#: tests, which set them where they need them (pytest-xdist's workers, for one, have COLUMNS=80)
TERMINAL_VARIABLES = ("COLUMNS", "LINES", "NO_COLOR", "FORCE_COLOR", "TTY_COMPATIBLE", "TTY_INTERACTIVE")


@pytest.fixture(autouse=True, scope="session")
def _no_terminal() -> Iterator[None]:
    """From the repository root, with none of TERMINAL_VARIABLES, for the whole session, session
    and module fixtures included (a text report into a pipe is then PIPE_WIDTH wide)."""
    with pytest.MonkeyPatch.context() as patch:
        for name in TERMINAL_VARIABLES:
            patch.delenv(name, raising=False)
        patch.chdir(ROOT)
        yield


@pytest.fixture(autouse=True)
def _repo_root() -> Iterator[None]:
    """Run every test from the repository root (sample labels are relative to it)."""
    before = Path.cwd()
    os.chdir(ROOT)
    yield
    os.chdir(before)


def invoke(args: Sequence[str], code: int = 0) -> Result:
    """Run `dgtrace ARGS` in-process and check its exit code."""
    result = CliRunner().invoke(app, list(args))
    assert result.exit_code == code, (result.exit_code, result.stdout, result.stderr)
    return result


def lines_frame(text: str) -> pl.DataFrame:
    """Numbered lines of a text, as the read stage hands them to the parse stage."""
    rows = text.split("\n")
    return pl.DataFrame(
        {"line": list(range(1, len(rows) + 1)), "text": rows},
        schema={"line": pl.Int64, "text": pl.String},
    )


def write(path: Path, lines: Sequence[str]) -> Path:
    """Write a trace file (LF endings, final newline) and return its path."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def zip_bytes(members: dict[str, bytes], method: int = zipfile.ZIP_DEFLATED) -> bytes:
    """A zip archive in memory holding `members` (name -> bytes)."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", method) as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return buffer.getvalue()


@pytest.fixture(scope="session")
def paper() -> Analysis:
    """The analysis of samples/paper-2014 at --tz -07:00, labels relative to the repository root; read-only."""
    with contextlib.chdir(ROOT):
        return analyze([str(PAPER.relative_to(ROOT))], Options(zones=TimeZones(default_min=-420)))


@pytest.fixture(scope="session")
def one_day(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A simulated archive share of 2 configurations, one day, few writes (tests/batch, tests/cli); read-only."""
    from tests.batch.helpers import make_share

    return make_share(tmp_path_factory.mktemp("one-day") / "share", configs=2, days=1, writes=40)


@pytest.fixture(scope="session")
def share_master(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """3 configurations with colliding msgid ranges, 3 days (the first two gzipped), alert logs, .trm maps
    and a foreground trace per host and day (tests/batch, tests/e2e). Read-only: copy it to change it."""
    from tests.batch.helpers import make_share

    return make_share(tmp_path_factory.mktemp("share") / "share")


def stop_while_writing(args: Sequence[str], target: Path, timeout_s: float = 120.0) -> subprocess.CompletedProcess[str]:
    """`dgtrace ARGS` in a subprocess, stopped by SIGTERM while it writes the report to `target`:
    frozen (SIGSTOP) as soon as its temporary `.<name>.*.part` file appears, checked to be there
    still, then sent SIGTERM and let go (SIGCONT)."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "analyzer", *args], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    deadline = time.monotonic() + timeout_s
    try:
        while not list(target.parent.glob(f".{target.name}.*.part")):
            assert proc.poll() is None, ("ended before writing the report", proc.communicate())
            assert time.monotonic() < deadline, "the report was not written in time"
            time.sleep(0.001)
        proc.send_signal(signal.SIGSTOP)
        while Path(f"/proc/{proc.pid}/stat").read_text().rpartition(")")[2].split()[0] not in "TZ":
            time.sleep(0.001)  # until it is stopped indeed
        assert list(target.parent.glob(f".{target.name}.*.part")), "the report was complete before the signal"
        proc.send_signal(signal.SIGTERM)
        proc.send_signal(signal.SIGCONT)
        out, err = proc.communicate(timeout=timeout_s)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)
