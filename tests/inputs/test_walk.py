"""Folders and globs walked: name order, each folder once, links only inside the root, special files and
pseudo file systems skipped, within the time budget of an input."""

from __future__ import annotations

import errno
import os
import socket
from pathlib import Path

import pytest

from analyzer.inputs import walk
from analyzer.inputs.filenames import Mode
from analyzer.inputs.limits import Limits
from analyzer.inputs.skips import Skipped
from analyzer.inputs.walk import Target, Walker, inside
from tests.uploads import write

NOT_TRACE = "not a trace file (*.trc) or alert log (alert_*.log) by its name"


class _Kept:
    """A walk's files (label, what the name asks for) and its skipped entries."""

    def __init__(self, limits: Limits | None = None) -> None:
        self.files: list[tuple[str, Mode]] = []
        self.skipped: list[Skipped] = []
        self.walker = Walker(limits or Limits(), self.skipped, self._file)

    def _file(self, path: Path, label: str, info: os.stat_result, mode: Mode) -> None:
        assert info.st_size == path.stat().st_size
        self.files.append((label, mode))

    def reasons(self) -> dict[str, str]:
        return {s.label: s.reason for s in self.skipped}


def test_a_walk_keeps_files_in_name_order_by_what_their_names_ask_for(tmp_path: Path) -> None:
    for name in ("b.trc", "a/z.trc.gz", "a/up.zip", "a/README", "c/alert_cdb1.log", "notes.txt", "x.trm"):
        write(tmp_path / name, b"x")
    kept = _Kept()
    kept.walker.walk(tmp_path)
    assert kept.files == [
        (f"{tmp_path}/b.trc", "trace"),
        (f"{tmp_path}/a/README", "probe"),
        (f"{tmp_path}/a/up.zip", "archive"),
        (f"{tmp_path}/a/z.trc.gz", "trace"),
        (f"{tmp_path}/c/alert_cdb1.log", "trace"),
    ]
    assert kept.reasons() == {
        f"{tmp_path}/notes.txt": NOT_TRACE,
        f"{tmp_path}/x.trm": "trace map (.trm) file: ADR metadata, nothing to parse",
    }


def test_links_are_followed_only_inside_the_root_and_each_folder_is_walked_once(tmp_path: Path) -> None:
    root, outside = tmp_path / "up", tmp_path / "elsewhere"
    write(root / "deep" / "a.trc", b"a")
    write(outside / "o.trc", b"o")
    (root / "loop").symlink_to(root)
    (root / "out").symlink_to(outside)
    (root / "out.trc").symlink_to(outside / "o.trc")
    (root / "in.trc").symlink_to(root / "deep" / "a.trc")  # a file link inside: kept (sources tells copies)
    (root / "gone.trc").symlink_to(root / "nothing")
    kept = _Kept()
    kept.walker.walk(root)
    kept.walker.walk(root)  # a second walk of the same folder adds nothing
    assert kept.files == [(f"{root}/in.trc", "trace"), (f"{root}/deep/a.trc", "trace")]
    assert kept.reasons() == {
        f"{root}/gone.trc": "broken symbolic link: No such file or directory",
        f"{root}/loop": "symbolic link to a folder already walked: not followed twice",
        f"{root}/out": "symbolic link leading outside the folder given: not followed",
        f"{root}/out.trc": "symbolic link leading outside the folder given: not followed",
    }


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs named pipes")
def test_fifos_and_sockets_in_a_folder_are_never_read(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "p.trc")
    with socket.socket(socket.AF_UNIX) as listening:
        listening.bind(str(tmp_path / "s.trc"))
        kept = _Kept(Limits(read_special=True))  # (only for what the command line names)
        kept.walker.walk(tmp_path)
    assert kept.files == []
    assert kept.reasons() == {
        f"{tmp_path}/p.trc": "FIFO (named pipe): not read in a folder walk",
        f"{tmp_path}/s.trc": "socket: not read in a folder walk",
    }


