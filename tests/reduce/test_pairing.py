"""Pairing within a process: the two messages of an exchange, pieces that pair as the whole does, waits summed."""

from __future__ import annotations

import itertools

import polars as pl
from hypothesis import given, settings
from hypothesis import strategies as st

from analyzer.reduce.pairing import LOGGED_TWICE, SUM_COLUMNS, pair_events, span_sums, unpaired_reason, wait_sums


def messages(*rows: tuple[str, int, int]) -> pl.DataFrame:
    """(kind, msgid, ord) on stream 1, thread 1, seq 5."""
    return pl.DataFrame(
        [(1, kind, 1, 5, msgid, "Write", order) for kind, msgid, order in rows],
        schema={
            "stream": pl.Int64,
            "kind": pl.String,
            "thread": pl.Int64,
            "seq": pl.Int64,
            "msgid": pl.Int64,
            "oper": pl.String,
            "ord": pl.Int64,
        },
        orient="row",
    )


def test_an_opening_message_pairs_with_the_next_closing_one_of_its_key() -> None:
    paired = pair_events(
        messages(("client_send", 1, 10), ("client_recv", 1, 20), ("server_recv", 2, 30), ("server_done", 2, 40)),
        ["ord"],
    )
    got = paired.exchanges.sort("a_ord").select("msgid", "client", "a_ord", "b_ord").rows()
    assert got == [(1, True, 10, 20), (2, False, 30, 40)]
    assert paired.unpairable.height == 0 and paired.pending.height == 0


def test_a_resend_leaves_the_first_send_unpairable() -> None:
    paired = pair_events(messages(("client_send", 1, 10), ("client_send", 1, 15), ("client_recv", 1, 20)), ["ord"])
    assert paired.exchanges.select("a_ord", "b_ord").rows() == [(15, 20)]
    assert paired.unpairable["ord"].to_list() == [10]
    assert paired.unpairable["reason"][0] == "no 'client_recv' message for it later in the same process"


def test_a_block_logged_twice_pairs_once_and_its_copies_are_set_aside() -> None:
    """The same send (kind, key and time) twice, then a whole exchange twice: each write pairs once; a
    resend (the same key at another time) is not a copy."""
    rows = messages(
        ("client_send", 1, 10),
        ("client_send", 1, 11),
        ("client_recv", 1, 20),
        ("client_send", 2, 30),
        ("client_recv", 2, 40),
        ("client_send", 2, 41),
        ("client_recv", 2, 42),
        ("client_send", 3, 50),
        ("client_send", 3, 55),
        ("client_recv", 3, 60),
    ).with_columns(local=pl.Series([100, 100, 200, 300, 400, 300, 400, 500, 550, 600]))
    paired = pair_events(rows, ["ord", "local"])
    assert paired.exchanges.sort("a_ord").select("msgid", "a_ord", "b_ord").rows() == [
        (1, 10, 20),
        (2, 30, 40),
        (3, 55, 60),
    ]
    copies = paired.unpairable.filter(pl.col("reason") == LOGGED_TWICE)
    assert copies["ord"].to_list() == [11, 41, 42]
    assert paired.unpairable.filter(pl.col("reason") != LOGGED_TWICE)["ord"].to_list() == [50]


def test_pending_messages_of_one_piece_pair_with_the_next_piece() -> None:
    first = pair_events(messages(("client_send", 1, 10), ("client_recv", 0, 5)), ["ord"])
    assert first.exchanges.height == 0
    assert sorted(first.pending["ord"].to_list()) == [5, 10]  # the ack of msgid 0 may close an earlier send
    second = pair_events(pl.concat([first.pending, messages(("client_recv", 1, 20))]), ["ord"])
    assert second.exchanges.select("msgid", "a_ord", "b_ord").rows() == [(1, 10, 20)]


def test_unpaired_reasons_name_the_missing_partner() -> None:
    reasons = messages(("server_done", 3, 1)).select(unpaired_reason())["kind"].to_list()
    assert reasons == ["no 'server_recv' message for it earlier in the same process"]


