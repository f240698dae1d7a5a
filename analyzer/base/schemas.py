"""Table schemas (declared once) and the empty frames built from them.

Every frame that crosses a stage boundary has its schema here; nothing relies on inference.
"""

from __future__ import annotations

from typing import Final

import polars as pl

from analyzer.base.vocab import TOTAL_AND_COMPONENTS


def schema(**columns: pl.DataType | type[pl.DataType]) -> pl.Schema:
    """A polars schema from keyword columns (keeps the declarations short and typed)."""
    return pl.Schema(columns)


US = pl.Datetime("us")
UTC = pl.Datetime("us", "UTC")
#: file labels and stream names repeat on every row: categorical keeps them once (~30% less memory)
CAT = pl.Categorical()

#: lines handed from the read stage to the parse stage
LINES = schema(line=pl.Int64, text=pl.String)

#: event-16410 messages (one per line)
MESSAGES = schema(
    line=pl.Int64,
    kind=pl.String,
    oper=pl.String,
    thread=pl.Int64,
    seq=pl.Int64,
    msgid=pl.Int64,
)
#: krs stamps: naive local time of the host that wrote them (the C source location that the grammar
#: reads is not kept: nothing after the parse stage asks for it)
KRS = schema(line=pl.Int64, local=US, digits=pl.Int8)
#: ADR wall-clock lines (bare `***` lines and session-block lines); offset only on ISO lines
ADR = schema(line=pl.Int64, local=US, digits=pl.Int8, utc_offset_min=pl.Int32)
#: 10046 WAIT lines
WAITS = schema(
    line=pl.Int64,
    cursor=pl.Int64,
    event=pl.String,
    ela_us=pl.Int64,
    tim=pl.Int64,
)
#: log writer lines (long-write warnings, broadcast waits, adaptive sync messages)
LGWR = schema(
    line=pl.Int64,
    kind=pl.String,
    elapsed_ms=pl.Int64,
    size_kb=pl.Int64,
    detail=pl.String,
)
#: trace header lines (key/value), and file markers (continued / recreated)
HEADER = schema(line=pl.Int64, kind=pl.String, key=pl.String, value=pl.String)
MARKERS = schema(line=pl.Int64, marker=pl.String, path=pl.String, pid=pl.Int64)
#: alert-log entries (log switches, standby redo log selection, RFS attachment, protection mode,
#: transport errors, parameters); their time is the alert log's time line above them (`adr`)
ALERT = schema(
    line=pl.Int64,
    kind=pl.String,
    process=pl.String,
    pid=pl.Int64,
    thread=pl.Int64,
    seq=pl.Int64,
    dest=pl.Int64,
    log=pl.Int64,
    key=pl.String,
    detail=pl.String,
)
#: the alert-log entries of every file with their UTC time, file, host, instance and database (db_unique_name)
ALERT_ENTRIES = schema(
    **ALERT,
    at=UTC,
    file=pl.String,
    host=pl.String,
    instance=pl.String,
    database=pl.String,
)
#: each setting of a redo transport destination (`log_archive_dest_N`) in the alert logs: the attributes
#: its value writes (null when it does not say), when and how it was set (`source`: startup, alter system)
DESTINATIONS = schema(
    database=pl.String,
    instance=pl.String,
    host=pl.String,
    dest=pl.Int64,
    state=pl.String,
    service=pl.String,
    location=pl.String,
    transport=pl.String,
    affirm=pl.String,
    target=pl.String,
    valid_for=pl.String,
    net_timeout_s=pl.Int64,
    attributes=pl.String,
    set_at=UTC,
    source=pl.String,
    file=pl.String,
    line=pl.Int64,
)
#: lines of a known family that its grammar rejected, and other input problems
UNPARSED = schema(line=pl.Int64, family=pl.String, reason=pl.String, text=pl.String)
#: the unparsed lines by shape (`analyzer.findings.inventory.unparsed_shapes`): the first one as example
UNPARSED_SHAPES = schema(
    family=pl.String,
    shape=pl.String,
    count=pl.Int64,
    example=pl.String,
    reason=pl.String,
    file=pl.String,
    line=pl.Int64,
)
#: the parse stage's tables, by name (parse stage -> reduce stage)
PARSE_TABLES = {
    "messages": MESSAGES,
    "krs": KRS,
    "adr": ADR,
    "waits": WAITS,
    "lgwr": LGWR,
    "header": HEADER,
    "markers": MARKERS,
    "alert": ALERT,
    "unparsed": UNPARSED,
}

