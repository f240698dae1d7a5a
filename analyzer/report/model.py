"""The analysis as one plain document (dicts and lists): the `--format json` contract, built from the typed
values every report reads (`report.context`)."""

from __future__ import annotations

from dataclasses import asdict
from datetime import datetime
from typing import Any

import polars as pl

from analyzer.base.vocab import TOTAL_AND_COMPONENTS, ms_column
from analyzer.findings import compare, crosscheck, events, insights, inventory, reconcile, switching
from analyzer.findings.assessment import Assessment
from analyzer.findings.files import FileView, file_views
from analyzer.findings.files import coverage as file_coverage
from analyzer.findings.summary import component_stats, histogram, slowest, time_shares, verdict_totals
from analyzer.match.analysis import Analysis
from analyzer.match.links import Link
from analyzer.report import scopes
from analyzer.report.context import Context
from analyzer.report.scopes import LinkFigures, Scope, link_mask

SCHEMA_VERSION = 6
#: at most this many unparsed lines are listed per file (all are counted)
UNPARSED_LISTED = 200
HISTOGRAM_COMPONENTS = tuple(ms_column(m) for m in TOTAL_AND_COMPONENTS)


#: decimals of every `*_ms` column of a CSV table (microseconds; the JSON keeps full precision)
CSV_DECIMALS = 3
#: a CSV text cell starting like this would run as a spreadsheet formula: it gets a leading `'`
FORMULA = r"^[=+\-@\t\r]"
#: how `iso_frame` writes a datetime (stamps are UTC)
ISO_FORMAT = "%Y-%m-%dT%H:%M:%S%.6fZ"


def iso_exprs(schema: pl.Schema) -> list[pl.Expr]:
    """The expressions that turn the datetime columns of `schema` into ISO-8601 text (UTC, `Z`)."""
    return [pl.col(name).dt.strftime(ISO_FORMAT) for name, dtype in schema.items() if isinstance(dtype, pl.Datetime)]


def iso_frame(df: pl.DataFrame) -> pl.DataFrame:
    """The frame with its datetimes in ISO-8601 (UTC, `Z`)."""
    return df.with_columns(iso_exprs(df.schema))


def _rows(df: pl.DataFrame) -> list[dict[str, Any]]:
    """Frame rows as dicts with datetimes in ISO-8601 (UTC, `Z`)."""
    return iso_frame(df).to_dicts()


def _iso(value: object) -> str | None:
    return value.strftime("%Y-%m-%dT%H:%M:%S.%fZ") if isinstance(value, datetime) else None


def log_switches(sw: switching.SwitchAnalysis) -> dict[str, Any]:
    """`summary.log_switches`: each switch with the writes near it, near-vs-elsewhere latency, the finding."""
    return {
        "window_s": sw.window_s,
        "switches": _rows(sw.switches),
        "comparison": sw.comparison.to_dicts(),
        "slow_near": sw.slow_near,
        "slow_elsewhere": sw.slow_elsewhere,
        "clustered": sw.clustered,
        "interval_min": sw.interval_min,
        "finding": sw.finding,
    }


def summary(a: Analysis, top: int, c: Context | None = None) -> dict[str, Any]:
    """The `summary` object: counts, statistics, histograms, verdicts, top-N, LGWR warnings, recommendations,
    the what-ifs and the comparisons with oratcptest, AWR and the distance (`c`: the analysis's context when
    the caller already has it)."""
    c = c or Context.of(a)
    w, n = a.writes, c.counts
    return {
        "schema_version": SCHEMA_VERSION,
        "threshold_ms": a.options.threshold_ms,
        "match_window_s": a.options.window_s,
        "primary_writes": n.primary_writes,
        "standby_writes": n.standby_writes,
        "matched_writes": n.matched_writes,
        "match_rate": n.match_rate,
        "slow_writes": n.slow_writes,
        "unmatched_messages": n.unmatched_messages,
        "unparsed_lines": n.unparsed_lines,
        "unparsed_shapes": inventory.unparsed_shapes(a.files).to_dicts(),
        "first_write_at": _iso(w["sent_at"].min()) if w.height else None,
        "last_write_at": _iso(w["sent_at"].max()) if w.height else None,
        "components": component_stats(w).to_dicts(),
        "histograms": {c.removesuffix("_ms"): histogram(w, c).to_dicts() for c in HISTOGRAM_COMPONENTS},
        "verdicts": verdict_totals(w).to_dicts(),
        "slow_time_shares": time_shares(w),
        "top": _rows(slowest(w, top)),
        "lgwr_warnings": _rows(a.warnings),
        "clock": _rows(a.clock),
        "notes": c.notes,
        "log_switches": log_switches(c.switches),
        "gaps": _rows(a.gaps),
        "destinations": _rows(a.destinations),
        "assessment": assessment(c.scopes[0].assessment) if len(c.scopes) == 1 else None,
        "recommendations": [asdict(r) for r in c.recommendations],
        "configurations": [_configuration(a, scope) for scope in c.scopes],
        "what_if": what_if(c.checks),
        "baseline": baseline(c.checks),
        "awr": awr(c.checks),
        "distance": distance(c.checks),
    }


