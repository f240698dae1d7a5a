"""The `daily` table: one row per configuration and day, from that day's writes.

Percentiles are those of the analysis summary (`analyzer.findings.summary.component_stats`: an observed
value, never an interpolated one), so a day's p99 is the p99 `dgtrace analyze` reports for the
same writes. Time shares are each component's part of the summed total of the matched writes (and
of the matched slow writes); verdict counts are over the matched writes. The Fast Sync what-if
(`fastsync_p99_ms`, `fastsync_slow_writes`) is over the writes seen on both sides, as in the
analyze report's "What if".
"""

from __future__ import annotations

import polars as pl

from analyzer.api import component_stats
from analyzer.base.vocab import COMPONENTS
from analyzer.batch.schemas import DAILY_FILE, DAILY_STATS, PARTITION_SCHEMA


def daily_row(
    writes: pl.DataFrame, unmatched: int, warnings: int, configuration: str, threshold_ms: float
) -> dict[str, object]:
    """The daily row of one configuration's writes of one day (a day without writes: counts of 0)."""
    matched = writes.filter(pl.col("matched"))
    slow = matched.filter(pl.col("slow"))
    standby = sorted(str(db) for db in writes["standby_db"].drop_nulls().unique())
    row: dict[str, object] = {
        "configuration": configuration,
        "standby_db": ",".join(standby) or None,
        "writes": writes.height,
        "matched": matched.height,
        "primary_only": int((~writes["matched"] & writes["primary_file"].is_not_null()).sum()),
        "standby_only": int((~writes["matched"] & writes["primary_file"].is_null()).sum()),
        "slow_writes": int(writes["slow"].sum()),
        "unmatched_messages": unmatched,
        "lgwr_warnings": warnings,
        "threshold_ms": threshold_ms,
    }
    for stat in component_stats(writes).iter_rows(named=True):
        row.update({f"{stat['component']}_{s}_ms": stat[s] for s in DAILY_STATS})
    row.update(fast_sync_row(matched, threshold_ms))
    for prefix, chosen in (("", matched), ("slow_", slow)):
        total = float(chosen["total_ms"].sum()) if chosen.height else 0.0
        verdicts = dict(chosen.group_by("verdict").len().iter_rows()) if chosen.height else {}
        for c in COMPONENTS:
            row[f"{prefix}{c}_share"] = float(chosen[c.column].sum()) / total if total else None
            row[f"{prefix}{c}_verdicts"] = int(verdicts.get(str(c), 0))
    return row


def fast_sync_row(matched: pl.DataFrame, threshold_ms: float) -> dict[str, object]:
    """p99 and slow writes of the matched writes with Fast Sync (`fastsync_ms`; a p99 as `analyzer.findings.compare`
    computes it: the observed value at index round(0.99 x (n - 1)))."""
    fast = matched["fastsync_ms"].drop_nulls()
    p99 = fast.quantile(0.99, "nearest") if fast.len() else None
    return {"fastsync_p99_ms": p99, "fastsync_slow_writes": int((fast >= threshold_ms).sum())}


def daily_table(
    writes: pl.DataFrame,
    unmatched: pl.DataFrame,
    warnings: pl.DataFrame,
    configuration: str,
    primary_db: str | None,
    day: pl.Expr,
    threshold_ms: float,
) -> pl.DataFrame:
    """One row per primary database of the unit's writes (the configuration's when it has none)."""
    dbs = sorted(set(writes["primary_db"].to_list()) | ({primary_db} if not writes.height else set()), key=str)
    rows = []
    for db in dbs:
        mine = writes.filter(pl.col("primary_db").eq_missing(pl.lit(db, pl.String)))
        lost = unmatched.filter(pl.col("primary_db").eq_missing(pl.lit(db, pl.String))).height
        tied = warnings.filter(pl.col("primary_db").eq_missing(pl.lit(db, pl.String))).height
        rows.append(daily_row(mine, lost, tied, configuration, threshold_ms) | {"primary_db": db})
    frame = pl.DataFrame(rows, schema={**DAILY_FILE, "primary_db": pl.String}) if rows else None
    if frame is None:
        return pl.DataFrame(schema={**DAILY_FILE, **PARTITION_SCHEMA})
    return frame.with_columns(day=day)
