"""Hostile inputs beside a good simulated trace set, through the command line.

Every case checks the exit code, that the run ends (a generous timeout, never a benchmark), that
nothing is left in its private TMPDIR, and that the good set's writes are all still matched. Each runs
dgtrace in a subprocess, which also checks its peak RSS (the failures these cases come from peaked
between 1.1 and 2.5 GB): those runs are marked slow. The cases that need no process of their own (no
signal, no resource limit, no memory or time bound as the point) also run in-process beside a smaller
good set, for the fast loop; a hung in-process run ends the test run with every thread's traceback.
The hostile inputs are built here, smaller than in `scripts/reliability_table.py` but of the same shapes.
"""

from __future__ import annotations

import faulthandler
import gzip
import io
import json
import math
import os
import re
import signal
import socket
import subprocess
import sys
import tarfile
import tempfile
import time
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from analyzer.cli import app
from analyzer.simulate.options import SimOptions
from analyzer.simulate.runner import simulate
from scripts.reliability_table import (
    MiB,
    Result,
    binaries,
    copy_set,
    many_members_zip,
    nesting_bomb,
    newline_members_zip,
    nul_run,
    overlapping_zip,
    repeated,
    run,
    same_name_zip,
    set_tgz,
    set_zip,
    spill_pieces,
    standby_only,
    symlink_loops,
    traces,
    truncated,
)

DGTRACE = [sys.executable, "-m", "analyzer"]
#: seconds after which a run counts as hung (each case ends in a few seconds)
TIMEOUT = 90.0
#: peak RSS allowed: the good set alone takes ~130 MB
PEAK_MB = 450.0
#: the exit codes the README documents for a run on files
DOCUMENTED = {0, 1, 2, 3, 5}


#: why a file of another name is not read in a folder
NOT_TRACE = "not a trace file (*.trc) or alert log (alert_*.log) by its name"


