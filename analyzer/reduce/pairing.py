"""Pairing within a process: the two messages of each exchange, and the RFS waits between them.

Shared by the reduce stage (inside each chunk of a file) and by segment joining (across the
segments of one process). On each host a write is one exchange: the message that opens it
(`Client sending` / `Server received`) and the next message of the same stream, side and key
that closes it (`Client received` / `Server finished`). A standby exchange owns the RFS waits
printed between its two messages.
"""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl

from analyzer.base.schemas import EXCHANGES, LAZY_ENGINE, WRITE_KEY, collect_rows
from analyzer.base.vocab import CLIENT_KINDS, OPENING, OPENING_KINDS, RFS_IO_EVENTS

#: why a message is set aside unpaired: it is a second copy of one already read (its block logged twice)
LOGGED_TWICE = "logged twice: the same message (kind, key and time) as an earlier line of this process; counted once"


@dataclass(frozen=True)
class Paired:
    """`pair_events` result: exchanges, messages that can never pair, and those that still may."""

    #: stream, WRITE_KEY, client (bool), a_<column> and b_<column> for every payload column
    exchanges: pl.DataFrame
    #: unpaired messages that a later or earlier message of their key rules out, with `reason`
    unpairable: pl.DataFrame
    #: an opening message that is the last of its key (its partner may come later), and a
    #: closing message that is the first of its key (its partner may have come earlier)
    pending: pl.DataFrame


def pair_events(rows: pl.DataFrame, payload: list[str]) -> Paired:
    """Pair each opening message with the next message of the same stream, side and key when that one closes it.

    `rows` are messages without a stamp problem, with `stream`, `kind`, WRITE_KEY, `ord` (order in the
    stream) and the `payload` columns. One sort by key then order, and a look at the row after:
    no window functions. Pieces in order pair as a whole does: the `pending` rows of one piece,
    put before the rows of the next, pair as if both had been paired at once (a pair never
    spans a row of its key, so only the last row of a key in one piece and the first in the
    next can still meet). That lets a file be paired chunk by chunk, and the segments of one
    process after their files. (One difference: a closing message whose key was already paired
    in an earlier piece stays pending instead of unpairable; it is reported alone in the end
    unless the previous segment of its process left an opening message of that key.)

    A message whose kind, key and time repeat an earlier one of its stream (a block of the trace
    logged twice) is a copy: it is set aside as unpairable (`LOGGED_TWICE`), and the first pairs.
    """
    client = pl.col("kind").is_in(CLIENT_KINDS)
    opens = pl.col("kind").is_in(OPENING_KINDS)
    by = ["stream", "_client", *WRITE_KEY]
    copy = _copy(by, next((c for c in ("local", "at") if c in rows.columns), None))
    same_next = pl.all_horizontal([pl.col(k).shift(-1) == pl.col(k) for k in by]).fill_null(False)
    same_prev = pl.all_horizontal([pl.col(k).shift(1) == pl.col(k) for k in by]).fill_null(False)
    pairs = same_next & pl.col("_open") & ~pl.col("_open").shift(-1).fill_null(True)
    # the sort and the marks in one query; each result in one more (chains of eager operations
    # cost a query each, with a fixed cost of its own)
    ordered = rows.lazy().with_columns(_client=client, _open=opens).sort([*by, "ord"]).with_columns(_copy=copy)
    marked = (
        ordered.filter(~pl.col("_copy"))
        .drop("_copy")
        .with_columns(_pairs=pairs, _same_next=same_next, _same_prev=same_prev)
        .with_columns(_closed=pl.col("_pairs").shift(1).fill_null(False))
        .collect(engine=LAZY_ENGINE)
    )
    after = {f"b_{c}": pl.col(c).shift(-1) for c in payload}
    exchanges = (
        marked.lazy()
        .with_columns(**after)
        .filter("_pairs")
        .select("stream", *WRITE_KEY, client="_client", **{f"a_{c}": c for c in payload}, **{b: b for b in after})
        .collect(engine=LAZY_ENGINE)
    )
    single = marked.lazy().filter(~pl.col("_pairs") & ~pl.col("_closed"))
    ruled_out = pl.when(pl.col("_open")).then(pl.col("_same_next")).otherwise(pl.col("_same_prev"))
    helpers = ["_client", "_open", "_pairs", "_same_next", "_same_prev", "_closed"]
    # every pair is two rows, its opening (`_pairs`) and its closing (`_closed`): the rest are single,
    # and when none is (most small files) neither query is run
    alone = marked.height - 2 * int(marked["_pairs"].sum())
    unpairable = collect_rows(single.filter(ruled_out).with_columns(reason=unpaired_reason()).drop(helpers), alone)
    pending = collect_rows(single.filter(~ruled_out).drop(helpers), alone)
    if marked.height < rows.height:  # copies (rare): with the messages that cannot pair
        copies = ordered.filter("_copy").with_columns(reason=pl.lit(LOGGED_TWICE)).select(unpairable.columns)
        unpairable = pl.concat([unpairable, copies.collect(engine=LAZY_ENGINE)])
    return Paired(exchanges, unpairable, pending)


