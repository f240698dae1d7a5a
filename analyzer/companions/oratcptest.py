"""oratcptest client output as a network baseline: the settings, interval lines and averages of each run.

oratcptest (MOS note 2064368.1) sends messages of a chosen size from the primary host to a server on
the standby host, in SYNC mode (waits for each acknowledgement, optionally after the server wrote the
message to disk) or ASYNC mode. Its client prints one `[Requesting a test]` block of settings, one line
per statistics interval and the averages. Each run found in a file is one `BaselineRun`; every line of
the file is accounted for as parsed, ignored (blank, server side, outside a run) or unparsed with a
reason. Units are normalised: sizes in bytes, times in ms or s, throughput in bytes/s and MiB/s, where
oratcptest's "Mbyte" is 1024x1024 bytes (the client says so: `(1 Mbyte = 1024x1024 bytes)`).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import time
from pathlib import Path
from typing import Any

import polars as pl

from analyzer.base.errors import UsageError
from analyzer.base.schemas import frame, schema
from analyzer.companions.oratcptest_lines import (
    MIB,
    Clocked,
    Interval,
    Marker,
    Quantity,
    Record,
    ServerDone,
    Setting,
    UnitNote,
    millis,
    parse_line,
    rate_bytes_s,
    seconds,
    size_bytes,
)
from analyzer.companions.textinput import read_text, text_lines
from analyzer.parse.grammar import LineError

#: oratcptest interval lines of one run (`--baseline`): sizes in bytes, times in ms or s, where
#: oratcptest's Mbyte is 1024x1024 bytes; `elapsed_s` counts from `The server is ready.` (from the
#: first interval line when that line is missing), across midnight
BASELINE_INTERVALS = schema(
    run=pl.Int64,
    line=pl.Int64,
    at=pl.Time,
    elapsed_s=pl.Float64,
    throughput_bytes_s=pl.Float64,
    throughput_mib_s=pl.Float64,
    latency_ms=pl.Float64,
    disk_write_ms=pl.Float64,
)
#: every line of an oratcptest file: `status` is parsed, ignored or unparsed (then `reason` says why)
BASELINE_LINES = schema(line=pl.Int64, status=pl.String, kind=pl.String, reason=pl.String, text=pl.String)

__all__ = ["BaselineAverages", "BaselineRun", "BaselineSettings", "parse_baseline", "parse_line", "read_baseline"]


# ---------------------------------------------------------------------------- results
@dataclass(frozen=True, slots=True)
class BaselineSettings:
    """The `[Requesting a test]` block, normalised (None: not printed, or `(system default)`)."""

    payload_bytes: int | None = None
    payload_content: str | None = None
    #: 0.0 for `Delay between messages = NO`
    delay_ms: float | None = None
    connections: int | None = None
    #: the requested socket send buffer; None when `(system default)` or not printed
    send_buffer_bytes: int | None = None
    #: "SYNC" or "ASYNC"
    mode: str | None = None
    disk_write: bool | None = None
    interval_s: float | None = None
    duration_s: float | None = None
    frequency: str | None = None
    network_timeout: str | None = None
    #: bytes in the client's "Mbyte" (from its `(1 Mbyte = ...)` line, else 1024x1024)
    mbyte_bytes: int = MIB
    #: settings this reader does not interpret, as printed
    other: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True, slots=True)
class BaselineAverages:
    """The lines after `Test finished.`."""

    throughput_bytes_s: float | None
    throughput_mib_s: float | None
    latency_ms: float | None
    disk_write_ms: float | None
    #: the socket send buffer the test ended with (`Socket send buffer = 846 kbytes`)
    send_buffer_bytes: int | None


@dataclass(frozen=True)
class BaselineRun:
    """One oratcptest client run: settings, interval lines (BASELINE_INTERVALS), averages, lines.

    `lines` (BASELINE_LINES) accounts for every line from the end of the previous run (the start of
    the file for the first run) to the line before the next `[Requesting a test]` (the end of the file
    for the last), so the runs of a file together account for each of its lines once. When a
    compressed file is damaged, the last run's `lines` ends with a row without line number saying so.
    """

    label: str
    run: int
    #: the `[Requesting a test]` line
    first_line: int
    settings: BaselineSettings
    ready_at: time | None
    finished_at: time | None
    averages: BaselineAverages | None
    intervals: pl.DataFrame = field(compare=False, repr=False)
    lines: pl.DataFrame = field(compare=False, repr=False)

    @property
    def finished(self) -> bool:
        """The run printed `Test finished.` (a pasted log can stop earlier)."""
        return self.finished_at is not None

    @property
    def unparsed(self) -> int:
        """Lines of this run's span that could not be read."""
        return int(self.lines["status"].eq("unparsed").sum())


