"""Match stage: a primary exchange with the standby exchange of the same write.

Each side comes paired within its process (`analyzer.reduce.pairing`, by the reduce stage and
`analyzer.match.segments`): a primary exchange (send -> ack) matches the standby exchange
(received -> finished) of the same (thread, seq, msgid, oper). A msgid reused later
(NSS restart, reconnect) is told apart by time: candidates must lie within `window` of the
typical send->receive gap of that host pair (its median, so a standby clock minutes off still
matches); two candidates inside the window are a collision, reported and never guessed.
"""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl

from analyzer.base.schemas import UNMATCHED, WRITE_KEY
from analyzer.base.vocab import MessageKind, Role
from analyzer.reduce.results import DEFAULT_WINDOW_S

#: columns only a standby exchange fills (its RFS wait sums)
STANDBY_ONLY = ("rfs_io_ms", "rfs_io_waits", "first_start", "last_end")


@dataclass(frozen=True)
class Matched:
    """Every remote write seen (`matched` when both sides were found) and what stayed unmatched.

    A write seen on one side only keeps that side's columns and nulls for the other, so that a
    trace set without the standby (or without the primary) still gives per-write numbers.
    """

    exchanges: pl.DataFrame
    unmatched: pl.DataFrame
    primary_exchanges: int
    standby_exchanges: int


def unmatched_rows(rows: pl.DataFrame, side: Role, reason: pl.Expr | str) -> pl.DataFrame:
    """Rows of schema UNMATCHED for one side (rows with file, line, kind, WRITE_KEY and at)."""
    reason_expr = pl.lit(reason) if isinstance(reason, str) else reason
    return rows.select(
        side=pl.lit(str(side)),
        file=pl.col("file"),
        line=pl.col("line"),
        kind=pl.col("kind"),
        thread=pl.col("thread"),
        seq=pl.col("seq"),
        msgid=pl.col("msgid"),
        oper=pl.col("oper"),
        at=pl.col("at"),
        reason=reason_expr,
    ).cast(UNMATCHED)


def _renamed(primary: pl.DataFrame, standby: pl.DataFrame, hosts: dict[str, str]) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Each side's exchanges with its own column names (send/ack, received/finished) and host."""
    host_of = (
        pl.col("file").cast(pl.String).replace_strict(hosts, default=None, return_dtype=pl.String)
        if hosts
        else pl.lit(None, pl.String)
    )
    p = (
        primary.drop(*STANDBY_ONLY, "client", strict=False)
        .with_columns(p_host=host_of)
        .rename(
            strict=False,
            mapping={
                "file": "primary_file",
                "a_line": "send_line",
                "b_line": "ack_line",
                "a_at": "t1",
                "b_at": "t4",
                "a_res_us": "res1_us",
                "b_res_us": "res4_us",
                "stream": "primary_stream",
            },
        )
    )
    s = (
        standby.drop("client", strict=False)
        .with_columns(s_host=host_of)
        .rename(
            strict=False,
            mapping={
                "file": "standby_file",
                "a_line": "recv_line",
                "b_line": "done_line",
                "a_at": "t2",
                "b_at": "t3",
                "a_res_us": "res2_us",
                "b_res_us": "res3_us",
                "stream": "standby_stream",
            },
        )
    )
    return p, s


def _candidates(p: pl.DataFrame, s: pl.DataFrame) -> pl.DataFrame:
    """Every (primary, standby) pair of the same key, on narrow columns: row numbers `_p` and
    `_s`, key, times, hosts, the send->receive gap and whether both rows have only this pair."""
    pk = p.select(*WRITE_KEY, "t1", "p_host", _p=pl.int_range(pl.len(), dtype=pl.UInt32))
    sk = s.select(*WRITE_KEY, "t2", "s_host", _s=pl.int_range(pl.len(), dtype=pl.UInt32))
    return pk.join(sk, on=WRITE_KEY, how="inner").with_columns(
        gap_ms=(pl.col("t2") - pl.col("t1")).dt.total_microseconds() / 1000.0,
        _unique=(pl.len().over("_p") == 1) & (pl.len().over("_s") == 1),
    )


def gaps(primary: pl.DataFrame, standby: pl.DataFrame, hosts: dict[str, str]) -> pl.DataFrame:
    """The send->receive gap of every candidate pair (p_host, s_host, gap_ms, _unique): what
    `typical_gaps` needs, gathered batch by batch when the exchanges are matched in batches."""
    return _candidates(*_renamed(primary, standby, hosts)).select("p_host", "s_host", "gap_ms", "_unique")


def typical_gaps(gap_rows: pl.DataFrame, at_least: int = 1) -> pl.DataFrame:
    """Per host pair, the typical send->receive gap: the median over keys with one candidate
    on each side, else over all candidates (p_host, s_host, typical); only the pairs of at least
    `at_least` candidates."""
    typical = pl.coalesce(pl.col("gap_ms").filter("_unique").median(), pl.col("gap_ms").median())
    found = gap_rows.group_by("p_host", "s_host").agg(typical=typical, _n=pl.len())
    return found.filter(pl.col("_n") >= at_least).drop("_n")


