"""Golden cases per grammar construct: the grammar (spec) and the fast path give the golden records.

Cases live in tests/grammar/cases/<family>/<construct>--<case>.txt; their .json is written by
scripts/regen_golden.py. A case without its .json, or a family without cases, fails.
"""

from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path

import pytest

from analyzer.base.vocab import MessageKind
from analyzer.parse import grammar as g
from analyzer.parse.families import FAMILIES, TABLES, line_families, parse_chunk, split_alert
from scripts.regen_golden import case_document
from tests.cases import assert_cases_and_rejects, assert_generated, case_files, each_case, expected
from tests.conftest import lines_frame

#: trace line families only; the grammars of companion inputs are tested in test_textinput.py
CASE_FILES = case_files({family.value for family in g.Family})


def test_every_family_has_cases_and_rejects() -> None:
    assert_cases_and_rejects(CASE_FILES, [family.value for family in g.Family])


@each_case(CASE_FILES)
def test_grammar_matches_golden(path: Path) -> None:
    assert case_document(path) == expected(path)


@each_case(CASE_FILES)
def test_pipeline_agrees_with_grammar(path: Path) -> None:
    """The classifier puts each line in the case's family; fast path + fallback give the golden records."""
    cases = expected(path)["lines"]
    text = path.read_text(encoding="utf-8").removesuffix("\n")
    frame = lines_frame(text)
    alert = path.parent.name == g.Family.ALERT
    if alert:  # alert logs have their own classifier
        groups = split_alert(frame)
        families = [name for name, rows in groups.items() for _ in range(rows.height)]
    else:
        families = [FAMILIES[c] for c in line_families(frame, in_header=False)["family"].to_list()]
    assert set(families) == {path.parent.name}
    parsed, _ = parse_chunk(frame, in_header=False, alert=alert)
    got: dict[int, dict[str, object]] = {}
    for name in TABLES:
        if name == "unparsed":
            continue
        for row in parsed.tables[name].to_dicts():
            line = row.pop("line")
            got[line] = {k: (v.isoformat() if hasattr(v, "isoformat") else v) for k, v in row.items()}
    unparsed = dict(parsed.tables["unparsed"].select("line", "reason").iter_rows())
    for case in cases:
        if "error" in case:
            assert unparsed.get(case["line"]) == case["error"]
        else:
            fields = case["fields"]
            assert got[case["line"]] == {k: fields.get(k) for k in got[case["line"]]}
    assert parsed.lines == frame.height


def test_fast_path_takes_the_canonical_hot_lines(monkeypatch: pytest.MonkeyPatch) -> None:
    """Canonical 16410, krs, ADR and WAIT lines never reach lark (they are the hot path)."""
    skip = ("rejects", "markers", "process", "lead", "oper", "adr--iso-no-zone")  # rare: lark takes them
    hot = [p for p in CASE_FILES if p.parent.name in {"transport", "stamps", "wait"} and not p.stem.startswith(skip)]
    assert hot
    calls: list[str] = []
    original = g.parse_line

    def spy(family: g.Family, text: str) -> g.Record:
        calls.append(text)
        return original(family, text)

    monkeypatch.setattr(g, "parse_line", spy)
    for path in hot:
        parse_chunk(lines_frame(path.read_text(encoding="utf-8").removesuffix("\n")), in_header=False)
    assert calls == []


def test_parsers_build_in_strict_mode() -> None:
    """Strict LALR: no shift/reduce conflicts, no terminal collisions."""
    for family in g.Family:
        assert g.parser(family, strict=True) is not None


def test_every_rule_has_a_transformer_method() -> None:
    for family in g.Family:
        lark = g.parser(family)
        transformer = g._TRANSFORMERS[family]
        names = {r.alias or r.origin.name for r in lark.rules}
        names = {str(n) for n in names if not str(n).startswith("_") and str(n) != "kind"}
        missing = [n for n in names if not hasattr(transformer, n)]
        assert not missing, f"{family.value}: {missing}"


def test_golden_json_is_generated_not_hand_edited() -> None:
    assert_generated(CASE_FILES)


def _fresh_parser(family: g.Family) -> object:
    g.parser.cache_clear()
    try:
        return g.parser(family)
    finally:
        g.parser.cache_clear()


@pytest.mark.skipif(not hasattr(os, "getuid"), reason="POSIX owners")
def test_parser_tables_are_cached_only_in_a_private_directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """lark unpickles its cache file: it must live where only this user can write, never in the temp folder."""
    shared_tmp, cache_home = tmp_path / "tmp", tmp_path / "cache"
    shared_tmp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(shared_tmp))
    monkeypatch.setenv("XDG_CACHE_HOME", str(cache_home))
    _fresh_parser(g.Family.WAIT)
    assert list(shared_tmp.iterdir()) == []
    private = cache_home / "dgtrace"
    assert stat.S_IMODE(private.stat().st_mode) == 0o700
    assert [p.name.split("-")[0] for p in private.iterdir()] == ["wait"]


@pytest.mark.skipif(not hasattr(os, "getuid"), reason="POSIX owners")
def test_a_cache_directory_others_can_write_is_not_used(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    private = tmp_path / "cache" / "dgtrace"
    private.mkdir(parents=True)
    private.chmod(0o777)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    assert g.cache_dir() is None
    assert g.cache_file(g.Family.WAIT, "grammar") is None
    assert g.parser(g.Family.WAIT) is not None  # built without a cache


@pytest.mark.skipif(not hasattr(os, "getuid"), reason="POSIX owners")
def test_a_planted_symlink_in_the_cache_is_not_followed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    directory = g.cache_dir()
    assert directory is not None
    text = g.grammar_path(g.Family.WAIT).read_text(encoding="utf-8")
    target = g.cache_file(g.Family.WAIT, text)
    assert target is not None
    Path(target).symlink_to(tmp_path / "elsewhere")
    assert g.cache_file(g.Family.WAIT, text) is None


def test_the_literal_message_prefixes_are_the_grammar_s() -> None:
    """The classifier's literal texts (`MESSAGE_PREFIXES`) are those of grammars/transport.lark, kind by kind."""
    assert list(g.MESSAGE_PREFIXES) == list(MessageKind)
    for kind, text in g.MESSAGE_PREFIXES.items():
        record = g.parse_line(g.Family.TRANSPORT, f"{text} [kpurcs] oper='Write' flag=1 thrd=1 seq=2 msgid=3")
        assert isinstance(record, g.Message) and record.kind == kind


def test_the_literal_lgwr_prefixes_start_lines_of_the_lgwr_grammar() -> None:
    lines = {
        "Warning: log write ": "Warning: log write elapsed time 163ms, size 18KB",
        "kcrfw_alfs_update_mode:": "kcrfw_alfs_update_mode: post->poll long#=316 sync#=1315 sync=1320 poll=1056 rw=1",
        "Log file sync switching to ": "Log file sync switching to polling",
    }
    assert set(lines) == set(g.LGWR_PREFIXES)
    for prefix, line in lines.items():
        assert line.startswith(prefix) and isinstance(g.parse_line(g.Family.LGWR, line), g.LgwrLine)
