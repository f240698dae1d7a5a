"""The facade: stages one by one."""

from __future__ import annotations

import io
import json
from pathlib import Path

import polars as pl
import pytest

from analyzer.api import Options, analyze, analyze_files, configurations, discover
from analyzer.base.schemas import NARROW_INTS
from analyzer.match import by_link as batches
from analyzer.report.machine import render_json
from analyzer.simulate import ShareOptions, simulate_share
from analyzer.simulate.options import SimOptions
from analyzer.simulate.runner import simulate
from tests.builders import ack, done, krs, read_trace, recv, send


def test_configurations_come_from_paths_and_heads_before_any_file_is_read(tmp_path: Path) -> None:
    """A share of two configurations over two days (older days gzipped), grouped from identities."""
    share = simulate_share(tmp_path / "share", ShareOptions(configs=2, days=2, writes=40, extras=False))
    sources, _ = discover([str(tmp_path / "share")])
    found = configurations(sources)
    assert [c.name for c in found] == ["hr", "sales"]
    manifest = {f["path"]: f for f in json.loads(share.manifest.read_text())["files"]}
    for config, number in zip(found, (2, 1), strict=True):
        members = {label.split("share/", 1)[1] for label in config.files}
        assert members == {path for path, f in manifest.items() if f["configuration"] == number}
        assert {d.role for d in config.databases} == {"primary", "standby"}


def test_writes_keep_their_keys_when_one_batch_holds_a_msgid_beyond_int32(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each batch narrows the columns whose values fit (`schemas.narrowed`); batches of different
    widths join as the wide type, every value as the trace wrote it."""
    big = 2**31 + 17
    writes = [(10, 117450, "00.000"), (10, 117451, "00.010"), (11, big, "01.000")]  # (seq, msgid, second)
    p_lines, s_lines = [], []
    for seq, msgid, second in writes:
        at = f"2024-01-01 00:00:{second}000"
        p_lines += [send(msgid, 1, seq), krs(at, "[krsu.c:5837]"), krs(at, "[krsu.c:6058]"), ack(msgid, 1, seq)]
        s_lines += [recv(msgid, 1, seq), krs(at, "[krsr.c:826]"), done(msgid, 1, seq), krs(at, "[krsr.c:1459]")]
    monkeypatch.setattr(batches, "BATCH_ROWS", 1)  # one (thread, seq) key a batch: seq 10 narrow, seq 11 wide
    found = analyze_files([read_trace(p_lines, "p.trc"), read_trace(s_lines, "s.trc")], [], Options()).writes
    assert (found.schema["msgid"], found.schema["seq"], found.schema["primary_line"]) == (pl.Int64, pl.Int32, pl.Int32)
    assert found.select("seq", "msgid", "matched").rows() == [(s, m, True) for s, m, _ in writes]
    assert found["primary_line"].to_list() == [1, 5, 9]


def test_writes_of_a_simulated_set_hold_their_keys_and_lines_as_int32(tmp_path: Path) -> None:
    """The narrow columns keep the values the trace wrote: the JSON writes array lists the same integers."""
    simulate(tmp_path / "set", SimOptions(format_version="19c", writes=600, log_switch_every=200, seed=3))
    a = analyze([str(tmp_path / "set")])
    assert a.writes.height >= 600
    assert all(a.writes.schema[name] == pl.Int32 for name in NARROW_INTS)
    out = io.StringIO()
    render_json(a, out, 10)
    items = json.loads(out.getvalue())["writes"]
    for name in NARROW_INTS:
        assert [item[name] for item in items] == a.writes[name].to_list(), name