@pytest.fixture(scope="module")
def good(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The good data: a simulated set of 2 x 1,000 remote writes."""
    folder = tmp_path_factory.mktemp("good") / "set"
    simulate(folder, SimOptions(writes=1000, seed=3))
    return folder


@pytest.fixture(scope="module")
def good_matched(good: Path, tmp_path_factory: pytest.TempPathFactory) -> int:
    """Matched writes of the good set alone."""
    alone = dgtrace([str(good)], tmp_path_factory.mktemp("alone"))
    assert alone.code == 0 and alone.matched == 2000
    return alone.matched


def dgtrace(args: list[str], tmp: Path, **kwargs: Any) -> Result:
    """`dgtrace analyze ARGS --format json` in a subprocess with TMPDIR=tmp/tmp."""
    return run([*DGTRACE, "analyze", *args, "--format", "json"], tmpdir=tmp / "tmp", timeout=TIMEOUT, **kwargs)


def in_process(args: list[str], tmp: Path) -> Result:
    """`dgtrace analyze ARGS --format json` in this process with TMPDIR=tmp/tmp (its peak RSS is not
    measured: NaN). A run still going after TIMEOUT seconds ends the whole test run with a traceback."""
    tmpdir = tmp / "tmp"
    tmpdir.mkdir(parents=True, exist_ok=True)
    before = set(_tree(tmpdir))
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("TMPDIR", str(tmpdir))
        patch.setattr(tempfile, "tempdir", None)  # asked again, from TMPDIR
        start = time.monotonic()
        faulthandler.dump_traceback_later(TIMEOUT, exit=True)
        try:
            result = CliRunner().invoke(app, ["analyze", *args, "--format", "json"])
        finally:
            faulthandler.cancel_dump_traceback_later()
        seconds = time.monotonic() - start
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    try:
        matched: int | None = int(json.loads(result.stdout)["summary"]["matched_writes"])
    except (ValueError, KeyError, TypeError):
        matched = None
    left = sorted(set(_tree(tmpdir)) - before)
    return Result(result.exit_code, seconds, math.nan, matched, left, result.stderr, result.stdout)


def _tree(root: Path) -> list[str]:
    return [str(path.relative_to(root)) for path in root.rglob("*")]


@dataclass(frozen=True)
class Way:
    """How dgtrace is run (`analyze(args, tmp)`), and the good set it is run beside with its matched writes."""

    analyze: Callable[[list[str], Path], Result]
    good: Path
    matched: int


@pytest.fixture(
    scope="module",
    params=[pytest.param("in-process"), pytest.param("subprocess", marks=pytest.mark.slow)],
)
def way(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Way:
    """In-process beside a good set of 2 x 400 writes; or in a subprocess beside `good` (peak RSS checked)."""
    if request.param == "subprocess":
        return Way(dgtrace, request.getfixturevalue("good"), request.getfixturevalue("good_matched"))
    folder = tmp_path_factory.mktemp("small") / "set"
    simulate(folder, SimOptions(writes=400, seed=3))
    alone = in_process([str(folder)], tmp_path_factory.mktemp("alone"))
    assert alone.code == 0 and alone.matched == 800
    return Way(in_process, folder, alone.matched)


def check(result: Result, code: int, matched: int | None, peak_mb: float = PEAK_MB) -> dict[str, Any]:
    """The run ended with `code` in time, within `peak_mb` (when measured), leaving nothing behind,
    without a traceback, with `matched` writes; its JSON document (empty when there is none)."""
    assert result.code == code, (result.code, result.stderr[-2000:])
    assert result.seconds < TIMEOUT
    assert math.isnan(result.peak_mb) or result.peak_mb < peak_mb, f"peak RSS {result.peak_mb:.0f} MB"
    assert result.leftovers == []
    assert "Traceback" not in result.stderr
    assert result.matched == matched
    return json.loads(result.stdout) if result.stdout else {}


def skipped(doc: dict[str, Any]) -> dict[str, str]:
    return {entry["file"]: entry["skipped"] for entry in doc["files"] if entry["skipped"]}


def read_errors(doc: dict[str, Any]) -> dict[str, str]:
    return {row["file"]: row["read_error"] for row in doc["coverage"] if row["read_error"]}


# --- 1. nothing hangs ---------------------------------------------------------------------------


def test_devices_are_skipped_with_the_reason(way: Way, tmp_path: Path) -> None:
    doc = check(way.analyze([str(way.good), "/dev/zero", "/dev/urandom"], tmp_path), 0, way.matched)
    reason = "character device: not read (--read-special reads it)"
    assert skipped(doc)["/dev/zero"] == skipped(doc)["/dev/urandom"] == reason


@pytest.mark.slow
def test_devices_read_on_request_are_bounded(good: Path, good_matched: int, tmp_path: Path) -> None:
    """Binary data are refused at once; an endless text stream stops at --max-total-bytes."""
    doc = check(dgtrace([str(good), "/dev/zero", "/dev/urandom", "--read-special"], tmp_path), 1, good_matched)
    assert read_errors(doc)["/dev/zero"].startswith("/dev/zero: not a text trace: only NUL bytes")
    assert "not a text trace: binary data" in read_errors(doc)["/dev/urandom"]
    pipe = tmp_path / "endless"
    os.mkfifo(pipe)
    writer = subprocess.Popen(["sh", "-c", f"yes 'an endless line of text' > {pipe}"], stderr=subprocess.DEVNULL)
    try:
        result = dgtrace([str(good), str(pipe), "--read-special", "--max-total-bytes", "24MiB"], tmp_path)
    finally:
        writer.kill()
        writer.wait()
    doc = check(result, 1, good_matched)
    assert "over the limit (24 MiB, --max-total-bytes)" in read_errors(doc)[str(pipe)]


def test_fifos_are_skipped_with_the_reason(way: Way, tmp_path: Path) -> None:
    folder = tmp_path / "share"
    folder.mkdir()
    os.mkfifo(folder / "left_over.trc")
    os.mkfifo(tmp_path / "named")
    good = way.good
    doc = check(way.analyze([str(good), str(folder), str(tmp_path / "named")], tmp_path), 0, way.matched)
    assert skipped(doc) == {
        f"{folder}/left_over.trc": "FIFO (named pipe): not read in a folder walk",
        str(tmp_path / "named"): "FIFO (named pipe): not read (--read-special reads it)",
        **{f"{good}/{name}": NOT_TRACE for name in ("scenario.json", "truth.csv")},
    }


@pytest.mark.slow  # waits the 2 s it is given
def test_a_fifo_without_writer_is_waited_for_no_longer_than_the_budget(
    good: Path, good_matched: int, tmp_path: Path
) -> None:
    os.mkfifo(tmp_path / "named")
    result = dgtrace([str(good), str(tmp_path / "named"), "--read-special", "--max-seconds-per-input", "2"], tmp_path)
    doc = check(result, 1, good_matched)
    assert read_errors(doc)[str(tmp_path / "named")].endswith("no data came within 2 s (--max-seconds-per-input)")


def test_sockets_are_skipped_with_the_reason(way: Way, tmp_path: Path) -> None:
    """A listening Unix socket inside a folder (named as a trace) and one named on the command line:
    both skipped with the reason, also with --read-special; the good set is read as ever."""
    folder = tmp_path / "share"
    folder.mkdir()
    named = tmp_path / "named.sock"
    good = way.good
    with socket.socket(socket.AF_UNIX) as inside, socket.socket(socket.AF_UNIX) as alone:
        inside.bind(str(folder / "listener.trc"))
        alone.bind(str(named))
        inside.listen()
        alone.listen()
        for extra in ([], ["--read-special"]):
            doc = check(way.analyze([str(good), str(folder), str(named), *extra], tmp_path), 0, way.matched)
            assert skipped(doc) == {
                f"{folder}/listener.trc": "socket: not read in a folder walk",
                str(named): "socket: nothing to read as a file",
                **{f"{good}/{name}": NOT_TRACE for name in ("scenario.json", "truth.csv")},
            }


@pytest.mark.parametrize("leaf", [b"\x00", b"x" * 127 + b"\n"], ids=["zeros", "text"])
def test_a_nesting_bomb_stops_for_the_whole_input(way: Way, tmp_path: Path, leaf: bytes) -> None:
    """42.zip's shape (4 levels of 16 zips, 65,536 leaves; here 1 MiB leaves, 64 GiB in all):
    the bytes of the whole tree stop it, whatever each member's ratio, whether its leaves are
    zeros (each skipped as binary at its first bytes) or text (each read)."""
    bomb = nesting_bomb(tmp_path / "42.zip", leaf_bytes=MiB, leaf=leaf)
    assert bomb.stat().st_size < 200_000
    doc = check(way.analyze([str(way.good), str(bomb)], tmp_path), 1, way.matched)
    assert "times its size (--max-ratio): a decompression bomb" in skipped(doc)[str(bomb)]


@pytest.mark.slow  # a timing: two runs in processes of their own
def test_archive_listing_is_linear_in_members(good: Path, good_matched: int, tmp_path: Path) -> None:
    """2,000 and 20,000 members (copies of one small trace): 10 times the members may cost 10
    times the time, not 100 (the factor allowed is 30: process start-up makes it smaller)."""
    seconds = {}
    for members in (2_000, 20_000):
        upload = many_members_zip(tmp_path / f"m{members}.zip", members=members)
        result = dgtrace([str(good), str(upload)], tmp_path)
        doc = check(result, 0, good_matched)
        duplicates = [reason for reason in skipped(doc).values() if reason.startswith("duplicate content")]
        assert len(duplicates) == members - 1
        seconds[members] = result.seconds
    assert seconds[20_000] < 30 * seconds[2_000], seconds


@pytest.mark.slow  # each distinct member costs ~20-30 ms of parsing: ~10-20 s on a loaded machine
def test_a_zip_of_hundreds_of_distinct_members_is_read_in_time(good: Path, good_matched: int, tmp_path: Path) -> None:
    """300 small traces, each with a line of its own (no copies to read once): every member read as
    a file, within the timeout and the memory bound, the good set's writes all kept."""
    upload = many_members_zip(tmp_path / "distinct.zip", members=300, distinct=True)
    doc = check(dgtrace([str(good), str(upload)], tmp_path), 0, good_matched)
    members = [f for f in doc["files"] if f["file"].startswith(f"{upload}!")]
    assert len(members) == 300 and not any(f["skipped"] for f in members)
    assert len([row for row in doc["coverage"] if row["file"].startswith(f"{upload}!")]) == 300


def test_globs_through_link_loops(way: Way, tmp_path: Path) -> None:
    loops = symlink_loops(tmp_path / "loops")
    doc = check(way.analyze([str(way.good), str(loops / "**" / "*.trc")], tmp_path), 0, way.matched)
    assert [f["file"] for f in doc["files"] if "loops" in f["file"]] == [f"{loops}/a/b/x.trc"]


@pytest.mark.slow  # walks the file system for up to the 2 s it is given
def test_a_glob_over_the_root_end_stops_at_the_budget(good: Path, good_matched: int, tmp_path: Path) -> None:
    result = dgtrace([str(good), "/**/*.trc-dgtrace-test-nothing", "--max-seconds-per-input", "2"], tmp_path)
    if result.code == 2:  # the whole file system was walked within 2 s, and nothing matched
        assert result.stderr.strip().endswith("/**/*.trc-dgtrace-test-nothing: no such file or directory")
        assert result.leftovers == [] and result.seconds < TIMEOUT
    else:  # the walk stopped after 2 s; the good set is analysed
        doc = check(result, 1, good_matched)
        assert skipped(doc)["/**/*.trc-dgtrace-test-nothing"].startswith("glob expansion stopped after 2 s")


# --- 2. memory follows the chunk size --------------------------------------------------------


@pytest.mark.slow
def test_memory_is_bounded_whatever_the_line_structure(good: Path, good_matched: int, tmp_path: Path) -> None:
    """Empty lines (the old reader held 16 Mi of them per chunk, ~1.3 GB: a 16 MiB file of them is
    one such chunk), one endless line, compressed members of empty lines just under the ratio
    limit, two at once."""
    newlines = tmp_path / "newlines.trc"
    endless = tmp_path / "endless.trc"
    with newlines.open("wb") as out, endless.open("wb") as one:
        for chunk in repeated(b"\n", 16 * MiB):
            out.write(chunk)
        for chunk in repeated(b"x", 32 * MiB):
            one.write(chunk)
    members = newline_members_zip(tmp_path / "members.zip", members=2, size=16 * MiB)
    doc = check(dgtrace([str(good), str(newlines), str(endless), str(members)], tmp_path), 0, good_matched)
    lines = {row["file"]: (row["lines"], row["cut_lines"]) for row in doc["coverage"]}
    assert lines[str(newlines)] == (16 * MiB, 0) and lines[str(endless)] == (1, 1)


# --- 3. a full temporary folder ------------------------------------------------------------------


@pytest.mark.slow
def test_a_full_temporary_folder_names_the_file_and_leaves_nothing(
    good: Path, good_matched: int, tmp_path: Path
) -> None:
    """Writes past RLIMIT_FSIZE fail as on a full disk (EFBIG instead of ENOSPC)."""
    result = dgtrace([str(good)], tmp_path, file_size_limit=4096)
    check(result, 5, None)
    [line] = result.stderr.strip().splitlines()
    assert line.startswith(f"dgtrace: error: cannot write temporary file {tmp_path / 'tmp'}/dgtrace-")
    assert re.search(r"/piece-\d+\.arrows?: File too large; ", line)


@pytest.mark.slow
@pytest.mark.skipif(os.geteuid() != 0, reason="mounting a small tmpfs needs root")
def test_a_full_tmpfs_says_no_space_left(good: Path, tmp_path: Path) -> None:
    folder = tmp_path / "tmp"
    folder.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", str(folder)], check=False).returncode:
        pytest.skip("mount not allowed here")
    try:
        (folder / "filler").write_bytes(bytes(256 * 1024 - 8192))
        result = dgtrace([str(good)], tmp_path)
        assert result.code == 5 and result.leftovers == [] and "Traceback" not in result.stderr
        assert ": No space left on device; free some space there" in result.stderr
        assert [p.name for p in folder.iterdir()] == ["filler"]
    finally:
        subprocess.run(["umount", str(folder)], check=False)


# --- 4. stop signals and leftovers ------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize(
    ("signum", "code", "line"), [(signal.SIGTERM, 143, "stopped by SIGTERM"), (signal.SIGINT, 130, "interrupted")]
)
def test_stop_signals_remove_the_temporary_files(good: Path, tmp_path: Path, signum: int, code: int, line: str) -> None:
    """The run waits on a pipe nobody writes to, after spilling the good set's writes; the
    signal ends it at once with its code, one line, and an empty TMPDIR."""
    pipe = tmp_path / "pipe"
    os.mkfifo(pipe)
    args = [str(good), str(pipe), "--read-special"]
    result = dgtrace(args, tmp_path, signal_when=spill_pieces(tmp_path / "tmp"), signum=signum)
    assert (result.code, result.stderr.strip(), result.leftovers) == (code, f"dgtrace: {line}", [])


