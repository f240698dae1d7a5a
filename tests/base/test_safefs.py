"""Folders opened without following links another user could have planted; the folders dgtrace may write into."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from analyzer.base import safefs
from analyzer.base.errors import ExitCode, UnsafeLocation


def _same(fd: int, path: Path) -> bool:
    try:
        info = os.fstat(fd)
        return (info.st_dev, info.st_ino) == (path.stat().st_dev, path.stat().st_ino)
    finally:
        os.close(fd)


def test_links_of_this_user_are_followed_relative_and_absolute(tmp_path: Path) -> None:
    (tmp_path / "a" / "b").mkdir(parents=True)
    (tmp_path / "rel").symlink_to("a/b")
    (tmp_path / "abs").symlink_to(tmp_path / "a")
    assert _same(safefs.open_folder(tmp_path / "rel"), tmp_path / "a" / "b")
    assert _same(safefs.open_folder(tmp_path / "abs" / "b" / ".." / "b"), tmp_path / "a" / "b")
    start = os.open(tmp_path / "a", os.O_RDONLY | os.O_DIRECTORY)
    try:
        assert _same(safefs.open_folder("b", start=start), tmp_path / "a" / "b")
    finally:
        os.close(start)
    assert _same(safefs.open_folder("/dev/fd"), Path(f"/proc/{os.getpid()}/fd"))  # root's links, /proc's own


def test_missing_folders_and_files_on_the_way_are_errors(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    with pytest.raises(FileNotFoundError):
        safefs.open_folder(tmp_path / "missing")
    with pytest.raises(NotADirectoryError):
        safefs.open_folder(tmp_path / "file" / "x")
    (tmp_path / "loop").symlink_to("loop")
    with pytest.raises(OSError, match="symbolic links"):
        safefs.open_folder(tmp_path / "loop")


def test_a_link_in_a_folder_others_can_write_is_not_followed(tmp_path: Path) -> None:
    shared = tmp_path / "shared"
    (tmp_path / "real").mkdir()
    shared.mkdir()
    (shared / "link").symlink_to(tmp_path / "real")
    shared.chmod(0o777)
    with pytest.raises(UnsafeLocation, match="link") as err:
        safefs.open_folder(shared / "link")
    assert err.value.exit_code == ExitCode.UNSAFE
    shared.chmod(0o1777)  # sticky: others cannot replace a link of this user's
    assert _same(safefs.open_folder(shared / "link"), tmp_path / "real")


def test_which_folders_may_be_written_into(tmp_path: Path) -> None:
    fd = os.open(tmp_path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for mode, refused in ((0o755, False), (0o1777, False), (0o777, True), (0o757, True)):
            tmp_path.chmod(mode)
            if refused:
                with pytest.raises(UnsafeLocation, match="other users can write"):
                    safefs.check_folder(fd, str(tmp_path), "x")
            else:
                safefs.check_folder(fd, str(tmp_path), "x")
    finally:
        tmp_path.chmod(0o700)
        os.close(fd)


def test_a_child_folder_is_never_a_link(tmp_path: Path) -> None:
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "elsewhere")
    parent = os.open(tmp_path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        with pytest.raises(UnsafeLocation, match="symbolic link"):
            safefs.child_folder(parent, "link", "DIR/link", "the dataset")
        os.close(safefs.child_folder(parent, "new", "DIR/new", "the dataset"))
        assert (tmp_path / "new").is_dir()
        (tmp_path / "file").write_text("x")
        (tmp_path / "tolink").symlink_to(tmp_path / "file")
        assert safefs.open_file(parent, "missing") is None
        with pytest.raises(UnsafeLocation, match="symbolic link"):
            safefs.open_file(parent, "tolink")
        handle = safefs.open_file(parent, "file")
        assert handle is not None and os.read(handle, 10) == b"x"
        os.close(handle)
    finally:
        os.close(parent)


def test_temporary_files_are_new_and_private(tmp_path: Path) -> None:
    folder = os.open(tmp_path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        handle, name = safefs.create_exclusive(folder, ".r.", ".part")
        os.close(handle)
        assert name.startswith(".r.") and name.endswith(".part")
        assert (tmp_path / name).stat().st_mode & 0o777 == 0o600
    finally:
        os.close(folder)