#: a file's ISO ADR lines: where its UTC offset changes (analyzer.base.zones)
ZONE_LINES = schema(zone_line=pl.Int64, utc_offset_min=pl.Int32)
#: one tim anchor: an ADR line (its naive local time and zone, if any) and the tim of the first WAIT after it
#: `wait_line`: the WAIT line anchored to the ADR line `line` (right after it, or further on)
ANCHORS = schema(line=pl.Int64, local=US, utc_offset_min=pl.Int32, tim=pl.Int64, wait_line=pl.Int64)

#: a message after stamp association, while its file is read (naive local time; `zkey` is the
#: line whose time zone applies: its stamp's, else its own)
STAMPED = schema(
    line=pl.Int64,
    ord=pl.Int64,
    stream=pl.Int64,
    kind=CAT,
    oper=CAT,
    thread=pl.Int64,
    seq=pl.Int64,
    msgid=pl.Int64,
    zkey=pl.Int64,
    local=US,
    res_us=pl.Int64,
    problem=pl.String,
)
#: a message in UTC that is still without its partner at the end of its file: the segments of
#: one process are paired on these (reduce stage -> analyzer.match.segments)
PENDING = schema(
    file=CAT,
    line=pl.Int64,
    ord=pl.Int64,
    stream=pl.Int64,
    kind=CAT,
    oper=CAT,
    thread=pl.Int64,
    seq=pl.Int64,
    msgid=pl.Int64,
    at=UTC,
    res_us=pl.Int64,
)
#: RFS waits that no write of their file could take (before its first message, after its last
#: open one): they may belong to a write spanning two segments. `tim` is UTC microseconds here.
BOUNDARY_WAITS = schema(stream=pl.Int64, ord=pl.Int64, event=pl.String, ela_us=pl.Int64, tim=pl.Int64)
#: what identifies one remote write on both hosts
WRITE_KEY = ("thread", "seq", "msgid", "oper")
#: one write seen on one host: the two messages of one process that open and close it, in UTC;
#: a standby exchange (`client` false) carries its RFS wait sums (reduce stage -> match stage)
EXCHANGES = schema(
    file=CAT,
    stream=pl.Int64,
    thread=pl.Int64,
    seq=pl.Int64,
    msgid=pl.Int64,
    oper=CAT,
    client=pl.Boolean,
    a_line=pl.Int64,
    b_line=pl.Int64,
    a_at=UTC,
    b_at=UTC,
    a_res_us=pl.Int64,
    b_res_us=pl.Int64,
    rfs_io_ms=pl.Float64,
    rfs_io_waits=pl.Int64,
    first_start=UTC,
    last_end=UTC,
)

