"""Stamp association (the MAA paper's rule): each message with the krs stamp it takes, alone or by group."""

from __future__ import annotations

from datetime import datetime

import polars as pl
from hypothesis import example, given, settings
from hypothesis import strategies as st

from analyzer.base.schemas import KRS, MESSAGES
from analyzer.base.vocab import MessageKind
from analyzer.parse.families import parse_chunk
from analyzer.reduce.stamping import associate
from tests.conftest import lines_frame


def _tables(kinds: list[MessageKind | None], first: int = 1, group: int = 0) -> tuple[pl.DataFrame, pl.DataFrame]:
    """A run of lines as (messages, stamps) numbered from `first` (None: a stamp line), with `_f` = group;
    a message's msgid and a stamp's time follow its place in the run, not its number."""
    numbered = list(enumerate(kinds, first))
    messages = pl.DataFrame(
        [
            {"line": n, "kind": str(kind), "oper": "Write", "thread": 1, "seq": 1, "msgid": n - first}
            for n, kind in numbered
            if kind is not None
        ],
        schema=MESSAGES,
    )
    stamps = pl.DataFrame(
        [
            {
                "line": n,
                "local": datetime(2024, 1, 1, 0, (n - first) // 60, (n - first) % 60),
                "digits": 6,
            }
            for n, kind in numbered
            if kind is None
        ],
        schema=KRS,
    )
    return messages.with_columns(_f=pl.lit(group)), stamps.with_columns(_f=pl.lit(group))


def test_associate_on_empty_tables() -> None:
    parsed, _ = parse_chunk(lines_frame(""), in_header=False)
    assert associate(parsed.tables["messages"], parsed.tables["krs"]).height == 0


def _stamp_rule(kinds: list[MessageKind | None]) -> list[tuple[int | None, str | None]]:
    """(stamp line, problem) of each message of a run of lines (None: a stamp line), by the rule in words."""
    at = [n for n, kind in enumerate(kinds, 1) if kind is not None]
    stamps = [n for n, kind in enumerate(kinds, 1) if kind is None]
    out: list[tuple[int | None, str | None]] = []
    for i, line in enumerate(at):
        kind = kinds[line - 1]
        assert kind is not None
        if kind.stamp_after:
            limit = at[i + 1] if i + 1 < len(at) else None
            stamp = min((s for s in stamps if s > line), default=None)
            if stamp is None or (limit is not None and stamp > limit):
                out.append((None, "no transport stamp after this message"))
                continue
        else:
            limit = at[i - 1] if i else None
            stamp = max((s for s in stamps if s < line), default=None)
            if stamp is None or (limit is not None and stamp < limit):
                out.append((None, "no transport stamp before this message"))
                continue
        out.append((stamp, None))
    claimed = [
        stamp is not None and any(0 <= j < len(out) and out[j][0] == stamp for j in (i - 1, i + 1))
        for i, (stamp, _) in enumerate(out)
    ]
    return [
        (stamp, f"stamp at line {stamp} claimed by two messages" if twice else problem)
        for (stamp, problem), twice in zip(out, claimed, strict=True)
    ]


@settings(deadline=None)
@given(st.lists(st.sampled_from([None, *MessageKind]), max_size=30))
def test_associate_follows_the_rule_on_any_run_of_messages_and_stamps(kinds: list[MessageKind | None]) -> None:
    messages = pl.DataFrame(
        [
            {"line": n, "kind": str(kind), "oper": "Write", "thread": 1, "seq": 1, "msgid": n}
            for n, kind in enumerate(kinds, 1)
            if kind is not None
        ],
        schema=MESSAGES,
    )
    stamps = pl.DataFrame(
        [
            {"line": n, "local": datetime(2024, 1, 1, 0, 0, n), "digits": 6}
            for n, kind in enumerate(kinds, 1)
            if kind is None
        ],
        schema=KRS,
    )
    found = associate(messages, stamps)
    assert list(zip(found["stamp_line"], found["problem"], strict=True)) == _stamp_rule(kinds)
    assert found["line"].to_list() == messages["line"].to_list()


_KINDS = st.lists(st.sampled_from([None, *MessageKind]), max_size=12)


@settings(deadline=None)
@given(st.lists(_KINDS, min_size=1, max_size=6))
# a send taking the stamp that ends its group, then an ack first in the next group: the stamp before
# the ack's next stamp is the other group's, which it must not take
@example([[MessageKind.CLIENT_SEND, None], [MessageKind.CLIENT_RECV, None]])
# two messages claiming one stamp in the second group: the problem names the line in its own group
@example([[None], [MessageKind.CLIENT_SEND, None, MessageKind.CLIENT_RECV]])
def test_groups_stamped_together_as_each_alone(groups: list[list[MessageKind | None]]) -> None:
    """Runs of lines numbered on from group to group (as small files parsed together are), stamped
    together `by` their group: each message takes what its group stamped alone (numbered from 1)
    gives it, never another group's stamp (a send at a group's end, an ack at the next one's start),
    and a problem names the line of the stamp in its own group (`moved`)."""
    alone, together, first = [], [], 1
    for group, kinds in enumerate(groups):
        messages, stamps = _tables(kinds)
        alone.append(associate(messages.drop("_f"), stamps.drop("_f")))
        messages, stamps = _tables(kinds, first, group)
        together.append((messages.with_columns(_moved=pl.lit(first - 1)), stamps))
        first += len(kinds) + 1  # a line number no line has between groups, as parse_files leaves
    messages = pl.concat([m for m, _ in together])
    found = associate(messages, pl.concat([s for _, s in together]), by="_f", moved="_moved")
    back = found.with_columns(pl.col("line", "stamp_line") - pl.col("_moved")).drop("_f", "_moved")
    assert back.equals(pl.concat(alone))
