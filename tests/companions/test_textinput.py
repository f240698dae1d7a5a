"""Golden cases of the companion-input grammars (oratcptest output, AWR/Statspack report shapes).

Cases live in tests/grammar/cases/<grammar>/<construct>--<case>.txt beside the trace families';
their .json is written by scripts/regen_golden.py from the grammar (the specification).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from lark import Transformer

from analyzer.companions import awr_cells, oratcptest_lines
from analyzer.companions.textinput import line_parser
from scripts.regen_golden import INPUT_GRAMMARS, case_document
from tests.cases import assert_cases_and_rejects, assert_generated, case_files, each_case, expected

CASE_FILES = case_files(INPUT_GRAMMARS)
TRANSFORMERS: dict[str, type[Transformer]] = {  # type: ignore[type-arg]
    "oratcptest": oratcptest_lines.OratcptestShapes,
    "awr": awr_cells.AwrShapes,
}


def test_every_input_grammar_has_cases_and_rejects() -> None:
    assert set(TRANSFORMERS) == set(INPUT_GRAMMARS)
    assert_cases_and_rejects(CASE_FILES, INPUT_GRAMMARS)


@each_case(CASE_FILES)
def test_grammar_matches_golden(path: Path) -> None:
    assert case_document(path) == expected(path)


@each_case(CASE_FILES)
def test_case_files_parse_or_fail_as_their_name_says(path: Path) -> None:
    """A `rejects--` file holds only rejected lines; any other case file only accepted ones."""
    lines = expected(path)["lines"]
    assert isinstance(lines, list) and lines
    failed = ["error" in line for line in lines]
    assert all(failed) if path.stem.startswith("rejects--") else not any(failed)


def test_golden_json_is_generated_not_hand_edited() -> None:
    assert_generated(CASE_FILES)


@pytest.mark.parametrize("grammar", sorted(INPUT_GRAMMARS))
def test_parsers_build_in_strict_mode(grammar: str) -> None:
    """Strict LALR: no shift/reduce conflicts, no terminal collisions."""
    assert line_parser(grammar, TRANSFORMERS[grammar], strict=True) is not None


@pytest.mark.parametrize("grammar", sorted(INPUT_GRAMMARS))
def test_every_rule_has_a_transformer_method(grammar: str) -> None:
    lark = line_parser(grammar, TRANSFORMERS[grammar])
    names = {str(r.alias or r.origin.name) for r in lark.rules}
    names = {n for n in names if not n.startswith("_") and n != "value"}
    missing = [n for n in names if not hasattr(TRANSFORMERS[grammar], n)]
    assert not missing, f"{grammar}: {missing}"
