"""The commit path of a configuration: per redo write, the slowest of its SYNC destinations.

LGWR hands each redo write to every SYNC destination at once (one NSSn per LOG_ARCHIVE_DEST_n) and the
commit waits until each has acknowledged it (the MAA paper, "Assessing performance", steps 5 to 8). From
12.2 on, DATA_GUARD_SYNC_LATENCY bounds that wait to its value in seconds beyond the first acknowledgement
(then the late destination is disconnected); with its default, 0, LGWR waits for every destination up to
that destination's NET_TIMEOUT (Oracle Database Reference, DATA_GUARD_SYNC_LATENCY). So the figures of a
configuration are those of the slowest destination of each redo write, never the remote writes of its
links pooled: two destinations give two remote writes for one commit.

Pairing: the remote writes of one redo write carry the same primary database, thread and log sequence,
and are sent at nearly the same moment by processes of one host (one clock). In send order within a
(primary database, thread, sequence), a write joins the redo write of the write before it when it is sent
within `tolerance_ms` of it and comes from another link; else it opens a redo write of its own. The
tolerance is half the shortest round trip of the links (the 1st percentile of their totals: two writes of
one link are at least a round trip apart), never below the stamps' resolution. A remote write seen only on
the standby has no send time and is left out of the commit path (counted).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import polars as pl

from analyzer.base.words import ms, plural
from analyzer.findings.summary import stamp_resolution

#: the tolerance is this share of the links' shortest round trip
TOLERANCE_SHARE = 0.5
#: the shortest round trip: this quantile of the links' totals
FLOOR_QUANTILE = 0.01


@dataclass(frozen=True)
class SlowerLink:
    """One SYNC destination of a configuration with several: how often its write was the slower."""

    standby_db: str
    #: redo writes seen on every destination, and of those the slow ones, where this one's was the slowest
    slower: int
    slower_when_slow: int


@dataclass(frozen=True)
class CommitPath:
    """One configuration's commit path: `writes` holds one row per redo write (the slowest destination's
    remote write; its `fastsync_ms` the slowest destination's what-if), the same table as the writes'."""

    writes: pl.DataFrame = field(repr=False)
    #: the SYNC destinations (standby databases) it pairs; one or none: `writes` are the remote writes
    destinations: tuple[str, ...] = ()
    #: redo writes seen on every destination, on only some, and remote writes left out (no send time)
    paired: int = 0
    partial: int = 0
    left_out: int = 0
    tolerance_ms: float | None = None
    #: DATA_GUARD_SYNC_LATENCY where an alert log sets it, and the redo writes it bounded
    sync_latency_s: int | None = None
    capped: int = 0
    links: tuple[SlowerLink, ...] = ()

    @property
    def several(self) -> bool:
        """More than one SYNC destination: the commit path pairs their writes."""
        return len(self.destinations) > 1

    @property
    def redo_writes(self) -> int:
        return self.writes.height

    def document(self) -> dict[str, Any]:
        """The JSON `commit_path` without its statistics: counts, pairing, and per destination how often it
        was the slower."""
        return {
            "destinations": list(self.destinations),
            "writes": self.redo_writes,
            "slow_writes": int(self.writes["slow"].sum()),
            "paired": self.paired,
            "partial": self.partial,
            "left_out": self.left_out,
            "tolerance_ms": self.tolerance_ms,
            "sync_latency_s": self.sync_latency_s,
            "capped": self.capped,
            "links": [
                asdict(s) | {"slower_share": round(s.slower / self.paired, 4) if self.paired else None}
                for s in self.links
            ],
            "pairing": pairing_sentence(self) or None,
            "finding": slower_sentence(self) or None,
        }


def commit_path(
    writes: pl.DataFrame,
    destinations: Sequence[str],
    threshold_ms: float,
    sync_latency_s: int | None = None,
) -> CommitPath:
    """The commit path of the remote writes of a configuration's SYNC destinations (`destinations`, their
    standby databases). With one destination it is its writes themselves."""
    found = tuple(dict.fromkeys(d for d in destinations if d))
    if len(found) < 2 or not writes.height:
        return CommitPath(writes, found, sync_latency_s=sync_latency_s)
    sent = writes.with_row_index("_row").filter(pl.col("sent_at").is_not_null())
    left_out = writes.height - sent.height
    tolerance = _tolerance(sent)
    key = [pl.col(c).cast(pl.String) for c in ("primary_db",)] + [pl.col("thread"), pl.col("seq")]
    grouped = (
        sent.with_columns(_db=pl.col("standby_db").cast(pl.String))
        .sort("primary_db", "thread", "seq", "sent_at", "_db", nulls_last=True)
        .with_columns(
            _gap=(pl.col("sent_at").diff().dt.total_microseconds() / 1000.0).fill_null(float("inf")),
            _same=pl.struct(key).ne_missing(pl.struct(key).shift(1)).fill_null(True),
            _again=pl.col("_db").eq_missing(pl.col("_db").shift(1)).fill_null(False),
        )
        .with_columns(_group=(pl.col("_same") | (pl.col("_gap") > tolerance) | pl.col("_again")).cum_sum())
    )
    ranked = grouped.with_columns(
        _n=pl.len().over("_group"),
        _first=pl.col("total_ms").min().over("_group"),
        _fastsync=pl.when(pl.col("fastsync_ms").null_count().over("_group") > 0)
        .then(None)
        .otherwise(pl.col("fastsync_ms").max().over("_group")),
    ).sort("_group", "total_ms", "_row", descending=[False, True, False], nulls_last=True)
    chosen = ranked.group_by("_group", maintain_order=True).first()
    capped = 0
    if sync_latency_s:
        bound = pl.col("_first") + sync_latency_s * 1000.0
        over = (pl.col("_n") > 1) & (pl.col("total_ms") > bound)
        capped = int(chosen.select(over.sum()).item())
        chosen = chosen.with_columns(
            total_ms=pl.when(over).then(bound).otherwise(pl.col("total_ms")),
        ).with_columns(slow=pl.when(pl.col("total_ms").is_not_null()).then(pl.col("total_ms") >= threshold_ms))
    every = chosen.filter(pl.col("_n") >= len(found))
    slower = every.group_by("_db").agg(n=pl.len(), slow=pl.col("slow").sum())
    counts = {r["_db"]: (int(r["n"]), int(r["slow"] or 0)) for r in slower.iter_rows(named=True)}
    out = chosen.sort("_row").with_columns(fastsync_ms=pl.col("_fastsync")).select(writes.columns)
    return CommitPath(
        out,
        found,
        paired=every.height,
        partial=chosen.height - every.height,
        left_out=left_out,
        tolerance_ms=tolerance,
        sync_latency_s=sync_latency_s,
        capped=capped,
        links=tuple(SlowerLink(db, *counts.get(db, (0, 0))) for db in found),
    )


def _tolerance(sent: pl.DataFrame) -> float:
    """Half the links' shortest round trip (ms), never below the stamps' resolution."""
    floor = sent["total_ms"].drop_nulls().quantile(FLOOR_QUANTILE, "nearest")
    res = stamp_resolution(sent) or 0.0
    half = TOLERANCE_SHARE * float(floor) if isinstance(floor, int | float) else 0.0
    return max(half, res)


def pairing_sentence(c: CommitPath) -> str:
    """How the writes of the destinations were paired into redo writes, and what bounds the commit's wait."""
    if not c.several:
        return ""
    names = " and ".join(c.destinations)
    text = (
        f"The commit waits for every SYNC destination ({names}): each redo write counts once, as its slowest"
        f" destination's remote write. Writes were paired by primary database, thread and log sequence, sent"
        f" within {ms(c.tolerance_ms)} of each other (half the shortest round trip)"
    )
    seen = f"; {plural(c.paired, 'redo write')} seen on every destination"
    if c.partial:
        seen += f", {c.partial:,} on only some (the others' traces do not cover them)"
    if c.left_out:
        seen += f"; {plural(c.left_out, 'remote write')} seen on the standby only left out"
    if c.sync_latency_s:
        bound = (
            f". DATA_GUARD_SYNC_LATENCY = {c.sync_latency_s} s (alert log): LGWR waits at most that long beyond"
            f" the first acknowledgement, then disconnects the late destination; it bounded"
            f" {plural(c.capped, 'redo write')}"
        )
    else:
        bound = (
            ". No alert log sets DATA_GUARD_SYNC_LATENCY (default 0): LGWR waits for each destination up to its"
            " NET_TIMEOUT"
        )
    return text + seen + bound + "."


def slower_sentence(c: CommitPath) -> str:
    """How often each destination was the slower of a redo write seen on all."""
    if not c.several or not c.paired:
        return ""
    parts = [f"{s.standby_db} {s.slower / c.paired:.0%}" for s in c.links]
    slow = sum(s.slower_when_slow for s in c.links)
    text = f"The slowest destination of the {plural(c.paired, 'redo write')} seen on every one: {', '.join(parts)}"
    if slow:
        text += "; of the slow ones: " + ", ".join(f"{s.standby_db} {s.slower_when_slow:,}" for s in c.links)
    return text + "."
