"""The what-ifs and the comparisons with oratcptest (--baseline), AWR and Statspack (--awr) and the distance
(--distance-km) as sentences and tables, shared by the terminal, Markdown and HTML reports.

With several configurations the what-ifs are given per configuration (each one's writes as measured and
as they would have been), the comparisons with the companion files over all the writes.
"""

from __future__ import annotations

from dataclasses import dataclass

from analyzer.base.words import ms
from analyzer.findings import compare, crosscheck, reconcile
from analyzer.report.configurations import ordered
from analyzer.report.context import Context, Table
from analyzer.report.fmt import cell


@dataclass(frozen=True)
class Block:
    """A section of sentences and tables in reading order (a paragraph is a str)."""

    title: str
    parts: list[str | Table]


def _distribution_row(name: str, d: compare.Distribution, res: float | None) -> tuple[str, ...]:
    stats = (d.mean_ms, d.p50_ms, d.p90_ms, d.p99_ms, d.max_ms)
    return (name, f"{d.writes:,}", f"{d.slow_writes:,}", *(cell(v, res) for v in stats))


def _said(checks: compare.Checks) -> bool:
    """A what-if has something to say: Fast Sync for slow writes, or the oratcptest round trip."""
    fast = checks.fast_sync
    return (fast is not None and fast.real.slow_writes > 0) or checks.at_round_trip is not None


def _what_ifs(c: Context) -> list[tuple[str, compare.Checks]]:
    """(the configuration's name, its comparisons) for each with something to say; ("", all of them) with one."""
    if not c.several:
        return [("", c.checks)]
    return [(s.name, s.checks) for s in ordered(c) if _said(s.checks)]


def what_if_table(c: Context) -> Table:
    """The writes as measured, with Fast Sync, and with their network part at the oratcptest round trip (per
    configuration when there are several)."""
    rows = []
    for name, checks in _what_ifs(c):
        fast, at, res = checks.fast_sync, checks.at_round_trip, checks.resolution_ms
        prefix = f"{name}: " if name else ""
        real = fast.real if fast else at.real if at else None
        if real is not None:
            rows.append(_distribution_row(f"{prefix}as measured", real, res))
        if fast is not None and fast.already < fast.real.writes:
            rows.append(_distribution_row(f"{prefix}with Fast Sync (no standby I/O)", fast.what_if, res))
        if at is not None:
            at_most = f"{prefix}network at most {ms(at.round_trip_ms)} (oratcptest)"
            rows.append(_distribution_row(at_most, at.what_if, res))
    headers = ("writes", "count", "slow writes", "mean ms", "p50 ms", "p90 ms", "p99 ms", "max ms")
    return Table(headers, rows, optional=("mean ms", "p90 ms"))


def _what_if_block(c: Context) -> Block | None:
    """The what-ifs in words (a sentence per configuration when there are several) and their table."""
    parts: list[str | Table] = []
    fast_given = at_given = False
    for name, checks in _what_ifs(c):
        if not _said(checks):
            continue
        fast, at, res = checks.fast_sync, checks.at_round_trip, checks.resolution_ms
        prefix = f"{name}: " if name else ""
        parts += [prefix + crosscheck.fast_sync_sentence(fast, res)] if fast is not None else []
        parts += [prefix + crosscheck.round_trip_sentence(at, res)] if at is not None else []
        fast_given, at_given = fast_given or fast is not None, at_given or at is not None
    if not parts:
        return None
    given = (("Fast Sync", fast_given), ("the network at the oratcptest round trip", at_given))
    return Block("What if: " + ", and ".join(w for w, g in given if g), [*parts, what_if_table(c)])


