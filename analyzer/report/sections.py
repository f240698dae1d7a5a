"""The report sections as tables of plain strings, shared by the terminal, Markdown and HTML reports.

Every table is bounded: the longest lists (slowest writes, LGWR warnings) show `top` rows, the
others at most `LISTED` rows; the table's note then says how many there are and where to find all
of them (`--format csv --table ...`, `--format json`, `dgtrace inventory`).
"""

from __future__ import annotations

from collections import Counter

import polars as pl

from analyzer.base.words import ms
from analyzer.findings import events, files, inventory, switching
from analyzer.findings.summary import component_stats, histogram, resolution_of, verdict_totals
from analyzer.report import model as doc
from analyzer.report.context import Context, Table, more
from analyzer.report.facts import facts
from analyzer.report.fmt import at_text, cell

#: rows of the tables that are not bounded by --top (files, reasons, log switches)
LISTED = 25


def facts_table(c: Context) -> Table:
    """The facts: files, hosts, versions, time span, match rate, coverage; after the remote writes, the commit
    path of each configuration with several SYNC destinations (each redo write once)."""
    rows = facts(c.analysis, c.counts, c.files)
    at = next((i + 1 for i, (name, _) in enumerate(rows) if name == "Slow writes"), len(rows))
    threshold = c.analysis.options.threshold_ms
    for s in c.scopes:
        path = s.commit
        if path.several:
            slow = int(s.writes["slow"].sum())
            name = "Commit path" + (f" ({s.name})" if c.several else "")
            said = (
                f"{path.redo_writes:,} redo writes to {len(path.destinations)} SYNC destinations, each once as its"
                f" slowest; {slow:,} with total >= {threshold:g} ms"
            )
            rows.insert(at, (name, said))
            at += 1
    return Table(("fact", "value"), rows)


def percentile_table(c: Context) -> Table:
    """count, mean, p50, p90, p99 and max of the total and of each component (ms), as AWR shows waits."""
    res = c.checks.resolution_ms
    rows = [
        (
            r["component"],
            f"{r['count']:,}",
            *(cell(r[k], resolution_of(r["component"], res)) for k in ("mean", "p50", "p90", "p99", "max")),
        )
        for r in component_stats(c.analysis.writes).iter_rows(named=True)
    ]
    return Table(("component", "writes", "mean ms", "p50 ms", "p90 ms", "p99 ms", "max ms"), rows)


def histogram_table(c: Context) -> Table:
    """Writes per V$EVENT_HISTOGRAM bucket, for the total and each component."""
    hists: dict[str, dict[str, int]] = {
        name: dict(histogram(c.analysis.writes, name).iter_rows()) for name in doc.HISTOGRAM_COMPONENTS
    }
    buckets: list[str] = []
    for counts in hists.values():  # every histogram's buckets start alike: the longest holds them all
        buckets = list(counts) if len(counts) > len(buckets) else buckets
    rows = [(f"{b} ms", *(f"{hists[name].get(b, 0):,}" for name in doc.HISTOGRAM_COMPONENTS)) for b in buckets]
    return Table(("bucket", *(name.removesuffix("_ms") for name in doc.HISTOGRAM_COMPONENTS)), rows)


def verdict_table(c: Context) -> Table:
    """Writes and time per verdict, all and slow."""
    res = c.checks.resolution_ms
    rows = [
        (verdict or "", f"{writes:,}", cell(total, res), f"{slow:,}", cell(slow_total, res))
        for verdict, writes, total, slow, slow_total in verdict_totals(c.analysis.writes).iter_rows()
    ]
    return Table(("verdict", "writes", "total ms", "slow writes", "slow total ms"), rows)


def top_table(c: Context, top: int) -> Table:
    """The slowest writes with their breakdown, log-switch distance and evidence (file:line)."""
    rows = []
    for w in switching.top_writes(c.analysis.writes, top, c.switches).iter_rows(named=True):
        switch = w["switch_at"]
        sides = ((w["primary_file"], w["primary_line"]), (w["standby_file"], w["standby_line"]))
        rows.append(
            (
                at_text(w["sent_at"]),
                str(w["thread"]),
                str(w["seq"]),
                str(w["msgid"]),
                cell(w["total_ms"], w["resolution_ms"]),
                cell(w["network_ms"], w["resolution_ms"]),
                cell(w["rfs_io_ms"]),
                cell(w["rfs_other_ms"], w["resolution_ms"]),
                w["verdict"] or "one side only",
                f"{(w['sent_at'] - switch).total_seconds():+.3f} s" if switch else "",
                "\n".join(c.where(*side) for side in sides if side[0]),
            )
        )
    headers = ("sent (UTC)", "thread", "seq", "msgid", "total ms", "network ms", "rfs_io ms", "rfs_other ms")
    note = more(len(rows), c.analysis.writes.height, "writes (the slowest)", "--format csv")
    return Table(
        (*headers, "verdict", "from log switch", "evidence"),
        rows,
        note,
        optional=("from log switch", "seq", "thread"),
        paths=("evidence",),
        key="msgid",
    )