@pytest.mark.slow
def test_a_killed_run_s_leftovers_are_swept_by_the_next_run(good: Path, good_matched: int, tmp_path: Path) -> None:
    pipe = tmp_path / "pipe"
    os.mkfifo(pipe)
    tmp = tmp_path / "tmp"
    killed = dgtrace(
        [str(good), str(pipe), "--read-special"], tmp_path, signal_when=spill_pieces(tmp), signum=signal.SIGKILL
    )
    assert killed.code == -signal.SIGKILL and any(name.startswith("dgtrace-") for name in killed.leftovers)
    live = tmp / f"dgtrace-{os.getpid()}-live"  # this process is alive: its folder stays
    live.mkdir()
    (live / "owner").write_text(f"{os.getpid()} {_start_ticks(os.getpid())}\n")
    foreign = tmp / "dgtrace-999999999-foreign"
    foreign.mkdir()
    if os.geteuid() == 0:
        os.chown(foreign, 65534, 65534)  # another user's (pid gone): not ours to remove
    again = dgtrace([str(good)], tmp_path)
    check(again, 0, good_matched)
    assert sorted(p.name for p in tmp.iterdir()) == sorted([live.name] + ([foreign.name] if os.geteuid() == 0 else []))


def _start_ticks(pid: int) -> int:
    return int(Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[19])


