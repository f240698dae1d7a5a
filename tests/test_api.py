"""The facade: stages one by one, and --since/--until on large tables."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import polars as pl

from analyzer.api import Options, configurations, discover
from analyzer.simulate import ShareOptions, simulate_share


def test_time_window_filter_on_large_tables() -> None:
    """No window, or a window, on 150k rows (a literal predicate once broke on large frames)."""
    from analyzer.api import _in_window

    start = datetime(2024, 1, 1, tzinfo=UTC)
    frame = pl.DataFrame({"sent_at": [start + timedelta(seconds=i) for i in range(150_000)]})
    assert _in_window(frame, Options(), "sent_at").height == 150_000
    window = Options(since=start + timedelta(seconds=10), until=start + timedelta(seconds=20))
    assert _in_window(frame, window, "sent_at").height == 10


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