#: the writes table: the contract of `--format csv` and of `writes` in `--format json` (the
#: categorical columns repeat a few values on millions of rows: they are strings in the output);
#: in memory, `NARROW_INTS` are Int32 where their values fit (`narrowed`), written as these types
WRITES = schema(
    thread=pl.Int64,
    seq=pl.Int64,
    msgid=pl.Int64,
    oper=CAT,
    sent_at=UTC,
    total_ms=pl.Float64,
    rfs_ms=pl.Float64,
    network_ms=pl.Float64,
    rfs_io_ms=pl.Float64,
    rfs_other_ms=pl.Float64,
    resolution_ms=pl.Float64,
    net_out_ms=pl.Float64,
    net_back_ms=pl.Float64,
    clock_bound_ms=pl.Float64,
    verdict=CAT,
    slow=pl.Boolean,
    matched=pl.Boolean,
    rfs_io_waits=pl.Int64,
    warning=CAT,  # null on almost every row: 4 bytes a row instead of a 16-byte string view
    primary_file=CAT,
    primary_line=pl.Int64,
    standby_file=CAT,
    standby_line=pl.Int64,
    primary_host=CAT,
    standby_host=CAT,
    received_at=UTC,
    finished_at=UTC,
    acked_at=UTC,
    primary_db=CAT,
    standby_db=CAT,
    transport=CAT,
    #: the `Server finished` line (in standby_file) and the `Client received` line (in primary_file)
    finished_line=pl.Int64,
    acked_line=pl.Int64,
    #: the Fast Sync what-if: total without standby I/O, never below network; total on Fast Sync links;
    #: null without a breakdown (one side only) and for ASYNC shipments (`analyzer.match.attribute.fast_sync_ms`)
    fastsync_ms=pl.Float64,
)
#: integer columns of the writes table held as Int32 in memory when every value of a batch fits (thread,
#: sequence and msgid are whatever the trace says, lines count a file's lines; both fit on any real
#: upload): 28 bytes less a write, ~70 MB at 2.5 million writes. None of them is summed or added to,
#: so the narrow type cannot overflow downstream; written out (JSON, CSV, the batch dataset's Parquet
#: cast to `WRITES`) they are the same integers. `rfs_io_waits` stays wide: it is summed.
NARROW_INTS = ("thread", "seq", "msgid", "primary_line", "standby_line", "finished_line", "acked_line")
_INT32 = (-(2**31), 2**31 - 1)


def narrowed(frame: pl.DataFrame, columns: tuple[str, ...] = NARROW_INTS) -> pl.DataFrame:
    """The frame with each of `columns` that it has as Int32 where all its values fit (an empty or
    all-null column always does), the others as they are."""
    fits = []
    for name in columns:
        if name in frame.columns:
            low, high = frame[name].min(), frame[name].max()
            if low is None or (_INT32[0] <= low and high <= _INT32[1]):  # type: ignore[operator]
                fits.append(name)
    return frame.with_columns(pl.col(fits).cast(pl.Int32)) if fits else frame


def matched_only(writes: pl.DataFrame, *columns: str) -> pl.DataFrame:
    """The writes seen on both sides, with these columns (all when none is named). Selecting
    shares the columns; only a filter copies them, so when every write matched (the usual
    case) nothing is copied."""
    chosen = writes.select(*columns, "matched") if columns else writes
    return chosen if chosen["matched"].all() else chosen.filter(pl.col("matched"))


#: the writes' columns that name their link (`analyzer.match.links`): the databases at both ends and the
#: link's transport (SYNC, FASTSYNC; ASYNC shipments are a table of their own)
LINK_COLUMNS = ("primary_db", "standby_db", "transport")
#: the one-way delays, which need the clock offset of all writes (`analyzer.match.clock.one_way` adds them)
ONE_WAY_COLUMNS = ("net_out_ms", "net_back_ms", "clock_bound_ms")
#: the what-if that needs the link's transport (`analyzer.match.by_link` adds it with the link's columns)
WHAT_IF_COLUMNS = ("fastsync_ms",)
#: the writes table as the attribute stage leaves it (attribute stage -> analyzer.match.by_link)
ATTRIBUTED = pl.Schema(
    {name: dtype for name, dtype in WRITES.items() if name not in (*ONE_WAY_COLUMNS, *LINK_COLUMNS, *WHAT_IF_COLUMNS)}
)
#: the writes table as matching leaves it, tagged with its link (analyzer.match.by_link -> analyzer.match.clock)
LINKED = pl.Schema({name: dtype for name, dtype in WRITES.items() if name not in ONE_WAY_COLUMNS})

