"""The writes table in send order, walked without copying it whole.

`analyzer.match.finish` leaves the writes sorted by their send time (nulls first). Findings that look at
neighbouring writes or at one minute at a time use that order as it is: sorting or grouping millions of
rows at once holds a copy of every column they touch (a few hundred MB at 2 GB of input, on top of the
table itself). A frame not in send order (built by hand, or filtered from another) is sorted first, so
the results never depend on the order the rows came in.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from itertools import pairwise, product
from math import prod

import polars as pl

#: rows of a block of whole minutes, about (a minute is never cut: a block may hold more)
BLOCK_ROWS = 250_000
#: groups (threads of a database, ...) walked one at a time at most: beyond, one window over all of them
GROUPS_ONE_BY_ONE = 64

#: what makes an expression look at one group's writes: itself when the frame holds one group, else `over`
Window = Callable[[pl.Expr], pl.Expr]


def per_group(
    writes: pl.DataFrame,
    keys: Sequence[str],
    columns: Sequence[str],
    query: Callable[[pl.LazyFrame, Window], pl.LazyFrame],
    keep: pl.Expr | None = None,
) -> pl.DataFrame:
    """`query` on the writes of each group of `keys` with a send time (and `keep`), in send order: a frame
    of the keys and `columns`, and the `Window` its neighbour expressions (`shift`, `cum_sum`) go through.
    The results of the groups one after the other.

    A window `over` the keys of millions of writes holds several columns' worth of group indices; with a
    few groups, each is taken alone (its `columns`; the keys as constants) and the window is the frame.
    Writes not in send order are sorted by the keys and send time (stable) first.
    """
    in_order = _sent_in_order(writes)

    def timed(chosen: list[pl.Expr]) -> pl.LazyFrame:
        rows = writes.lazy().filter(pl.all_horizontal(*chosen, pl.col("sent_at").is_not_null()))
        return rows if in_order else rows.sort(*keys, "sent_at", maintain_order=True)

    kept = [] if keep is None else [keep]
    groups = _groups(writes, keys)
    if not groups:  # many groups, or none
        return query(timed(kept).select(*keys, *columns), lambda e: e.over(keys)).collect()
    parts = []
    for values in groups:
        constants = [pl.lit(v, writes.schema[k]).alias(k) for k, v in zip(keys, values, strict=True)]
        alone = [pl.col(k).eq_missing(c) for k, c in zip(keys, constants, strict=True)]
        parts.append(query(timed([*alone, *kept]).select(*constants, *columns), lambda e: e).collect())
    return pl.concat(parts)


def _groups(writes: pl.DataFrame, keys: Sequence[str]) -> list[tuple[object, ...]] | None:
    """Every combination of the keys' values (a few: those of each key), or None beyond GROUPS_ONE_BY_ONE."""
    found = [writes[k].unique().to_list() for k in keys]
    if prod(len(f) for f in found) > GROUPS_ONE_BY_ONE:
        return None
    return list(product(*found))


def minute_blocks(writes: pl.DataFrame, rows: int = BLOCK_ROWS) -> Iterator[pl.DataFrame]:
    """The writes in blocks of about `rows` that never split a minute of send times (writes without a send
    time together, first): a group by minute per block is the group by minute of the whole table.
    One block, the table itself, when it is not in send order."""
    if not writes.height:
        return
    if not _sent_in_order(writes):
        yield writes
        return
    nulls = writes["sent_at"].null_count()
    minute = writes["sent_at"].slice(nulls).dt.truncate("1m").to_physical()
    cuts = [0]
    while cuts[-1] + rows < minute.len():
        at = cuts[-1] + rows
        # the first row of the minute holding row `at`; past that minute when it began at the last cut
        cut = int(minute.search_sorted(minute[at], side="left"))
        if cut <= cuts[-1]:
            cut = int(minute.search_sorted(minute[at], side="right"))
        cuts.append(cut)
    cuts = [0, *(nulls + c for c in cuts)]
    cuts.append(writes.height)
    for start, end in pairwise(cuts):
        if end > start:
            yield writes.slice(start, end - start)


def _sent_in_order(writes: pl.DataFrame) -> bool:
    """The rows are in send order: writes without a send time first, then nondecreasing send times."""
    sent = writes["sent_at"]
    nulls = sent.null_count()
    if nulls and sent.head(nulls).null_count() != nulls:
        return False
    return sent.slice(nulls).is_sorted()