def _completed(typical: pl.DataFrame, cand: pl.DataFrame) -> pl.DataFrame:
    """`typical` with the gaps of the host pairs it lacks taken from these candidates (a pair that a
    sample of the keys missed: `batches.sample_keys`)."""
    missing = cand.join(typical, on=["p_host", "s_host"], how="anti", nulls_equal=True)
    return typical if missing.is_empty() else pl.concat([typical, typical_gaps(missing)])


def match(
    primary: pl.DataFrame,
    standby: pl.DataFrame,
    hosts: dict[str, str],
    window_s: float = DEFAULT_WINDOW_S,
    typical: pl.DataFrame | None = None,
) -> Matched:
    """Match the primary exchanges (send -> ack) with the standby exchanges (received -> finished).

    Both come paired within their process (`analyzer.reduce.reducer`): file, stream, WRITE_KEY, a_/b_ line,
    at and res_us; the standby's also carry the RFS wait sums. `hosts` maps a file label to its
    host; the window is applied per (primary, standby) host pair around its `typical` gap
    (`typical_gaps`; computed from these exchanges when not given, and for the host pairs it
    lacks). `unmatched` lists the writes of either side that found no partner here.
    """
    p, s = _renamed(primary, standby, hosts)
    del primary, standby
    # candidates on narrow columns; the wide rows are gathered once, in output order, at the end
    cand = _candidates(p, s)
    typical = typical_gaps(cand) if typical is None else _completed(typical, cand)
    cand = cand.join(typical, on=["p_host", "s_host"], how="left", nulls_equal=True)
    cand = cand.filter((pl.col("gap_ms") - pl.col("typical")).abs() <= window_s * 1000.0)
    clash = (pl.len().over("_p") > 1) | (pl.len().over("_s") > 1)
    cand = cand.with_columns(_clash=clash)
    pairs = cand.filter(~pl.col("_clash")).select("_p", "_s", _at="t1", thread="thread")
    clashing = cand.filter("_clash")
    unmatched = []
    if clashing.height:
        clash_p, clash_s = clashing["_p"].unique().sort(), clashing["_s"].unique().sort()
        unmatched.append(
            _side_unmatched(p.select(_gather(clash_p)), Role.PRIMARY, "msgid collision: several standby writes fit")
        )
        unmatched.append(
            _side_unmatched(s.select(_gather(clash_s)), Role.STANDBY, "msgid collision: several primary writes fit")
        )
    alone_p = (
        p.select("t1", "thread", _p=pl.int_range(pl.len(), dtype=pl.UInt32))
        .join(cand.select("_p"), on="_p", how="anti")
        .select("_p", _at="t1", thread="thread")
    )
    alone_s = (
        s.select("t2", "thread", _s=pl.int_range(pl.len(), dtype=pl.UInt32))
        .join(cand.select("_s"), on="_s", how="anti")
        .select("_s", _at="t2", thread="thread")
    )
    reason = "no {} write with this thread/seq/msgid/oper in the time window"
    unmatched.append(_side_unmatched(p.select(_gather(alone_p["_p"])), Role.PRIMARY, reason.format(Role.STANDBY)))
    unmatched.append(_side_unmatched(s.select(_gather(alone_s["_s"])), Role.STANDBY, reason.format(Role.PRIMARY)))
    order = pl.concat(
        [
            pairs.with_columns(matched=pl.lit(True)),
            alone_p.with_columns(matched=pl.lit(False)),
            alone_s.with_columns(matched=pl.lit(False)),
        ],
        how="diagonal_relaxed",
    ).sort("_at", "thread", maintain_order=True)
    sides = p.select(_gather(order["_p"])), s.select(_gather(order["_s"]))
    keys = [pl.col(k).fill_null(pl.lit(sides[1][k])) for k in WRITE_KEY]  # a standby-only write has its key there
    exchanges = pl.concat([sides[0].with_columns(keys), sides[1].drop(WRITE_KEY)], how="horizontal")
    exchanges = exchanges.with_columns(matched=order["matched"])
    return Matched(exchanges, pl.concat(unmatched).sort("file", "line"), p.height, s.height)


def _gather(rows: pl.Series) -> pl.Expr:
    """Every column at these row numbers (a null number gives a row of nulls)."""
    return pl.all().gather(rows)


def _side_unmatched(rows: pl.DataFrame, side: Role, reason: str) -> pl.DataFrame:
    """Exchanges of one side as unmatched rows (their opening message)."""
    if side is Role.PRIMARY:
        return _exchange_unmatched(rows, side, reason, "primary_file", "send_line", "t1")
    return _exchange_unmatched(rows, side, reason, "standby_file", "recv_line", "t2")


def _exchange_unmatched(
    rows: pl.DataFrame, side: Role, reason: str, file_col: str, line_col: str, at_col: str
) -> pl.DataFrame:
    kind = MessageKind.CLIENT_SEND if side is Role.PRIMARY else MessageKind.SERVER_RECV
    return unmatched_rows(
        rows.select(
            *[pl.col(k) for k in WRITE_KEY],
            file=pl.col(file_col),
            line=pl.col(line_col),
            kind=pl.lit(kind),
            at=pl.col(at_col),
        ),
        side,
        reason,
    )