#: clock offset of each standby host relative to each primary host (NTP-style estimate)
CLOCK = schema(
    primary_host=CAT,
    standby_host=CAT,
    offset_ms=pl.Float64,
    bound_ms=pl.Float64,
    writes_used=pl.Int64,
    source=pl.String,
    drift_ms=pl.Float64,
    causal_violations=pl.Int64,
    warning=pl.String,
)

#: messages of one side that found no partner, with the reason
UNMATCHED = schema(
    side=pl.String,
    file=pl.String,
    line=pl.Int64,
    kind=pl.String,
    thread=pl.Int64,
    seq=pl.Int64,
    msgid=pl.Int64,
    oper=pl.String,
    at=UTC,
    reason=pl.String,
)

#: segments of a process's trace named by a marker (`TRACE CONTINUES IN FILE`, `TRACE CONTINUED FROM
#: FILE`) and absent from the upload: no evidence from that host between `from_at` and `to_at`; `messages`
#: counts the other messages without partner that fall in the gap (they are not listed as unmatched)
GAPS = schema(
    host=pl.String,
    side=pl.String,
    process=pl.String,
    threads=pl.List(pl.Int64),
    missing=pl.String,
    before_file=pl.String,
    line=pl.Int64,
    after_file=pl.String,
    from_at=UTC,
    to_at=UTC,
    messages=pl.Int64,
)

#: the (thread, seq) keys of the exchanges a spilled piece holds, and where: the batch index
PIECE_KEYS = schema(thread=pl.Int64, seq=pl.Int64, len=pl.UInt32, store=pl.UInt32, piece=pl.UInt32)

#: log writer lines of every file with their UTC time, host and redo thread (`wthread`, null when
#: unknown), as the attribute stage ties them to remote writes
LGWR_LINES = schema(
    file=pl.String,
    line=pl.Int64,
    kind=pl.String,
    at=UTC,
    elapsed_ms=pl.Int64,
    size_kb=pl.Int64,
    detail=pl.String,
    host=pl.String,
    wthread=pl.Int64,
)

#: one timeline of what happened: each write's send, receive, finish and ack, and the log writer and
#: alert-log events around them (`--format csv --table events`; the JSON `events` holds the others)
EVENTS = schema(
    at=UTC,
    event=pl.String,
    thread=pl.Int64,
    seq=pl.Int64,
    msgid=pl.Int64,
    host=pl.String,
    file=pl.String,
    line=pl.Int64,
    elapsed_ms=pl.Int64,
    detail=pl.String,
)

#: LGWR warnings (long writes, broadcast waits: `kind`) tied to the remote write(s) they cover
WARNINGS = schema(
    file=pl.String,
    line=pl.Int64,
    kind=pl.String,
    host=pl.String,
    thread=pl.Int64,
    at=UTC,
    elapsed_ms=pl.Int64,
    size_kb=pl.Int64,
    writes=pl.Int64,
    msgid=pl.Int64,
    remote_total_ms=pl.Float64,
    network_ms=pl.Float64,
    rfs_io_ms=pl.Float64,
    rfs_other_ms=pl.Float64,
    verdict=pl.String,
)


