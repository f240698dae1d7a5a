"""The analysis per Data Guard configuration and per link: the writes of each, its figures, and, when an
upload holds several configurations, each one's own verdict and recommendations.

Configurations of one share reuse thread, sequence and msgid at the same hours, and their problems
differ (one network, another standby I/O): pooled, their shares blend into a verdict true of none.
A configuration's figures are those of its commit path (`analyzer.findings.commit_path`: one row per redo
write, the slowest SYNC destination's), its assessment comes first (`analyzer.findings.assessment`) and
its recommendations hold for its setup (`analyzer.findings.setting`). A lone configuration with one SYNC
destination takes the whole analysis's figures, computed once.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import polars as pl

from analyzer.findings import compare, insights, switching
from analyzer.findings.assessment import Assessment, assess
from analyzer.findings.commit_path import CommitPath, commit_path
from analyzer.findings.setting import Setting, setting
from analyzer.findings.summary import component_stats, stamp_resolution, time_shares
from analyzer.match import alerts
from analyzer.match.analysis import Analysis
from analyzer.match.links import Configuration, Link


def link_mask(writes: pl.DataFrame, links: list[Link]) -> pl.Series:
    """Which writes belong to these links (by their databases; a link without a database name takes the
    writes without one). A comparison per link on the categorical columns: no key is copied or hashed."""
    ends = {(link.sender_db, link.receiver_db) for link in links}
    each = [
        pl.col("primary_db").eq_missing(pl.lit(sender, pl.String))
        & pl.col("standby_db").eq_missing(pl.lit(receiver, pl.String))
        for sender, receiver in ends
    ]
    either = pl.any_horizontal(each or [pl.lit(False)])
    return writes.select(either.alias("_link")).to_series()


def link_writes(writes: pl.DataFrame, links: list[Link]) -> pl.DataFrame:
    """The writes of these links (by their databases); the frame itself when they are all of them."""
    mask = link_mask(writes, links)
    return writes if mask.all() else writes.filter(mask)


def stat(components: pl.DataFrame, measure: str, statistic: str) -> float | None:
    """One statistic (`p50`, `p99`, `max`, ...) of one measure (`total`, `network`, ...) of a frame of
    `summary.component_stats`, None without it."""
    row = components.filter(pl.col("component") == measure)
    value = row[statistic][0] if row.height else None
    return float(value) if isinstance(value, int | float) else None


@dataclass(frozen=True)
class LinkFigures:
    """One commit-path link (SYNC or Fast Sync): its writes, how many matched and were slow, the statistics of
    every measure (`summary.component_stats`) and the shares of slow-write time (of all when none is slow)."""

    link: Link
    writes: int
    matched: int
    slow: int
    #: the slow writes seen on both sides: those the shares and the verdict speak of
    slow_matched: int
    components: pl.DataFrame
    shares: dict[str, float]
    resolution_ms: float | None

    def stat(self, measure: str, statistic: str) -> float | None:
        """One statistic (`p50`, `p99`, `max`, ...) of one measure (`total`, `network`, ...), None without it."""
        return stat(self.components, measure, statistic)

    @property
    def verdict(self) -> str | None:
        """The component that holds the largest share of the slow writes' time (None without a slow write
        seen on both sides)."""
        return max(self.shares, key=lambda k: self.shares[k]) if self.shares and self.slow_matched else None


def link_figures(writes: pl.DataFrame, link: Link) -> LinkFigures:
    """The figures of one commit-path link, from the writes of every link (`Analysis.writes`)."""
    own = link_writes(writes, [link]) if writes.height else writes
    return LinkFigures(  # counts by sums: a filter would copy the link's writes
        link=link,
        writes=own.height,
        matched=int(own["matched"].sum()),
        slow=int(own["slow"].sum()),
        slow_matched=int((own["slow"] & own["matched"]).sum()),
        components=component_stats(own),
        shares=time_shares(own) if own.height else {},
        resolution_ms=stamp_resolution(own),
    )


@dataclass(frozen=True)
class Scope:
    """One configuration with its commit-path writes, log switches, comparisons, recommendations and verdict
    (the whole analysis's when the upload holds one configuration)."""

    configuration: Configuration
    #: its commit path: one row per redo write (`commit.writes`)
    writes: pl.DataFrame
    switches: switching.SwitchAnalysis
    checks: compare.Checks
    recommendations: list[insights.Recommendation]
    verdict: str
    #: its commit-path links, each with its figures
    links: tuple[LinkFigures, ...]
    commit: CommitPath
    assessment: Assessment
    setting: Setting

    @property
    def name(self) -> str:
        return self.configuration.name


def scopes(
    a: Analysis,
    switches: switching.SwitchAnalysis,
    checks: compare.Checks,
) -> list[Scope]:
    """One scope per configuration; a lone configuration with one SYNC destination takes the whole analysis's
    `switches` and `checks` (computed on `a.writes`), one with several its commit path's, with the reports'
    comparisons (`checks.awr`) kept."""
    threshold = a.options.threshold_ms
    entries = alerts.entries(a.files)
    alone = len(a.topology.configurations) == 1
    out = []
    for c in a.topology.configurations:
        commit_links = [link for link in c.links if link.transport.commit_path]
        figures = tuple(link_figures(a.writes, link) for link in commit_links)
        found = setting(a, c, entries)
        w = a.writes if alone else link_writes(a.writes, commit_links)
        path = commit_path(w, [link.receiver_db or "" for link in commit_links], threshold, found.sync_latency_s)
        if alone and path.writes is a.writes:
            own_switches, own_checks = switches, checks
        else:
            own_switches = (
                switching.switch_analysis(a, path.writes) if alone else switching.analyze_log_switches(path.writes)
            )
            own_checks = compare.checks(a, path.writes)
            own_checks = replace(own_checks, awr=checks.awr) if alone else own_checks
        judged = assess(path.writes, threshold, own_switches)
        recs = insights.recommendations(path.writes, threshold, own_switches, (), own_checks, found, judged)
        verdict = insights.verdict_sentence(path.writes, threshold)
        out.append(Scope(c, path.writes, own_switches, own_checks, recs, verdict, figures, path, judged, found))
    return out


def upload_recommendations(scoped: list[Scope]) -> list[insights.Recommendation]:
    """The recommendations of the upload: its configuration's, or with several each configuration's (one per
    id, the one that would save the most), ranked by the time they would save."""
    best: dict[str, insights.Recommendation] = {}
    for scope in scoped:
        for r in scope.recommendations:
            if r.id not in best or r.saves_ms > best[r.id].saves_ms:
                best[r.id] = r
    return sorted(best.values(), key=lambda r: -r.saves_ms)


@dataclass(frozen=True)
class AsyncLink:
    """One ASYNC link (never in the commit path): what it shipped and its own one-sided timings."""

    configuration: str
    link: Link
    #: its sender's and its receiver's exchanges, and the shipments seen on both sides
    sent: int
    received: int
    matched: int
    #: its shipments (schema WRITES)
    shipments: pl.DataFrame
    #: the log sequences shipped per thread: thread, first_seq, last_seq, logs
    logs: pl.DataFrame
    #: `summary.component_stats` of its shipments: the round trip on the sender's clock, RFS time on the receiver's
    timings: pl.DataFrame
    #: the clock offsets of its host pairs (schema CLOCK)
    clock: pl.DataFrame

    def stat(self, measure: str, statistic: str) -> float | None:
        """One statistic of one measure of its timings (`total`: the round trip; `rfs`), None without it."""
        return stat(self.timings, measure, statistic)


def async_links(a: Analysis) -> list[AsyncLink]:
    """Every ASYNC link of every configuration, in the topology's order."""
    out = []
    for c in a.topology.configurations:
        for link in c.links:
            if link.transport.commit_path:
                continue
            w = link_writes(a.shipments, [link])
            logs = (
                w.group_by("thread")
                .agg(first_seq=pl.col("seq").min(), last_seq=pl.col("seq").max(), logs=pl.col("seq").n_unique())
                .sort("thread")
            )
            hosts = w.select("primary_host", "standby_host").unique()
            clock = a.shipment_clock.join(hosts, on=["primary_host", "standby_host"], how="semi", nulls_equal=True)
            sent, received = a.link_counts.get(link.name, (0, 0))
            matched = int(w["matched"].sum())
            out.append(AsyncLink(c.name, link, sent, received, matched, w, logs, component_stats(w), clock))
    return out