def _copy(by: list[str], stamp: str | None) -> pl.Expr:
    """A message that repeats the kind, key and time of the row before it or the one before that, in the
    order of `by` then the stream's order: the second copy of a block logged twice (of one message, or of
    a whole exchange)."""
    if stamp is None:
        return pl.lit(False)
    same = [*by, "kind", stamp]
    return pl.any_horizontal(
        pl.all_horizontal([pl.col(c).shift(back) == pl.col(c) for c in same]).fill_null(False) for back in (1, 2)
    )


def unpaired_reason() -> pl.Expr:
    """Why an unpaired message stays alone (the text names the partner it lacks)."""
    reasons = {}
    for first, second in OPENING.items():
        reasons[str(first)] = f"no '{second}' message for it later in the same process"
        reasons[str(second)] = f"no '{first}' message for it earlier in the same process"
    return pl.col("kind").cast(pl.String).replace_strict(reasons, default=None, return_dtype=pl.String)


def wait_sums(spans: pl.DataFrame, waits: pl.DataFrame) -> pl.DataFrame:
    """Per standby exchange (stream, a_ord): its RFS I/O wait time and count, the wait that
    started first and the end of the last one, in the waits' own `tim` units.

    A wait belongs to a write when it stands between that write's `Server received` and
    `Server finished` lines of the same RFS process (`ord` orders a process's lines). `spans`
    has stream, a_ord, b_ord; `waits` has stream, ord, event, ela_us, tim. The sums stay in
    `tim` units because a file's tim clock is only known at its end (`wait_columns`).
    """
    rows = waits.select(
        "stream",
        w_ord="ord",
        ela="ela_us",
        tim="tim",
        io=pl.col("event").is_in(RFS_IO_EVENTS),
    ).sort("w_ord")
    inside = rows.join_asof(
        spans.sort("a_ord"), left_on="w_ord", right_on="a_ord", by="stream", strategy="backward", check_sortedness=False
    ).filter(pl.col("w_ord") < pl.col("b_ord"))
    start = pl.col("tim") - pl.col("ela")
    return inside.group_by("stream", "a_ord").agg(
        io_ela=pl.col("ela").filter("io").sum(),
        rfs_io_waits=pl.col("io").sum().cast(pl.Int64),
        first_tim=pl.col("tim").sort_by(start).first(),
        first_ela=pl.col("ela").sort_by(start).first(),
        last_tim=pl.col("tim").max(),
    )


#: the columns of `wait_sums` besides the keys, in its order
SUM_COLUMNS = ("io_ela", "rfs_io_waits", "first_tim", "first_ela", "last_tim")


