"""Each 16410 message with its transport stamp: the MAA paper's rule, over a chunk's tables.

`Client sending`, `Server received` and `Server finished` take the krs stamp that follows them,
`Client received` the one before it; a stamp is only taken if no other message stands between,
and a stamp two messages would take goes to neither, both reported. The reduce stage stamps a
file's messages chunk by chunk; small files parsed together are stamped together, each file's
messages taking only that file's stamps (`by`).
"""

from __future__ import annotations

import polars as pl

from analyzer.base.schemas import LAZY_ENGINE
from analyzer.base.vocab import MessageKind

#: the stamp columns a message takes
TAKEN = ("line", "local", "digits")


def associate(
    messages: pl.DataFrame, krs: pl.DataFrame, by: str | None = None, moved: str | None = None
) -> pl.DataFrame:
    """Give each message its transport stamp (stamp_line, local, digits), or a `problem` saying why it has none."""
    return associated(messages, krs, by, moved).collect(engine=LAZY_ENGINE)


def associated(
    messages: pl.DataFrame, krs: pl.DataFrame, by: str | None = None, moved: str | None = None
) -> pl.LazyFrame:
    """`associate` as a lazy query (the reduce stage goes on with it before collecting).

    Both tables come in line order from the parse stage: one asof join of the line numbers gives each
    message the first stamp after it, and the stamp before that one is the last stamp before it; the
    message takes one or the other by its kind, in one pass over the messages, without a join per
    direction and the concatenation and sort of both.

    `by`: a column of both tables (the file of files stamped together, whose line numbers follow on
    from file to file): a message only takes a stamp of its own group, as if each group were stamped
    alone. The neighbours of a message may then be another group's; they only matter on the far side
    of its stamp, where another group's lines never are. `moved`: a column of the messages, how far
    their line numbers were moved on (a problem names a stamp's line in its own file).
    """
    msgs = messages if messages["line"].is_sorted() else messages.sort("line")
    line, stamp = pl.col("line"), pl.col("stamp_line")
    # every kind takes the stamp after it but `Client received`; a message of no kind asks for none
    kind = pl.col("kind")
    backward = kind == str(MessageKind.CLIENT_RECV)
    forward = ~backward
    query = msgs.lazy().with_columns(_prev=line.shift(1), _next=line.shift(-1))  # the neighbours of any kind
    if msgs["kind"].null_count():  # filtered once the neighbours are known (eager: no filter pushed before)
        query = query.collect(engine=LAZY_ENGINE).filter(kind.is_not_null()).lazy()
    stamps = krs if krs["line"].is_sorted() else krs.sort("line")
    # the first stamp after each message (an asof join of the line numbers: a merge of two sorted
    # columns), with the stamp before it, the last stamp before the message (lines differ); with no
    # stamp after it, the last stamp before the message is the chunk's (the group's) last stamp
    before = {f"_b_{c}": pl.col(c).shift(1) if by is None else pl.col(c).shift(1).over(by) for c in TAKEN}
    numbered = stamps.lazy().select(
        *([] if by is None else [by]), _line="line", **{f"_a_{c}": c for c in TAKEN}, **before
    )
    query = query.join_asof(
        numbered, left_on="line", right_on="_line", by=by, strategy="forward", check_sortedness=False
    )
    if by is None:
        last = stamps.row(stamps.height - 1, named=True) if stamps.height else dict.fromkeys(TAKEN)
        final = {c: pl.lit(last[c], stamps.schema[c]) for c in TAKEN}
    else:
        ends = stamps.lazy().group_by(by).agg(**{f"_z_{c}": pl.col(c).last() for c in TAKEN})
        query = query.join(ends, on=by, how="left", maintain_order="left")
        final = {c: pl.col(f"_z_{c}") for c in TAKEN}

    def of_stamp(column: str) -> pl.Expr:
        earlier = pl.when(pl.col("_line").is_null()).then(final[column])
        return pl.when(forward).then(pl.col(f"_a_{column}")).otherwise(earlier.otherwise(pl.col(f"_b_{column}")))

    query = query.with_columns(stamp_line=of_stamp("line"), local=of_stamp("local"), digits=of_stamp("digits"))
    far = (
        pl.when(forward)
        .then(pl.col("_next").is_not_null() & (stamp > pl.col("_next")))
        .otherwise(pl.col("_prev").is_not_null() & (stamp < pl.col("_prev")))
    )
    missing = stamp.is_null() | far
    query = query.with_columns(
        problem=pl.when(missing & forward)
        .then(pl.lit("no transport stamp after this message"))
        .when(missing)
        .then(pl.lit("no transport stamp before this message"))
    )
    query = query.with_columns(
        [pl.when(pl.col("problem").is_null()).then(pl.col(c)) for c in ("stamp_line", *TAKEN[1:])]
    )
    # only neighbours can take the same stamp: a message before it and the next one after it
    claimed = (stamp == stamp.shift(1)).fill_null(False) | (stamp == stamp.shift(-1)).fill_null(False)
    own = stamp if moved is None else stamp - pl.col(moved)
    helpers = ["_prev", "_next", "_line", *(f"_{side}_{c}" for side in "abz" for c in TAKEN)]
    return query.with_columns(
        problem=pl.when(claimed)
        .then(pl.concat_str([pl.lit("stamp at line "), own.cast(pl.String), pl.lit(" claimed by two messages")]))
        .otherwise(pl.col("problem"))
    ).drop(helpers, strict=False)
