"""Match stage: pair the messages of one write on each host, then primary with standby.

Within a file, a `Client sending` pairs with the next `Client received` of the same
(thread, seq, msgid, oper), and a `Server received` with the next `Server finished`. Across
hosts, a primary exchange matches the standby exchange of the same key. A msgid reused later
(NSS restart, reconnect) is told apart by time: candidates must lie within `window` of the
typical send->receive gap of that host pair (its median, so a standby clock minutes off still
matches); two candidates inside the window are a collision, reported and never guessed.
"""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl

from analyzer.schemas import UNMATCHED

KEY = ["thread", "seq", "msgid", "oper"]
DEFAULT_WINDOW_S = 60.0


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


def _unmatched(rows: pl.DataFrame, side: str, reason: pl.Expr | str) -> pl.DataFrame:
    reason_expr = pl.lit(reason) if isinstance(reason, str) else reason
    return rows.select(
        side=pl.lit(side),
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


def pair_in_file(events: pl.DataFrame, first: str, second: str, side: str) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Pair `first` messages with the next `second` message of the same key in the same stream.

    A stream is one process incarnation: one file, or the segments of one process joined in
    time order (`ord` orders events across them). Returns (exchanges, unmatched). Exchange
    columns: file, stream, key, a_line, b_line, a_ord, b_ord, a_at, b_at, a_res_us, b_res_us,
    a_stamp_line, b_stamp_line.
    """
    ok = events.filter(pl.col("problem").is_null() & pl.col("kind").is_in([first, second]))
    by = ["stream", *KEY]
    # one sort by key then order: a `first` pairs with the row right after it when that row has the
    # same key and is a `second` (another `first` in between leaves it alone) -- no window functions
    rows = ok.sort([*by, "ord"])
    same = pl.all_horizontal([pl.col(k).shift(-1) == pl.col(k) for k in by]).fill_null(False)
    after = ("ord", "line", "at", "resolution_us", "stamp_line")
    rows = rows.with_columns(
        _pairs=same & (pl.col("kind") == first) & (pl.col("kind").shift(-1) == second),
        **{f"b_{c}": pl.col(c).shift(-1) for c in after},
    )
    paired = rows.filter("_pairs")
    exchanges = paired.select(
        "file",
        *by,
        a_line="line",
        b_line="b_line",
        a_ord="ord",
        b_ord="b_ord",
        a_at="at",
        b_at="b_at",
        a_res_us="resolution_us",
        b_res_us="b_resolution_us",
        a_stamp_line="stamp_line",
        b_stamp_line="b_stamp_line",
    )
    joined = rows.filter((pl.col("kind") == first) & ~pl.col("_pairs"))
    lonely_a = joined
    lonely_b = ok.filter(pl.col("kind") == second).join(
        exchanges.select("stream", ord="b_ord"), on=["stream", "ord"], how="anti"
    )
    problems = events.filter(pl.col("problem").is_not_null())
    unmatched = pl.concat(
        [
            _unmatched(lonely_a, side, f"no '{second}' message for it later in the same process"),
            _unmatched(lonely_b, side, f"no '{first}' message for it earlier in the same process"),
            _unmatched(problems, side, pl.col("problem")),
        ]
    )
    return exchanges, unmatched


def match(
    primary: pl.DataFrame,
    standby: pl.DataFrame,
    hosts: dict[str, str],
    window_s: float = DEFAULT_WINDOW_S,
) -> Matched:
    """Match primary events (client_*) with standby events (server_*) of every file.

    `hosts` maps a file label to its host; the window is applied per (primary, standby) host pair.
    """
    p, p_un = pair_in_file(primary, "client_send", "client_recv", "primary")
    s, s_un = pair_in_file(standby, "server_recv", "server_done", "standby")
    host_of = (
        pl.col("file").replace_strict(hosts, default=None, return_dtype=pl.String) if hosts else pl.lit(None, pl.String)
    )
    p = p.with_columns(p_host=host_of).rename(
        {
            "file": "primary_file",
            "a_line": "send_line",
            "b_line": "ack_line",
            "a_at": "t1",
            "b_at": "t4",
            "a_res_us": "res1_us",
            "b_res_us": "res4_us",
            "a_stamp_line": "send_stamp_line",
            "stream": "primary_stream",
            "a_ord": "send_ord",
            "b_ord": "ack_ord",
            "b_stamp_line": "ack_stamp_line",
        }
    )
    s = s.with_columns(s_host=host_of).rename(
        {
            "file": "standby_file",
            "a_line": "recv_line",
            "b_line": "done_line",
            "a_at": "t2",
            "b_at": "t3",
            "a_res_us": "res2_us",
            "b_res_us": "res3_us",
            "a_stamp_line": "recv_stamp_line",
            "stream": "standby_stream",
            "a_ord": "recv_ord",
            "b_ord": "done_ord",
            "b_stamp_line": "done_stamp_line",
        }
    )
    cand = p.join(s, on=KEY, how="inner").with_columns(
        gap_ms=(pl.col("t2") - pl.col("t1")).dt.total_microseconds() / 1000.0
    )
    p_id, s_id = ["primary_file", "send_line"], ["standby_file", "recv_line"]
    unique = (pl.len().over(p_id) == 1) & (pl.len().over(s_id) == 1)
    typical = pl.col("gap_ms").filter(unique).median().over("p_host", "s_host")
    cand = cand.with_columns(typical=typical).with_columns(
        typical=pl.col("typical").fill_null(pl.col("gap_ms").median().over("p_host", "s_host"))
    )
    cand = cand.filter((pl.col("gap_ms") - pl.col("typical")).abs() <= window_s * 1000.0)
    clash = (pl.len().over(p_id) > 1) | (pl.len().over(s_id) > 1)
    cand = cand.with_columns(_clash=clash)
    pairs = cand.filter(~pl.col("_clash")).drop("_clash")
    clashing = cand.filter("_clash")
    unmatched = [p_un, s_un]
    if clashing.height:
        unmatched.append(
            _exchange_unmatched(
                clashing.unique(p_id),
                "primary",
                "msgid collision: several standby writes fit",
                "primary_file",
                "send_line",
                "t1",
            )
        )
        unmatched.append(
            _exchange_unmatched(
                clashing.unique(s_id),
                "standby",
                "msgid collision: several primary writes fit",
                "standby_file",
                "recv_line",
                "t2",
            )
        )
    used_p = pairs.select(p_id)
    used_s = pairs.select(s_id)
    clash_p = clashing.select(p_id).unique()
    clash_s = clashing.select(s_id).unique()
    lonely_p = p.join(used_p, on=p_id, how="anti").join(clash_p, on=p_id, how="anti")
    lonely_s = s.join(used_s, on=s_id, how="anti").join(clash_s, on=s_id, how="anti")
    unmatched.append(
        _exchange_unmatched(
            lonely_p,
            "primary",
            "no standby write with this thread/seq/msgid/oper in the time window",
            "primary_file",
            "send_line",
            "t1",
        )
    )
    unmatched.append(
        _exchange_unmatched(
            lonely_s,
            "standby",
            "no primary write with this thread/seq/msgid/oper in the time window",
            "standby_file",
            "recv_line",
            "t2",
        )
    )
    exchanges = pl.concat(
        [
            pairs.with_columns(matched=pl.lit(True)),
            lonely_p.with_columns(matched=pl.lit(False)),
            lonely_s.with_columns(matched=pl.lit(False)),
        ],
        how="diagonal_relaxed",
    ).sort(pl.coalesce("t1", "t2"))
    return Matched(exchanges, pl.concat(unmatched).sort("file", "line"), p.height, s.height)


def _exchange_unmatched(
    rows: pl.DataFrame, side: str, reason: str, file_col: str, line_col: str, at_col: str
) -> pl.DataFrame:
    kind = "client_send" if side == "primary" else "server_recv"
    return _unmatched(
        rows.select(
            *[pl.col(k) for k in KEY],
            file=pl.col(file_col),
            line=pl.col(line_col),
            kind=pl.lit(kind),
            at=pl.col(at_col),
        ),
        side,
        reason,
    )
