"""Rows of the writes table, built by hand for the findings' and the reports' tests (log switches,
recommendations, large timelines)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import polars as pl

from analyzer.base.schemas import WRITES

#: a write is slow from this total (ms)
THRESHOLD = 100.0
T0 = datetime(2024, 1, 1, 12, 0, tzinfo=UTC)


def row(
    i: int,
    at_s: float,
    *,
    thread: int = 1,
    seq: int = 10,
    network: float = 1.0,
    rfs_io: float = 0.5,
    rfs_other: float = 0.1,
    matched: bool = True,
) -> dict[str, object]:
    """One write as the attribute stage makes it (components in ms, sent `at_s` seconds after T0).

    Not matched: seen on the primary only, so it has a total and nothing else.
    """
    parts = {"network": network, "rfs_io": rfs_io, "rfs_other": rfs_other}
    total = network + rfs_io + rfs_other
    standby = {
        "rfs_ms": rfs_io + rfs_other,
        "network_ms": network,
        "rfs_io_ms": rfs_io,
        "rfs_other_ms": rfs_other,
        "verdict": max(parts, key=lambda k: parts[k]),
        "standby_file": "stby/rfs.trc",
        "standby_line": 20 + i,
    }
    return {
        "thread": thread,
        "seq": seq,
        "msgid": i,
        "oper": "Write",
        "sent_at": T0 + timedelta(seconds=at_s),
        "total_ms": total,
        **(standby if matched else dict.fromkeys(standby)),
        "resolution_ms": 2.0,
        "matched": matched,
        "slow": total >= THRESHOLD,
        "rfs_io_waits": 1,
        "warning": None,
        "primary_file": "prim/nss.trc",
        "primary_line": 10 + i,
        "primary_host": "prim",
        "standby_host": "stby",
    }


def frame(rows: list[dict[str, object]]) -> pl.DataFrame:
    return pl.DataFrame(rows, schema=WRITES)


def steady(seconds: int, log_every_s: int, slow_at: set[int], **slow_parts: float) -> pl.DataFrame:
    """One write a second on thread 1, a new log every `log_every_s` s; writes at `slow_at` get `slow_parts`."""
    rows = [row(i, float(i), seq=10 + i // log_every_s, **(slow_parts if i in slow_at else {})) for i in range(seconds)]
    return frame(rows)


SLOW_IO = {"rfs_io": 250.0}


def many(count: int, seconds: float) -> pl.DataFrame:
    """`count` writes spread over `seconds`, one of them slow, on two threads with a log switch each."""
    t0 = datetime(2024, 1, 1, tzinfo=UTC)
    step = seconds / count
    data: dict[str, list[object]] = {
        "thread": [1 + i % 2 for i in range(count)],
        "seq": [10 + (i > count // 2) for i in range(count)],
        "msgid": list(range(count)),
        "oper": ["Write"] * count,
        "sent_at": [t0 + timedelta(seconds=i * step) for i in range(count)],
        "total_ms": [500.0 if i == 777 else 2.0 for i in range(count)],
        "rfs_ms": [1.0] * count,
        "network_ms": [1.0] * count,
        "rfs_io_ms": [499.0 if i == 777 else 0.5 for i in range(count)],
        "rfs_other_ms": [0.5] * count,
        "resolution_ms": [2.0] * count,
        "verdict": ["rfs_io" if i == 777 else "network" for i in range(count)],
        "slow": [i == 777 for i in range(count)],
        "matched": [True] * count,
        "rfs_io_waits": [1] * count,
        "warning": [None] * count,
        "primary_file": ["p.trc"] * count,
        "primary_line": list(range(count)),
        "standby_file": ["s.trc"] * count,
        "standby_line": list(range(count)),
        "primary_host": ["prim"] * count,
        "standby_host": ["stby"] * count,
    }
    return pl.DataFrame({name: data.get(name, [None] * count) for name in WRITES}, schema=WRITES)
