"""The report sections as tables of plain strings, shared by the Markdown and HTML reports."""

from __future__ import annotations

import polars as pl

from analyzer import events, insights
from analyzer.report.context import Context, Table
from analyzer.report.facts import facts
from analyzer.report.fmt import at_text, fmt_ms
from analyzer.results import unparsed


def facts_table(c: Context) -> Table:
    """The facts: files, hosts, versions, time span, match rate, coverage."""
    return Table(("fact", "value"), list(facts(c.analysis, c.summary)))


def top_table(c: Context, top: int) -> Table:
    """The slowest writes with their breakdown, log-switch distance and evidence (file:line)."""
    rows = []
    for w in insights.top_writes(c.analysis.writes, top, c.switches).iter_rows(named=True):
        switch = w["switch_at"]
        sides = ((w["primary_file"], w["primary_line"]), (w["standby_file"], w["standby_line"]))
        rows.append(
            (
                at_text(w["sent_at"]),
                str(w["thread"]),
                str(w["seq"]),
                str(w["msgid"]),
                fmt_ms(w["total_ms"], w["resolution_ms"]),
                fmt_ms(w["network_ms"], w["resolution_ms"]),
                fmt_ms(w["rfs_io_ms"]),
                fmt_ms(w["rfs_other_ms"], w["resolution_ms"]),
                w["verdict"] or "one side only",
                f"{(w['sent_at'] - switch).total_seconds():+.3f} s" if switch else "",
                "\n".join(c.where(*side) for side in sides if side[0]),
            )
        )
    headers = ("sent (UTC)", "thread", "seq", "msgid", "total ms", "network ms", "rfs_io ms", "rfs_other ms")
    return Table((*headers, "verdict", "from log switch", "evidence"), rows)


def switch_table(c: Context) -> Table:
    """Latency of the writes near a log switch against the others."""
    rows = [
        (
            r["writes"],
            f"{r['count']:,}",
            f"{r['slow']:,}",
            "" if r["slow_rate"] is None else f"{r['slow_rate']:.1%}",
            fmt_ms(r["p50_ms"]),
            fmt_ms(r["p99_ms"]),
            fmt_ms(r["max_ms"]),
            fmt_ms(r["rfs_io_p99_ms"]),
        )
        for r in c.switches.comparison.iter_rows(named=True)
    ]
    return Table(("writes", "count", "slow", "slow rate", "p50 ms", "p99 ms", "max ms", "rfs_io p99 ms"), rows)


def warnings_table(c: Context, top: int) -> Table:
    """The `top` longest LGWR warnings (long writes, broadcast waits) with the breakdown of the remote
    write they cover: a fast remote write under a long warning says the time was local."""
    warnings = c.analysis.warnings
    listed = warnings.sort("elapsed_ms", "at", descending=[True, False]).head(top)
    rows = [
        (
            at_text(w["at"]),
            WARNING_KINDS.get(w["kind"], w["kind"]),
            _text(w["thread"]),
            str(w["elapsed_ms"]),
            _text(w["size_kb"]),
            _text(w["msgid"]),
            fmt_ms(w["remote_total_ms"]),
            fmt_ms(w["network_ms"]),
            fmt_ms(w["rfs_io_ms"]),
            fmt_ms(w["rfs_other_ms"]),
            w["verdict"] or "no remote write found",
            c.where(w["file"], w["line"]),
        )
        for w in listed.iter_rows(named=True)
    ]
    headers = ("at (UTC)", "kind", "thread", "elapsed ms", "size KB", "msgid", "remote ms", "network ms", "rfs_io ms")
    note = f"The {listed.height} longest of {warnings.height:,}." if listed.height < warnings.height else ""
    return Table((*headers, "rfs_other ms", "verdict", "evidence"), rows, note)


#: how a report names the kinds of LGWR warnings
WARNING_KINDS = {"log_write": "long write", "broadcast_wait": "broadcast wait"}


def _text(value: object) -> str:
    """A cell: empty when unknown, the value otherwise (0 included)."""
    return "" if value is None else str(value)


