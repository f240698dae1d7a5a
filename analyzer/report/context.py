"""What every report works from: the analysis summarised once in typed values (its files, counts, caveats, log
switches, comparisons, configurations and links), and tables as plain strings."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import cached_property

from analyzer.findings import compare, insights, switching
from analyzer.findings.files import FileView, file_views
from analyzer.match.analysis import Analysis
from analyzer.report.facts import Counts, counts, notes
from analyzer.report.fmt import common_dir, short_label
from analyzer.report.scopes import AsyncLink, Scope, async_links, scopes, upload_recommendations

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
    """What every section of a report needs, computed once."""

    analysis: Analysis
    #: every file read, as the reports see it
    files: list[FileView]
    counts: Counts
    #: the caveats in words (`facts.notes`)
    notes: list[str]
    switches: switching.SwitchAnalysis
    #: the what-ifs and the comparisons with oratcptest, AWR and the distance
    checks: compare.Checks
    #: the recommendations of the upload (`report.scopes.upload_recommendations`)
    recommendations: list[insights.Recommendation]
    #: each configuration with its writes, figures, verdict and recommendations (`report.scopes`)
    scopes: list[Scope]

    @classmethod
    def of(cls, a: Analysis) -> Context:
        """Summarise an analysis for the reports (the log switches, the comparisons and the findings per
        configuration once)."""
        files = file_views(a)
        switches = switching.switch_analysis(a)
        checks = compare.checks(a)
        scoped = scopes(a, switches, checks)
        if len(scoped) == 1:  # the log switches, what-ifs and comparisons of its commit path
            switches, checks = scoped[0].switches, scoped[0].checks
        return cls(
            analysis=a,
            files=files,
            counts=counts(a, files),
            notes=notes(a, files),
            switches=switches,
            checks=checks,
            recommendations=upload_recommendations(scoped),
            scopes=scoped,
        )

    @cached_property
    def common(self) -> str:
        """The directory every file is in (`common_dir`; "" when none)."""
        return common_dir(self.labels)

    @cached_property
    def labels(self) -> list[str]:
        """Every file's label, in the analysis's order."""
        return [f.label for f in self.files]

    @cached_property
    def shipping(self) -> list[AsyncLink]:
        """The ASYNC links: what each shipped and its own one-sided timings (computed when asked)."""
        return async_links(self.analysis)

    @property
    def several(self) -> bool:
        """The upload holds more than one configuration: verdicts and recommendations are given per configuration."""
        return len(self.scopes) > 1

    def where(self, label: str | None, line: int | None) -> str:
        """`file:line` with the file relative to the inputs' common directory."""
        return f"{short_label(label, self.common)}:{line}" if label else ""

    def file(self, label: str) -> str:
        """A file relative to the inputs' common directory."""
        return short_label(label, self.common)


def more(shown: int, total: int, what: str, where: str) -> str:
    """`10 of 11,314 warnings (the longest); 11,304 more: --format csv --table warnings.`, or "" when all are shown."""
    return f"{shown:,} of {total:,} {what}; {total - shown:,} more: {where}." if shown < total else ""
