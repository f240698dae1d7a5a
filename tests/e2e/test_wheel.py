"""The wheel ships the grammars and the compiled scanner, and an installed copy finds them (not the checkout's);
without a C compiler the wheel builds all the same and reads through the pure path."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from analyzer.parse import scanner
from analyzer.parse.grammar import Family
from tests.conftest import ROOT

#: what `python -m build --wheel` needs of the checkout
SOURCES = ("analyzer", "grammars", "setup.py", "pyproject.toml", "README.md", "LICENSE", "MANIFEST.in")


def _build(source: Path, out: Path, env: dict[str, str] | None = None) -> tuple[Path, str]:
    done = subprocess.run(
        [sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir", str(out), str(source)],
        check=True,
        capture_output=True,
        text=True,
        env=env,
    )
    (built,) = out.glob("dgtrace-*.whl")
    return built, done.stdout + done.stderr


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _build(ROOT, tmp_path_factory.mktemp("dist"))[0]


@pytest.mark.slow
def test_wheel_contains_every_grammar_and_the_package(wheel: Path) -> None:
    names = set(zipfile.ZipFile(wheel).namelist())
    for family in Family:
        assert f"analyzer/grammars/{family.value}.lark" in names
    for companion in ("oratcptest", "awr"):  # the --baseline and --awr readers
        assert f"analyzer/grammars/{companion}.lark" in names
    assert "analyzer/cli/__init__.py" in names and "analyzer/cli/trace.py" in names and "analyzer/py.typed" in names
    assert not any(n.startswith(("tests/", "samples/", "scripts/")) for n in names)
    assert not any(n.endswith((".c", ".h")) for n in names)  # the scanner's sources stay in the sdist
    if scanner.compiled():  # built here, so built into the wheel too: one abi3 wheel for every Python >= 3.11
        assert "-cp311-abi3-" in wheel.name
        assert any(n.startswith("analyzer/parse/_scanner.") and n.endswith((".so", ".pyd")) for n in names)
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
        "from analyzer.companions.textinput import grammar_file; print(grammar_file('awr').parent);"
        "from analyzer.parse import scanner; print(scanner.name())"
    )
    done = subprocess.run(
        [sys.executable, "-I", "-c", f"import sys; sys.path.insert(0, {str(tmp_path)!r}); {code}"],
        check=True,
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    where, ela, companions, how = done.stdout.split()
    assert Path(where) == Path(companions) == tmp_path / "analyzer" / "grammars"
    assert ela == "5"
    assert how == scanner.name()


@pytest.mark.slow
@pytest.mark.skipif(sys.platform == "win32", reason="the compiler is chosen by CC on POSIX systems")
def test_without_a_c_compiler_the_wheel_builds_and_reads_through_the_pure_path(tmp_path: Path) -> None:
    """`CC=false`: every compile fails, as on a machine without a compiler; the build says so and goes on."""
    source = tmp_path / "src"
    for name in SOURCES:
        copy = shutil.copytree if (ROOT / name).is_dir() else shutil.copy2
        copy(ROOT / name, source / name)
    for built in source.rglob("_scanner*.*"):
        if built.suffix in (".so", ".pyd"):
            built.unlink()
    wheel, log = _build(source, tmp_path / "dist", {**os.environ, "CC": "false"})
    assert "the compiled line scanner was not built" in log
    names = zipfile.ZipFile(wheel).namelist()
    assert not any(n.startswith("analyzer/parse/_scanner.") and n.endswith((".so", ".pyd")) for n in names)
    zipfile.ZipFile(wheel).extractall(tmp_path / "unpacked")
    code = f"import sys; sys.path.insert(0, {str(tmp_path / 'unpacked')!r}); from analyzer.__main__ import main; main()"
    done = subprocess.run(
        [sys.executable, "-I", "-c", code, "analyze", str(ROOT / "samples" / "paper-2014"), "--tz", "-07:00"],
        capture_output=True,
        text=True,
        check=False,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    version = subprocess.run(
        [sys.executable, "-I", "-c", code, "--version"], capture_output=True, text=True, check=True, cwd=tmp_path
    )
    assert version.stdout.splitlines()[1] == "scanner: python"
