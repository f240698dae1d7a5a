"""The writes walked in send order without copying them whole: blocks of whole minutes, one group at a
time; every finding built on them gives what it gives on the same writes in any order, with one group or
many, in one block or several."""

from __future__ import annotations

from itertools import pairwise

import polars as pl
import pytest
from hypothesis import given
from hypothesis import strategies as st

from analyzer.findings import advice, insights, ordered, switching
from analyzer.findings.assessment import assess, bursts
from tests.write_rows import frame, row

#: a write: (seconds after T0 or None, thread, database, its log, slow, largest part)
WRITE = st.tuples(
    st.one_of(st.none(), st.integers(0, 600)),
    st.integers(1, 3),
    st.sampled_from(["sales", "hr", None]),
    st.integers(10, 12),
    st.booleans(),
    st.sampled_from(["network", "rfs_io"]),
)


def writes_of(drawn: list[tuple[int | None, int, str | None, int, bool, str]]) -> pl.DataFrame:
    """The writes in send order, as `match.finish` leaves them (no send time first); no two sent at once
    (the order of two writes sent at once is the order they came in)."""
    rows = []
    for i, (at, thread, db, seq, slow, part) in enumerate(drawn):
        r = row(i, (at or 0) + i / 1000, thread=thread, seq=seq, **{part: 250.0 if slow else 0.7})
        if at is None:  # seen on the standby only: no send, no total, no network part
            r |= {"sent_at": None, "total_ms": None, "network_ms": None, "slow": None, "matched": False}
        rows.append(r | {"primary_db": db, "standby_db": "stby"})
    return frame(rows).sort("sent_at", "thread", nulls_last=False, maintain_order=True)


def findings(writes: pl.DataFrame) -> tuple[object, ...]:
    """What the walked findings say of these writes."""
    return (
        advice.sustained(writes, "network"),
        advice.sustained(writes, "rfs_io"),
        bursts(writes),
        assess(writes, 100.0),
        insights.per_minute(writes).rows(),
        switching.log_switches(writes).sort(pl.all(), nulls_last=True).rows(),
        switching.flag_near_switch(writes, switching.log_switches(writes), 30.0)["switch_at"].to_list(),
    )


@pytest.mark.slow
@given(st.lists(WRITE, max_size=60), st.integers(0, 2**32 - 1))
def test_the_same_findings_in_any_order_one_group_at_a_time_or_all_at_once(
    drawn: list[tuple[int | None, int, str | None, int, bool, str]], seed: int
) -> None:
    writes = writes_of(drawn)
    expected = findings(writes)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(ordered, "GROUPS_ONE_BY_ONE", 0)  # a window over every group at once
        patch.setattr(ordered, "BLOCK_ROWS", 3)  # minutes of a few writes each in a block
        assert findings(writes) == expected
    shuffled = writes.sample(fraction=1.0, shuffle=True, seed=seed)
    flagged = findings(shuffled)
    # all but the per-write flags (those follow the rows), which are the same write by write
    assert flagged[:-1] == expected[:-1]
    by_write = dict(zip(shuffled["msgid"], flagged[-1], strict=True))
    assert [by_write[m] for m in writes["msgid"]] == expected[-1]


def test_minute_blocks_hold_whole_minutes_and_every_write_once() -> None:
    at = [None, None, *(s for s in range(0, 300, 7)), 300, 300, 300, 301]
    writes = frame([row(i, 0.0) | {"sent_at": None} if s is None else row(i, float(s)) for i, s in enumerate(at)])
    writes = writes.sort("sent_at", nulls_last=False)
    blocks = list(ordered.minute_blocks(writes, rows=5))
    assert pl.concat(blocks).equals(writes)  # every row once, in order
    assert blocks[0]["sent_at"].null_count() == 2 == blocks[0].height  # no send time: first, alone
    minutes = [set(b["sent_at"].dt.truncate("1m").to_list()) for b in blocks[1:]]
    for one, other in pairwise(minutes):
        assert not one & other  # no minute cut between two blocks
    assert len(blocks) > 3  # several blocks, not one


def test_writes_out_of_send_order_are_one_block() -> None:
    writes = frame([row(i, float(s)) for i, s in enumerate([90, 30, 150])])
    (block,) = ordered.minute_blocks(writes, rows=1)
    assert block.equals(writes)
