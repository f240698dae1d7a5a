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


#: the stage packages, bottom up (each may import those before it, never those after)
STAGES = ("base", "inputs", "parse", "companions", "reduce", "match", "findings")


def test_the_top_level_is_the_stage_packages_and_a_few_modules_each_in_the_layers_contract() -> None:
    layers = [c for c in CONTRACTS if c["type"] == "layers"]
    top = _layered(layers[0])
    assert _modules(PACKAGE, "analyzer") == top
    packages = {p.name for p in PACKAGE.iterdir() if (p / "__init__.py").is_file()}
    assert set(STAGES) <= packages
    assert len([p for p in PACKAGE.glob("*.py") if p.name != "__init__.py"]) <= 8
    order = [str(layer) for layer in layers[0]["layers"]]  # type: ignore[union-attr]
    assert [order.index(f"analyzer.{stage}") for stage in STAGES] == sorted(
        (order.index(f"analyzer.{stage}") for stage in STAGES), reverse=True
    ), "the stages are layered bottom up in their pipeline order"


def test_the_packages_with_an_inner_order_have_every_module_in_it() -> None:
    inner = {str(c["containers"][0]): _layered(c) for c in CONTRACTS if c["type"] == "layers" and c.get("containers")}  # type: ignore[index]
    assert set(inner) == {"analyzer.report", "analyzer.batch"}
    for container, names in inner.items():
        folder = PACKAGE / container.removeprefix("analyzer.")
        assert _modules(folder, container) == names, container


def test_the_terminal_contract_names_every_package_but_the_command_line_and_the_renderers() -> None:
    (terminal,) = [c for c in CONTRACTS if c["type"] == "forbidden" and "typer" in c["forbidden_modules"]]  # type: ignore[operator]
    quiet = {f"analyzer.{name}" for name in (*STAGES, "api", "batch")}
    assert set(terminal["source_modules"]) == quiet  # type: ignore[arg-type]


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