def switch_table(c: Context) -> Table:
    """Latency of the writes near a log switch against the others."""
    res = c.checks.resolution_ms
    rows = [
        (
            r["writes"],
            f"{r['count']:,}",
            f"{r['slow']:,}",
            "" if r["slow_rate"] is None else f"{r['slow_rate']:.1%}",
            cell(r["p50_ms"], res),
            cell(r["p99_ms"], res),
            cell(r["max_ms"], res),
            cell(r["rfs_io_p99_ms"]),
        )
        for r in c.switches.comparison.iter_rows(named=True)
    ]
    return Table(("writes", "count", "slow", "slow rate", "p50 ms", "p99 ms", "max ms", "rfs_io p99 ms"), rows)


def switch_list(c: Context, limit: int = LISTED) -> Table:
    """The log switches with the most slow writes near them (then the earliest)."""
    switches = c.switches.switches
    listed = switches.sort(["slow_near", "at"], descending=[True, False], nulls_last=True).head(limit)
    rows = [
        (
            str(r["thread"]),
            str(r["from_seq"]),
            str(r["to_seq"]),
            at_text(r["at"]),
            f"{r['writes_near'] or 0:,}",
            f"{r['slow_near'] or 0:,}",
            cell(r["max_total_ms"], c.checks.resolution_ms),
        )
        for r in listed.iter_rows(named=True)
    ]
    headers = ("thread", "from seq", "to seq", "at (UTC)", "writes near", "slow near", "max total ms")
    note = more(listed.height, switches.height, "log switches (those with the most slow writes near)", "--format json")
    return Table(headers, rows, note)


def warnings_table(c: Context, top: int) -> Table:
    """The `top` longest LGWR warnings (long writes, broadcast waits) with the breakdown of the remote
    write they cover: a fast remote write under a long warning says the time was local."""
    warnings, res = c.analysis.warnings, c.checks.resolution_ms
    listed = warnings.sort("elapsed_ms", "at", descending=[True, False]).head(top)
    rows = [
        (
            at_text(w["at"]),
            WARNING_KINDS.get(w["kind"], w["kind"]),
            _text(w["thread"]),
            f"{w['elapsed_ms']:,}",
            _text(w["size_kb"]),
            _text(w["msgid"]),
            cell(w["remote_total_ms"], res),
            cell(w["network_ms"], res),
            cell(w["rfs_io_ms"]),
            cell(w["rfs_other_ms"], res),
            w["verdict"] or "no remote write found",
            c.where(w["file"], w["line"]),
        )
        for w in listed.iter_rows(named=True)
    ]
    headers = ("at (UTC)", "kind", "thread", "elapsed ms", "size KB", "msgid", "remote ms", "network ms", "rfs_io ms")
    note = more(listed.height, warnings.height, "warnings (the longest)", "--format csv --table warnings")
    return Table(
        (*headers, "rfs_other ms", "verdict", "evidence"),
        rows,
        note,
        optional=("kind", "size KB", "thread", "remote ms", "msgid"),
        paths=("evidence",),
        key="at (UTC)",
    )


#: how a report names the kinds of LGWR warnings
WARNING_KINDS = {"log_write": "long write", "broadcast_wait": "broadcast wait"}


def _text(value: object) -> str:
    """A cell: empty when unknown, the value otherwise (0 included)."""
    return "" if value is None else str(value)