#: count, mean and percentiles of each measure (total, its components, RFS time)
STATS = schema(
    component=pl.String,
    count=pl.Int64,
    mean=pl.Float64,
    p50=pl.Float64,
    p90=pl.Float64,
    p99=pl.Float64,
    max=pl.Float64,
)
#: writes per V$EVENT_HISTOGRAM bucket (`<1`, `<2`, ... ms)
HISTOGRAM = schema(bucket=pl.String, count=pl.Int64)
#: log switches of a thread of a primary database (insights): `at` the switch's time, from `source` (alert
#: log, writes, standby redo log selection); `alert_at` the alert log's `Thread N advanced to log sequence
#: S`; `inferred_at` the first write of the new log; the standby redo log selections of the primary
#: (`srl_selected_at`, `SRL selected for ...`) and of RFS (`rfs_selected_at`)
SWITCHES = schema(
    thread=pl.Int64,
    from_seq=pl.Int64,
    to_seq=pl.Int64,
    at=UTC,
    primary_db=pl.String,
    source=pl.String,
    alert_at=UTC,
    inferred_at=UTC,
    srl_selected_at=UTC,
    rfs_selected_at=UTC,
)
#: what the alert logs say about log switches (insights): `kind` log_switch, srl_selected or rfs_selected,
#: `db` the database of the alert log
OBSERVED = schema(kind=pl.String, db=pl.String, thread=pl.Int64, seq=pl.Int64, at=UTC)
#: latency of the writes near a log switch against the others
COMPARISON = schema(
    writes=pl.String,
    count=pl.Int64,
    slow=pl.Int64,
    slow_rate=pl.Float64,
    p50_ms=pl.Float64,
    p99_ms=pl.Float64,
    max_ms=pl.Float64,
    rfs_io_p99_ms=pl.Float64,
)
#: per-minute series: `timeline` in --format json and `--format csv --table timeline` (per minute,
#: primary database and thread)
TIMELINE = schema(
    minute=UTC,
    thread=pl.Int64,
    writes=pl.Int64,
    slow_writes=pl.Int64,
    **{f"{c}_{p}_ms": pl.Float64 for c in TOTAL_AND_COMPONENTS for p in ("p50", "p99")},
    primary_db=pl.String,
)

#: one row per file found by `dgtrace inventory`
INVENTORY = schema(
    file=pl.String,
    kind=pl.String,
    role=pl.String,
    process=pl.String,
    instance=pl.String,
    host=pl.String,
    thread=pl.Int64,
    pid=pl.Int64,
    version=pl.String,
    first_at=UTC,
    last_at=UTC,
    lines=pl.Int64,
    unparsed=pl.Int64,
    messages=pl.Int64,
    waits=pl.Int64,
    lgwr_warnings=pl.Int64,
)


#: one empty frame per schema: a copy of it (`clear`) costs about 2 us, building a frame 300 us
_EMPTY: dict[tuple[tuple[str, pl.DataType], ...], pl.DataFrame] = {}


def empty(columns: pl.Schema) -> pl.DataFrame:
    """An empty frame with the given schema (a new frame each call)."""
    key = tuple(columns.items())
    if key not in _EMPTY:
        _EMPTY[key] = pl.DataFrame(schema=columns)
    return _EMPTY[key].clear()


def per_row(values: pl.DataFrame, rows: list[int]) -> pl.DataFrame:
    """Row i of `values` repeated rows[i] times (none for 0: polars 1 explodes an empty list to a null)."""
    counted = values.with_columns(_rows=pl.Series(rows, dtype=pl.Int64)).filter(pl.col("_rows") > 0)
    return counted.select(pl.exclude("_rows").repeat_by("_rows").explode())


#: the engine of the lazy queries of the reading stage: the one eager operations run on ("auto" may
#: choose the streaming engine, which takes twice as long over a chunk's few hundred thousand rows)
LAZY_ENGINE: Final = "in-memory"


def collect_rows(query: pl.LazyFrame, rows: int) -> pl.DataFrame:
    """A row-wise query's result (`rows`: its input's); with none, an empty frame of its schema, the query
    not run (a few tenths of a ms on no rows; small files have many). The engine: `pairing.LAZY_ENGINE`."""
    return query.collect(engine="in-memory") if rows else empty(query.collect_schema())


def frame(rows: list[dict[str, object]], columns: pl.Schema) -> pl.DataFrame:
    """Build a frame from dict rows with an explicit schema (missing keys become null)."""
    return pl.from_dicts(rows, schema=columns) if rows else empty(columns)