# --- 5. data that can be read is read ---------------------------------------------------------


@pytest.mark.parametrize(
    ("damage", "field", "value"),
    [
        ("cr", "cr_lines", lambda v, original: v == original.count(b"\n")),  # every line end counted
        ("utf16", "encoding", lambda v, _: v == "utf-16-le"),
        ("nul", "nul_runs", lambda v, _: v == 1),
    ],
)
def test_mac_line_ends_utf16_and_nul_runs_lose_nothing(
    way: Way, tmp_path: Path, damage: str, field: str, value: Any
) -> None:
    change = {
        "cr": lambda data: data.replace(b"\n", b"\r"),
        "utf16": lambda data: data.decode().encode("utf-16"),
        "nul": nul_run,
    }[damage]
    copy = copy_set(way.good, tmp_path / damage, standby_only(change))
    doc = check(way.analyze([str(copy)], tmp_path), 0, way.matched)
    originals = {trace.name: trace.read_bytes() for trace in traces(way.good)}
    rows = [row for row in doc["coverage"] if "_rfs_" in row["file"]]
    assert len(rows) == 2
    assert all(value(row[field], originals[Path(row["file"]).name]) and row["repairs"] for row in rows)


# --- 6. archives --------------------------------------------------------------------------------


def test_overlapping_zip_entries_are_refused(way: Way, tmp_path: Path) -> None:
    bomb = overlapping_zip(tmp_path / "overlap.zip", size=16 * MiB, entries=64)
    doc = check(way.analyze([str(way.good), str(bomb)], tmp_path), 1, way.matched)
    reasons = [reason for label, reason in skipped(doc).items() if label.startswith(str(bomb))]
    assert len(reasons) == 64 and all("overlap another member" in reason for reason in reasons)


