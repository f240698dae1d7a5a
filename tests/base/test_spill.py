"""Pieces kept between stages (in memory or spilled as Arrow IPC), the spill directory's life, stop signals."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from analyzer.base import spill
from analyzer.base.errors import ExitCode, Interrupted, TempFileError, UnsafeLocation

EXCHANGES = pl.DataFrame({"thread": [1, 1, 2, 1], "seq": [7, 7, 3, 8], "msgid": [10, 11, 12, 13]})


def _keys(piece: spill.Piece) -> list[tuple[int, int, int]]:
    return sorted(piece.keys.rows())


def test_in_memory_pieces_keep_the_frame_and_count_their_keys() -> None:
    piece = spill.IN_MEMORY.put(EXCHANGES)
    assert piece.path is None and piece.frame is EXCHANGES and piece.rows == 4
    assert _keys(piece) == [(1, 7, 2), (1, 8, 1), (2, 3, 1)]
    assert piece.load(["msgid"]).to_series().to_list() == [10, 11, 12, 13]


def test_spilled_pieces_are_arrow_streams_read_back_whole_or_by_column(tmp_path: Path) -> None:
    with spill.spill_directory(tmp_path) as pieces:
        first, empty = pieces.put(EXCHANGES), pieces.put(EXCHANGES.clear())
        assert first.frame is None and first.path is not None and first.path.parent == pieces.directory
        assert pl.read_ipc_stream(first.path).equals(EXCHANGES) and first.load().equals(EXCHANGES)
        assert first.load(["seq"]).columns == ["seq"] and _keys(first) == [(1, 7, 2), (1, 8, 1), (2, 3, 1)]
        assert empty.path is None and empty.rows == 0 and empty.keys.height == 0  # nothing written for nothing
        assert sorted(p.name for p in pieces.directory.iterdir()) == ["owner", "piece-0.arrows"]
    assert list(tmp_path.iterdir()) == []


def test_a_big_piece_is_an_arrow_file_read_back_whole_or_by_column(tmp_path: Path) -> None:
    rows = spill.STREAM_ROWS
    big = pl.DataFrame({"thread": [1] * rows, "seq": [7] * rows, "msgid": range(rows)})
    with spill.spill_directory(tmp_path) as pieces:
        piece = pieces.put(big)
        assert piece.path is not None and piece.path.name == "piece-0.arrow" and _keys(piece) == [(1, 7, rows)]
        assert pl.read_ipc(piece.path).equals(big) and piece.load().equals(big)
        assert piece.load(["msgid", "seq"]).equals(big.select("msgid", "seq"))
        smaller = pieces.put(big.head(rows - 1))
        assert smaller.path is not None and smaller.path.name == "piece-1.arrows"
        assert smaller.load().equals(big.head(rows - 1))


def test_the_spill_directory_names_its_owner_and_goes_even_when_the_run_fails(tmp_path: Path) -> None:
    with pytest.raises(RuntimeError, match="a stage failed"), spill.spill_directory(tmp_path) as pieces:
        assert pieces.directory is not None
        pid, started = (pieces.directory / spill.OWNER).read_text().split()
        assert (int(pid), int(started)) == (os.getpid(), _start_ticks(os.getpid()))
        pieces.put(EXCHANGES)
        raise RuntimeError("a stage failed")
    assert list(tmp_path.iterdir()) == []


def test_a_directory_that_cannot_be_created_is_said_with_what_to_do(tmp_path: Path) -> None:
    missing = tmp_path / "no" / "such"
    refused = rf"^cannot create a temporary directory in {missing}: .*; free some space"
    with pytest.raises(TempFileError, match=refused), spill.spill_directory(missing):
        pass


def test_the_sweep_removes_the_folder_of_a_run_that_is_gone_and_nothing_else(tmp_path: Path) -> None:
    ended = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    gone = _spill_folder(tmp_path, int(ended.stdout), "gone", 1)
    alive = _spill_folder(tmp_path, os.getpid(), "alive", _start_ticks(os.getpid()))
    linked = tmp_path / f"dgtrace-{int(ended.stdout)}-link"
    linked.symlink_to(gone)
    assert spill.sweep(tmp_path) == [gone]
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([alive.name, linked.name])
    assert spill.sweep(tmp_path / "missing") == []


def test_a_stop_signal_unwinds_the_main_thread_and_stops_the_others() -> None:
    seen: list[BaseException] = []

    def worker() -> None:
        try:
            spill.check_stop()
        except Interrupted as exc:
            seen.append(exc)

    assert not spill.stop_requested()
    with spill.stop_on_signals():
        with pytest.raises(Interrupted) as stopped:
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(1)  # the handler raises before this ends
        assert spill.stop_requested()
        other = threading.Thread(target=worker)
        other.start()
        other.join()
    assert stopped.value.signum == signal.SIGTERM and stopped.value.exit_code == 128 + signal.SIGTERM
    assert [type(e) for e in seen] == [Interrupted]
    assert not spill.stop_requested()  # cleared on the way out
    spill.check_stop()  # does not raise once cleared


def test_a_stop_signal_inside_a_deferred_region_is_raised_as_it_ends() -> None:
    reached: list[str] = []
    with spill.stop_on_signals():
        with pytest.raises(Interrupted) as stopped, spill.stop_deferred():
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(0.2)  # the handler has run by now, and did not raise here
            reached.append("end of the region")
        assert spill.stop_requested()
    assert reached == ["end of the region"] and stopped.value.signum == signal.SIGTERM
    with spill.stop_on_signals(), spill.stop_deferred():
        reached.append("a later region")  # nothing left over from the signal before
    assert reached[-1] == "a later region"


def _spill_folder(parent: Path, pid: int, name: str, started: int) -> Path:
    """A spill folder as the run of `pid` that started at `started` (clock ticks since boot) leaves it."""
    folder = parent / f"dgtrace-{pid}-{name}"
    folder.mkdir()
    (folder / spill.OWNER).write_text(f"{pid} {started}\n")
    return folder


def _start_ticks(pid: int) -> int:
    return int(Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[19])


def test_the_sweep_tells_a_reused_pid_from_its_owner(tmp_path: Path) -> None:
    """A folder recording this pid but another start time belonged to an earlier process with the
    same pid: it goes. One recording this process's start time, or none yet, stays."""
    reused = _spill_folder(tmp_path, os.getpid(), "reused", _start_ticks(os.getpid()) + 1)
    ours = _spill_folder(tmp_path, os.getpid(), "ours", _start_ticks(os.getpid()))
    starting = tmp_path / f"dgtrace-{os.getpid()}-starting"  # created, owner file not written yet
    starting.mkdir()
    other = tmp_path / "dgtrace-notes"  # not a spill folder's name
    other.mkdir()
    assert spill.sweep(tmp_path) == [reused]
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([ours.name, starting.name, other.name])


