"""The parsers' tables kept as JSON in a private folder: reused, never a pickle, never from a folder of others."""

from __future__ import annotations

import os
import pickle
import stat
from pathlib import Path

import pytest

from analyzer.parse import grammar as g
from analyzer.parse import tables

LINE = "Client sending SQLNET request data [kpurcs] oper='Write' flag=67111042 thrd=1 seq=1584 msgid=117450"
pytestmark = pytest.mark.skipif(not hasattr(os, "geteuid"), reason="POSIX owners")


def _transport(cache: Path, monkeypatch: pytest.MonkeyPatch) -> object:
    monkeypatch.setenv("XDG_CACHE_HOME", str(cache))
    text = g.grammar_path(g.Family.TRANSPORT).read_text(encoding="utf-8")
    parser = tables.load_or_build("transport", text, g._TRANSFORMERS[g.Family.TRANSPORT]())
    return parser.parse(LINE)


def test_tables_are_kept_private_and_give_the_same_parser(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    built = _transport(tmp_path, monkeypatch)
    (kept,) = (tmp_path / "dgtrace").iterdir()
    assert kept.name.endswith(".lark-tables.json") and stat.S_IMODE(kept.stat().st_mode) == 0o600
    assert kept.read_bytes().startswith(b"{")  # JSON, not a pickle
    before = kept.stat().st_mtime_ns
    assert _transport(tmp_path, monkeypatch) == built  # loaded from the tables
    assert kept.stat().st_mtime_ns == before


def test_a_pickle_or_damaged_tables_are_never_loaded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Whatever sits under the tables' name that is not their JSON is replaced by a build, never run."""
    built = _transport(tmp_path, monkeypatch)
    (kept,) = (tmp_path / "dgtrace").iterdir()
    marker = tmp_path / "ran"

    class Payload:
        def __reduce__(self) -> tuple[object, tuple[str]]:
            return (os.system, (f"touch {marker}",))

    for planted in (pickle.dumps(Payload()), b'{"data": 1}', b"\x00" * 10):
        kept.write_bytes(planted)
        kept.chmod(0o600)
        assert _transport(tmp_path, monkeypatch) == built
        assert not marker.exists() and kept.read_bytes().startswith(b"{") and kept.read_bytes() != planted


def test_tables_anyone_else_could_have_written_are_not_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    built = _transport(tmp_path, monkeypatch)
    (kept,) = (tmp_path / "dgtrace").iterdir()
    kept.write_bytes(b"{}")
    kept.chmod(0o666)
    assert tables.cache_file("transport", g.grammar_path(g.Family.TRANSPORT).read_text(encoding="utf-8")) is None
    assert _transport(tmp_path, monkeypatch) == built
    assert kept.read_bytes() != b"{}" and stat.S_IMODE(kept.stat().st_mode) == 0o600  # not read: replaced
    kept.unlink()
    (tmp_path / "dgtrace").chmod(0o777)
    assert tables.cache_dir() is None
    assert _transport(tmp_path, monkeypatch) == built and list((tmp_path / "dgtrace").iterdir()) == []
    (tmp_path / "dgtrace").rmdir()
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "dgtrace").symlink_to(tmp_path / "elsewhere")
    assert tables.cache_dir() is None
    assert _transport(tmp_path, monkeypatch) == built and list((tmp_path / "elsewhere").iterdir()) == []
