"""Everything on one timeline: each write's messages, and the log writer and alert-log events around them.

A slow commit is not always a slow remote write: LGWR may have waited on its own (a long local
write, a broadcast wait of the LGnn workers, a switch of log file sync to polling), or the
logs switched. These events are put on the writes' timeline (UTC; events of a standby host
shifted by its clock offset, as `analyzer.match.clock.merged_timeline` shifts RFS messages), so
that a reader sees what happened around each write.
"""

from __future__ import annotations

import polars as pl

from analyzer.base.oracodes import ERROR_EVENTS
from analyzer.base.schemas import EVENTS, empty
from analyzer.match.alerts import entries
from analyzer.match.analysis import Analysis
from analyzer.match.clock import merged_timeline
from analyzer.match.segments import lgwr_lines
from analyzer.reduce.results import FileResult

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


#: the alert-log entries put on the timeline (not the startup parameter listing)
ALERT_EVENTS = (
    "log_switch",
    "srl_selected",
    "rfs_selected",
    "rfs_attach",
    "protection",
    *ERROR_EVENTS,
    "startup",
    "parameter_change",
)


def _alert_detail() -> pl.Expr:
    kind, detail = pl.col("kind"), pl.col("detail")
    lad = pl.concat_str([pl.lit("LAD:"), pl.col("dest").cast(pl.String)])
    pid = pl.concat_str([pl.lit("RFS pid "), pl.col("pid").cast(pl.String), pl.lit(" ")]).fill_null("")
    return (
        pl.when(kind == "srl_selected")
        .then(lad)
        .when(kind == "rfs_selected")
        .then(pl.concat_str([pl.lit("LNO:"), pl.col("log").cast(pl.String)]))
        .when(kind == "protection")
        .then(pl.concat_str([pl.col("key"), pl.lit(" database is in "), detail, pl.lit(" mode")]))
        .when(kind == "parameter_change")
        .then(pl.concat_str([pl.col("key"), pl.lit("="), detail]))
        .when(kind.is_in(ERROR_EVENTS) & pl.col("key").is_not_null())
        .then(pl.concat_str([pl.col("key"), pl.lit(": "), detail.fill_null("")]))
        .when(kind == "rfs_attach")
        .then(pl.concat_str([pid, detail.fill_null("")]).str.strip_chars())
        .otherwise(detail)
    )


def shifted_entries(a: Analysis) -> pl.DataFrame:
    """The alert-log entries of ALERT_EVENTS (schema ALERT_ENTRIES), a standby host's shifted onto the
    primary's clock by the offset estimated for that host (the mean over its primary hosts; hosts
    compared by their short name: an alert log's host may come from its path, a trace's from its header)."""
    found = entries(a.files).filter(pl.col("kind").is_in(ALERT_EVENTS))
    if not found.height:
        return found
    short = pl.col("_host").str.split(".").list.first()
    offsets = (
        a.clock.select(_host=pl.col("standby_host").cast(pl.String), _off="offset_ms")
        .with_columns(_host=short)
        .group_by("_host")
        .agg(pl.col("_off").mean())
    )
    shift = pl.duration(microseconds=(pl.col("_off").fill_null(0.0) * 1000).round().cast(pl.Int64))
    shifted = found.with_columns(_host=pl.col("host")).with_columns(_host=short).join(offsets, on="_host", how="left")
    return shifted.with_columns(at=pl.col("at") - shift).select(found.columns)


def alert_events(a: Analysis) -> pl.DataFrame:
    """The alert-log entries of ALERT_EVENTS on the writes' timeline (schema EVENTS; see `shifted_entries`)."""
    found = shifted_entries(a)
    if not found.height:
        return empty(EVENTS)
    return found.select(
        at="at",
        event="kind",
        thread="thread",
        seq="seq",
        msgid=pl.lit(None, pl.Int64),
        host="host",
        file="file",
        line="line",
        elapsed_ms=pl.lit(None, pl.Int64),
        detail=_alert_detail(),
    ).cast(EVENTS)


def around_writes(a: Analysis) -> pl.DataFrame:
    """The events that are not messages of a write, in time order (the JSON `events`), inside
    --since / --until."""
    found = pl.concat([lgwr_events(a.files), alert_events(a)])
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