# ---------------------------------------------------------------------------- runs
_CLIENT_KINDS = ("interval", "ready", "finished", "columns", "unit_note")


class _Run:
    """What one run has collected so far (raw records; units are applied when it is built)."""

    def __init__(self, number: int, line: int) -> None:
        self.number, self.first_line = number, line
        self.phase = "request"  # request -> running -> finished
        self.settings: list[Setting] = []
        self.mbyte = MIB
        self.ready: time | None = None
        self.finished: time | None = None
        self.intervals: list[tuple[int, Interval]] = []
        self.after: list[Setting] = []

    def take(self, rec: Record) -> str | None:
        """Add a record; None when it fits, else why not (the line is then unparsed)."""
        if isinstance(rec, Setting):
            return self._setting(rec)
        if isinstance(rec, UnitNote):
            if self.phase != "request" or rec.unit.lower() not in ("mbyte", "mbytes"):
                return "unit note outside the request block"
            self.mbyte = rec.bytes
        elif isinstance(rec, Clocked) and rec.kind == "ready":
            self.ready, self.phase = rec.at, "running"
        elif isinstance(rec, Clocked):
            if self.phase == "finished":
                return "a second 'Test finished.' line"
            self.finished, self.phase = rec.at, "finished"
        elif isinstance(rec, Interval):
            return self._interval(rec)
        elif isinstance(rec, Marker) and rec.kind == "columns":
            if self.phase == "finished":
                return "column headings after 'Test finished.'"
            self.phase = "running"
        else:  # pragma: no cover - the caller routes every other record
            return f"unexpected {type(rec).__name__}"
        return None

    def _setting(self, rec: Setting) -> str | None:
        if self.phase == "finished":
            if rec.key.lower() not in ("avg. throughput", "avg. latency", "socket send buffer"):
                return f"setting {rec.key!r} after 'Test finished.'"
            problem = _check_average(rec)
            if problem is None and any(a.key.lower() == rec.key.lower() for a in self.after):
                problem = f"a second {rec.key!r} line"
            if problem is None:
                self.after.append(rec)
            return problem
        if self.phase != "request":
            return f"setting {rec.key!r} between interval lines"
        problem = _check_setting(rec)
        if problem is None:
            self.settings.append(rec)
        return problem

    def _interval(self, rec: Interval) -> str | None:
        if self.phase == "finished":
            return "interval line after 'Test finished.'"
        for q in (rec.throughput, rec.latency):
            problem = _check(q, rate_bytes_s if q is rec.throughput else _latency)
            if problem:
                return problem
        self.phase = "running"
        return None


def _latency(q: Quantity) -> float:
    if q.disk_write is not None:
        millis(q.disk_write, q.disk_write_unit)
    return millis(q.number, q.unit)


def _check(q: Quantity | None, convert: Any) -> str | None:
    try:
        if q is not None:
            convert(q)
    except ValueError as err:
        return str(err)
    return None


_SETTING_CHECKS: dict[str, Any] = {
    "message payload": size_bytes,
    "socket send buffer": size_bytes,
    "number of connections": lambda q: q.unit is None or _fail(f"unexpected unit {q.unit!r}"),
    "statistics interval": seconds,
    "test duration": seconds,
    "delay between messages": lambda q: millis(q.number, q.unit),
}
_WORDS = {"transport mode": ("SYNC", "ASYNC"), "disk write": ("YES", "NO"), "delay between messages": ("NO",)}


def _fail(message: str) -> bool:
    raise ValueError(message)


