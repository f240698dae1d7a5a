"""Markdown report (GitHub-flavoured) for a ticket, and the report tables it shares with the HTML report."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, TextIO

import polars as pl

from analyzer import api, insights
from analyzer.report import model as doc

_NUMBER = re.compile(r"[-+]?[\d,]*\.?\d+(%| s)?")


@dataclass(frozen=True)
class Table:
    """A report table as plain strings; a cell may hold several lines (`\\n`)."""

    headers: tuple[str, ...]
    rows: Sequence[tuple[str, ...]]
    #: a sentence shown above the table (e.g. that it lists only some rows)
    note: str = ""

    def numeric(self) -> list[bool]:
        """Per column: every non-empty cell is a number (right-aligned)."""
        return [
            any(r[i] for r in self.rows) and all(not r[i] or _NUMBER.fullmatch(r[i]) for r in self.rows)
            for i in range(len(self.headers))
        ]


@dataclass(frozen=True)
class Context:
    """What every section of a human report needs, computed once."""

    analysis: api.Analysis
    summary: Mapping[str, Any]
    switches: insights.SwitchAnalysis
    labels: list[str]

    @classmethod
    def of(cls, a: api.Analysis, top: int) -> Context:
        """Summarise an analysis for the report sections."""
        return cls(a, doc.summary(a, top), insights.analyze_log_switches(a.writes), [f.source.label for f in a.files])

    def where(self, label: str | None, line: int | None) -> str:
        """`file:line` with the file relative to the inputs' common directory."""
        return f"{doc.short_label(label, self.labels)}:{line}" if label else ""


def ms(value: float | None, resolution_ms: float | None = None) -> str:
    """Milliseconds as the stamps allow (see `model.fmt_ms`), empty when unknown."""
    return doc.fmt_ms(value, resolution_ms)


def _at(value: datetime | None) -> str:
    return value.strftime("%Y-%m-%d %H:%M:%S.%f") if value else ""


def facts_table(c: Context) -> Table:
    """The facts: files, hosts, versions, time span, match rate, coverage."""
    return Table(("fact", "value"), list(insights.facts(c.analysis, c.summary)))


def top_table(c: Context, top: int) -> Table:
    """The slowest writes with their breakdown, log-switch distance and evidence (file:line)."""
    rows = []
    for w in insights.top_writes(c.analysis.writes, top, c.switches).iter_rows(named=True):
        switch = w["switch_at"]
        sides = ((w["primary_file"], w["primary_line"]), (w["standby_file"], w["standby_line"]))
        rows.append(
            (
                _at(w["sent_at"]),
                str(w["thread"]),
                str(w["seq"]),
                str(w["msgid"]),
                ms(w["total_ms"], w["resolution_ms"]),
                ms(w["network_ms"], w["resolution_ms"]),
                ms(w["rfs_io_ms"]),
                ms(w["rfs_other_ms"], w["resolution_ms"]),
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
            ms(r["p50_ms"]),
            ms(r["p99_ms"]),
            ms(r["max_ms"]),
            ms(r["rfs_io_p99_ms"]),
        )
        for r in c.switches.comparison.iter_rows(named=True)
    ]
    return Table(("writes", "count", "slow", "slow rate", "p50 ms", "p99 ms", "max ms", "rfs_io p99 ms"), rows)


def warnings_table(c: Context, top: int) -> Table:
    """The `top` longest LGWR long-write warnings with the breakdown of the remote write they cover."""
    warnings = c.analysis.warnings
    listed = warnings.sort("elapsed_ms", "at", descending=[True, False]).head(top)
    rows = [
        (
            _at(w["at"]),
            str(w["thread"] or ""),
            str(w["elapsed_ms"]),
            str(w["size_kb"] or ""),
            str(w["msgid"] or ""),
            ms(w["remote_total_ms"]),
            ms(w["network_ms"]),
            ms(w["rfs_io_ms"]),
            ms(w["rfs_other_ms"]),
            w["verdict"] or "no remote write found",
            c.where(w["file"], w["line"]),
        )
        for w in listed.iter_rows(named=True)
    ]
    headers = ("at (UTC)", "thread", "elapsed ms", "size KB", "msgid", "remote ms", "network ms", "rfs_io ms")
    note = f"The {listed.height} longest of {warnings.height:,}." if listed.height < warnings.height else ""
    return Table((*headers, "rfs_other ms", "verdict", "evidence"), rows, note)


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
    return _counted(c, api.unparsed(c.analysis.files), ("family", "reason"))


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", "<br>")


def markdown_table(t: Table) -> list[str]:
    """GitHub-flavoured Markdown lines of a table (its note first); `|` escaped, line breaks as <br>."""
    align = ["---:" if n else "---" for n in t.numeric()]
    lines = [t.note, ""] if t.note else []
    lines += ["| " + " | ".join(t.headers) + " |", "|" + "|".join(align) + "|"]
    return lines + ["| " + " | ".join(_cell(x) for x in row) + " |" for row in t.rows]


def no_recommendation(c: Context) -> str:
    """Why the numbers call for no recommendation."""
    if not c.summary["matched_writes"]:
        why = "no remote write was matched"
    elif not c.summary["slow_writes"]:
        why = f"no write reached {c.analysis.options.threshold_ms:g} ms"
    else:
        why = "no component holds a major share of slow-write time and slow writes do not cluster at log switches"
    return f"No recommendation: {why}."


def _recommendations(c: Context) -> list[str]:
    recs = c.summary["recommendations"]
    if not recs:
        return [no_recommendation(c)]
    out = []
    for r in recs:
        out += [f"### {r['title']}", "", f"**Evidence:** {r['evidence']}", "", f"**Advice:** {r['advice']}", ""]
    return out[:-1]


def _section(title: str, body: list[str]) -> list[str]:
    return ["", f"## {title}", "", *body]


def render_markdown(a: api.Analysis, out: TextIO, top: int) -> None:
    """Write the report as GitHub-flavoured Markdown (deterministic: no clock, no absolute paths)."""
    c = Context.of(a, top)
    lines = [
        "# dgtrace: Data Guard SYNC remote writes",
        "",
        f"**{insights.verdict_sentence(a.writes, a.options.threshold_ms)}**",
    ]
    lines += _section("Facts", markdown_table(facts_table(c)))
    lines += _section("Recommendations", _recommendations(c))
    switch_body = [c.switches.finding]
    if c.switches.switches.height:
        switch_body += ["", *markdown_table(switch_table(c))]
    lines += _section("Log switches", switch_body)
    if a.writes.height:
        lines += _section(f"Top {top} slowest writes", markdown_table(top_table(c, top)))
    if a.warnings.height:
        lines += _section("LGWR long-write warnings", markdown_table(warnings_table(c, top)))
    if a.unmatched.height:
        lines += _section("Unmatched messages", markdown_table(unmatched_table(c)))
    if c.summary["unparsed_lines"]:
        lines += _section("Unparsed lines", markdown_table(unparsed_table(c)))
    if c.summary["notes"]:
        lines += _section("Notes", [f"- {note}" for note in c.summary["notes"]])
    out.write("\n".join(lines) + "\n")