def what_if(c: compare.Checks) -> dict[str, Any]:
    """`summary.what_if`: the writes as measured and with Fast Sync, and at the oratcptest round trip."""
    fast, at, res = c.fast_sync, c.at_round_trip, c.resolution_ms
    return {
        "fast_sync": None
        if fast is None
        else _versus(fast, crosscheck.fast_sync_sentence(fast, res), already_fast_sync=fast.already),
        "at_round_trip": None
        if at is None
        else _versus(at, crosscheck.round_trip_sentence(at, res), round_trip_ms=at.round_trip_ms, source=at.source),
    }


def _versus(w: compare.WhatIf, finding: str, **more: Any) -> dict[str, Any]:
    """One what-if: the real and the what-if distributions, the time saved, what else it holds, in words."""
    return {"real": asdict(w.real), "what_if": asdict(w.what_if), "saved_ms": w.saved_ms, **more, "finding": finding}


def _clock_time(value: object) -> str | None:
    return value.strftime("%H:%M:%S") if hasattr(value, "strftime") else None


def baseline(c: compare.Checks) -> dict[str, Any]:
    """`summary.baseline`: each oratcptest run beside the writes, and the bandwidth-delay product."""
    runs = []
    for check in c.runs:
        r, s = check.run, check.run.settings
        runs.append(
            {
                "file": r.label,
                "run": r.run,
                "first_line": r.first_line,
                "mode": s.mode,
                "disk_write": s.disk_write,
                "payload_bytes": s.payload_bytes,
                "send_buffer_bytes": check.send_buffer_bytes,
                "throughput_bytes_s": r.averages.throughput_bytes_s if r.averages else None,
                "throughput_mib_s": check.throughput_mib_s,
                "latency_ms": check.latency_ms,
                "disk_write_ms": check.disk_write_ms,
                "ready_at": _clock_time(r.ready_at),
                "finished_at": _clock_time(r.finished_at),
                "finished": r.finished,
                "unparsed_lines": r.unparsed,
                "compared_with": check.compared_with,
                "p50_ms": check.p50_ms,
                "p99_ms": check.p99_ms,
                "writes_above": check.above,
                "slow_writes_above": check.slow_above,
                "slow_excess_ms": check.slow_excess_ms,
                "rfs_io_p50_ms": check.rfs_io_p50_ms,
                "finding": crosscheck.run_sentence(check, c.resolution_ms),
            }
        )
    bd = c.bandwidth_delay
    finding = None if bd is None else crosscheck.bdp_sentence(bd, c.resolution_ms)
    product = None if bd is None else {**asdict(bd), "enough": bd.enough, "finding": finding}
    return {"runs": runs, "bandwidth_delay": product, "workload": crosscheck.workload_sentence(c) or None}


