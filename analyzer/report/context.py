"""What every human report (Markdown, HTML) works from: the analysis summarised once, and tables as plain strings."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from analyzer import insights
from analyzer.report import model as doc
from analyzer.report.fmt import short_label
from analyzer.results import Analysis

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

    analysis: Analysis
    summary: Mapping[str, Any]
    switches: insights.SwitchAnalysis
    labels: list[str]

    @classmethod
    def of(cls, a: Analysis, top: int) -> Context:
        """Summarise an analysis for the report sections (the log switches once, for the summary too)."""
        switches = insights.switch_analysis(a)
        return cls(a, doc.summary(a, top, switches), switches, [f.source.label for f in a.files])

    def where(self, label: str | None, line: int | None) -> str:
        """`file:line` with the file relative to the inputs' common directory."""
        return f"{short_label(label, self.labels)}:{line}" if label else ""
