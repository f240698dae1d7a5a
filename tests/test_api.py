"""The facade: stages one by one, and --since/--until on large tables."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import polars as pl

from analyzer.api import Options


def test_time_window_filter_on_large_tables() -> None:
    """No window, or a window, on 150k rows (a literal predicate once broke on large frames)."""
    from analyzer.api import _in_window

    start = datetime(2024, 1, 1, tzinfo=UTC)
    frame = pl.DataFrame({"sent_at": [start + timedelta(seconds=i) for i in range(150_000)]})
    assert _in_window(frame, Options(), "sent_at").height == 150_000
    window = Options(since=start + timedelta(seconds=10), until=start + timedelta(seconds=20))
    assert _in_window(frame, window, "sent_at").height == 10
