"""One word for a configuration's commit path before anything else: healthy, isolated outliers or
systemic, with the rule's reason and the numbers behind it (docs/rules.md, "Assessment").

The link's own typical round trip is the median of its commit-path totals; a write is far from it beyond
OUTLIER_FACTOR times that median (the MAA paper's Table 5: with half the log file sync waits under 2 ms
and nearly all under 4 ms, the waits over 8 ms are "what we call outliers"). The words:

- healthy: 99% of the commits within OUTLIER_FACTOR x the typical round trip (p99 at or below it) and
  fewer than RARE_SHARE of them slow (>= the threshold): what is slow is a few isolated outliers;
- systemic: slow writes of RARE_SHARE or more clustered in time; or, with FEW_SLOW slow writes or more,
  MINOR_SHARE or more of the commits slow or RARE_SHARE or more with a wide tail (p99 beyond the limit: more
  than 1% of the commits far from the round trip). Clustered in time: runs of BURST_MIN or more slow writes
  one after the other on a thread (bursts) hold BURST_SHARE of them, or the slow writes cluster at log
  switches (`analyzer.findings.switching`). Runs, not a time window: a stall or a saturated
  device slows the writes that follow, whatever the write rate, while isolated outliers are seldom
  neighbours (at a 1% slow rate, one in fifty has a slow neighbour);
- isolated outliers: the rest (a few slow writes, scattered, with the body of the distribution near
  the round trip; or a wide tail that rarely reaches the threshold).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace
from datetime import datetime
from typing import Any

import polars as pl

from analyzer.base.vocab import Component
from analyzer.base.words import ms, plural
from analyzer.findings.ordered import Window, per_group
from analyzer.findings.summary import stamp_resolution
from analyzer.findings.switching import SwitchAnalysis

HEALTHY, ISOLATED, SYSTEMIC, NOT_ASSESSED = "healthy", "isolated outliers", "systemic", "not assessed"
#: a commit is far from the link's typical round trip beyond this many times its median
OUTLIER_FACTOR = 4.0
#: slow commits rarer than this share are isolated outliers of a healthy link ...
RARE_SHARE = 0.001
#: ... and from this share on the slowness is systemic, whatever their spread
MINOR_SHARE = 0.01
#: fewer slow writes than this are a hint, not a pattern: they make the slowness systemic only when they
#: cluster (a share of 2 in 66 redo writes is 3%, yet two scattered writes are two outliers)
FEW_SLOW = 10
#: a burst: at least this many slow writes one after the other on a thread
BURST_MIN = 3
#: slow writes cluster in time when bursts hold at least this share of them
BURST_SHARE = 0.5
#: outliers described one by one at most
LISTED = 5


@dataclass(frozen=True)
class Burst:
    """Slow writes one after the other on a thread: the first and last send, and how many."""

    first: datetime
    last: datetime
    writes: int


@dataclass(frozen=True)
class Assessment:
    """The word, its reason and the numbers behind it; `watch`: what to keep an eye on."""

    word: str
    reason: str
    #: commits with a total, the slow ones (>= threshold) and their share
    writes: int
    slow_writes: int
    slow_share: float
    threshold_ms: float
    #: the typical round trip (p50 of the totals), the p99, the limit (OUTLIER_FACTOR x p50) and the
    #: commits beyond it
    typical_ms: float | None
    p99_ms: float | None
    outlier_limit_ms: float | None
    outliers: int
    #: clustering in time: the bursts, the slow writes in them, the largest, the minutes holding slow writes
    bursts: int
    in_bursts: int
    largest_burst: Burst | None
    minutes: int
    #: slow writes near a log switch, and whether they cluster there (`analyzer.findings.switching`)
    near_switches: int
    switch_clustered: bool
    watch: tuple[str, ...] = ()

    @property
    def clustered(self) -> bool:
        """The slow writes cluster in time: in bursts, or at log switches."""
        bursty = self.slow_writes >= BURST_MIN and self.in_bursts >= BURST_SHARE * self.slow_writes
        return bursty or self.switch_clustered

    @property
    def healthy(self) -> bool:
        return self.word == HEALTHY

    def document(self) -> dict[str, Any]:
        """The JSON `assessment` (times as datetimes: the caller writes them)."""
        burst = self.largest_burst
        found = {k: v for k, v in asdict(self).items() if k not in ("largest_burst", "watch")}
        return found | {
            "largest_burst": None
            if burst is None
            else {"first_at": burst.first, "last_at": burst.last, "writes": burst.writes},
            "clustered": self.clustered,
            "watch": list(self.watch),
        }


def bursts(writes: pl.DataFrame, keep: pl.Expr | None = None) -> list[Burst]:
    """Runs of at least BURST_MIN slow writes one after the other on a thread of a primary database
    (`writes`: sent_at, slow and, when known, primary_db and thread; those where `keep` holds, when given),
    by their first send."""
    keys = [c for c in ("primary_db", "thread") if c in writes.columns]
    slow = pl.col("slow").fill_null(False)

    def runs(timed: pl.LazyFrame, window: Window) -> pl.LazyFrame:
        start = slow & ~window(slow.shift(1)).fill_null(False)
        return (
            timed.with_columns(_run=window(start.cum_sum()))
            .filter(slow)
            .group_by(*keys, "_run")
            .agg(first=pl.col("sent_at").min(), last=pl.col("sent_at").max(), writes=pl.len())
            .filter(pl.col("writes") >= BURST_MIN)
        )

    found = per_group(writes, keys, ["sent_at", "slow"], runs, keep).sort("first", "last")
    return [Burst(r["first"], r["last"], int(r["writes"])) for r in found.iter_rows(named=True)]


def assess(writes: pl.DataFrame, threshold_ms: float, switches: SwitchAnalysis | None = None) -> Assessment:
    """The assessment of a configuration's commit-path writes (one row per redo write)."""
    with_total = pl.col("total_ms").is_not_null()
    total = pl.col("total_ms").filter(with_total)
    n, typical, p99 = (
        writes.lazy()
        .select(n=total.len(), p50=total.quantile(0.5, "nearest"), p99=total.quantile(0.99, "nearest"))
        .collect()
        .row(0)
    )
    typical, p99 = (float(v) if v is not None else None for v in (typical, p99))
    slow = (
        writes.lazy()
        .filter(with_total & pl.col("slow").fill_null(False))
        .select("sent_at", "total_ms", "verdict")
        .collect()
    )
    limit = OUTLIER_FACTOR * typical if typical is not None else None
    outliers = int((writes["total_ms"] > limit).sum()) if limit is not None else 0
    found = bursts(writes, with_total)
    largest = max(found, key=lambda b: (b.writes, -b.first.timestamp())) if found else None
    minutes = slow["sent_at"].dt.truncate("1m").n_unique() if slow.height else 0
    near, clustered_at = (switches.slow_near, switches.clustered) if switches is not None else (0, False)
    a = Assessment(
        NOT_ASSESSED,
        "",
        n,
        slow.height,
        slow.height / n if n else 0.0,
        threshold_ms,
        typical,
        p99,
        limit,
        outliers,
        len(found),
        sum(b.writes for b in found),
        largest,
        minutes,
        near,
        clustered_at,
    )
    if not n or typical is None or p99 is None or limit is None:
        return _with(a, NOT_ASSESSED, "No commit has a total (no remote write seen with its acknowledgement).")
    wide = p99 > limit
    clustered = a.clustered and a.slow_share >= RARE_SHARE
    many = a.slow_writes >= FEW_SLOW and (a.slow_share >= MINOR_SHARE or (a.slow_share >= RARE_SHARE and wide))
    if clustered or many:
        word = SYSTEMIC
    elif a.slow_share < RARE_SHARE and not wide:
        word = HEALTHY
    else:
        word = ISOLATED
    return _with(a, word, _reason(a, word, slow, stamp_resolution(writes)))


