"""Clock stage: offset of each standby host against each primary host, from the data, as NTP does.

For one write with t1 (primary sends), t2 (RFS receives), t3 (RFS finishes), t4 (primary gets
the ack), the standby clock minus the primary clock is within
    offset = ((t2 - t1) + (t3 - t4)) / 2  +/-  (round trip / 2 + stamp resolution)
where the round trip is (t4 - t1) - (t3 - t2) = network_ms (and the resolution is that of one host's
stamps: truncating all four moves the estimate by less than one resolution step). The writes with the smallest round
trips bound it best: the estimate is the intersection of their intervals (its half-width is the
stated bound). With the offset, each write's network time splits into outbound and return, and
standby times can be put on the primary's timeline, where send < receive < finish < ack must hold.
"""

from __future__ import annotations

import polars as pl

from analyzer.base.schemas import CLOCK, WRITES, matched_only
from analyzer.base.units import elapsed_ms
from analyzer.base.words import ms
from analyzer.base.zones import for_host

#: writes used for an estimate: the `BEST` smallest round trips, at least `BEST_MIN`
BEST_SHARE = 0.05
BEST_MIN = 5
#: one-way delays are meaningful when the bound is under this share of a typical one-way delay
MEANINGFUL = 0.5


#: the writes' columns the clock stage reads (selected before filtering: no copy of whole rows)
CLOCK_COLUMNS = (
    "primary_host",
    "standby_host",
    "sent_at",
    "received_at",
    "finished_at",
    "acked_at",
    "network_ms",
    "resolution_ms",
)


def _per_write(writes: pl.DataFrame) -> pl.DataFrame:
    """Per matched write: hosts, send time, round trip and its offset interval (`_offset` +/- `_half`)."""
    return matched_only(writes, *CLOCK_COLUMNS).select(
        "primary_host",
        "standby_host",
        "sent_at",
        "network_ms",
        _offset=(elapsed_ms("received_at", "sent_at") + elapsed_ms("finished_at", "acked_at")) / 2,
        # truncation moves the offset by at most one stamp resolution (half the sum of both sides')
        _half=pl.col("network_ms").clip(lower_bound=0) / 2 + pl.col("resolution_ms") / 2,
    )


def _estimate(rows: pl.DataFrame) -> tuple[float, float, int, str | None]:
    """(offset, bound, writes used, warning) from one host pair's writes."""
    best = _best(rows, max(BEST_MIN, int(rows.height * BEST_SHARE)))
    low = float((best["_offset"] - best["_half"]).max())  # type: ignore[arg-type]
    high = float((best["_offset"] + best["_half"]).min())  # type: ignore[arg-type]
    if low <= high:
        return (low + high) / 2, (high - low) / 2, best.height, None
    middle = float(best["_offset"].median())  # type: ignore[arg-type]
    bound = float(best["_half"].max())  # type: ignore[arg-type]
    return middle, bound, best.height, "the best writes disagree beyond their bounds (clock steps or drift?)"


def _best(rows: pl.DataFrame, take: int) -> pl.DataFrame:
    """The `take` writes with the smallest round trips (ties: the earlier write), in no particular order
    (only their extremes and median are read).

    Without a sort of every row, and without copying them: the take-th smallest round trip is found on
    its column alone; the writes below it, then the earliest at it, are filtered out.
    """
    net = rows["network_ms"]
    if net.null_count() or take >= rows.height:  # no round trip to rank by (never the case for matched writes)
        return rows.with_row_index("_at").bottom_k(take, by=["network_ms", "_at"])
    cut = net.bottom_k(take).max()
    below = rows.filter(net < cut)
    return pl.concat([below, rows.filter(net == cut).head(take - below.height)])


def _drift(rows: pl.DataFrame) -> tuple[float | None, str | None]:
    """Offset of the second half of the trace minus that of the first, and a warning if significant."""
    if rows.height < 4 * BEST_MIN:
        return None, None
    rows = rows.select("sent_at", "network_ms", "_offset", "_half")
    if not rows["sent_at"].is_sorted():  # the writes come in send order: no copy then
        rows = rows.sort("sent_at", maintain_order=True)
    half = rows.height // 2
    first, second = rows.head(half), rows.tail(rows.height - half)
    (o1, b1, _, _), (o2, b2, _, _) = _estimate(first), _estimate(second)
    moved = abs(o2 - o1) > b1 + b2
    warning = f"the offset moved {ms(o2 - o1, signed=True)} during the trace (clock drift)" if moved else None
    return o2 - o1, warning


def _zone_hint(offset_ms: float) -> str | None:
    """An offset of whole quarter hours is a time zone, not a clock: say so."""
    quarters = round(offset_ms / 900_000)
    if quarters and abs(offset_ms - quarters * 900_000) < 60_000:
        hours, minutes = divmod(abs(quarters) * 15, 60)
        sign = "+" if quarters > 0 else "-"
        return f"{sign}{hours:02d}:{minutes:02d} looks like a time zone difference: check --tz for these hosts"
    return None


