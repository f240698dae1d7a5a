"""Gaps: segments of a process's trace that are not in the upload, and the messages that fall in them.

A process's trace is cut into segments (`*** TRACE CONTINUES IN FILE <path> ***` ends one,
`*** TRACE CONTINUED FROM FILE <path> ***` opens the next); since 23ai MAX_DUMP_FILE_SIZE also
deletes the oldest segment but the first, so a long capture normally lacks segments in the middle.
A segment named by a marker and absent from the upload is a gap: the writes of that time have no
evidence on that host. The messages of the other side (and of the same process, at the edges)
that find no partner inside a gap are reported with the gap, not as unmatched.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

import polars as pl

from analyzer.base.schemas import GAPS, UNMATCHED, empty
from analyzer.reduce.results import FileResult

#: a message falls in a gap within this margin (s) of its ends, besides the hosts' clock offset and bound
MARGIN_S = 1.0


def _name(path: str) -> str:
    """The file name of a path written by Oracle (`/`, or `\\` on Windows)."""
    return path.replace("\\", "/").rsplit("/", 1)[-1]


def find(files: list[FileResult]) -> pl.DataFrame:
    """Every segment named by a marker of some file but absent from the files (schema GAPS).

    `from_at` is the last stamp of the file that continues in the missing segment, `to_at` the
    first stamp of the file that continues from it (null when there is none); the gap belongs to
    that process's host and side.
    """
    present = {(f.reduced.info.host, f.source.name) for f in files}
    rows: dict[tuple[object, str], dict[str, Any]] = {}
    for f in files:
        info, markers = f.reduced.info, f.parsed.tables["markers"]
        if not markers.height:  # most files: no query
            continue
        for line, marker, path in markers.select("line", "marker", "path").iter_rows():
            if marker not in ("continues", "continued") or path is None:
                continue
            missing = _name(path)
            if (info.host, missing) in present:
                continue
            row = rows.setdefault(
                (info.host, missing),
                {"missing": missing, "host": info.host, "side": str(info.role), "process": info.process},
            )
            row["threads"] = sorted({*row.get("threads", []), *f.reduced.threads})
            if marker == "continues":
                row.update(before_file=f.source.label, line=line, from_at=f.reduced.last_at)
            else:
                row.update(after_file=f.source.label, to_at=f.reduced.first_at)
    frame = pl.DataFrame([_row(r) for r in rows.values()], schema=GAPS) if rows else empty(GAPS)
    return frame.sort("from_at", "to_at", nulls_last=True)


def _row(found: dict[str, Any]) -> dict[str, Any]:
    return {
        "host": found["host"],
        "side": found["side"],
        "process": found["process"],
        "threads": found["threads"],
        "missing": found["missing"],
        "before_file": found.get("before_file"),
        "line": found.get("line"),
        "after_file": found.get("after_file"),
        "from_at": found.get("from_at"),
        "to_at": found.get("to_at"),
        "messages": 0,
    }


def place(unmatched: pl.DataFrame, gaps: pl.DataFrame, clock: pl.DataFrame) -> tuple[pl.DataFrame, pl.DataFrame]:
    """(the unmatched messages outside every gap, the gaps with the number of messages in each).

    A message falls in a gap when its thread is one of the gap's and its time, put on the gap
    host's clock (a message of the other side shifted by the clock offset: primary times plus the
    offset for a standby gap, standby times minus it for a primary gap), lies within the gap, give
    or take MARGIN_S plus the offset's bound. A message counts in the first gap it falls in.
    """
    if not gaps.height or not unmatched.height:
        return unmatched, gaps
    skew = _skew(clock)
    rows = unmatched.with_row_index("_row")
    taken: set[int] = set()
    counts = []
    for gap in gaps.iter_rows(named=True):
        start: datetime | None = gap["from_at"]
        end: datetime | None = gap["to_at"]
        margin = pl.duration(milliseconds=MARGIN_S * 1000 + skew["bound_ms"])
        shift = pl.duration(milliseconds=skew["offset_ms"] * (1.0 if gap["side"] == "standby" else -1.0))
        at = pl.when(pl.col("side") == gap["side"]).then(pl.col("at")).otherwise(pl.col("at") + shift)
        inside = pl.col("thread").is_in(gap["threads"]) & pl.col("at").is_not_null()
        if start is not None:
            inside = inside & (at >= pl.lit(start) - margin)
        if end is not None:
            inside = inside & (at <= pl.lit(end) + margin)
        hits = rows.filter(inside & ~pl.col("_row").is_in(list(taken)))["_row"].to_list()
        taken.update(hits)
        counts.append(len(hits))
    kept = rows.filter(~pl.col("_row").is_in(list(taken))).drop("_row").select(UNMATCHED.names())
    return kept, gaps.with_columns(messages=pl.Series(counts, dtype=pl.Int64))


def _skew(clock: pl.DataFrame) -> dict[str, float]:
    """The standby clock minus the primary's, and its bound (ms): the median over host pairs (0 without one)."""
    estimates = clock.select(pl.col("offset_ms").median(), pl.col("bound_ms").max()) if clock.height else None
    if estimates is None or estimates.row(0)[0] is None:
        return {"offset_ms": 0.0, "bound_ms": 0.0}
    offset, bound = estimates.row(0)
    return {"offset_ms": float(offset), "bound_ms": float(bound or 0.0)}
