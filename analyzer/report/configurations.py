"""The answer per Data Guard configuration and per link, shared by the terminal, Markdown and HTML reports.

With one configuration the verdict is one sentence and the recommendations one list, as always. With
several (an archive share, a consolidated upload) each configuration gets its own verdict line and its
own recommendations: one's network problem is not blended with another's standby I/O. The links table
sets every commit-path link (SYNC, Fast Sync) beside the others; ASYNC links have their own table,
never mixed into the commit-path figures.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import polars as pl

from analyzer.base.vocab import Component
from analyzer.base.words import ms, plural
from analyzer.findings.assessment import NOT_ASSESSED, Assessment
from analyzer.findings.commit_path import pairing_sentence, slower_sentence
from analyzer.findings.insights import Recommendation, verdict_sentence
from analyzer.findings.summary import stamp_resolution
from analyzer.report.context import Context, Table
from analyzer.report.scopes import Scope


def no_recommendation(writes: pl.DataFrame, threshold_ms: float, assessment: Assessment | None = None) -> str:
    """Why the numbers of these writes call for no recommendation."""
    if assessment is not None and assessment.healthy:
        why = "the commit path is healthy (see the assessment: what was seen, and what to watch)"
    elif not writes.height or not writes["matched"].any():
        why = "no remote write was matched"
    elif not writes["slow"].any():
        why = f"no write reached {threshold_ms:g} ms"
    else:
        why = "no cause holds a material share of the slow writes and they do not cluster at log switches"
    return f"No recommendation: {why}."


def ordered(c: Context) -> list[Scope]:
    """The configurations, those with the most slow writes first (then by name)."""
    return sorted(c.scopes, key=lambda s: (-int(s.writes["slow"].sum()), s.name))


def _judged(scope: Scope) -> str:
    """The configuration's verdict after its assessment's word: `Systemic: 54% of slow-write time ...`."""
    word = scope.assessment.word
    return scope.verdict if word == NOT_ASSESSED else f"{word.capitalize()}: {scope.verdict}"


def verdicts(c: Context) -> list[tuple[str, str]]:
    """The verdict: (configuration, sentence), one for all the writes ("", ...) or one per configuration
    when there are several (`fin`, `Systemic: 99% of slow-write time ...`): the assessment's word first, then
    where the commit path's time went (each redo write once)."""
    if not c.scopes:
        return [("", verdict_sentence(c.analysis.writes, c.analysis.options.threshold_ms))]
    if not c.several:
        return [("", _judged(c.scopes[0]))]
    return [(s.name, _judged(s)) for s in ordered(c)]


def assessments(c: Context) -> list[tuple[str, Assessment, str]]:
    """Per configuration (`name` "" when the upload holds one): its assessment and, with several SYNC
    destinations, how its commit path pairs their writes and which was the slower."""
    out = []
    for s in ordered(c):
        path = " ".join(p for p in (pairing_sentence(s.commit), slower_sentence(s.commit)) if p)
        out.append(("" if not c.several else s.name, s.assessment, path))
    return out


NOT_SEEN = "not seen"


def destination_summary_table(c: Context) -> Table:
    """Per configuration and LOG_ARCHIVE_DEST_n: its target, SYNC or ASYNC, AFFIRM or NOAFFIRM, NET_TIMEOUT and
    the protection mode, "not seen" where the uploads do not say; with where it was read."""

    def said(value: object) -> str:
        return NOT_SEEN if value is None else str(value)

    rows = []
    for s in ordered(c):
        mode = said(s.setting.protection)
        for d in s.setting.destinations:
            dest = f"LOG_ARCHIVE_DEST_{d.dest}" if d.dest is not None else NOT_SEEN
            timeout = NOT_SEEN if d.net_timeout_s is None else f"{d.net_timeout_s} s"
            attributes = (said(d.target), said(d.transport), said(d.affirm), timeout, mode, said(d.state))
            rows.append((s.name, d.database or "?", dest, *attributes, d.source))
    headers = (
        "configuration",
        "database",
        "destination",
        "target",
        "transport",
        "affirm",
        "NET_TIMEOUT",
        "protection mode",
        "state",
        "read from",
    )
    return Table(headers, rows, optional=("configuration", "state", "read from"))


