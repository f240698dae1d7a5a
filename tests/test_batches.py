"""Matching in batches of log sequences gives the writes of matching at once."""

from __future__ import annotations

import tempfile
from pathlib import Path

import polars as pl
import pytest

from analyzer import api, batches
from analyzer.api import analyze
from analyzer.simulate.options import SimOptions
from analyzer.simulate.runner import simulate
from analyzer.zones import TimeZones
from tests.builders import same_writes


def _indexes(path: Path) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The (thread, seq) index of each side of a trace set read in memory."""
    files = [api.read_file(source, TimeZones()) for source in api.discover([str(path)])[0]]
    primary, standby = api.sides(files)
    return primary.index(), standby.index()


def test_matching_in_batches_gives_the_same_writes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Batches of a few hundred exchanges (one per log sequence or so) match as the whole does,
    with the typical gap taken over all of them; the spilled pieces are removed afterwards."""
    simulate(tmp_path / "set", SimOptions(format_version="19c", writes=1500, log_switch_every=200, seed=8))
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    whole = analyze([str(tmp_path / "set")])
    monkeypatch.setattr(batches, "BATCH_ROWS", 150)
    assert len(batches.key_batches(*_indexes(tmp_path / "set"))) > 10
    batched = analyze([str(tmp_path / "set")])
    same_writes(whole, batched)
    assert (batched.primary_exchanges, batched.standby_exchanges) == (3000, 3000)
    assert list((tmp_path / "tmp").iterdir()) == []
