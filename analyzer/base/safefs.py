"""Folders and files opened the way a program running as root in other users' folders must (docs/security.md).

dgtrace may run as root on uploads and in folders that other users can write. Whatever it writes, it
writes through descriptors: a folder is opened once, component by component, and every later step
is relative to that descriptor (`dir_fd=`), so renaming or replacing a name on the way afterwards
changes nothing. A symbolic link is followed only when this user or root made it and no other user
can replace it; a folder dgtrace writes into must belong to this user or root and must not be
writable by other users (unless it has the sticky bit, as /tmp has, which keeps them from renaming
or removing the names of others). Anything else is refused with one line (`UnsafeLocation`, exit 8).

A group-writable folder counts as writable by others unless its group is its owner's private group
(a group of the owner's name, the owner's primary group, with no other member): the layout of
systems whose users have the umask 002.
"""

from __future__ import annotations

import contextlib
import errno
import grp
import os
import pwd
import secrets
import stat
from pathlib import Path

from analyzer.base.errors import UnsafeLocation

#: links followed on the way to one folder at most (as the kernel's own limit)
MAX_LINKS = 40
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


def trusted(uid: int) -> bool:
    """Whether files owned by `uid` are this user's or root's."""
    return uid in (0, os.geteuid())


def owner(uid: int) -> str:
    """A user in words: `nobody (uid 65534)`."""
    try:
        return f"{pwd.getpwuid(uid).pw_name} (uid {uid})"
    except KeyError:
        return f"uid {uid}"


def _private_group(gid: int, uid: int) -> bool:
    """Whether `gid` is the private group of user `uid` (that user's name and primary group, no other member)."""
    try:
        user, group = pwd.getpwuid(uid), grp.getgrgid(gid)
    except KeyError:
        return False
    return user.pw_gid == gid and group.gr_name == user.pw_name and set(group.gr_mem) <= {user.pw_name}


def others_write(folder: os.stat_result) -> bool:
    """Whether users other than the folder's owner (and root) may add, rename or remove names in it."""
    if folder.st_mode & stat.S_IWOTH:
        return True
    return bool(folder.st_mode & stat.S_IWGRP) and not _private_group(folder.st_gid, folder.st_uid)


def replaceable(folder: os.stat_result, entry_uid: int) -> bool:
    """Whether another user could rename or remove an entry owned by `entry_uid` in `folder`: the
    folder's owner can; with the sticky bit others can only touch their own entries."""
    if not trusted(folder.st_uid):
        return True
    if not others_write(folder):
        return False
    return not (folder.st_mode & stat.S_ISVTX and trusted(entry_uid))


def check_folder(fd: int, label: str, what: str) -> os.stat_result:
    """The folder open at `fd` is one dgtrace may write into (see the module docstring).

    Raises:
        UnsafeLocation: it belongs to another user, or others can write to it without the sticky bit.
    """
    info = os.fstat(fd)
    if not trusted(info.st_uid):
        raise UnsafeLocation(
            f"refusing to write {what}: the folder {label} belongs to {owner(info.st_uid)}, who could swap"
            " what dgtrace writes there (write it to a folder of your own)"
        )
    if others_write(info) and not info.st_mode & stat.S_ISVTX:
        raise UnsafeLocation(
            f"refusing to write {what}: other users can write to the folder {label}"
            f" (mode {stat.S_IMODE(info.st_mode):04o}, no sticky bit) and could swap what dgtrace writes there"
        )
    return info


def open_folder(path: Path | str, *, start: int | None = None) -> int:
    """A descriptor of the folder at `path` (relative to the folder open at `start`, else the working
    directory), opened component by component without following any link another user could have
    made or replaced. The caller closes it.

    Raises:
        FileNotFoundError, NotADirectoryError: a component is missing or not a folder.
        UnsafeLocation: a link on the way that another user made or could replace.
    """
    text = os.fspath(path)
    fd = os.open("/" if text.startswith("/") else ".", _DIR_FLAGS, dir_fd=None if text.startswith("/") else start)
    todo = [p for p in text.split("/") if p not in ("", ".")]
    todo.reverse()  # a stack: the next component last
    links = 0
    try:
        while todo:
            name = todo.pop()
            try:
                info = os.stat(name, dir_fd=fd, follow_symlinks=False)
            except FileNotFoundError:
                raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), text) from None
            if stat.S_ISLNK(info.st_mode):
                links += 1
                target = _followable_link(fd, name, info, text, links)
                if target.startswith("/"):
                    fd = _swap(fd, os.open("/", _DIR_FLAGS))
                todo.extend(reversed([p for p in target.split("/") if p not in ("", ".")]))
                continue
            if not stat.S_ISDIR(info.st_mode):
                raise NotADirectoryError(errno.ENOTDIR, os.strerror(errno.ENOTDIR), text)
            fd = _swap(fd, _open_dir(name, fd, text))
    except BaseException:
        os.close(fd)
        raise
    return fd


