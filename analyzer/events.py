"""Everything on one timeline: each write's messages, and the log writer and alert-log events around them.

A slow commit is not always a slow remote write: LGWR may have waited on its own (a long local
write, a broadcast wait of the LGnn workers, a switch of log file sync to polling), or the
logs switched. These events are put on the writes' timeline (UTC; events of a standby host
shifted by its clock offset, as `analyzer.clock.merged_timeline` shifts RFS messages), so
that a reader sees what happened around each write.
"""

from __future__ import annotations

import polars as pl

from analyzer.clock import merged_timeline
from analyzer.results import Analysis, FileResult
from analyzer.schemas import EVENTS, empty
from analyzer.segments import lgwr_lines

#: the log writer lines put on the timeline, with what their `detail` says
LGWR_EVENTS = ("log_write", "broadcast_wait", "sync_switch", "alfs_update")


def lgwr_events(files: list[FileResult]) -> pl.DataFrame:
    """Log writer events of every file (schema EVENTS): long writes (`size NKB`), broadcast waits
    (`SCN 0x...`), adaptive log file sync switches (`polling`, `post/wait`) and their updates."""
    lines = lgwr_lines(files)
    if not lines.height:
        return empty(EVENTS)
    size = pl.concat_str([pl.lit("size "), pl.col("size_kb").cast(pl.String), pl.lit("KB")])
    detail = (
        pl.when(pl.col("kind") == "log_write")
        .then(size)
        .when(pl.col("kind") == "broadcast_wait")
        .then(pl.concat_str([pl.lit("SCN "), pl.col("detail")]))
        .otherwise(pl.col("detail"))
    )
    return (
        lines.filter(pl.col("kind").is_in(LGWR_EVENTS))
        .select(
            "at",
            event="kind",
            thread="wthread",
            seq=pl.lit(None, pl.Int64),
            msgid=pl.lit(None, pl.Int64),
            host="host",
            file="file",
            line="line",
            elapsed_ms="elapsed_ms",
            detail=detail,
        )
        .cast(EVENTS)
    )


def around_writes(a: Analysis) -> pl.DataFrame:
    """The events that are not messages of a write, in time order (the JSON `events`), inside
    --since / --until."""
    found = lgwr_events(a.files)
    keep = pl.lit(True)
    if a.options.since is not None:
        keep = keep & (pl.col("at") >= a.options.since).fill_null(True)
    if a.options.until is not None:
        keep = keep & (pl.col("at") < a.options.until).fill_null(True)
    return found.filter(keep).sort("at", "file", "line", nulls_last=True)


def timeline(a: Analysis) -> pl.DataFrame:
    """Every send, receive, finish and ack of the matched writes, and the events around them, in
    time order (schema EVENTS; `--format csv --table events`)."""
    writes = merged_timeline(a.writes, a.clock)
    none = {"elapsed_ms": pl.lit(None, pl.Int64), "detail": pl.lit(None, pl.String)}
    messages = writes.with_columns(**none).select(EVENTS.names()).cast(EVENTS) if writes.width else empty(EVENTS)
    return pl.concat([messages, around_writes(a)]).sort("at", "thread", "msgid", nulls_last=True, maintain_order=True)