def test_only_rfs_io_waits_between_received_and_finished_count() -> None:
    spans = pl.DataFrame({"stream": [1], "a_ord": [10], "b_ord": [20]})
    waits = pl.DataFrame(
        {
            "stream": [1, 1, 1, 1, 2],
            "ord": [5, 12, 14, 25, 13],
            "event": ["RFS write", "RFS write", "RFS dispatch", "RFS write", "RFS write"],
            "ela_us": [999, 400, 50, 999, 999],
            "tim": [100, 1_000, 1_100, 2_000, 1_050],
        }
    )
    row = wait_sums(spans, waits).row(0, named=True)
    assert (row["io_ela"], row["rfs_io_waits"]) == (400, 1)  # not the dispatch wait, not the other stream
    assert (row["first_tim"], row["first_ela"], row["last_tim"]) == (1_000, 400, 1_100)


def _joined_sums(spans: pl.DataFrame, waits: pl.DataFrame) -> pl.DataFrame:
    """`wait_sums` beside each span, as the reduce stage joins them (null for a span without waits)."""
    return spans.join(wait_sums(spans, waits), on=["stream", "a_ord"], how="left").select(SUM_COLUMNS)


def _waits(ords: list[int], elas: list[int], io: list[bool], stream: int = 1) -> pl.DataFrame:
    tims = list(itertools.accumulate(ela + 1 for ela in elas))  # each wait ends after the one before
    return pl.DataFrame(
        {
            "stream": [stream] * len(ords),
            "ord": ords,
            "event": ["RFS write" if flag else "RFS dispatch" for flag in io],
            "ela_us": elas,
            "tim": tims,
        },
        schema={"stream": pl.Int64, "ord": pl.Int64, "event": pl.String, "ela_us": pl.Int64, "tim": pl.Int64},
    )


def test_span_sums_give_each_span_its_waits_beside_it() -> None:
    spans = pl.DataFrame({"stream": [1, 1, 1], "a_ord": [30, 10, 50], "b_ord": [40, 20, 60]})
    waits = _waits([5, 12, 14, 25, 33, 45], [9, 400, 50, 9, 300, 9], [True, True, False, True, True, True])
    quick = span_sums(spans, waits)
    assert quick is not None
    assert quick.to_dicts() == _joined_sums(spans, waits).to_dicts()
    assert quick["io_ela"].to_list() == [300, 400, None]  # in the order of the spans; the third has no wait


def test_overlapping_spans_share_their_waits_as_wait_sums_does() -> None:
    # a wait belongs to the latest span opened before it: 22 to the second span, not to both
    spans = pl.DataFrame({"stream": [1, 1], "a_ord": [10, 20], "b_ord": [30, 40]})
    waits = _waits([12, 22, 35], [5, 6, 7], [True, True, True])
    quick = span_sums(spans, waits)
    assert quick is not None
    assert quick.to_dicts() == _joined_sums(spans, waits).to_dicts()
    assert quick["rfs_io_waits"].to_list() == [1, 2]


def test_span_sums_leave_other_cases_to_wait_sums() -> None:
    spans = pl.DataFrame({"stream": [1], "a_ord": [10], "b_ord": [20]})
    two_streams = pl.concat([_waits([12], [5], [True]), _waits([13], [5], [True], stream=2)])
    assert span_sums(spans, two_streams) is None
    backwards = _waits([12, 14], [5, 5], [True, True]).with_columns(tim=pl.Series([100, 50]))
    assert span_sums(spans, backwards) is None
    assert span_sums(spans, _waits([], [], [])).to_dicts() == [dict.fromkeys(SUM_COLUMNS)]


@settings(deadline=None)
@given(
    st.lists(st.tuples(st.integers(1, 8), st.integers(1, 12)), max_size=12),
    st.lists(st.tuples(st.integers(0, 3), st.booleans()), max_size=40),
)
def test_span_sums_agree_with_wait_sums(gaps: list[tuple[int, int]], elas: list[tuple[int, bool]]) -> None:
    """Spans at random lines (some overlapping), waits on the lines between: the same sums either way."""
    starts = list(itertools.accumulate(gap for gap, _ in gaps))
    ends = [a + n for a, (_, n) in zip(starts, gaps, strict=True)]
    spans = pl.DataFrame(
        {"stream": [1] * len(starts), "a_ord": starts, "b_ord": ends},
        schema={"stream": pl.Int64, "a_ord": pl.Int64, "b_ord": pl.Int64},
    )
    taken = set(starts)
    ords = [n for n in range(1, 200) if n not in taken][: len(elas)]
    waits = _waits(ords, [ela for ela, _ in elas][: len(ords)], [io for _, io in elas][: len(ords)])
    quick = span_sums(spans, waits)
    assert quick is not None
    assert quick.to_dicts() == _joined_sums(spans, waits).to_dicts()