def awr(c: compare.Checks) -> list[dict[str, Any]]:
    """`summary.awr`: per report, its window, how it overlaps the writes, its events beside the traces'."""
    out = []
    for check in c.awr:
        r, impact = check.report, check.impact
        out.append(
            {
                "file": r.label,
                "kind": r.kind,
                "format": r.format,
                "db_name": r.db_name,
                "instance": r.instance,
                "host": r.host,
                "role": r.role,
                "release": r.release,
                "side": check.side,
                "begin_snap": r.begin_snap,
                "end_snap": r.end_snap,
                "begin_local": r.begin_time.isoformat() if r.begin_time else None,
                "end_local": r.end_time.isoformat() if r.end_time else None,
                "zone": check.zone_source,
                "begin_at": _iso(check.begin_utc),
                "end_at": _iso(check.end_utc),
                "trace_host": check.host,
                "first_write_at": _iso(check.first_write),
                "last_write_at": _iso(check.last_write),
                "overlap_s": check.overlap_s,
                "window_s": check.window_s,
                "writes": check.writes,
                "events": [
                    {
                        **asdict(e),
                        "mean_ms": e.mean_ms,
                        "difference": e.difference,
                        "agreement": crosscheck.agreement(e) or None,
                    }
                    for e in check.events
                ],
                "impact": None
                if impact is None
                else {
                    **asdict(impact),
                    "remote_share": impact.remote_share,
                    "local_share": impact.local_share,
                    "finding": crosscheck.impact_sentence(impact),
                },
                "histograms": [_histogram(h) for h in check.histograms],
                "load": None
                if r.load is None
                else {**asdict(r.load), "write_bytes": r.load.write_bytes, "write_ms": r.load.write_ms},
                "remarks": crosscheck.awr_remarks(check),
                "fast_sync_writes": check.fast_sync_writes,
                "destinations": list(check.destinations),
                "reasons": crosscheck.awr_reasons(check),
                "skipped": [asdict(s) for s in r.skipped],
                "finding": f"{crosscheck.awr_heading(check)} {crosscheck.awr_overlap(check)}",
            }
        )
    return out


def _histogram(h: reconcile.HistogramCheck) -> dict[str, Any]:
    """One event's histogram in a report beside the traces' writes of its window (`awr[].histograms`)."""
    return {
        "event": h.event,
        "measure": h.measure,
        "waits": h.waits,
        "writes": h.writes,
        "io_waits": h.io_waits,
        "tail_ms": h.tail_ms,
        "buckets": [asdict(b) | {"trace_pct": h.trace_pct(b)} for b in h.buckets],
        "finding": crosscheck.histogram_sentence(h),
    }


def distance(c: compare.Checks) -> dict[str, Any] | None:
    """`summary.distance`: the network floor beside light in fibre, and the 20 ms SYNC limit (`--distance-km`)."""
    d = c.distance
    if d is None:
        return None
    return {
        **asdict(d),
        "above_ms": d.above_ms,
        "sync_limit_ms": compare.SYNC_LIMIT_MS,
        "floor_quantile": compare.FLOOR_QUANTILE,
        "finding": crosscheck.distance_sentence(d, c.resolution_ms),
    }


#: what the per-configuration breakdown and the ASYNC section say about a link's redo size
REDO_NOTE = "16410 messages carry no redo size; the log sequences shipped are listed"


def link_entry(a: Analysis, link: Link, writes: pl.DataFrame, figures: LinkFigures | None = None) -> dict[str, Any]:
    """One link: its ends, transport and the evidence that decided both, its files and counts; with
    `figures` (a commit-path link), its slow writes, statistics and shares of slow-write time."""
    sent, received = a.link_counts.get(link.name, (0, 0))
    if figures is not None:
        matched = figures.matched
    else:
        matched = int((writes["matched"] & link_mask(writes, [link])).sum()) if writes.height else 0
    entry = {
        "name": link.name,
        "sender_db": link.sender_db,
        "sender": link.sender,
        "receiver_db": link.receiver_db,
        "transport": str(link.transport),
        "transport_evidence": link.transport_evidence,
        "decided_by": str(link.decided_by),
        "evidence": list(link.evidence),
        "sender_files": list(link.sender_files),
        "receiver_files": list(link.receiver_files),
        "primary_writes": sent,
        "standby_writes": received,
        "matched_writes": matched,
        "match_rate": round(matched / sent, 4) if sent else None,
    }
    if figures is None:
        return entry
    return entry | {
        "slow_writes": figures.slow,
        "components": figures.components.to_dicts(),
        "slow_time_shares": figures.shares,
        "verdict": figures.verdict,
    }