def events_table(c: Context, limit: int = LISTED) -> Table:
    """The log writer and alert-log events around the writes (`analyzer.findings.events`) but the warnings (their
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
    note = more(min(limit, len(rows)), len(rows), "kinds of event", "--format csv --table events")
    headers = ("event", "host", "count", "first (UTC)", "last (UTC)", "first detail", "first at")
    return Table(headers, rows[:limit], note, optional=("last (UTC)", "host"), paths=("first at",), key="event")


def gaps_table(c: Context, limit: int = LISTED) -> Table:
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
    headers = ("process", "host", "missing segment", "from (UTC)", "to (UTC)", "messages in it", "named at")
    note = more(min(limit, len(rows)), len(rows), "missing segments", "--format json (summary.gaps)")
    return Table(headers, rows[:limit], note, optional=("host",), paths=("named at",), key="missing segment")


def destinations_table(c: Context, limit: int = LISTED) -> Table:
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
    note = more(min(limit, len(rows)), len(rows), "settings", "--format json (summary.destinations)")
    return Table(
        (*headers, "net_timeout s", "set at (UTC)", "by", "evidence"),
        rows[:limit],
        note,
        optional=("net_timeout s", "instance", "state", "set at (UTC)"),
        paths=("evidence",),
        key="destination",
    )


def clock_table(c: Context) -> Table:
    """The clock offset of each standby host against each primary host."""
    rows = [
        (
            r["primary_host"] or "",
            r["standby_host"] or "",
            ms(r["offset_ms"], unit=False, signed=True),
            cell(r["bound_ms"]),
            f"{r['writes_used']:,}",
            r["source"],
            r["warning"] or (f"{r['causal_violations']:,} causal violation(s)" if r["causal_violations"] else ""),
        )
        for r in c.analysis.clock.iter_rows(named=True)
    ]
    headers = ("primary", "standby", "offset ms", "bound ms", "writes used", "source", "note")
    return Table(headers, rows, optional=("writes used", "source"))


def _counted(c: Context, frame: pl.DataFrame, keys: tuple[str, ...], limit: int, where: str) -> Table:
    """Rows of `frame` counted by `keys`, most frequent first, with the first example's file:line."""
    grouped = (
        frame.sort("file", "line")
        .group_by(*keys)
        .agg(count=pl.len(), file=pl.col("file").first(), line=pl.col("line").first())
        .sort("count", *keys, descending=[True, *[False] * len(keys)])
    )
    rows = [
        (*(str(r[k]) for k in keys), f"{r['count']:,}", c.where(r["file"], r["line"]))
        for r in grouped.head(limit).iter_rows(named=True)
    ]
    note = more(len(rows), grouped.height, "reasons", where)
    return Table((*keys, "count", "first"), rows, note, paths=("first",))


def unmatched_table(c: Context, limit: int = LISTED) -> Table:
    """Messages that found no partner, counted by side and reason."""
    return _counted(c, c.analysis.unmatched, ("side", "reason"), limit, "--format csv --table unmatched")


def unparsed_table(c: Context, limit: int = LISTED) -> Table:
    """Lines of a known family that did not parse, by shape (numbers and quoted text masked): how many,
    the first one's reason and where it is."""
    shapes = inventory.shapes_of(files.unparsed(c.analysis))
    rows = [
        (r["family"], r["shape"], f"{r['count']:,}", r["reason"] or "", c.where(r["file"], r["line"]))
        for r in shapes.head(limit).iter_rows(named=True)
    ]
    note = more(len(rows), shapes.height, "shapes", "--format json (summary.unparsed_shapes)")
    return Table(("family", "shape", "count", "first reason", "first"), rows, note, paths=("first",))


def coverage_table(c: Context, limit: int = LISTED) -> Table:
    """Every line of every file accounted for: the files with unparsed lines or read problems first."""
    rows = [
        (c.file(f.label), f"{f.lines:,}", f"{f.parsed:,}", f"{f.ignored:,}", f"{f.unparsed:,}", f.first_problem)
        for f in c.files
    ]
    rows.sort(key=lambda r: (not r[-1], r[0]))
    note = more(min(limit, len(rows)), len(rows), "files", "--format json (coverage)")
    headers = ("file", "lines", "parsed", "ignored", "unparsed", "first problem")
    return Table(headers, rows[:limit], note, optional=("first problem",), paths=("file",))


def files_table(c: Context, limit: int = LISTED) -> Table:
    """What each file is (role, process, host, thread, version), its time span and zone."""
    frame = inventory.table(c.analysis)
    rows = []
    for r, f in zip(frame.iter_rows(named=True), c.files, strict=True):
        rows.append(
            (
                c.file(r["file"]),
                r["role"] or "",
                r["process"] or "",
                r["instance"] or "",
                r["host"] or "",
                "" if r["thread"] is None else str(r["thread"]),
                r["version"] or "",
                at_text(r["first_at"])[:19],
                at_text(r["last_at"])[:19],
                f.zone_text,
            )
        )
    headers = ("file", "role", "process", "instance", "host", "thread", "version", "first (UTC)", "last (UTC)")
    note = more(min(limit, len(rows)), len(rows), "files", "dgtrace inventory, or --format json (files)")
    optional = ("version", "instance", "last (UTC)", "process", "thread", "first (UTC)")
    return Table((*headers, "zone"), rows[:limit], note, optional=optional, paths=("file",))


def skipped_table(c: Context, limit: int = LISTED) -> Table:
    """Inputs found but not read, counted by reason, with an example."""
    counts = Counter(s.reason for s in c.analysis.skipped)
    first: dict[str, str] = {}
    for s in c.analysis.skipped:
        first.setdefault(s.reason, s.label)
    rows = [(reason, f"{n:,}", c.file(first[reason])) for reason, n in counts.most_common(limit)]
    note = more(len(rows), len(counts), "reasons", "--format json (files)")
    return Table(("reason", "inputs", "first"), rows, note, paths=("first",))