def estimate_offsets(writes: pl.DataFrame, overrides: dict[str, float] | None = None) -> pl.DataFrame:
    """One row per (primary_host, standby_host) with matched writes (schema `CLOCK`).

    `overrides` (`--clock-offset HOST=MS`) fixes a standby host's offset; its bound is 0.
    """
    overrides = overrides or {}
    per_write = _per_write(writes)
    rows = []
    for (p_host, s_host), group in _host_pairs(per_write):
        found = for_host(overrides, None if s_host is None else str(s_host))  # `stby01` names stby01.example
        given = found[1] if found else None
        if given is not None:
            rows.append({"offset_ms": given, "bound_ms": 0.0, "writes_used": 0, "source": "--clock-offset"})
        else:
            offset, bound, used, warning = _estimate(group)
            drift, moved = _drift(group)
            typical = float(group.select(pl.col("network_ms").median()).item() or 0.0) / 2  # a one-way delay
            vague = (
                f"one-way delays are not meaningful: bound {ms(bound)} against ~{ms(typical)} each way"
                if bound >= MEANINGFUL * typical
                else None
            )
            note = "; ".join(w for w in (warning, moved, _zone_hint(offset), vague) if w) or None
            rows.append(
                {
                    "offset_ms": offset,
                    "bound_ms": bound,
                    "writes_used": used,
                    "source": "estimated",
                    "drift_ms_per_hour": drift,
                    "warning": note,
                }
            )
        rows[-1].update(primary_host=p_host, standby_host=s_host)
    clock = pl.from_dicts(rows, schema=CLOCK) if rows else pl.DataFrame(schema=CLOCK)
    return clock.with_columns(causal_violations=_violations(writes, clock))


def _host_pairs(per_write: pl.DataFrame) -> list[tuple[tuple[object, ...], pl.DataFrame]]:
    """The writes of each (primary host, standby host); one pair (the usual case) without a copy."""
    hosts = ["primary_host", "standby_host"]
    if per_write.select(hosts).unique().height == 1:
        first = per_write.row(0, named=True)
        return [((first["primary_host"], first["standby_host"]), per_write)]
    return list(per_write.group_by(hosts, maintain_order=True))


def _per_pair(clock: pl.DataFrame, column: str) -> pl.Expr:
    """The clock's `column` for each write's host pair (null for a pair without a clock row).

    A comparison per host pair (there are a few) on the categorical columns instead of a join,
    which would copy the key columns of every write.
    """
    value: pl.Expr = pl.lit(None, pl.Float64)
    for p_host, s_host, found in clock.select("primary_host", "standby_host", column).iter_rows():
        pair = pl.col("primary_host").eq_missing(pl.lit(p_host, pl.String))
        pair = pair & pl.col("standby_host").eq_missing(pl.lit(s_host, pl.String))
        value = pl.when(pair).then(pl.lit(found, pl.Float64)).otherwise(value)
    return value


def one_way(writes: pl.DataFrame, clock: pl.DataFrame) -> pl.DataFrame:
    """Add net_out_ms, net_back_ms and clock_bound_ms from the host pair's offset (schema WRITES)."""
    out = writes.with_columns(
        net_out_ms=elapsed_ms("received_at", "sent_at") - _per_pair(clock, "offset_ms"),
        clock_bound_ms=_per_pair(clock, "bound_ms"),
    )
    # the return leg is the rest of the network time, so that out + back == network_ms exactly
    return out.with_columns(net_back_ms=pl.col("network_ms") - pl.col("net_out_ms")).select(WRITES.names())


def _violations(writes: pl.DataFrame, clock: pl.DataFrame) -> pl.Series:
    """Per host pair: writes whose shifted receive or finish falls outside [send, ack] beyond the bound."""
    if not clock.height:
        return pl.Series("causal_violations", [], dtype=pl.Int64)
    counts = []
    for n in range(clock.height):  # one pass per host pair, only the columns read here
        one = clock.slice(n, 1)
        out = elapsed_ms("received_at", "sent_at") - _per_pair(one, "offset_ms")  # net_out_ms of `one_way`
        back = pl.col("network_ms") - out
        slack = _per_pair(one, "bound_ms") + pl.col("resolution_ms")
        bad = ((out < -slack) | (back < -slack)) & pl.col("matched")
        counts.append(int(writes.select(bad.fill_null(False).sum()).item()))
    return pl.Series("causal_violations", counts, dtype=pl.Int64)


def merged_timeline(writes: pl.DataFrame, clock: pl.DataFrame) -> pl.DataFrame:
    """Every event of every matched write on one timeline: UTC, standby events shifted by the offset.

    Sorted by time, primary and standby events then come in causal order (send, receive, finish,
    ack) up to the stated bound; `analyzer.match.clock` counts the writes where they do not.
    """
    offsets = clock.select("primary_host", "standby_host", _off="offset_ms")
    columns = ["thread", "seq", "msgid", "primary_file", "standby_file", "primary_line", "standby_line"]
    columns += ["finished_line", "acked_line"]
    both = matched_only(writes, *CLOCK_COLUMNS, *columns).join(
        offsets, on=["primary_host", "standby_host"], how="left", nulls_equal=True
    )
    shift = pl.duration(microseconds=(pl.col("_off").fill_null(0.0) * 1000).round().cast(pl.Int64))
    sides = {
        "send": (pl.col("sent_at"), "primary_host", "primary_file", pl.col("primary_line")),
        "receive": (pl.col("received_at") - shift, "standby_host", "standby_file", pl.col("standby_line")),
        "finish": (pl.col("finished_at") - shift, "standby_host", "standby_file", pl.col("finished_line")),
        "ack": (pl.col("acked_at"), "primary_host", "primary_file", pl.col("acked_line")),
    }
    parts = [
        both.select(
            at=at, event=pl.lit(event), thread="thread", seq="seq", msgid="msgid", host=host, file=file, line=line
        )
        for event, (at, host, file, line) in sides.items()
    ]
    return pl.concat(parts).sort("at", "thread", "msgid") if parts else pl.DataFrame()
