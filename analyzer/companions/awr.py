"""AWR and Statspack reports (text or HTML): the snapshot window and the Data Guard wait events.

DBAs compare dgtrace's per-write split with the report of the same hours: `log file sync` and
`log file parallel write` on the primary, `SYNC Remote Write` (12c+) or `LNS wait on SENDREQ`
(11.2), and on the standby (Statspack) `RFS write`, `RFS random i/o`, `RFS sequential i/o`. This
module reads, for those events, the rows of "Foreground Wait Events", "Background Wait Events" and
Statspack's "Wait Events" (waits, %time-outs, total wait time, average wait) and of every "Wait
Event Histogram" table, keyed on the event name and on the column headings of the report itself.
A section it cannot read is skipped with a named reason; the rest of the report is still read.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from datetime import datetime
from pathlib import Path
from typing import Any

import polars as pl

from analyzer.base.errors import UsageError
from analyzer.base.schemas import frame, schema
from analyzer.companions.awr_cells import Elapsed, SnapLine, Title, buckets, count, millis, parse_line, plain
from analyzer.companions.awr_load import LoadProfile, from_lines, from_tables
from analyzer.companions.awr_tables import Column, Table, html_tables, section_title, text_tables
from analyzer.companions.textinput import read_text, text_lines
from analyzer.parse.grammar import LineError

#: wait event rows of an AWR or Statspack report (`--awr`); `section` is foreground, background or
#: all (Statspack's "Wait Events (fg and bg)"); a blank %time-outs cell is 0 (the report says so)
AWR_EVENTS = schema(
    section=pl.String,
    event=pl.String,
    waits=pl.Int64,
    timeouts_pct=pl.Float64,
    total_wait_s=pl.Float64,
    avg_wait_ms=pl.Float64,
    line=pl.Int64,
)
#: wait event histogram rows, one per bucket: `table` is the section title ("Wait Event Histogram",
#: "Wait Event Histogram (up to 2 sec)", ...), `waits` that table's count column, bounds in ms as
#: labelled (`<1ms` is [lower, 1.0); `<=1s` includes 1000.0; the last bucket has no upper bound)
AWR_HISTOGRAM = schema(
    table=pl.String,
    event=pl.String,
    waits=pl.Int64,
    bucket=pl.String,
    lower_ms=pl.Float64,
    upper_ms=pl.Float64,
    pct=pl.Float64,
    line=pl.Int64,
)

__all__ = ["DATA_GUARD_EVENTS", "AwrReport", "SkippedSection", "parse_awr", "parse_line", "read_awr"]

#: the wait events read by default (names as Oracle prints them)
DATA_GUARD_EVENTS = (
    "SYNC Remote Write",
    "log file sync",
    "log file parallel write",
    "RFS write",
    "RFS random i/o",
    "RFS sequential i/o",
    "LNS wait on SENDREQ",
    "ASYNC Remote Write",
)


# ---------------------------------------------------------------------------- results
@dataclass(frozen=True, slots=True)
class SkippedSection:
    """A section, table or row of an AWR or Statspack report that was not read, and why (an input: `skips.Skipped`)."""

    section: str
    line: int | None
    reason: str


@dataclass(frozen=True)
class AwrReport:
    """What one report says about the Data Guard wait events (frames AWR_EVENTS, AWR_HISTOGRAM)."""

    label: str
    #: "awr" or "statspack"
    kind: str
    #: "text" or "html"
    format: str
    db_name: str | None
    instance: str | None
    host: str | None
    #: "PRIMARY", "PHYSICAL STANDBY", ... (printed from 12.2 on)
    role: str | None
    release: str | None
    begin_snap: int | None
    end_snap: int | None
    #: snapshot times as printed: the database host's local time, no zone
    begin_time: datetime | None
    end_time: datetime | None
    elapsed_s: float | None
    events: pl.DataFrame = field(compare=False, repr=False)
    histogram: pl.DataFrame = field(compare=False, repr=False)
    skipped: tuple[SkippedSection, ...] = ()
    #: the Load Profile's and Instance Activity Stats' redo figures (`analyzer.companions.awr_load`)
    load: LoadProfile | None = None


# ---------------------------------------------------------------------------- tables
def _section(table: Table) -> tuple[str, str] | None:
    """("events", foreground|background|all) or ("histogram", its title), or None."""
    title, summary = table.title.lower(), table.summary.lower()
    if "foreground wait events" in summary or title.startswith("foreground wait events"):
        return "events", "foreground"
    if "background wait events" in summary or title.startswith("background wait events"):
        return "events", "background"
    if "information about total wait time, for each wait event" in summary or title.startswith("wait event histogram"):
        return "histogram", table.title if title.startswith("wait event histogram") else "Wait Event Histogram"
    if title == "wait events" or title.startswith("wait events ("):
        return "events", "all"
    return None


def _role(column: Column, index: int) -> str | None:
    name = " ".join(column.name.lower().split())
    if index == 0:
        return "event" if name.startswith("event") else None
    if "/txn" in name or "/ txn" in name:
        return None
    if re.search(r"tim(e|eouts)?\s*-?\s*outs?\b|timeouts", name):
        return "timeouts"
    if name.startswith("%"):
        return None
    if name.startswith("avg"):
        return "avg"
    if "time" in name and ("total" in name or "(s" in name):
        return "total"
    if name in ("waits", "total waits") or name.startswith("waits "):
        return "waits"
    return None


def _unit(column: Column, default: str) -> str:
    match = re.search(r"\((ns|us|ms|s|sec)\)", column.name.lower())
    return ("s" if match.group(1) == "sec" else match.group(1)) if match else default


def _event(name: str, width: int | None, wanted: dict[str, str]) -> str | None:
    """The wanted event a first cell names; a name that fills its text column may be cut short."""
    found = wanted.get(name.lower())
    if found is None and width is not None and len(name) >= width >= 12:
        found = next((e for key, e in wanted.items() if key.startswith(name.lower())), None)
    return found


def _event_rows(
    table: Table, section: str, wanted: dict[str, str], skipped: list[SkippedSection]
) -> list[dict[str, Any]]:
    roles = {_role(c, i): i for i, c in reversed(list(enumerate(table.columns)))}
    if "event" not in roles or "waits" not in roles or not ({"avg", "total"} & roles.keys()):
        names = ", ".join(c.name for c in table.columns) or "none"
        skipped.append(
            SkippedSection(table.title or section, table.line, f"no Event/Waits/time columns (headings: {names})")
        )
        return []
    avg_unit = _unit(table.columns[roles["avg"]], "ms") if "avg" in roles else "ms"
    rows = []
    for row in table.rows:
        event = _event(row.first, table.columns[0].width, wanted)
        if event is None:
            continue
        cells = row.cells
        cell = {role: cells[i] if i < len(cells) else "" for role, i in roles.items() if role}
        if not any(value.strip() for role, value in cell.items() if role != "event"):
            skipped.append(SkippedSection(table.title or section, row.line, f"{event}: a name without numbers"))
            continue
        try:
            rows.append(
                {
                    "section": section,
                    "event": event,
                    "waits": count(cell["waits"]),
                    "timeouts_pct": plain(cell["timeouts"], 0.0) if "timeouts" in cell else None,
                    "total_wait_s": plain(cell.get("total", "")),
                    "avg_wait_ms": millis(cell.get("avg", ""), avg_unit),
                    "line": row.line,
                }
            )
        except LineError as err:
            skipped.append(SkippedSection(table.title or section, row.line, f"{event}: {err}"))
    return rows


def _histogram_rows(
    table: Table, title: str, wanted: dict[str, str], skipped: list[SkippedSection]
) -> list[dict[str, Any]]:
    bounds = buckets(table.columns)
    waits = next((i for i, c in enumerate(table.columns) if i and _role(c, i) == "waits"), None)
    if not bounds or waits is None or _role(table.columns[0], 0) != "event":
        names = ", ".join(c.name for c in table.columns) or "none"
        skipped.append(SkippedSection(title, table.line, f"no Event/Waits/bucket headings (headings: {names})"))
        return []
    rows = []
    for row in table.rows:
        event = _event(row.first, table.columns[0].width, wanted)
        if event is None:
            continue
        cells = list(row.cells) + [""] * len(table.columns)
        if not any(value.strip() for value in cells[1:]):
            skipped.append(SkippedSection(title, row.line, f"{event}: a name without numbers"))
            continue
        try:
            total = count(cells[waits])
            pcts = [plain(cells[i], 0.0) for i, *_ in bounds]  # a blank cell is "truly 0"
        except LineError as err:
            skipped.append(SkippedSection(title, row.line, f"{event}: {err}"))
            continue
        for (_, label, lower, upper), pct in zip(bounds, pcts, strict=True):
            values: dict[str, Any] = {"table": title, "event": event, "waits": total, "bucket": label}
            rows.append(values | {"lower_ms": lower, "upper_ms": upper, "pct": pct, "line": row.line})
    return rows


# ---------------------------------------------------------------------------- report head
_HEAD = {"db name": "db_name", "instance": "instance", "db role": "role", "role": "role", "release": "release"}


def _head(tables: list[Table], found: dict[str, Any]) -> None:
    for table in tables:
        if not table.rows:
            continue
        first = table.rows[0].cells
        for i, column in enumerate(table.columns):
            key = _HEAD.get(" ".join(column.name.lower().split()))
            if key and i < len(first) and first[i] and key not in found:
                found[key] = first[i]
        if table.columns and table.columns[0].name.lower().startswith("host") and "host" not in found:
            found["host"] = next((c for c in first if c), None)


def _window(line: str, found: dict[str, Any]) -> None:
    if not re.search(r"(Begin Snap|End Snap|Elapsed):", line):
        return
    try:
        record = parse_line(line)
    except LineError:
        return
    if isinstance(record, SnapLine) and f"{record.kind}_snap" not in found:
        found[f"{record.kind}_snap"], found[f"{record.kind}_time"] = record.snap_id, record.at
    elif isinstance(record, Elapsed) and "elapsed_s" not in found:
        found["elapsed_s"] = round(record.minutes * 60.0, 3)


# ---------------------------------------------------------------------------- reports
def _kind(head: str, label: str) -> str:
    lowered = head.lower()
    if "compare period" in lowered:
        raise UsageError(f"{label}: an AWR compare-period report; give a single-period report (awrrpt.sql)")
    if "workload repository report (rac)" in lowered:
        raise UsageError(f"{label}: a global RAC AWR report; give one instance's report (awrrpti.sql)")
    if "workload repository" in lowered:
        return "awr"
    if "statspack report for" in lowered:
        return "statspack"
    what = (
        "binary data" if head.count("\ufffd") > 20 else "no 'WORKLOAD REPOSITORY report for' or 'STATSPACK report for'"
    )
    raise UsageError(f"{label}: not an AWR or Statspack report ({what})")


def parse_awr(text: str, label: str, events: tuple[str, ...] = DATA_GUARD_EVENTS) -> AwrReport:
    """Read an AWR (text or HTML) or Statspack report held in `text`.

    Raises:
        UsageError: not an AWR/Statspack report, or neither its snapshot window nor any wait
            event section could be read (the message names the file and says why).
    """
    is_html = bool(re.search(r"<(html|table|!doctype)", text[:4096], re.IGNORECASE))
    wanted = {e.lower(): e for e in events}
    found: dict[str, Any] = {}
    if is_html:
        headings, tables = html_tables(text)
        kind = _kind(" ".join(headings[:3]) + " " + text[:2048], label)
        _head(tables, found)
        for table in tables:
            for row in table.rows:
                if row.first in ("Begin Snap:", "End Snap:", "Elapsed:"):
                    _window(" ".join(c for c in row.cells if c), found)
        found["load"] = from_tables(tables)
    else:
        lines = text_lines(text)
        kind = _kind("\n".join(lines[:120]), label)
        tables = list(text_tables(lines))
        first_title = next((t.line for t in tables if t.title), len(lines) + 1)
        _head([t for t in tables if not t.title and t.line < first_title], found)
        for line in lines[: first_title - 1]:
            _window(line, found)
        _titles(lines, found)
        found["load"] = from_lines(lines)
    return _report(label, kind, "html" if is_html else "text", tables, wanted, found)


def _titles(lines: list[str], found: dict[str, Any]) -> None:
    """DB name and instance from the first `DB/Inst:` title (Statspack leaves its DB name cell empty)."""
    for line in lines:
        if "DB/Inst:" in line and section_title(line) is not None:
            try:
                record = parse_line(line)
            except LineError:
                continue
            if isinstance(record, Title):
                found.setdefault("db_name", record.db_name)
                found.setdefault("instance", record.instance)
                return


def _report(
    label: str, kind: str, fmt: str, tables: list[Table], wanted: dict[str, str], found: dict[str, Any]
) -> AwrReport:
    skipped: list[SkippedSection] = []
    events: list[dict[str, Any]] = []
    hist: list[dict[str, Any]] = []
    sections = 0
    for table in tables:
        section = _section(table)
        if section is None:
            continue
        sections += 1
        if table.note is not None:
            skipped.append(SkippedSection(table.title, table.line, f"no table under the title: {table.note}"))
        elif section[0] == "events":
            events += _event_rows(table, section[1], wanted, skipped)
        else:
            hist += _histogram_rows(table, section[1], wanted, skipped)
    if not sections and "begin_snap" not in found:
        raise UsageError(
            f"{label}: an {kind.upper()} report, but neither its snapshot window nor a wait event section was found"
        )
    if not sections:
        skipped.append(SkippedSection("", None, "no wait event section in the report"))
    return AwrReport(
        label=label,
        kind=kind,
        format=fmt,
        db_name=found.get("db_name"),
        instance=found.get("instance"),
        host=found.get("host"),
        role=found.get("role"),
        release=found.get("release"),
        begin_snap=found.get("begin_snap"),
        end_snap=found.get("end_snap"),
        begin_time=found.get("begin_time"),
        end_time=found.get("end_time"),
        elapsed_s=found.get("elapsed_s"),
        events=frame(events, AWR_EVENTS),
        histogram=frame(hist, AWR_HISTOGRAM),
        skipped=tuple(skipped),
        load=found.get("load"),
    )


def read_awr(path: str | Path, events: tuple[str, ...] = DATA_GUARD_EVENTS) -> AwrReport:
    """Read an AWR (text or HTML) or Statspack report file (plain, `.gz`, `.bz2` or `.xz`).

    Raises:
        UsageError: no such file, unreadable, not a report, or nothing of it readable.
        LimitExceeded: absurdly large once decompressed.
    """
    text, damage = read_text(path, "AWR report")
    report = parse_awr(text, str(path), events)
    if damage is None:
        return report
    return replace(report, skipped=(*report.skipped, SkippedSection("", None, damage)))