def baseline_table(c: Context) -> Table:
    """Each oratcptest run: what it measured, and the writes' figure beside it."""
    rows, res = [], c.checks.resolution_ms
    for check in c.checks.runs:
        r, s = check.run, check.run.settings
        mode = (s.mode or "") + (" + disk write" if s.mode == "SYNC" and s.disk_write else "")
        rows.append(
            (
                r.label.replace("\\", "/").rsplit("/", 1)[-1],
                str(r.run),
                mode,
                compare.size_text(s.payload_bytes) if s.payload_bytes else "",
                compare.size_text(check.send_buffer_bytes) if check.send_buffer_bytes else "",
                "" if check.throughput_mib_s is None else f"{check.throughput_mib_s:,.1f}",
                cell(check.latency_ms),
                cell(check.disk_write_ms),
                check.compared_with or "throughput only",
                cell(check.p50_ms, res),
                cell(check.p99_ms, res),
                f"{check.slow_above:,}" if check.compared_with else "",
                cell(check.slow_excess_ms, res) if check.compared_with else "",
            )
        )
    headers = ("file", "run", "mode", "message", "send buffer", "MiB/s", "round trip ms", "disk write ms")
    more_headers = ("beside", "writes p50 ms", "writes p99 ms", "slow above", "slow time above ms")
    return Table((*headers, *more_headers), rows, optional=("message", "send buffer", "run"))


def awr_table(check: reconcile.AwrCheck, res: float | None = None) -> Table:
    """A report's Data Guard wait events, each beside the traces' figure it measures (`res`: the writes'
    stamp resolution, for their mean total)."""
    rows = [
        (
            e.event,
            e.section,
            "" if e.waits is None else f"{e.waits:,}",
            cell(e.mean_ms),
            crosscheck.trace_measure(e),
            cell(e.trace_mean_ms, res if e.measure == "total" else None),
            crosscheck.agreement(e),
        )
        for e in check.events
    ]
    headers = ("event", "section", "waits", "avg ms", "traces", "traces mean ms", "agreement")
    return Table(headers, rows, optional=("section",))


def histogram_table(h: reconcile.HistogramCheck) -> Table:
    """A report's histogram of one event beside the traces' writes of its window, bucket by bucket."""
    rows = [
        (
            b.label,
            crosscheck.bucket_range(b),
            f"{b.awr_pct:.1f}",
            "" if (share := h.trace_pct(b)) is None else f"{share:.1f}",
            f"{b.trace_writes:,}",
            b.table,
        )
        for b in h.buckets
    ]
    headers = ("bucket", "range", "report % of waits", "traces % of writes", "traces writes", "report table")
    return Table(headers, rows, optional=("report table", "range"))


def comparison_blocks(c: Context) -> list[Block]:
    """The what-ifs and the comparisons with oratcptest (--baseline), AWR (--awr) and the distance
    (--distance-km): each block only when there is something to say."""
    checks, res = c.checks, c.checks.resolution_ms
    what_if = _what_if_block(c)
    blocks = [what_if] if what_if else []
    parts: list[str | Table]
    if checks.runs:
        parts = [crosscheck.run_sentence(r, res) for r in checks.runs]
        parts += [crosscheck.bdp_sentence(checks.bandwidth_delay, res)] if checks.bandwidth_delay else []
        parts += [said] if (said := crosscheck.workload_sentence(checks)) else []
        blocks.append(Block("Against the oratcptest baseline", [*parts, baseline_table(c)]))
    if checks.awr:
        parts = []
        for check in checks.awr:
            parts += [f"{crosscheck.awr_heading(check)} {crosscheck.awr_overlap(check)}"]
            parts += [awr_table(check, res)] if check.events else ["No Data Guard wait event in it."]
            parts += [crosscheck.impact_sentence(check.impact)] if check.impact else []
            parts += crosscheck.awr_remarks(check)
            for h in check.histograms:  # the report's own histogram alone is in the JSON
                parts += [crosscheck.histogram_sentence(h), histogram_table(h)] if h.writes else []
            reasons = crosscheck.awr_reasons(check)
            parts += ["They may differ because " + "; ".join(reasons) + "."] if reasons else []
            parts += [s] if (s := crosscheck.skipped_sentence(check)) else []
        blocks.append(Block("Against AWR and Statspack", parts))
    if checks.distance is not None:
        blocks.append(Block("Distance and the physical floor", [crosscheck.distance_sentence(checks.distance, res)]))
    return blocks
