"""Terminal report (rich): files, matching, statistics, histogram, top writes, LGWR warnings.

On a terminal it uses colour and box drawing; otherwise plain ASCII tables, so the text
pastes cleanly into a ticket or a log.
"""

from __future__ import annotations

from typing import Any, TextIO

from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text

from analyzer import inventory
from analyzer.report import model as doc
from analyzer.report.context import Context
from analyzer.report.context import Table as SectionTable
from analyzer.report.fmt import fmt_ms, short_label
from analyzer.report.sections import WARNING_KINDS, destinations_table, events_table, gaps_table
from analyzer.results import Analysis
from analyzer.summary import component_stats, histogram, slowest, verdict_totals
from analyzer.vocab import COMPONENTS, Component

_VERDICT_STYLE: dict[str, str] = {Component.NETWORK: "yellow", Component.RFS_IO: "red", Component.RFS_OTHER: "magenta"}


def make_table(title: str, console: Console, *columns: str) -> Table:
    """A titled table: box drawing on a terminal, plain ASCII otherwise; numbers right-aligned."""
    plain = not console.is_terminal
    table = Table(
        title=title,
        title_justify="left",
        box=box.ASCII2 if plain else box.SIMPLE_HEAVY,
        show_edge=not plain,
    )
    for name in columns:
        table.add_column(
            name,
            justify="right"
            if name[:1].islower()
            and name not in {"file", "role", "process", "verdict", "evidence", "reason", "host", "zone"}
            else "left",
        )
    return table


#: the columns that say what a file is (this report's Files table and `dgtrace inventory`)
IDENTITY = ("file", "role", "process", "instance", "host", "thread", "version", "first (UTC)")


def identity_cells(row: dict[str, Any], labels: list[str]) -> list[str]:
    """The IDENTITY cells of one row of `inventory.table`."""
    first = row["first_at"].strftime("%Y-%m-%d %H:%M:%S") if row["first_at"] else ""
    values = [short_label(row["file"], labels), *(row[k] for k in IDENTITY[1:-1]), first]
    return ["" if v is None else str(v) for v in values]


def _files(a: Analysis, console: Console) -> Table:
    rows = inventory.table(a)
    labels = rows["file"].to_list()
    t = make_table("Files", console, *IDENTITY, "last (UTC)", "zone")
    for row, f in zip(rows.iter_rows(named=True), a.files, strict=True):
        last = f.reduced.last_at.strftime("%Y-%m-%d %H:%M:%S") if f.reduced.last_at else ""
        t.add_row(*identity_cells(row, labels), last, f.reduced.zone)
    return t


def _matching(a: Analysis) -> Text:
    s = doc.summary(a, 0)
    rate = f"{s['match_rate']:.1%}" if s["match_rate"] is not None else "n/a"
    lines = [
        f"Remote writes: {s['primary_writes']} on the primary, {s['standby_writes']} on the standby, "
        f"{s['matched_writes']} matched (match rate {rate}); {s['unmatched_messages']} message(s) unmatched.",
        f"Slow writes (total >= {a.options.threshold_ms:g} ms): {s['slow_writes']}.",
    ]
    if a.gaps.height:
        fell = int(a.gaps["messages"].sum())
        lines.append(f"{fell} message(s) without partner fall in {a.gaps.height} missing segment(s): see below.")
    shares = s["slow_time_shares"]
    if shares:
        parts = ", ".join(f"{k} {v:.0%}" for k, v in sorted(shares.items(), key=lambda kv: -kv[1]))
        scope = "slow-write" if s["slow_writes"] else "write"
        lines.append(f"Share of {scope} time: {parts}.")
    return Text("\n".join(lines))


def _stats(a: Analysis, console: Console) -> Table:
    t = make_table("Components (ms)", console, "component", "count", "mean", "p50", "p90", "p99", "max")
    for row in component_stats(a.writes).iter_rows():
        t.add_row(row[0], str(row[1]), *(fmt_ms(v) for v in row[2:]))
    return t


def _histogram(a: Analysis, console: Console) -> Table:
    hists = {c: dict(histogram(a.writes, c).iter_rows()) for c in doc.HISTOGRAM_COMPONENTS}
    buckets = max(hists.values(), key=len).keys() if a.writes.height else []
    t = make_table(
        "Histogram (writes per bucket, as V$EVENT_HISTOGRAM)",
        console,
        "ms",
        *(c.removesuffix("_ms") for c in doc.HISTOGRAM_COMPONENTS),
    )
    for bucket in buckets:
        t.add_row(bucket, *(str(hists[c].get(bucket, 0)) for c in doc.HISTOGRAM_COMPONENTS))
    return t


def _verdicts(a: Analysis, console: Console) -> Table:
    t = make_table("Verdicts", console, "verdict", "writes", "total ms", "slow writes", "slow total ms")
    for verdict, writes, total, slow, slow_total in verdict_totals(a.writes).iter_rows():
        t.add_row(
            Text(verdict or "", style=_VERDICT_STYLE.get(verdict or "", "")),
            str(writes),
            fmt_ms(total),
            str(slow),
            fmt_ms(slow_total),
        )
    return t


