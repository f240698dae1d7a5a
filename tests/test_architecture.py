"""The layout the contributors' guide promises: every module in the layers contract and mirrored by a test file,
small modules, a thin facade."""

from __future__ import annotations

import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from tests.conftest import ROOT

PACKAGE = ROOT / "analyzer"
#: the import-linter contracts (pyproject.toml)
CONTRACTS = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["importlinter"]["contracts"]


def _layered(contract: dict[str, object]) -> set[str]:
    container = (contract.get("containers") or [""])[0]  # type: ignore[index]
    names = set()
    for layer in contract["layers"]:  # type: ignore[union-attr]
        for name in str(layer).replace(":", "|").split("|"):
            names.add(f"{container}.{name.strip()}" if container else name.strip())
    return names


def _modules(directory: Path, prefix: str) -> set[str]:
    """The modules and subpackages directly inside a package."""
    found = {f"{prefix}.{p.stem}" for p in directory.glob("*.py") if p.stem != "__init__"}
    return found | {f"{prefix}.{p.name}" for p in directory.iterdir() if (p / "__init__.py").is_file()}


def test_every_module_has_its_place_in_a_layers_contract() -> None:
    layers = [c for c in CONTRACTS if c["type"] == "layers"]
    top, report = _layered(layers[0]), _layered(layers[1])
    assert _modules(PACKAGE, "analyzer") == top
    assert _modules(PACKAGE / "report", "analyzer.report") == report


def test_no_module_is_over_500_lines_and_the_facade_is_thin() -> None:
    sizes = {
        p.relative_to(ROOT).as_posix(): len(p.read_text(encoding="utf-8").splitlines()) for p in PACKAGE.rglob("*.py")
    }
    assert {name: n for name, n in sizes.items() if n > 500} == {}
    assert sizes["analyzer/api.py"] <= 250


@pytest.mark.skipif(
    shutil.which("lint-imports", path=str(Path(sys.executable).parent)) is None, reason="no lint-imports"
)
def test_the_import_contracts_are_kept() -> None:
    tool = shutil.which("lint-imports", path=str(Path(sys.executable).parent))
    assert tool is not None
    run = subprocess.run([tool, "--no-cache"], cwd=ROOT, capture_output=True, text=True, check=False)
    assert run.returncode == 0, run.stdout[-3000:]
    assert f"Contracts: {len(CONTRACTS)} kept, 0 broken." in run.stdout


#: modules without a test file of their own, and why (a module added here needs a reason as good)
WITHOUT_MIRROR = {
    # the console script's entry point: it imports the command line and runs it; tests/cli/test_trace.py
    # runs both `python -m analyzer` and the installed `dgtrace` script
    "__main__.py": "tests/cli/test_trace.py",
}


def _mirror(module: Path) -> Path:
    """tests/test_<name>.py for analyzer/<name>.py, tests/<package>/test_<name>.py for analyzer/<package>/<name>.py."""
    relative = module.relative_to(PACKAGE)
    return ROOT / "tests" / relative.parent / f"test_{relative.name}"


def test_every_module_has_its_mirrored_test_file_with_tests() -> None:
    """`tests/test_<module>.py` mirrors `analyzer/<module>.py` (docs/architecture.md, "Tests"); a package's
    `__init__` is its folder's, not a module's."""
    modules = sorted(p for p in PACKAGE.rglob("*.py") if p.name != "__init__.py")
    missing = [
        p.relative_to(PACKAGE).as_posix()
        for p in modules
        if not _mirror(p).is_file() and p.relative_to(PACKAGE).as_posix() not in WITHOUT_MIRROR
    ]
    assert missing == []
    empty = [_mirror(p).name for p in modules if _mirror(p).is_file() and "\ndef test_" not in _mirror(p).read_text()]
    assert empty == []
    for name, tested_in in WITHOUT_MIRROR.items():
        assert (PACKAGE / name).is_file() and not _mirror(PACKAGE / name).exists(), name  # the list stays true
        assert (ROOT / tested_in).is_file(), tested_in
