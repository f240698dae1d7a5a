"""The wheel ships the grammars, and an installed copy finds them (not the checkout's)."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from analyzer.parse.grammar import Family
from tests.conftest import ROOT


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("dist")
    subprocess.run(
        [sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir", str(out), str(ROOT)],
        check=True,
        capture_output=True,
    )
    (built,) = out.glob("dgtrace-*.whl")
    return built


@pytest.mark.slow
def test_wheel_contains_every_grammar_and_the_package(wheel: Path) -> None:
    names = set(zipfile.ZipFile(wheel).namelist())
    for family in Family:
        assert f"analyzer/grammars/{family.value}.lark" in names
    for companion in ("oratcptest", "awr"):  # the --baseline and --awr readers
        assert f"analyzer/grammars/{companion}.lark" in names
    assert "analyzer/cli/__init__.py" in names and "analyzer/cli/trace.py" in names and "analyzer/py.typed" in names
    assert not any(n.startswith(("tests/", "samples/", "scripts/")) for n in names)
    entry = next(n for n in names if n.endswith("entry_points.txt"))
    assert "dgtrace = analyzer.__main__:main" in zipfile.ZipFile(wheel).read(entry).decode()
    licence = [n for n in names if n.endswith("LICENSE")]
    assert licence and "Apache License" in zipfile.ZipFile(wheel).read(licence[0]).decode()


@pytest.mark.slow
def test_unpacked_wheel_loads_its_own_grammars(wheel: Path, tmp_path: Path) -> None:
    zipfile.ZipFile(wheel).extractall(tmp_path)
    code = (
        "from analyzer.parse.grammar import grammar_dir, parse_line, Family;"
        "print(grammar_dir());"
        "print(parse_line(Family.WAIT, \"WAIT #0: nam='RFS write' ela= 5 p1=0 tim=9\").ela_us);"
        "from analyzer.companions.textinput import grammar_file; print(grammar_file('awr').parent)"
    )
    done = subprocess.run(
        [sys.executable, "-I", "-c", f"import sys; sys.path.insert(0, {str(tmp_path)!r}); {code}"],
        check=True,
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    where, ela, companions = done.stdout.split()
    assert Path(where) == Path(companions) == tmp_path / "analyzer" / "grammars"
    assert ela == "5"
