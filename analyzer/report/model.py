"""The analysis as one plain document (dicts and lists): the `--format json` contract."""

from __future__ import annotations

from dataclasses import asdict
from datetime import datetime
from typing import Any

import polars as pl

from analyzer import events, insights, inventory
from analyzer.report.facts import oracle_versions
from analyzer.results import Analysis
from analyzer.results import coverage as file_coverage
from analyzer.summary import component_stats, histogram, slowest, time_shares, verdict_totals
from analyzer.vocab import TOTAL_AND_COMPONENTS, ms_column

SCHEMA_VERSION = 1
#: at most this many unparsed lines are listed per file (all are counted)
UNPARSED_LISTED = 200
HISTOGRAM_COMPONENTS = tuple(ms_column(m) for m in TOTAL_AND_COMPONENTS)


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


def notes(a: Analysis) -> list[str]:
    """Plain-language caveats: the inventory's findings, plus what the analysis itself found."""
    out = inventory.findings(a)
    warned = a.writes["warning"].drop_nulls().cast(pl.String)
    if len(warned):
        small = int(warned.str.contains("within timestamp resolution", literal=True).sum())
        out.append(
            f"{len(warned)} write(s) have a negative component ({small} within timestamp resolution,"
            f" {len(warned) - small} beyond it: see their 'warning')"
        )
    return out


def log_switches(sw: insights.SwitchAnalysis) -> dict[str, Any]:
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


def summary(a: Analysis, top: int, switches: insights.SwitchAnalysis | None = None) -> dict[str, Any]:
    """The `summary` object: counts, statistics, histograms, verdicts, top-N, LGWR warnings, recommendations.

    `switches`: the log-switch analysis of `a.writes` when the caller already has it.
    """
    w = a.writes
    slow = w.filter(pl.col("slow"))
    matched = int(w["matched"].sum())
    switches = switches or insights.switch_analysis(a)
    advice = insights.recommendations(w, a.options.threshold_ms, switches, oracle_versions(a))
    return {
        "schema_version": SCHEMA_VERSION,
        "threshold_ms": a.options.threshold_ms,
        "match_window_s": a.options.window_s,
        "primary_writes": a.primary_exchanges,
        "standby_writes": a.standby_exchanges,
        "matched_writes": matched,
        "match_rate": round(matched / a.primary_exchanges, 4) if a.primary_exchanges else None,
        "slow_writes": slow.height,
        "unmatched_messages": a.unmatched.height,
        "unparsed_lines": sum(f.parsed.unparsed for f in a.files),
        "first_write_at": _iso(w["sent_at"].min()) if w.height else None,
        "last_write_at": _iso(w["sent_at"].max()) if w.height else None,
        "components": component_stats(w).to_dicts(),
        "histograms": {c.removesuffix("_ms"): histogram(w, c).to_dicts() for c in HISTOGRAM_COMPONENTS},
        "verdicts": verdict_totals(w).to_dicts(),
        "slow_time_shares": time_shares(w),
        "top": _rows(slowest(w, top)),
        "lgwr_warnings": _rows(a.warnings),
        "clock": _rows(a.clock),
        "notes": notes(a),
        "log_switches": log_switches(switches),
        "gaps": _rows(a.gaps),
        "destinations": _rows(a.destinations),
        "recommendations": [asdict(r) for r in advice],
    }


def files(a: Analysis) -> list[dict[str, Any]]:
    """One entry per input file (the inventory's row, plus zone, tim and evidence) and per skipped input."""
    out: list[dict[str, Any]] = []
    for row, f in zip(iso_frame(inventory.table(a)).to_dicts(), a.files, strict=True):
        tim = f.reduced.tim
        extra = {"time_zone": f.reduced.zone, "tim": {"kind": tim.kind, "factor": tim.factor, "anchors": tim.anchors}}
        out.append({**row, **extra, "evidence": f.reduced.info.evidence, "skipped": None})
    out += [{"file": s.label, "role": None, "skipped": s.reason} for s in a.skipped]
    return out


def coverage(a: Analysis) -> list[dict[str, Any]]:
    """Per file: lines = parsed + ignored + unparsed, with the unparsed lines and their reasons."""
    out = []
    for row, f in zip(file_coverage(a.files).to_dicts(), a.files, strict=True):
        listed = f.parsed.tables["unparsed"].head(UNPARSED_LISTED)
        row["unparsed_lines"] = listed.to_dicts()
        out.append(row)
    return out


def document(a: Analysis, top: int) -> dict[str, Any]:
    """`{"summary", "writes", "unmatched", "files", "coverage", "timeline", "events"}` (README, "Output contract")."""
    return {
        "summary": summary(a, top),
        "writes": _rows(a.writes),
        "unmatched": _rows(a.unmatched),
        "files": files(a),
        "coverage": coverage(a),
        "timeline": _rows(insights.per_minute(a.writes)),
        "events": _rows(events.around_writes(a)),
    }
