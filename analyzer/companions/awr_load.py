"""The workload of an AWR or Statspack report as the MAA paper reads it: the Load Profile's redo size per
second and transactions per second, and the Instance Activity Stats' `redo size`, `redo writes` and
`redo write time` (their average redo write size is `redo size` / `redo writes`; their overall redo
write latency `redo write time` / `redo writes` x 10 ms, `redo write time` counting centiseconds): the
paper's "How to assess SYNC performance" tables.

Text reports: the Load Profile lines `Redo size:` (11.2) or `Redo size (bytes):` (12c on) and
`Transactions:`, the first number (per second); Instance Activity Stats rows `redo size`, `redo writes`,
`redo write time` flush left, a statistic name, two or more blanks, then Total and per Second. HTML
reports: the same first cells in their tables. A number the report does not print stays None.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from analyzer.companions.awr_cells import plain
from analyzer.companions.awr_tables import Table
from analyzer.parse.grammar import LineError

#: a Load Profile line: its label and its first number (per second)
_PROFILE = re.compile(r"^\s*(Redo size(?: \(bytes\))?|Transactions):\s+(\S+)")
#: an Instance Activity Stats row: the statistic, its total and its rate per second
_ACTIVITY = re.compile(r"^(redo size|redo writes|redo write time) {2,}(\S+) +(\S+)")
_PROFILE_KEYS = {"Redo size": "redo_bytes_s", "Redo size (bytes)": "redo_bytes_s", "Transactions": "transactions_s"}
_ACTIVITY_KEYS = {"redo size": "redo_bytes", "redo writes": "redo_writes", "redo write time": "redo_write_time_cs"}
#: the lines a text report's workload is read from, each with the field its label names
_LINES = ((_PROFILE, _PROFILE_KEYS), (_ACTIVITY, _ACTIVITY_KEYS))


@dataclass(frozen=True)
class LoadProfile:
    """What a report says about its workload (None: not printed), with the line of each figure."""

    redo_bytes_s: float | None = None
    transactions_s: float | None = None
    #: Instance Activity Stats totals over the window
    redo_bytes: float | None = None
    redo_writes: float | None = None
    redo_write_time_cs: float | None = None
    lines: tuple[int, ...] = ()

    @property
    def write_bytes(self) -> float | None:
        """The average redo write size: redo size / redo writes."""
        if self.redo_bytes is None or not self.redo_writes:
            return None
        return self.redo_bytes / self.redo_writes

    @property
    def write_ms(self) -> float | None:
        """The overall redo write latency (local and remote): redo write time (cs) / redo writes x 10."""
        if self.redo_write_time_cs is None or not self.redo_writes:
            return None
        return self.redo_write_time_cs / self.redo_writes * 10.0

    @property
    def empty(self) -> bool:
        return self.redo_bytes_s is None and self.transactions_s is None and self.redo_writes is None


def _number(cell: str) -> float | None:
    try:
        return plain(cell.strip())
    except LineError:
        return None


def from_lines(lines: Iterable[str]) -> LoadProfile | None:
    """The workload of a text report (its lines, numbered from 1); None when it prints none of it."""
    found: dict[str, float] = {}
    where: list[int] = []
    for number, line in enumerate(lines, 1):
        for pattern, keys in _LINES:  # a line is a Load Profile line, else an Instance Activity Stats row
            row = pattern.match(line)
            if row and keys[row[1]] not in found:
                value = _number(row[2])
                if value is not None:
                    found[keys[row[1]]] = value
                    where.append(number)
                break
    return _profile(found, where)


def from_tables(tables: Iterable[Table]) -> LoadProfile | None:
    """The workload of an HTML report (its tables); None when it prints none of it."""
    found: dict[str, float] = {}
    where: list[int] = []
    for table in tables:
        for row in table.rows:
            first, cells = row.first.strip(), row.cells
            key = _PROFILE_KEYS.get(first.removesuffix(":")) if first.endswith(":") else _ACTIVITY_KEYS.get(first)
            if key is None or key in found or len(cells) < 2:
                continue
            value = _number(cells[1])
            if value is not None:
                found[key] = value
                where.append(row.line)
    return _profile(found, where)


def _profile(found: dict[str, float], where: list[int]) -> LoadProfile | None:
    if not found:
        return None
    return LoadProfile(**found, lines=tuple(where))