def test_the_sweep_takes_the_folder_of_a_zombie(tmp_path: Path) -> None:
    """A run killed together with its parent is a zombie until someone collects it (in a container,
    perhaps never): it has ended, so its folder goes."""
    pid = os.fork()
    if pid == 0:
        os._exit(0)
    try:
        while Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0] != "Z":
            time.sleep(0.01)
        dead = _spill_folder(tmp_path, pid, "zombie", _start_ticks(pid))
        assert spill.sweep(tmp_path) == [dead]
    finally:
        os.waitpid(pid, 0)


def test_a_piece_that_cannot_be_written_is_removed_and_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def half_written(self: pl.DataFrame, path: Path, **_: Any) -> None:
        Path(path).write_bytes(b"\xff\xff\xff\xff partial")
        raise OSError("No space left on device (os error 28)")

    monkeypatch.setattr(pl.DataFrame, "write_ipc_stream", half_written)
    frame = pl.DataFrame({"thread": [1], "seq": [2]})
    with spill.spill_directory(tmp_path) as pieces:
        directory = pieces.directory
        assert directory is not None and directory.name.startswith(f"dgtrace-{os.getpid()}-")
        for _ in range(2):  # the second write fails the same way, without trying
            with pytest.raises(TempFileError) as error:
                pieces.put(frame)
            assert str(error.value).startswith(f"cannot write temporary file {directory}/piece-0.arrows: ")
            assert ": No space left on device; free some space there" in str(error.value)
            assert error.value.exit_code == ExitCode.TEMP_FILES
        assert sorted(p.name for p in directory.iterdir()) == ["owner"]
    assert list(tmp_path.iterdir()) == []


def test_a_temporary_folder_others_can_write_without_sticky_bit_is_refused(tmp_path: Path) -> None:
    """Another user could rename the spill directory there and put a link in its place: refused, exit 8."""
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)
    with pytest.raises(UnsafeLocation, match="other users can write") as err, spill.spill_directory(shared):
        pass
    assert err.value.exit_code == ExitCode.UNSAFE and list(shared.iterdir()) == []
    shared.chmod(0o1777)  # as /tmp: allowed
    with spill.spill_directory(shared) as pieces:
        assert pieces.directory is not None and pieces.directory.parent == shared
