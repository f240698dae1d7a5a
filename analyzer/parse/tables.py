"""The LALR tables of the grammars, kept between runs as JSON in a private per-user folder.

Building the six parsers costs about half a second; loading their tables about a hundredth
(`scripts/bench_grammar_cache.py`). lark's own cache is a pickle, and a pickle runs code when it is
loaded: one another user could swap in (a shared temporary folder, a folder whose parent others
can write) runs as the user of dgtrace, root included. So the tables are kept as JSON instead
(lark's serialised form, the one its standalone parsers embed: plain values, no code), and the
file is read and written through descriptors (docs/security.md): the folder
`$XDG_CACHE_HOME/dgtrace` (else `~/.cache/dgtrace`) is opened without following a link another
user could have made, and it and the file must be this user's and writable by no one else;
otherwise the tables are built and not kept. A file named for another lark version or another
grammar text is never read (its name holds both).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import stat
from pathlib import Path
from typing import Any

from lark import Lark, Transformer
from lark import __version__ as lark_version
from lark.grammar import Rule
from lark.lexer import TerminalDef

from analyzer.base import safefs
from analyzer.base.errors import UnsafeLocation

#: options given when the tables are loaded, not stored with them (lark's `_LOAD_ALLOWED_OPTIONS`)
_GIVEN = {"transformer", "postlex", "lexer_callbacks", "use_bytes", "debug", "g_regex_flags", "regex"}
_GIVEN |= {"propagate_positions", "tree_class", "_plugins"}


def cache_dir() -> Path | None:
    """`$XDG_CACHE_HOME/dgtrace` (else `~/.cache/dgtrace`), created mode 0700, when it is this user's
    own directory that no other user can write to; else None (no cache)."""
    fd = _open_cache()
    if fd is None:
        return None
    os.close(fd)
    return _cache_path()


def cache_file(family: str, text: str) -> str | None:
    """The tables file of one grammar (named by lark's version and the grammar's hash), or None when
    there is no private cache folder or the file there is not a regular file of this user's."""
    fd = _open_cache()
    if fd is None:
        return None
    try:
        name = _name(family, text)
        try:
            info = os.stat(name, dir_fd=fd, follow_symlinks=False)
        except FileNotFoundError:
            return str(_cache_path() / name)
        return str(_cache_path() / name) if _private(info, stat.S_ISREG) else None
    finally:
        os.close(fd)


def load_or_build(family: str, text: str, transformer: Transformer[Any, Any]) -> Lark:
    """The LALR parser of `text` transforming inline with `transformer`: from the cached tables when
    they are there and private, else built (and its tables kept when the cache folder is private)."""
    fd = _open_cache()
    if fd is None:
        return Lark(text, parser="lalr", transformer=transformer)
    try:
        name = _name(family, text)
        loaded = _load(fd, name, transformer)
        if loaded is not None:
            return loaded
        built = Lark(text, parser="lalr", transformer=transformer)
        with contextlib.suppress(OSError, TypeError, ValueError):  # a full disk costs the next run the build
            _save(fd, name, built)
        return built
    finally:
        os.close(fd)


def _cache_path() -> Path:
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "dgtrace"


def _name(family: str, text: str) -> str:
    digest = hashlib.sha256(f"{lark_version}\0{text}".encode()).hexdigest()[:24]
    return f"{family}-{digest}.lark-tables.json"


def _private(info: os.stat_result, kind: Any) -> bool:
    """This user's, of that kind, and writable by no one else."""
    return bool(kind(info.st_mode)) and info.st_uid == os.geteuid() and not info.st_mode & 0o022


def _open_cache() -> int | None:
    """A descriptor of the private cache folder (created 0700 when missing), or None."""
    if not hasattr(os, "geteuid"):  # no POSIX owners to check (Windows): build the tables every time
        return None
    try:
        path = _cache_path()
        base = safefs.open_folder(path.parent) if _make(path.parent) else None
    except (OSError, RuntimeError, UnsafeLocation):  # no home, a read-only home, a planted link
        return None
    if base is None:
        return None
    try:
        with contextlib.suppress(FileExistsError):
            os.mkdir(path.name, 0o700, dir_fd=base)
        fd = os.open(path.name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=base)
    except OSError:
        return None
    finally:
        os.close(base)
    if not _private(os.fstat(fd), stat.S_ISDIR):
        os.close(fd)
        return None
    return fd


def _make(folder: Path) -> bool:
    """Create `folder` (and its parents) when missing, as `mkdir -p` would; whether it is there."""
    try:
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    except OSError:
        return False
    return True


def _load(folder: int, name: str, transformer: Transformer[Any, Any]) -> Lark | None:
    try:
        fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK, dir_fd=folder)
    except OSError:
        return None
    try:
        if not _private(os.fstat(fd), stat.S_ISREG):
            return None
        with os.fdopen(os.dup(fd), "rb") as handle:
            stored = json.loads(handle.read(), object_hook=_decoded)
        return Lark._load_from_dict(stored["data"], stored["memo"], transformer=transformer)  # type: ignore[no-untyped-call,no-any-return]
    except Exception:
        return None
    finally:
        os.close(fd)


def _save(folder: int, name: str, parser: Lark) -> None:
    data, memo = parser.memo_serialize([TerminalDef, Rule])
    data["options"] = {k: v for k, v in data["options"].items() if k not in _GIVEN}
    text = json.dumps(_encoded({"data": data, "memo": memo}), separators=(",", ":")).encode()
    handle, part = safefs.create_exclusive(folder, f".{name}.", ".part", 0o600)
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(text)
        os.replace(part, name, src_dir_fd=folder, dst_dir_fd=folder)
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(part, dir_fd=folder)


def _encoded(value: Any) -> Any:
    """lark's serialised tables as JSON: tuples and dicts of keys that are not strings tagged."""
    if isinstance(value, dict):
        if all(isinstance(k, str) for k in value):
            return {k: _encoded(v) for k, v in value.items()}
        return {"~dict": [[_encoded(k), _encoded(v)] for k, v in value.items()]}
    if isinstance(value, tuple):
        return {"~tuple": [_encoded(v) for v in value]}
    if isinstance(value, list):
        return [_encoded(v) for v in value]
    if value is None or isinstance(value, str | int | float | bool):
        return value
    raise TypeError(f"not a plain value in lark's tables: {type(value).__name__}")


def _decoded(item: dict[str, Any]) -> Any:
    if len(item) == 1 and "~tuple" in item:
        return tuple(item["~tuple"])
    if len(item) == 1 and "~dict" in item:
        return {(tuple(k) if isinstance(k, list) else k): v for k, v in item["~dict"]}
    return item