def test_a_pseudo_file_system_is_not_entered(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write(tmp_path / "kernel" / "x.trc", b"x")
    write(tmp_path / "data" / "y.trc", b"y")
    monkeypatch.setattr(walk, "_pseudo_mounts", lambda: {os.path.realpath(tmp_path / "kernel"): "sysfs"})
    kept = _Kept()
    kept.walker.walk(tmp_path)
    assert kept.files == [(f"{tmp_path}/data/y.trc", "trace")]
    assert kept.reasons() == {f"{tmp_path}/kernel": "system folder (sysfs file system): not walked"}


@pytest.mark.skipif(not Path("/proc/self/mounts").exists(), reason="Linux /proc")
def test_the_kernel_s_own_file_systems_are_found_in_the_mount_table() -> None:
    assert walk._pseudo("/proc") == "proc"
    assert walk._pseudo(str(Path.home())) is None


def test_an_unreadable_folder_is_skipped_and_the_walk_goes_on(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write(tmp_path / "locked" / "x.trc", b"x")
    write(tmp_path / "open" / "y.trc", b"y")
    listing = walk._listing

    def denied(directory: Path) -> list[os.DirEntry[str]]:
        if directory.name == "locked":  # as for a folder of mode 0 to anyone but root
            raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), str(directory))
        return listing(directory)

    monkeypatch.setattr(walk, "_listing", denied)
    kept = _Kept()
    kept.walker.walk(tmp_path)
    assert kept.files == [(f"{tmp_path}/open/y.trc", "trace")]
    assert [(s.label, s.reason, s.partial) for s in kept.skipped] == [
        (f"{tmp_path}/locked", "cannot read directory: Permission denied", True)
    ]


def test_a_walk_out_of_time_says_how_many_folders_are_left(tmp_path: Path) -> None:
    for n in range(3):
        write(tmp_path / f"d{n}" / "a.trc", b"a")
    kept = _Kept(Limits(max_seconds_per_input=1e-9))
    kept.walker.walk(tmp_path)
    [stop] = kept.skipped
    assert stop.label == str(tmp_path) and stop.partial
    assert stop.reason.startswith("folder walk stopped after 1e-09 s (--max-seconds-per-input): ")
    assert stop.reason.endswith(" folder(s) left")


def test_a_glob_matches_by_the_walk_s_rules_with_its_fixed_part_as_boundary(tmp_path: Path) -> None:
    for name in ("up/a/x.trc", "up/a/b/y.trc", "up/.hidden/z.trc", "up/a/x.trm"):
        write(tmp_path / name, b"x")
    (tmp_path / "up" / "a" / "loop").symlink_to(tmp_path / "up")
    kept = _Kept()
    matches, stopped = kept.walker.glob(str(tmp_path / "up" / "**" / "*.trc"))
    boundary = os.path.realpath(tmp_path / "up")
    assert not stopped and kept.skipped == []
    assert matches == [Target(tmp_path / "up/a/b/y.trc", boundary), Target(tmp_path / "up/a/x.trc", boundary)]
    matches, _ = kept.walker.glob(str(tmp_path / "up" / ".*" / "*.trc"))
    assert [m.path for m in matches] == [tmp_path / "up/.hidden/z.trc"]  # hidden names only when asked for


def test_a_glob_out_of_time_is_reported_as_skipped(tmp_path: Path) -> None:
    write(tmp_path / "a.trc", b"a")
    kept = _Kept(Limits(max_seconds_per_input=1e-9))
    matches, stopped = kept.walker.glob(str(tmp_path / "*.trc"))
    assert (matches, stopped) == ([], True)
    assert kept.reasons() == {str(tmp_path / "*.trc"): "glob expansion stopped after 1e-09 s (--max-seconds-per-input)"}


@pytest.mark.parametrize(
    ("path", "boundary", "within"),
    [
        ("/up", "/up", True),
        ("/up/a/b", "/up", True),
        ("/upload/a", "/up", False),
        ("/", "/up", False),
        ("/x", "/", True),
    ],
)
def test_inside_is_by_whole_path_components(path: str, boundary: str, within: bool) -> None:
    assert inside(path, boundary) is within
