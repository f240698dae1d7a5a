"""The golden case files of the line grammars and the checks they all share.

A case file is tests/grammar/cases/<grammar>/<construct>--<case>.txt (`rejects--*` for lines that
must fail); its .json is written by scripts/regen_golden.py from the grammar (the specification).
The trace families (tests/parse/test_grammar.py) and the companion inputs (tests/companions/test_textinput.py) use them.
"""

from __future__ import annotations

import json
from collections.abc import Collection
from pathlib import Path
from typing import Any

import pytest

from scripts.regen_golden import CASES, GENERATED


def case_files(grammars: Collection[str]) -> list[Path]:
    """The case files of the grammars named, in a fixed order."""
    return sorted(p for p in CASES.glob("*/*.txt") if p.parent.name in grammars)


def each_case(files: list[Path]) -> pytest.MarkDecorator:
    """Parametrize a test over case files (`path`), each named `<grammar>/<construct>--<case>`."""
    return pytest.mark.parametrize("path", files, ids=lambda p: f"{p.parent.name}/{p.stem}")


def expected(path: Path) -> dict[str, Any]:
    """The golden document of a case file (its .json)."""
    golden = path.with_suffix(".json")
    assert golden.exists(), f"{golden} missing: run scripts/regen_golden.py"
    document: dict[str, Any] = json.loads(golden.read_text(encoding="utf-8"))
    return document


def assert_cases_and_rejects(files: list[Path], grammars: Collection[str]) -> None:
    """Every grammar named has accepted cases and negative (`rejects--`) ones."""
    for grammar in grammars:
        constructs = {p.stem.split("--")[0] for p in files if p.parent.name == grammar}
        assert constructs - {"rejects"}, f"no cases for {grammar}"
        assert "rejects" in constructs, f"no negative cases for {grammar}"


def assert_generated(files: list[Path]) -> None:
    """Every golden document is as scripts/regen_golden.py wrote it, not edited by hand."""
    assert files
    for path in files:
        assert str(expected(path)["_generated"]) == GENERATED, path