def events_table(c: Context) -> Table:
    """The log writer and alert-log events around the writes (`analyzer.events`) but the warnings (their
    own table), counted by event and host: first and last (UTC), and the first one's detail and file:line."""
    found = events.around_writes(c.analysis).filter(~pl.col("event").is_in(list(WARNING_KINDS)))
    grouped = (
        found.group_by("event", "host", maintain_order=True)
        .agg(
            count=pl.len(),
            first=pl.col("at").min(),
            last=pl.col("at").max(),
            detail=pl.col("detail").first(),
            file=pl.col("file").first(),
            line=pl.col("line").first(),
        )
        .sort("first", "event", nulls_last=True)
    )
    rows = [
        (
            r["event"],
            r["host"] or "",
            f"{r['count']:,}",
            at_text(r["first"]),
            at_text(r["last"]),
            r["detail"] or "",
            c.where(r["file"], r["line"]),
        )
        for r in grouped.iter_rows(named=True)
    ]
    return Table(("event", "host", "count", "first (UTC)", "last (UTC)", "first detail", "first at"), rows)


def gaps_table(c: Context) -> Table:
    """Segments named by a marker and missing from the upload: no evidence from that host in between."""
    rows = [
        (
            g["process"] or "",
            g["host"] or "",
            g["missing"],
            at_text(g["from_at"]) or "its start",
            at_text(g["to_at"]) or "the end of the upload",
            f"{g['messages']:,}",
            c.where(g["before_file"], g["line"]) or c.where(g["after_file"], 1),
        )
        for g in c.analysis.gaps.iter_rows(named=True)
    ]
    return Table(("process", "host", "missing segment", "from (UTC)", "to (UTC)", "messages in it", "named at"), rows)


def destinations_table(c: Context) -> Table:
    """Each redo transport destination the alert logs set (startup listing, ALTER SYSTEM), as written."""
    rows = [
        (
            d["database"] or "",
            d["instance"] or "",
            f"LOG_ARCHIVE_DEST_{d['dest']}",
            d["state"] or "",
            d["service"] or d["location"] or "",
            " ".join(v for v in (d["transport"], d["affirm"]) if v),
            d["target"] or "",
            _text(d["net_timeout_s"]),
            at_text(d["set_at"]),
            d["source"],
            c.where(d["file"], d["line"]),
        )
        for d in c.analysis.destinations.iter_rows(named=True)
    ]
    headers = ("database", "instance", "destination", "state", "service", "transport", "db_unique_name")
    return Table((*headers, "net_timeout s", "set at (UTC)", "by", "evidence"), rows)


def _counted(c: Context, frame: pl.DataFrame, keys: tuple[str, ...]) -> Table:
    """Rows of `frame` counted by `keys`, most frequent first, with the first example's file:line."""
    grouped = (
        frame.sort("file", "line")
        .group_by(*keys)
        .agg(count=pl.len(), file=pl.col("file").first(), line=pl.col("line").first())
        .sort("count", *keys, descending=[True, *[False] * len(keys)])
    )
    rows = [(*(str(r[k]) for k in keys), str(r["count"]), c.where(r["file"], r["line"])) for r in grouped.to_dicts()]
    return Table((*keys, "count", "first"), rows)


def unmatched_table(c: Context) -> Table:
    """Messages that found no partner, counted by side and reason."""
    return _counted(c, c.analysis.unmatched, ("side", "reason"))


def unparsed_table(c: Context) -> Table:
    """Lines of a known family that did not parse, counted by family and reason."""
    return _counted(c, unparsed(c.analysis.files), ("family", "reason"))


def no_recommendation(c: Context) -> str:
    """Why the numbers call for no recommendation."""
    if not c.summary["matched_writes"]:
        why = "no remote write was matched"
    elif not c.summary["slow_writes"]:
        why = f"no write reached {c.analysis.options.threshold_ms:g} ms"
    else:
        why = "no component holds a major share of slow-write time and slow writes do not cluster at log switches"
    return f"No recommendation: {why}."