@dataclass(frozen=True)
class Advice:
    """The recommendations of one configuration (`name` is "" when the upload holds one), and why there
    is none when there is none."""

    name: str
    recommendations: list[Recommendation]
    none: str


def advice(c: Context) -> list[Advice]:
    """The recommendations, per configuration when there are several."""
    threshold = c.analysis.options.threshold_ms
    if not c.several:
        recs, scope = c.recommendations, c.scopes[0] if c.scopes else None
        writes = scope.writes if scope else c.analysis.writes
        judged = scope.assessment if scope else None
        return [Advice("", recs, "" if recs else no_recommendation(writes, threshold, judged))]
    return [
        Advice(
            s.name,
            s.recommendations,
            "" if s.recommendations else no_recommendation(s.writes, threshold, s.assessment),
        )
        for s in ordered(c)
    ]


def shown(c: Context) -> bool:
    """The links table is worth showing: more than one link, or more than one configuration."""
    return c.several or len(c.analysis.topology.links) > 1


def _share(shares: Mapping[str, float], component: Component) -> str:
    return f"{shares[component]:.0%}" if component in shares else ""


def links_table(c: Context) -> Table:
    """One row per commit-path link: who ships to whom, how the link was told, its writes and their figures."""
    rows = []
    for scope in ordered(c):
        for f in scope.links:
            link = f.link
            verdict = f.verdict or ("no slow write" if f.matched else "")
            rows.append(
                (
                    scope.name,
                    f"{link.sender_db or '?'} -> {link.receiver_db or '?'}",
                    link.sender or "",
                    str(link.transport),
                    str(link.decided_by),
                    f"{f.writes:,}",
                    f"{f.matched:,}",
                    f"{f.slow:,}",
                    ms(f.stat("total", "p50"), f.resolution_ms, unit=False),
                    ms(f.stat("total", "p99"), f.resolution_ms, unit=False),
                    _share(f.shares, Component.NETWORK),
                    _share(f.shares, Component.RFS_IO),
                    verdict,
                )
            )
    note = (
        "network % and standby I/O %: their share of the link's slow-write time (of all its write time when"
        " none is slow), over the writes seen on both sides; verdict: the component with the largest part of"
        " its slow-write time."
    )
    headers = ("configuration", "link", "sender", "transport", "decided by", "writes", "matched", "slow")
    more = ("p50 ms", "p99 ms", "network %", "standby I/O %", "verdict")
    return Table((*headers, *more), rows, note, optional=("configuration", "matched", "decided by"), key="link")


def _sequences(logs: pl.DataFrame) -> str:
    """`thread 1: 3763-3765 (3 logs)`, one line per thread."""
    return "\n".join(
        f"thread {r['thread']}: {r['first_seq']}"
        + (f"-{r['last_seq']}" if r["last_seq"] != r["first_seq"] else "")
        + f" ({plural(r['logs'], 'log')})"
        for r in logs.iter_rows(named=True)
    )


def async_table(c: Context) -> Table:
    """One row per ASYNC link: what it shipped (messages, log sequences) and its own one-sided timings."""
    res = stamp_resolution(c.analysis.shipments)
    rows = [
        (
            x.configuration,
            f"{x.link.sender_db or '?'} -> {x.link.receiver_db or '?'}",
            x.link.sender or "",
            str(x.link.decided_by),
            f"{x.sent:,}",
            f"{x.received:,}",
            f"{x.matched:,}",
            _sequences(x.logs),
            *(
                ms(x.stat(measure, statistic), res, unit=False)
                for measure in ("total", "rfs")
                for statistic in ("p50", "p99")
            ),
        )
        for x in c.shipping
    ]
    note = (
        "Commits do not wait for these shipments: they are in none of the figures above. Round trip: from"
        " sending to the acknowledgement, on the sender's clock; RFS: receiving to finishing, on the"
        " receiver's. 16410 messages carry no redo size: the log sequences shipped are listed."
    )
    headers = ("configuration", "link", "sender", "decided by", "shipments sent", "received", "matched")
    more = ("log sequences", "round trip p50 ms", "round trip p99 ms", "RFS p50 ms", "RFS p99 ms")
    return Table((*headers, *more), rows, note, optional=("configuration", "received", "decided by"), key="link")