def test_a_nested_archive_is_spooled_within_the_bytes_budget(way: Way, tmp_path: Path) -> None:
    inner = io.BytesIO()
    with zipfile.ZipFile(inner, "w", zipfile.ZIP_STORED) as nested:
        nested.writestr("a.trc", os.urandom(3 * MiB).hex())
    upload = tmp_path / "upload.zip"
    with zipfile.ZipFile(upload, "w", zipfile.ZIP_DEFLATED) as outer:
        outer.writestr("node1.zip", inner.getvalue())
    doc = check(way.analyze([str(way.good), str(upload), "--max-total-bytes", "4MiB"], tmp_path), 1, way.matched)
    assert skipped(doc)[f"{upload}!node1.zip"].startswith("temporary spool over the limit (bytes left")


def test_members_with_one_name_are_all_read(way: Way, tmp_path: Path) -> None:
    upload = same_name_zip(way.good, tmp_path / "same.zip")
    doc = check(way.analyze([str(upload)], tmp_path), 0, way.matched)
    assert {f["file"] for f in doc["files"] if "rfs" in f["file"]} == {
        f"{upload}!stby/trace/db_rfs.trc",
        f"{upload}!stby/trace/db_rfs.trc [2]",
    }


@pytest.mark.parametrize("kind", ["zip", "tgz"])
def test_a_truncated_archive_gives_back_what_it_holds(way: Way, tmp_path: Path, kind: str) -> None:
    """Cut at 80%: the primary's traces and the first RFS trace are whole, the second RFS trace
    is read up to the cut (its writes before it are matched); exit 1 (partial)."""
    build = set_zip if kind == "zip" else set_tgz
    upload = truncated(build(way.good, tmp_path / f"cut.{kind}"), 0.8)
    result = way.analyze([str(upload)], tmp_path)
    doc = check(result, 1, result.matched)
    assert result.matched is not None and way.matched // 2 < result.matched < way.matched
    assert len(read_errors(doc)) == 1 and str(upload) in skipped(doc)


