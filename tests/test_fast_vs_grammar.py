"""The fast path changes nothing: whole trace sets parsed by it and by the grammars alone agree.

Every line of a known family goes through lark with `fast=False`; tables and the final writes must
be identical, to the last digit, on the samples and on simulated sets of every generation.
"""

from __future__ import annotations

import functools
from pathlib import Path

import pytest
from polars.testing import assert_frame_equal

from analyzer import api, parse
from analyzer.api import Options, analyze
from analyzer.parse import TABLES
from analyzer.read import ReadStats, read_lines
from analyzer.simulate.options import SimOptions
from analyzer.simulate.runner import simulate
from analyzer.zones import TimeZones
from tests.conftest import ROOT

SAMPLE_FILES = sorted((ROOT / "samples").rglob("*.trc"))


def _parse(path: Path, fast: bool) -> parse.Parsed:
    parts, state = [], False
    with path.open("rb") as stream:
        for lines in read_lines(stream, ReadStats(), chunk_bytes=4096):
            part, state = parse.parse_chunk(lines, state, fast=fast)
            parts.append(part)
    return parse.merge(parts)


@pytest.mark.parametrize("path", SAMPLE_FILES, ids=lambda p: p.name)
def test_sample_tables_are_the_same_either_way(path: Path) -> None:
    quick, spec = _parse(path, True), _parse(path, False)
    for name in TABLES:
        assert_frame_equal(quick.tables[name], spec.tables[name])
    assert (quick.parsed, quick.ignored) == (spec.parsed, spec.ignored)


@pytest.mark.slow
@pytest.mark.parametrize("generation", ["11.2", "12.1", "19c", "23ai"])
def test_simulated_writes_are_the_same_either_way(
    tmp_path: Path, generation: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    simulate(tmp_path / "set", SimOptions(scenario="mixed", format_version=generation, writes=150, noise=0.3, seed=4))
    options = Options(zones=TimeZones(default_min=0))
    quick = analyze([str(tmp_path / "set")], options)
    monkeypatch.setattr(api.parse, "parse_chunk", functools.partial(parse.parse_chunk, fast=False))
    spec = analyze([str(tmp_path / "set")], options)
    assert quick.writes.height == 300
    assert_frame_equal(quick.writes, spec.writes)
    assert_frame_equal(quick.unmatched, spec.unmatched)
    assert_frame_equal(quick.warnings, spec.warnings)
    assert [f.parsed.parsed for f in quick.files] == [f.parsed.parsed for f in spec.files]
