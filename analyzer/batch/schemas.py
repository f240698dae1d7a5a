"""The tables of a batch dataset, declared once, with the version of their layout.

Every table is hive-partitioned Parquet: `DIR/<table>/primary_db=<db>/day=<YYYY-MM-DD>/<unit>.parquet`.
The two partition columns live in the directory names, not in the files (the usual hive layout:
polars, DuckDB and pyarrow add them back when they read the directory); `FILE_SCHEMAS` are the
columns stored in each file, `SCHEMAS` the columns a reader sees.
"""

from __future__ import annotations

import polars as pl

from analyzer.base.schemas import CLOCK, UNMATCHED, UTC, WARNINGS, WRITES, schema
from analyzer.base.vocab import MEASURES

#: bumped on any change of a table's columns or of their meaning; a dataset of a version in
#: `MIGRATES_FROM` is brought to this one in place by the next `dgtrace batch` (`analyzer.batch.migrate`),
#: one of any other version is refused (write a new one with `--out`)
SCHEMA_VERSION = 2
#: 1 -> 2: `fastsync_ms` in writes and shipments, `fastsync_p99_ms` and `fastsync_slow_writes` in daily
MIGRATES_FROM = (1,)

#: the hive partition columns, outermost first
PARTITIONS = ("primary_db", "day")
PARTITION_SCHEMA = schema(primary_db=pl.String, day=pl.Date)


def _stored(columns: pl.Schema, **extra: pl.DataType | type[pl.DataType]) -> pl.Schema:
    """The columns a file stores: categorical ones as strings (what Parquet stores for every reader
    alike), the partition columns left out (the directory names hold them), `extra` added if missing."""
    stored: dict[str, pl.DataType | type[pl.DataType]] = {
        n: pl.String if t == pl.Categorical else t for n, t in columns.items() if n not in PARTITIONS
    }
    stored.update({n: t for n, t in extra.items() if n not in stored and n not in PARTITIONS})
    return pl.Schema(stored)


#: one row per remote write: the writes contract (`--format csv`, `fastsync_ms` included) and the
#: configuration's databases
WRITES_FILE = _stored(WRITES, standby_db=pl.String)
#: messages that found no partner (the `unmatched` of `--format json`)
UNMATCHED_FILE = _stored(UNMATCHED, standby_db=pl.String)
#: LGWR long-write warnings tied to the remote writes they cover
WARNINGS_FILE = _stored(WARNINGS, standby_db=pl.String)
#: every input of a unit: the trace files read, and the inputs skipped with the reason
FILES_FILE = schema(
    configuration=pl.String,
    file=pl.String,
    path=pl.String,
    sha256=pl.String,
    bytes=pl.Int64,
    db=pl.String,
    role=pl.String,
    process=pl.String,
    instance=pl.String,
    host=pl.String,
    thread=pl.Int64,
    version=pl.String,
    first_at=UTC,
    last_at=UTC,
    lines=pl.Int64,
    messages=pl.Int64,
    unparsed=pl.Int64,
    status=pl.String,
    reason=pl.String,
)
#: clock offset per host pair, estimated from the writes of one configuration and day
CLOCK_FILE = _stored(CLOCK)

#: the percentiles kept per measure in `daily`
DAILY_STATS = ("p50", "p90", "p99", "max")
#: one row per configuration and day: counts, percentiles, time shares and verdicts
DAILY_FILE = schema(
    configuration=pl.String,
    standby_db=pl.String,
    writes=pl.Int64,
    matched=pl.Int64,
    primary_only=pl.Int64,
    standby_only=pl.Int64,
    slow_writes=pl.Int64,
    unmatched_messages=pl.Int64,
    lgwr_warnings=pl.Int64,
    threshold_ms=pl.Float64,
    **{f"{m}_{s}_ms": pl.Float64 for m in MEASURES for s in DAILY_STATS},
    network_share=pl.Float64,
    rfs_io_share=pl.Float64,
    rfs_other_share=pl.Float64,
    slow_network_share=pl.Float64,
    slow_rfs_io_share=pl.Float64,
    slow_rfs_other_share=pl.Float64,
    network_verdicts=pl.Int64,
    rfs_io_verdicts=pl.Int64,
    rfs_other_verdicts=pl.Int64,
    slow_network_verdicts=pl.Int64,
    slow_rfs_io_verdicts=pl.Int64,
    slow_rfs_other_verdicts=pl.Int64,
    # the Fast Sync what-if of the writes seen on both sides (`fastsync_ms`, as `dgtrace analyze` has it)
    fastsync_p99_ms=pl.Float64,
    fastsync_slow_writes=pl.Int64,
)

#: the stored columns of each table, by its directory name
FILE_SCHEMAS: dict[str, pl.Schema] = {
    "writes": WRITES_FILE,
    #: the remote writes of ASYNC links (never among `writes`, as in the analysis)
    "shipments": WRITES_FILE,
    "unmatched": UNMATCHED_FILE,
    "lgwr_warnings": WARNINGS_FILE,
    "files": FILES_FILE,
    "clock": CLOCK_FILE,
    "daily": DAILY_FILE,
}
TABLES = tuple(FILE_SCHEMAS)

#: what a reader of `DIR/<table>` sees: the stored columns and the partition columns
SCHEMAS: dict[str, pl.Schema] = {name: schema(**cols, **PARTITION_SCHEMA) for name, cols in FILE_SCHEMAS.items()}

#: `dgtrace report`: one row per configuration and day (from `daily`)
TREND = schema(
    primary_db=pl.String,
    day=pl.Date,
    standby_db=pl.String,
    writes=pl.Int64,
    slow_writes=pl.Int64,
    total_p50_ms=pl.Float64,
    total_p99_ms=pl.Float64,
    total_max_ms=pl.Float64,
    fastsync_p99_ms=pl.Float64,
    fastsync_slow_writes=pl.Int64,
    network_share=pl.Float64,
    rfs_io_share=pl.Float64,
    rfs_other_share=pl.Float64,
    threshold_ms=pl.Float64,
)