def _configuration(a: Analysis, scope: Scope) -> dict[str, Any]:
    c, w = scope.configuration, scope.writes
    commit = [link for link in c.links if link.transport.commit_path]
    sent = sum(a.link_counts.get(link.name, (0, 0))[0] for link in commit)
    received = sum(a.link_counts.get(link.name, (0, 0))[1] for link in commit)
    matched = int(w["matched"].sum())
    figures = {f.link.name: f for f in scope.links}
    return {
        "name": c.name,
        "databases": [
            {
                "db_unique_name": d.name,
                "role": d.role,
                "hosts": list(d.hosts),
                "instances": list(d.instances),
                "files": d.files,
            }
            for d in c.databases
        ],
        "links": [
            link_entry(a, link, a.writes, figures[link.name])
            if link.transport.commit_path
            else link_entry(a, link, a.shipments)
            for link in c.links
        ],
        "primary_writes": sent,
        "standby_writes": received,
        "matched_writes": matched,
        "match_rate": round(matched / sent, 4) if sent else None,
        "slow_writes": int(w["slow"].sum()),
        "components": component_stats(w).to_dicts(),
        "verdicts": verdict_totals(w).to_dicts(),
        "slow_time_shares": time_shares(w),
        "recommendations": [r.id for r in scope.recommendations],
        "verdict": scope.verdict,
        "assessment": assessment(scope.assessment),
        "commit_path": commit_path_entry(scope),
        "setting": scope.setting.document(),
        "destinations": [asdict(d) | {"protection_mode": scope.setting.protection} for d in scope.setting.destinations],
    }


def assessment(x: Assessment) -> dict[str, Any]:
    """`assessment`: the word, its reason, the numbers behind it and what to watch (UTC times in ISO-8601)."""
    found = x.document()
    burst = found["largest_burst"]
    if burst is not None:
        found["largest_burst"] = burst | {"first_at": _iso(burst["first_at"]), "last_at": _iso(burst["last_at"])}
    return found


def commit_path_entry(scope: Scope) -> dict[str, Any]:
    """`commit_path`: each redo write once, as its slowest SYNC destination's write; its statistics; per
    destination how often it was the slower; how the writes were paired."""
    w = scope.writes
    stats = asdict(compare.distribution(w["total_ms"], scope.assessment.threshold_ms))
    return scope.commit.document() | {k: v for k, v in stats.items() if k not in ("writes", "slow_writes")}


def async_links(a: Analysis) -> list[dict[str, Any]]:
    """The `async` section: per ASYNC link, what it shipped (messages, log sequences) and its own
    one-sided timings (the sender's round trip on its clock, RFS time on the receiver's)."""
    return [
        {
            "configuration": x.configuration,
            **link_entry(a, x.link, a.shipments),
            "first_at": _iso(x.shipments["sent_at"].min()) if x.shipments.height else None,
            "last_at": _iso(x.shipments["sent_at"].max()) if x.shipments.height else None,
            "log_sequences": x.logs.to_dicts(),
            "redo_bytes": None,
            "redo_note": REDO_NOTE,
            "timings": x.timings.to_dicts(),
            "clock": _rows(x.clock),
        }
        for x in scopes.async_links(a)
    ]


def files(a: Analysis, views: list[FileView] | None = None) -> list[dict[str, Any]]:
    """One entry per input file (the inventory's row, plus zone, tim and evidence) and per skipped input
    (`views`: the files' views when the caller already has them)."""
    out: list[dict[str, Any]] = []
    config_of = a.topology.configuration_of()
    for row, f in zip(iso_frame(inventory.table(a)).to_dicts(), views or file_views(a), strict=True):
        extra = {
            "time_zone": f.zone,
            "utc_offset": f.offset or None,
            "tim": {"kind": f.tim.kind, "factor": f.tim.factor, "anchors": f.tim.anchors},
        }
        link = {"db_unique_name": f.db_unique_name, "configuration": config_of.get(f.label)}
        out.append({**row, **extra, "evidence": f.evidence, "skipped": None, **link})
    out += [{"file": s.label, "role": None, "skipped": s.reason} for s in a.skipped]
    return out


def coverage(a: Analysis, views: list[FileView] | None = None) -> list[dict[str, Any]]:
    """Per file: lines = parsed + ignored + unparsed, with the unparsed lines and their reasons."""
    out = []
    for row, f in zip(file_coverage(a).to_dicts(), views or file_views(a), strict=True):
        row["unparsed_lines"] = f.unparsed_lines.head(UNPARSED_LISTED).to_dicts()
        out.append(row)
    return out


def document(a: Analysis, top: int) -> dict[str, Any]:
    """`{"summary", "writes", "unmatched", "files", "coverage", "timeline", "async", "events"}` (docs/output.md)."""
    c = Context.of(a)
    return {
        "summary": summary(a, top, c),
        "writes": _rows(a.writes),
        "unmatched": _rows(a.unmatched),
        "files": files(a, c.files),
        "coverage": coverage(a, c.files),
        "timeline": _rows(insights.per_minute(a.writes)),
        "async": async_links(a),
        "events": _rows(events.around_writes(a)),
    }