def _top(a: Analysis, console: Console, top: int) -> Table:
    labels = [f.source.label for f in a.files]
    t = make_table(
        f"Top {top} slowest writes",
        console,
        "sent (UTC)",
        "thr",
        "seq",
        "msgid",
        "total",
        *COMPONENTS,
        "verdict",
        "evidence",
    )
    for w in slowest(a.writes, top).iter_rows(named=True):
        sides = [(w["primary_file"], w["primary_line"]), (w["standby_file"], w["standby_line"])]
        evidence = "\n".join(f"{short_label(f, labels)}:{n}" for f, n in sides if f is not None)
        t.add_row(
            w["sent_at"].strftime("%Y-%m-%d %H:%M:%S.%f"),
            str(w["thread"]),
            str(w["seq"]),
            str(w["msgid"]),
            fmt_ms(w["total_ms"], w["resolution_ms"]),
            fmt_ms(w["network_ms"], w["resolution_ms"]),
            fmt_ms(w["rfs_io_ms"]),
            fmt_ms(w["rfs_other_ms"], w["resolution_ms"]),
            Text(w["verdict"] or "one side only", style=_VERDICT_STYLE.get(w["verdict"] or "", "")),
            evidence,
        )
    return t


def _warnings(a: Analysis, console: Console) -> Table:
    labels = [f.source.label for f in a.files]
    t = make_table(
        "LGWR warnings (long writes, broadcast waits) and their remote part",
        console,
        "at (UTC)",
        "kind",
        "thr",
        "elapsed",
        "size KB",
        "msgid",
        "remote",
        *COMPONENTS,
        "verdict",
        "evidence",
    )
    for w in a.warnings.iter_rows(named=True):
        at = w["at"].strftime("%Y-%m-%d %H:%M:%S.%f")[:-3] if w["at"] else ""
        t.add_row(
            at,
            WARNING_KINDS.get(w["kind"], w["kind"]),
            "" if w["thread"] is None else str(w["thread"]),
            str(w["elapsed_ms"]),
            "" if w["size_kb"] is None else str(w["size_kb"]),
            "-" if w["msgid"] is None else str(w["msgid"]),
            fmt_ms(w["remote_total_ms"]),
            fmt_ms(w["network_ms"]),
            fmt_ms(w["rfs_io_ms"]),
            fmt_ms(w["rfs_other_ms"]),
            w["verdict"] or "no remote write found",
            f"{short_label(w['file'], labels)}:{w['line']}",
        )
    return t


def _section(title: str, table: SectionTable, console: Console) -> Table:
    """A section table shared with the Markdown and HTML reports, as a terminal table."""
    t = make_table(title, console)
    for name, numeric in zip(table.headers, table.numeric(), strict=True):
        t.add_column(name, justify="right" if numeric else "left")
    for row in table.rows:
        t.add_row(*row)
    return t


def _clock(a: Analysis, console: Console) -> Table:
    title = "Clock offset: standby minus primary (from the writes with the smallest round trips)"
    t = make_table(title, console, "primary", "standby", "offset ms", "bound ms", "writes used", "source", "note")
    for r in a.clock.iter_rows(named=True):
        t.add_row(
            r["primary_host"] or "",
            r["standby_host"] or "",
            f"{r['offset_ms']:+,.3f}",
            f"{r['bound_ms']:,.3f}",
            str(r["writes_used"]),
            r["source"],
            r["warning"] or (f"{r['causal_violations']} causal violation(s)" if r["causal_violations"] else ""),
        )
    return t


def _coverage(a: Analysis, console: Console) -> Table:
    labels = [f.source.label for f in a.files]
    t = make_table(
        "Coverage (every line: parsed + ignored + unparsed)",
        console,
        "file",
        "lines",
        "parsed",
        "ignored",
        "unparsed",
        "first unparsed reason",
    )
    for f in a.files:
        un = f.parsed.tables["unparsed"]
        reason = f"line {un['line'][0]}: {un['reason'][0]}" if un.height else ""
        t.add_row(
            short_label(f.source.label, labels),
            str(f.stats.lines),
            str(sum(f.parsed.parsed.values())),
            str(sum(f.parsed.ignored.values())),
            str(un.height),
            reason,
        )
    return t


def _unmatched(a: Analysis, console: Console) -> Table:
    t = make_table("Unmatched messages by reason", console, "side", "reason", "count")
    for side, reason, count in a.unmatched.group_by("side", "reason").len().sort("len", descending=True).iter_rows():
        t.add_row(side, reason, str(count))
    return t


def render_text(a: Analysis, out: TextIO, top: int) -> None:
    """Write the human-readable report."""
    console = Console(file=out, width=200 if not out.isatty() else None, highlight=False, soft_wrap=False)
    console.print(Text("dgtrace: Data Guard SYNC remote writes", style="bold"))
    for part in (_files(a, console), _matching(a)):
        console.print(part)
    if a.writes.height:
        for table in (
            _stats(a, console),
            _histogram(a, console),
            _verdicts(a, console),
            _top(a, console, top),
        ):
            console.print(table)
    if a.clock.height:
        console.print(_clock(a, console))
    if a.warnings.height:
        console.print(_warnings(a, console))
    context = Context.of(a, top)
    around = events_table(context)
    if around.rows:
        console.print(_section("Log writer and alert-log events around the writes", around, console))
    if a.gaps.height:
        console.print(
            _section("Missing segments (no evidence from that host in between)", gaps_table(context), console)
        )
    if a.destinations.height:
        console.print(_section("Redo transport destinations (alert logs)", destinations_table(context), console))
    if a.unmatched.height:
        console.print(_unmatched(a, console))
    console.print(_coverage(a, console))
    for note in doc.notes(a):
        console.print(Text(f"Note: {note}", style="dim"))
    if a.skipped:
        console.print(Text(f"{len(a.skipped)} input(s) skipped (see --format json 'files')", style="dim"))