def _check_setting(rec: Setting) -> str | None:
    key = rec.key.lower()
    if rec.quantity is not None:
        return _check(rec.quantity, _SETTING_CHECKS.get(key, lambda q: None))
    allowed = _WORDS.get(key)
    word = (rec.text or "").split(" ")[0].upper()
    if allowed and word not in allowed:
        return f"{rec.key} = {rec.text!r}: expected {' or '.join(allowed)}"
    if key in _SETTING_CHECKS and key not in _WORDS and not (rec.text or "").startswith("("):
        return f"{rec.key} = {rec.text!r}: expected a number with its unit"
    return None


def _check_average(rec: Setting) -> str | None:
    key = rec.key.lower()
    if rec.quantity is None:
        return f"{rec.key} = {rec.text!r}: expected a number with its unit"
    convert = {"avg. throughput": rate_bytes_s, "avg. latency": _latency}.get(key, size_bytes)
    return _check(rec.quantity, convert)


def _settings(run: _Run) -> BaselineSettings:
    values: dict[str, Any] = {"mbyte_bytes": run.mbyte}
    other: list[tuple[str, str]] = []
    for s in run.settings:
        key, q, text = s.key.lower(), s.quantity, s.text or ""
        if key == "message payload" and q is not None:
            values["payload_bytes"] = size_bytes(q, run.mbyte)
        elif key == "payload content type":
            values["payload_content"] = text
        elif key == "delay between messages":
            values["delay_ms"] = millis(q.number, q.unit) if q is not None else 0.0
        elif key == "number of connections" and q is not None:
            values["connections"] = int(q.number)
        elif key == "socket send buffer":
            values["send_buffer_bytes"] = size_bytes(q, run.mbyte) if q is not None else None
        elif key == "transport mode":
            values["mode"] = text.upper()
        elif key == "disk write":
            values["disk_write"] = text.upper().startswith("YES")
        elif key in ("statistics interval", "test duration") and q is not None:
            values["interval_s" if key.startswith("stat") else "duration_s"] = seconds(q)
        elif key in ("test frequency", "network timeout"):
            values["frequency" if key == "test frequency" else "network_timeout"] = text or _printed(q)
        else:
            other.append((s.key, text or _printed(q)))
    return BaselineSettings(**values, other=tuple(other))


def _printed(q: Quantity | None) -> str:
    return "" if q is None else f"{q.number:g} {q.unit or ''}".strip()


def _averages(run: _Run) -> BaselineAverages | None:
    if not run.after:
        return None
    found = {s.key.lower(): s.quantity for s in run.after if s.quantity is not None}
    rate, latency, buffer = found.get("avg. throughput"), found.get("avg. latency"), found.get("socket send buffer")
    per_s = rate_bytes_s(rate, run.mbyte) if rate is not None else None
    return BaselineAverages(
        throughput_bytes_s=per_s,
        throughput_mib_s=per_s / MIB if per_s is not None else None,
        latency_ms=millis(latency.number, latency.unit) if latency is not None else None,
        disk_write_ms=_disk_ms(latency),
        send_buffer_bytes=size_bytes(buffer, run.mbyte) if buffer is not None else None,
    )


def _intervals(run: _Run) -> pl.DataFrame:
    rows: list[dict[str, object]] = []
    origin = run.ready or (run.intervals[0][1].at if run.intervals else None)
    elapsed, previous = 0.0, origin
    for line, rec in run.intervals:
        if previous is not None:
            step = _seconds_of(rec.at) - _seconds_of(previous)
            elapsed += step + (86400.0 if step < 0 else 0.0)  # past midnight
        previous = rec.at
        per_s = rate_bytes_s(rec.throughput, run.mbyte)
        lat = rec.latency
        rows.append(
            {
                "run": run.number,
                "line": line,
                "at": rec.at,
                "elapsed_s": elapsed,
                "throughput_bytes_s": per_s,
                "throughput_mib_s": per_s / MIB,
                "latency_ms": millis(lat.number, lat.unit) if lat is not None else None,
                "disk_write_ms": _disk_ms(lat),
            }
        )
    return frame(rows, BASELINE_INTERVALS)


def _disk_ms(q: Quantity | None) -> float | None:
    return millis(q.disk_write, q.disk_write_unit) if q is not None and q.disk_write is not None else None


def _seconds_of(at: time) -> float:
    return at.hour * 3600.0 + at.minute * 60.0 + at.second