def test_documents_and_binary_data_named_trc_are_skipped(way: Way, tmp_path: Path) -> None:
    folder = binaries(tmp_path / "bin")
    doc = check(way.analyze([str(way.good), str(folder)], tmp_path), 0, way.matched)
    assert {
        label.rsplit("/", 1)[-1]: reason.split(" (")[0] for label, reason in skipped(doc).items() if "bin" in label
    } == {
        "report.trc": "not a text trace: a document or Java archive",
        "scan.trc": "not a text trace: a PDF document",
        "random.trc": "not a text trace: binary data",
    }


# --- the whole command line on random input ----------------------------------------------------

NAMES = ["a.trc", "b.trc.gz", "c.zip", "d", "e.tar", "f.tgz", "g.trc.zst", "h.log"]
SIM_LINES = (
    b"*** 2024-10-22T16:18:49.081732+00:00 (CDB$ROOT(1))\n"
    b"Client sending SQLNET request data [kpurcs] oper='Write' flag=67111042 thrd=1 seq=7 msgid=42\n"
    b"*** 2024-10-22 16:18:49.588659 [krsu.c:10652]\n"
    b"WAIT #0: nam='RFS write' ela= 451 p1=0 p2=0 p3=0 obj#=-1 tim=1729613929588659\n"
)


def _wrap(name: str, data: bytes) -> bytes:
    if name.endswith(".gz"):
        return gzip.compress(data)
    if name.endswith(".zip"):
        buffer = io.BytesIO()
        with zipfile.ZipFile(buffer, "w") as archive:
            archive.writestr("in/x.trc", data)
        return buffer.getvalue()
    if name.endswith((".tar", ".tgz")):
        buffer = io.BytesIO()
        with tarfile.open(fileobj=buffer, mode="w:gz" if name.endswith("tgz") else "w") as archive:
            info = tarfile.TarInfo("x.trc")
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
        return buffer.getvalue()
    return data


@pytest.mark.slow
@settings(deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    files=st.lists(
        st.tuples(
            st.sampled_from(NAMES),
            st.one_of(st.binary(max_size=2000), st.lists(st.sampled_from(SIM_LINES.split(b"\n"))).map(b"\n".join)),
            st.booleans(),
            st.one_of(st.none(), st.integers(min_value=0)),
        ),
        min_size=1,
        max_size=4,
    )
)
def test_the_command_line_on_random_files_exits_with_a_documented_code(
    tmp_path_factory: pytest.TempPathFactory, files: list[tuple[str, bytes, bool, int | None]]
) -> None:
    """Random bytes or trace-like lines, raw or wrapped (gzip, zip, tar), maybe cut: an exit code
    from the README's table, never an internal error, never a traceback."""
    folder = tmp_path_factory.mktemp("random")
    for n, (name, data, wrap, cut) in enumerate(files):
        payload = _wrap(name, data) if wrap else data
        if cut is not None:
            payload = payload[: cut % (len(payload) + 1)]
        (folder / f"{n}{name}").write_bytes(payload)
    result = CliRunner().invoke(app, ["analyze", str(folder), "--format", "json"])
    assert result.exit_code in DOCUMENTED - {2, 5}, (result.exit_code, result.stderr, result.exception)
    assert "Traceback" not in result.stderr
    assert result.exception is None or isinstance(result.exception, SystemExit)
