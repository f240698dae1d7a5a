"""What every human report (Markdown, HTML) works from: the analysis summarised once, and tables as plain strings."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from analyzer.findings import compare, switching
from analyzer.findings.insights import Recommendation
from analyzer.match.analysis import Analysis
from analyzer.report import model as doc
from analyzer.report.fmt import short_label
from analyzer.report.scopes import Scope

_NUMBER = re.compile(r"[-+]?[\d,]*\.?\d+(%| s)?")


@dataclass(frozen=True)
class Table:
    """A report table as plain strings; a cell may hold several lines (`\\n`)."""

    headers: tuple[str, ...]
    rows: Sequence[tuple[str, ...]]
    #: a sentence shown above the table (e.g. that it lists only some rows)
    note: str = ""
    #: columns a narrow terminal may leave out (with a note), the first named first
    optional: tuple[str, ...] = ()
    #: columns of `file:line` labels, which a narrow terminal may shorten to the file's name
    paths: tuple[str, ...] = ()
    #: the column that names a row: a narrow terminal lists the `paths` cells under the table by it
    key: str = ""

    def trimmed(self) -> Table:
        """The table without its optional columns that are empty in every row."""
        keep = [i for i, h in enumerate(self.headers) if h not in self.optional or any(r[i] for r in self.rows)]
        if len(keep) == len(self.headers):
            return self
        return replace(
            self,
            headers=tuple(self.headers[i] for i in keep),
            rows=[tuple(r[i] for i in keep) for r in self.rows],
        )

    def numeric(self) -> list[bool]:
        """Per column: every non-empty cell is a number (right-aligned)."""
        return [
            any(r[i] for r in self.rows) and all(not r[i] or _NUMBER.fullmatch(r[i]) for r in self.rows)
            for i in range(len(self.headers))
        ]


@dataclass(frozen=True)
class Context:
    """What every section of a human report needs, computed once."""

    analysis: Analysis
    summary: Mapping[str, Any]
    switches: switching.SwitchAnalysis
    labels: list[str]
    #: the what-ifs and the comparisons with oratcptest, AWR and the distance
    checks: compare.Checks
    #: the recommendations of all the writes (as `summary.recommendations`)
    recommendations: list[Recommendation] = field(default_factory=list)
    #: each configuration with its writes, figures, verdict and recommendations (`report.scopes`)
    scopes: list[Scope] = field(default_factory=list)
    #: the ASYNC links as the JSON `async` section gives them (shipments, log sequences, one-sided timings)
    shipping: list[dict[str, Any]] = field(default_factory=list)

    @classmethod
    def of(cls, a: Analysis, top: int) -> Context:
        """Summarise an analysis for the report sections (the log switches, the comparisons and the
        findings per configuration once, for the summary too)."""
        switches = switching.switch_analysis(a)
        checks = compare.checks(a)
        found = doc.findings(a, switches, checks)
        summary = doc.summary(a, top, switches, checks, found)
        labels = [f.source.label for f in a.files]
        return cls(a, summary, switches, labels, checks, *found, doc.async_links(a))

    @property
    def several(self) -> bool:
        """The upload holds more than one configuration: verdicts and recommendations are given per configuration."""
        return len(self.scopes) > 1

    def where(self, label: str | None, line: int | None) -> str:
        """`file:line` with the file relative to the inputs' common directory."""
        return f"{short_label(label, self.labels)}:{line}" if label else ""

    def file(self, label: str) -> str:
        """A file relative to the inputs' common directory."""
        return short_label(label, self.labels)


def more(shown: int, total: int, what: str, where: str) -> str:
    """`10 of 11,314 warnings (the longest); 11,304 more: --format csv --table warnings.`, or "" when all are shown."""
    return f"{shown:,} of {total:,} {what}; {total - shown:,} more: {where}." if shown < total else ""