# ---------------------------------------------------------------------------- files
def parse_baseline(text: str, label: str) -> list[BaselineRun]:
    """The oratcptest client runs in `text` (one `BaselineRun` per `[Requesting a test]` block).

    Raises:
        UsageError: `text` holds no oratcptest client run (the message says what it holds instead).
    """
    lines = text_lines(text)
    notes: list[dict[str, object]] = []
    runs: list[_Run] = []
    server = False
    client_lines = 0

    def note(number: int, status: str, kind: str | None, reason: str | None) -> None:
        notes.append({"line": number, "status": status, "kind": kind, "reason": reason, "text": lines[number - 1]})

    for number, raw in enumerate(lines, 1):
        if not raw.strip():
            note(number, "ignored", None, "blank")
            continue
        try:
            rec: Record | None = parse_line(raw)
            error = None
        except LineError as err:
            rec, error = None, str(err)
        kind = _kind(rec)
        current = runs[-1] if runs else None
        if kind == "request":
            server = False
            runs.append(_Run(len(runs) + 1, number))
            note(number, "parsed", kind, None)
        elif kind in ("server_started", "server_request", "server_done") or (server and kind == "setting"):
            server = kind != "server_done"
            note(number, "ignored", kind, "server side")
        elif current is None:
            client_lines += kind in _CLIENT_KINDS
            status, why = ("unparsed", f"{kind} line outside a client run") if kind in _CLIENT_KINDS else _outside(kind)
            note(number, status, kind, why)
        elif rec is None and current.phase == "finished":
            note(number, "ignored", None, "after the end of the run")  # a prompt, prose
        elif rec is None:
            note(number, "unparsed", None, f"not an oratcptest client line: {error}")
        else:
            problem = current.take(rec)
            note(number, "unparsed" if problem else "parsed", kind, problem)
            if problem is None and isinstance(rec, Interval):
                current.intervals.append((number, rec))
    if not runs:
        raise UsageError(_no_run(label, notes, client_lines))
    return _build(runs, notes, label, len(lines))


def _kind(rec: Record | None) -> str | None:
    if rec is None:
        return None
    if isinstance(rec, Marker | Clocked):
        return rec.kind
    return {Setting: "setting", UnitNote: "unit_note", Interval: "interval", ServerDone: "server_done"}[type(rec)]


def _outside(kind: str | None) -> tuple[str, str]:
    return "ignored", "outside a client run" if kind is None else f"{kind} line outside a client run"


def _no_run(label: str, notes: list[dict[str, object]], client_lines: int) -> str:
    if client_lines:
        return (
            f"{label}: {client_lines} oratcptest client line(s) but no '[Requesting a test]' block: "
            "paste the client output from its start (the settings are in that block)"
        )
    if any(n["reason"] == "server side" for n in notes):
        return (
            f"{label}: only oratcptest server output; the measurements are printed by the client "
            "(java -jar oratcptest.jar <standby host> -port=N ...), give that output"
        )
    return f"{label}: not oratcptest client output (no '[Requesting a test]' line)"


def _build(runs: list[_Run], notes: list[dict[str, object]], label: str, total: int) -> list[BaselineRun]:
    every = frame(notes, BASELINE_LINES)
    bounds = [1] + [r.first_line for r in runs[1:]] + [total + 1]
    out = []
    for i, run in enumerate(runs):
        span = every.filter(pl.col("line").is_between(bounds[i], bounds[i + 1] - 1))
        out.append(
            BaselineRun(
                label=label,
                run=run.number,
                first_line=run.first_line,
                settings=_settings(run),
                ready_at=run.ready,
                finished_at=run.finished,
                averages=_averages(run),
                intervals=_intervals(run),
                lines=span,
            )
        )
    return out


def read_baseline(path: str | Path) -> list[BaselineRun]:
    """The oratcptest client runs in a file (plain, `.gz`, `.bz2` or `.xz`).

    Raises:
        UsageError: no such file, unreadable, or no oratcptest client run in it.
        LimitExceeded: absurdly large once decompressed.
    """
    text, damage = read_text(path, "oratcptest output")
    label = str(path)
    runs = parse_baseline(text, label)
    if damage is None:
        return runs
    last = runs[-1]
    broken = frame([{"line": None, "status": "unparsed", "kind": None, "reason": damage, "text": ""}], BASELINE_LINES)
    return [*runs[:-1], replace(last, lines=pl.concat([last.lines, broken]))]