def span_sums(spans: pl.DataFrame, waits: pl.DataFrame) -> pl.DataFrame | None:
    """What `wait_sums` gives each span, row by row in the order of `spans` (SUM_COLUMNS, null for a
    span without waits), without a join or a group-by; None when this way does not apply.

    It applies to one stream whose waits run in time order, a chunk of one RFS process as it is
    read: a span's waits are then a run of consecutive waits, found by two asof joins, and
    summed as the difference of running sums at its ends; the wait that started first is its first
    wait and the latest end its last wait's. A wait belongs to the latest span that opened before
    it (as in `wait_sums`), so a span ends at the next span's start, or at its closing message if
    that comes first. With several streams, or waits whose tim or start goes back, the caller uses
    `wait_sums`.
    """
    if not spans.height or not waits.height:
        return no_sums(spans.height)
    streams = pl.concat([spans["stream"], waits["stream"]])
    if streams.null_count() or streams.min() != streams.max():
        return None
    io = pl.col("event").is_in(RFS_IO_EVENTS).fill_null(False).cast(pl.Int64)
    rows = waits.select(w_ord="ord", ela="ela_us", tim="tim", _io=io)
    if not rows["w_ord"].is_sorted():
        rows = rows.sort("w_ord")
    tim, ela = rows["tim"], rows["ela"]
    # the first wait of a run started first and the last one ended last only when they go forward
    if tim.null_count() or ela.null_count() or not (tim.is_sorted() and (tim - ela).is_sorted()):
        return None
    # running sums: the sum over the waits lo..hi-1 is the running sum at hi-1 less the one at lo-1
    rows = rows.with_columns(_ela=(pl.col("ela") * pl.col("_io")).cum_sum(), _count=pl.col("_io").cum_sum())
    ordered = spans["a_ord"].is_sorted()  # as the pairing leaves them, almost always
    bounds = spans.lazy() if ordered else spans.lazy().with_row_index("_i").sort("a_ord")
    # a span ends at its closing message, or where the next span opens if that comes first; in order
    # of their starts, the ends go forward too, so both find their waits by an asof join (a merge)
    bounds = bounds.with_columns(_end=pl.min_horizontal("b_ord", pl.col("a_ord").shift(-1).fill_null(pl.col("b_ord"))))
    numbered = rows.lazy().select(_at=pl.int_range(pl.len(), dtype=pl.Int64), _ord="w_ord")
    n = rows.height
    found = (
        bounds.join_asof(
            numbered.select(_lo="_at", _lo_ord="_ord"),
            left_on="a_ord",
            right_on="_lo_ord",
            strategy="forward",
            check_sortedness=False,
        )
        .join_asof(
            numbered.select(_hi="_at", _hi_ord="_ord"),
            left_on="_end",
            right_on="_hi_ord",
            strategy="forward",
            check_sortedness=False,
        )
        .with_columns(pl.col("_lo", "_hi").fill_null(n))
    )
    if not ordered:  # back to the order of the spans
        found = found.sort("_i")
    lo, hi = pl.col("_lo"), pl.col("_hi")
    first, last, before = lo.clip(0, n - 1), (hi - 1).clip(0, n - 1), (lo - 1).clip(0, n - 1)

    def over_run(column: str) -> pl.Expr:
        running = pl.lit(rows[column])
        return running.gather(last) - pl.when(lo > 0).then(running.gather(before)).otherwise(0)

    some = hi > lo
    return found.select(
        io_ela=pl.when(some).then(over_run("_ela")),
        rfs_io_waits=pl.when(some).then(over_run("_count")),
        first_tim=pl.when(some).then(pl.lit(tim).gather(first)),
        first_ela=pl.when(some).then(pl.lit(ela).gather(first)),
        last_tim=pl.when(some).then(pl.lit(tim).gather(last)),
    ).collect(engine=LAZY_ENGINE)


def no_sums(rows: int) -> pl.DataFrame:
    """SUM_COLUMNS for `rows` spans without waits (all null)."""
    return pl.DataFrame(schema=dict.fromkeys(SUM_COLUMNS, pl.Int64)).clear(rows)


def converted(
    exchanges: pl.DataFrame, narrow: list[str] | None, factor: float | pl.Expr, offset_us: float | pl.Expr | None
) -> pl.DataFrame:
    """Exchanges with `a_at` (`b_at`) and `file` as rows of schema EXCHANGES, their waits' columns
    converted by the tim clock (`wait_columns`); `narrow`: only those columns, nothing converted."""
    if narrow is not None:
        return exchanges.select(narrow).cast({c: EXCHANGES[c] for c in narrow})
    return wait_columns(exchanges, factor, offset_us).select(EXCHANGES.names()).cast(EXCHANGES)


def wait_columns(exchanges: pl.DataFrame, factor: float | pl.Expr, offset_us: float | pl.Expr | None) -> pl.DataFrame:
    """Turn `wait_sums` columns into rfs_io_ms and UTC first_start / last_end (utc = tim * factor
    + offset; no offset: the tim clock is not anchored and the times stay null). The clock may be
    columns, one value per row (null offset: not anchored)."""

    def utc(tim: str) -> pl.Expr:
        if offset_us is None:
            return pl.lit(None, pl.Datetime("us", "UTC"))
        us = (pl.col(tim) * factor + offset_us).round().cast(pl.Int64)
        return pl.from_epoch(us, time_unit="us").dt.replace_time_zone("UTC")

    ela = (pl.col("first_ela") * factor).round().cast(pl.Int64)
    return exchanges.with_columns(
        rfs_io_ms=pl.col("io_ela") * factor / 1000.0,
        first_start=utc("first_tim") - pl.duration(microseconds=ela),
        last_end=utc("last_tim"),
    ).drop("io_ela", "first_tim", "first_ela", "last_tim")
