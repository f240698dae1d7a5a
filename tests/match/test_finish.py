"""Finish stage: writes in send order, clock offsets, and --since/--until on large tables."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import polars as pl

from analyzer.api import Options, analyze_files
from analyzer.match.finish import in_window
from tests.builders import primary_lines, read_trace, standby_lines


def test_time_window_filter_on_large_tables() -> None:
    """No window, or a window, on 150k rows (a literal predicate once broke on large frames)."""
    start = datetime(2024, 1, 1, tzinfo=UTC)
    frame = pl.DataFrame({"sent_at": [start + timedelta(seconds=i) for i in range(150_000)]})
    assert in_window(frame, Options(), "sent_at").height == 150_000
    window = Options(since=start + timedelta(seconds=10), until=start + timedelta(seconds=20))
    assert in_window(frame, window, "sent_at").height == 10


def test_the_exchanges_counted_are_those_inside_the_window() -> None:
    """With --since/--until the writes, and the exchanges each side saw, are those sent inside it."""
    at = [f"2024-01-01 10:00:{s:02d}" for s in range(0, 50, 10)]
    primary = primary_lines([(m, f"{t}.100", f"{t}.150") for m, t in enumerate(at, 1)])
    standby = standby_lines([(m, f"{t}.110", f"{t}.140", [("RFS write", 20000)]) for m, t in enumerate(at, 1)])
    files = [read_trace(primary, "p.trc"), read_trace(standby, "s.trc")]
    whole = analyze_files(files, [], Options())
    assert (whole.writes.height, whole.primary_exchanges, whole.standby_exchanges) == (5, 5, 5)
    assert whole.writes["sent_at"].is_sorted()
    since = datetime(2024, 1, 1, 10, 0, 10, tzinfo=UTC)
    window = analyze_files(files, [], Options(since=since, until=since + timedelta(seconds=20)))
    assert window.writes["msgid"].to_list() == [2, 3]
    assert (window.primary_exchanges, window.standby_exchanges) == (2, 2)
