"""Pairing within a process: the two messages of an exchange, pieces that pair as the whole does, waits summed."""

from __future__ import annotations

import polars as pl

from analyzer.pairing import pair_events, unpaired_reason, wait_sums


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