def _with(a: Assessment, word: str, reason: str) -> Assessment:
    return replace(a, word=word, reason=reason, watch=_watch(a) if word != NOT_ASSESSED else ())


def _clock(at: datetime) -> str:
    return f"{at:%H:%M:%S}"


def _reason(a: Assessment, word: str, slow: pl.DataFrame, res: float | None) -> str:
    """The rule's reason in numbers."""
    typical, p99, limit = a.typical_ms or 0.0, a.p99_ms or 0.0, a.outlier_limit_ms or 0.0
    tail = (
        f"p99 {ms(p99, res)} is within {OUTLIER_FACTOR:g} x the typical round trip (p50 {ms(typical, res)})"
        if p99 <= limit
        else f"p99 {ms(p99, res)} is {p99 / typical:,.0f} x the typical round trip (p50 {ms(typical, res)}):"
        f" {a.outliers:,} of the {plural(a.writes, 'redo write')} took over {ms(limit, res)}"
        if typical
        else f"p99 {ms(p99, res)} against a typical round trip of {ms(typical, res)}"
    )
    share = f"{a.slow_share:.2%}" if a.slow_share < MINOR_SHARE else f"{a.slow_share:.1%}"
    count = f"{a.slow_writes:,} of {plural(a.writes, 'redo write')} ({share}) reached {a.threshold_ms:g} ms"
    if not a.slow_writes:
        count = f"none of the {plural(a.writes, 'redo write')} reached {a.threshold_ms:g} ms"
    spread = _spread(a)
    head = {HEALTHY: "Healthy", ISOLATED: "Isolated outliers", SYSTEMIC: "Systemic"}[word]
    parts = [tail, count + (f", {spread}" if spread else "")]
    text = f"{head}: " + "; ".join(parts) + "."
    if word != SYSTEMIC and a.slow_writes:
        text += " " + _listed(slow, res)
    return text