def _followable_link(fd: int, name: str, info: os.stat_result, path: str, links: int) -> str:
    """The target of the link `name` in the folder at `fd`, when dgtrace may follow it."""
    if links > MAX_LINKS:
        raise OSError(errno.ELOOP, os.strerror(errno.ELOOP), path)
    if not trusted(info.st_uid) or replaceable(os.fstat(fd), info.st_uid):
        who = owner(info.st_uid)
        raise UnsafeLocation(
            f"refusing {path}: {name} on the way is a symbolic link that {who} made or another user can replace;"
            " dgtrace follows no link another user could have planted"
        )
    return os.readlink(name, dir_fd=fd)


def _open_dir(name: str, fd: int, path: str) -> int:
    try:
        return os.open(name, _DIR_FLAGS, dir_fd=fd)
    except OSError as err:
        if err.errno in (errno.ELOOP, errno.ENOTDIR):  # a link now, a folder a moment ago
            raise UnsafeLocation(f"refusing {path}: {name} was replaced by a link while dgtrace opened it") from None
        raise


def _swap(old: int, new: int) -> int:
    os.close(old)
    return new


def child_folder(parent: int, name: str, label: str, what: str, *, create: bool = True) -> int:
    """A descriptor of the folder `name` inside the folder open at `parent` (created when missing and
    `create`), never a link, checked as `check_folder` checks. The caller closes it.

    Raises:
        UnsafeLocation: `name` is a link or a file another user planted, or a folder dgtrace may not write into.
        FileNotFoundError: it is missing (and not `create`).
    """
    if create:
        with contextlib.suppress(FileExistsError):
            os.mkdir(name, 0o777, dir_fd=parent)
    try:
        fd = os.open(name, _DIR_FLAGS, dir_fd=parent)
    except OSError as err:
        if err.errno in (errno.ELOOP, errno.ENOTDIR):
            link = stat.S_ISLNK(os.stat(name, dir_fd=parent, follow_symlinks=False).st_mode)
            kind = "a symbolic link; dgtrace follows no link there" if link else "not a folder: dgtrace did not make it"
            raise UnsafeLocation(f"refusing to write {what}: {label} is {kind}") from None
        raise
    try:
        check_folder(fd, label, what)
    except BaseException:
        os.close(fd)
        raise
    return fd


def descend(top: int, parts: tuple[str, ...], label: str, what: str, *, create: bool) -> int:
    """A descriptor of the folder `parts` below the folder open at `top` (`label`), every step a
    `child_folder`. The caller closes it."""
    fd = os.dup(top)
    try:
        for n, part in enumerate(parts, start=1):
            fd = _swap(fd, child_folder(fd, part, "/".join([label, *parts[:n]]), what, create=create))
    except BaseException:
        os.close(fd)
        raise
    return fd


def create_exclusive(folder: int, prefix: str, suffix: str, mode: int = 0o600) -> tuple[int, str]:
    """A new file of a random name in the folder open at `folder`: created exclusively (never a
    planted file or link), readable by this user only until the caller sets its mode (`fchmod`)."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    for _ in range(100):
        name = f"{prefix}{secrets.token_hex(6)}{suffix}"
        try:
            return os.open(name, flags, mode, dir_fd=folder), name
        except FileExistsError:
            continue
    raise FileExistsError(errno.EEXIST, "no free temporary name", prefix)


def open_file(folder: int, name: str) -> int | None:
    """A regular file `name` in the folder at `folder` opened for reading, never through a link;
    None when it is missing.

    Raises:
        UnsafeLocation: a link or something other than a regular file is there.
    """
    try:
        fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK, dir_fd=folder)
    except FileNotFoundError:
        return None
    except OSError as err:
        if err.errno == errno.ELOOP:
            raise UnsafeLocation(
                f"refusing to read {name}: it is a symbolic link; dgtrace follows no link there"
            ) from None
        raise
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise UnsafeLocation(f"refusing to read {name}: it is not a regular file")
    return fd


def on_procfs(fd: int) -> bool:
    """Whether the folder open at `fd` is in /proc (whose fd/N entries name open objects, not paths)."""
    try:
        return os.fstat(fd).st_dev == os.stat("/proc").st_dev
    except OSError:
        return False