def _spread(a: Assessment) -> str:
    """How the slow writes spread in time."""
    if not a.slow_writes:
        return ""
    parts = []
    if a.largest_burst is not None:
        b = a.largest_burst
        span = (b.last - b.first).total_seconds()
        within = f"{span:,.0f} s" if span >= 1 else "a second"
        parts.append(
            f"{a.in_bursts:,} of them in {plural(a.bursts, 'burst')} of slow writes one after the other (the"
            f" largest {b.writes:,} within {within} at {_clock(b.first)} UTC)"
        )
    else:
        parts.append(f"scattered over {plural(a.minutes, 'minute')}, never {BURST_MIN} one after the other")
    if a.switch_clustered:
        parts.append(f"{a.near_switches:,} of them near a log switch (they cluster there)")
    return "; ".join(parts)


def _listed(slow: pl.DataFrame, res: float | None) -> str:
    """The few slow writes of a link that is otherwise fine, one by one (time, total, largest part)."""
    shown = slow.sort("total_ms", "sent_at", descending=[True, False], nulls_last=True).head(LISTED)
    items = []
    for r in shown.iter_rows(named=True):
        part = f", mostly {Component(r['verdict']).label}" if r["verdict"] else ""
        items.append(f"{ms(r['total_ms'], res)} at {_clock(r['sent_at'])} UTC{part}")
    more = f" (the {LISTED} slowest)" if slow.height > LISTED else ""
    return f"What was seen{more}: " + "; ".join(items) + "."


def _watch(a: Assessment) -> tuple[str, ...]:
    """What to keep an eye on, in numbers of this link."""
    limit = a.outlier_limit_ms or 0.0
    out = [
        f"the redo writes' p99 against {ms(limit)} ({OUTLIER_FACTOR:g} x the typical round trip): beyond it, more"
        " than 1% of them (and every commit waiting on them) take far longer than the link needs",
        "AWR's Wait Event Histogram of log file sync and SYNC Remote Write: the share of waits over"
        f" {ms(limit)} (the MAA paper's outliers) growing from one report to the next",
        "LGWR's 'Warning: log write elapsed time' lines (printed from 500 ms by default; lower"
        " _long_log_write_warning_threshold to see shorter ones): their times say when to trace again with"
        " events 16410 and 10046",
    ]
    if a.slow_writes and a.switch_clustered:
        out.append("the log switch rate at peak (the MAA paper: a log switch every 20 minutes at most)")
    return tuple(out)
