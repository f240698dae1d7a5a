"""Inventory: what an upload holds (files and their classification) and what is missing, in words.

The findings are the caveats every report prints (`analyzer.report.model.notes` uses them).
"""

from __future__ import annotations

from collections import Counter
from datetime import datetime
from typing import Any

import polars as pl

from analyzer.base.schemas import INVENTORY, UNPARSED_SHAPES
from analyzer.base.vocab import Role
from analyzer.base.zones import ASSUMED_COMMON, ASSUMED_UTC
from analyzer.match.analysis import Analysis
from analyzer.parse.lines import MAX_LINE_CHARS
from analyzer.reduce.pairing import LOGGED_TWICE
from analyzer.reduce.results import FileResult, unparsed

#: the words of a skip reason that names the flag a companion file goes with (`analyzer.inputs.sniff`)
COMPANION_HINT = "; give it with --"


def _threads(files: list[FileResult], role: Role) -> set[int]:
    found: set[int] = set()
    for f in files:
        if f.reduced.info.role == role:
            found |= set(f.reduced.threads)
    return found


def _span(files: list[FileResult], role: Role) -> tuple[datetime, datetime] | None:
    firsts = [f.reduced.first_at for f in files if f.reduced.info.role == role and f.reduced.first_at]
    lasts = [f.reduced.last_at for f in files if f.reduced.info.role == role and f.reduced.last_at]
    return (min(firsts), max(lasts)) if firsts and lasts else None


def _coverage_findings(a: Analysis) -> list[str]:
    out = []
    primary, standby = _span(a.files, Role.PRIMARY), _span(a.files, Role.STANDBY)
    # matched writes show that the windows overlap, whatever a skewed standby clock prints
    matched = bool(a.writes.height) and bool(a.writes["matched"].any())
    if primary and standby and not matched and (primary[1] < standby[0] or standby[1] < primary[0]):
        fmt = "%Y-%m-%d %H:%M:%S"
        out.append(
            f"trace windows do not overlap: primary {primary[0]:{fmt}} to {primary[1]:{fmt}} UTC, "
            f"standby {standby[0]:{fmt}} to {standby[1]:{fmt}} UTC (check --tz, or the files are from different times)"
        )
    p_threads, s_threads = _threads(a.files, Role.PRIMARY), _threads(a.files, Role.STANDBY)
    if p_threads and s_threads:
        out += [f"thread {t} has NSS messages but no standby counterpart" for t in sorted(p_threads - s_threads)]
        out += [f"thread {t} has RFS messages but no primary counterpart" for t in sorted(s_threads - p_threads)]
    return out


def _when(at: datetime | None, missing: str) -> str:
    return f"{at:%Y-%m-%d %H:%M:%S} UTC" if at is not None else missing


#: why a trace goes on in another file, and why that file may be absent: the traces say neither
SEGMENT_CAUSES = (
    "a trace goes on in a new file when it reaches MAX_DUMP_FILE_SIZE or when its tracefile_identifier changes;"
    " the segment may have been deleted, as 23ai deletes old ones, or not collected: the traces do not say which"
)


def _gap_findings(gaps: pl.DataFrame) -> list[str]:
    """One sentence per segment named by a marker and missing from the upload."""
    out = []
    for g in gaps.iter_rows(named=True):
        who = (g["process"] or "a process") + (f" on {g['host']}" if g["host"] else "")
        between = f"between {_when(g['from_at'], 'its start')} and {_when(g['to_at'], 'the end of the upload')}"
        fell = f"; {g['messages']:,} message(s) without partner fall in it" if g["messages"] else ""
        out.append(
            f"segment {g['missing']} of {who} is missing: writes {between} have no evidence from that host{fell}"
            f" ({SEGMENT_CAUSES})"
        )
    return out


def _trcsess_findings(files: list[FileResult]) -> list[str]:
    """trcsess output mixes processes: each is read as its own; say so, and when they are also given alone."""
    out = []
    for f in files:
        pids = f.reduced.processes
        if len(pids) < 2:
            continue
        alone = sorted(g.source.label for g in files if g is not f and g.reduced.info.pid in pids)
        twice = f"; {', '.join(alone)} hold the same processes: their lines are read twice" if alone else ""
        listed = ", ".join(str(p) for p in pids)
        mixed = f"{f.source.label} is trcsess output of {len(pids)} processes (pids {listed})"
        out.append(f"{mixed}: each is read as its own{twice}")
    return out


def _bad_byte_findings(files: list[FileResult]) -> list[str]:
    """Files with bytes that are not text: damaged lines, or a binary file read as text."""
    out = []
    for f in files:
        bad, lines = f.stats.lines_with_bad_bytes, f.stats.lines
        if not bad:
            continue
        binary = bad == lines or bad > 0.5 * lines
        what = "it looks like binary data (compressed in a format dgtrace does not read?)" if binary else "replaced"
        out.append(f"{f.source.label}: {bad:,} of {lines:,} line(s) hold bytes that are not text: {what}")
    return out


def _repair_findings(files: list[FileResult]) -> list[str]:
    """One sentence per file the reader repaired to read it (its coverage says the same in fields)."""
    out = []
    for f in files:
        said = f.stats.repairs()
        if f.stats.cut_lines:
            said.append(f"{f.stats.cut_lines:,} line(s) longer than {MAX_LINE_CHARS:,} characters cut to that length")
        if said:
            out.append(f"{f.source.label}: {'; '.join(said)}")
    return out


def _copies_findings(unmatched: pl.DataFrame) -> list[str]:
    """Messages logged twice (a block of a trace repeated): each counted once."""
    copies = unmatched.filter(pl.col("reason") == LOGGED_TWICE)
    if not copies.height:
        return []
    return [
        f"{copies.height:,} message(s) in {copies['file'].n_unique()} file(s) were logged twice (the same kind,"
        " key and time as an earlier line of their process): each write is counted once, the second copies are"
        " listed as unmatched"
    ]


def findings(a: Analysis) -> list[str]:
    """Plain-language findings: missing sides, missing tracing, non-overlapping windows, assumptions."""
    out = []
    roles = {f.reduced.info.role for f in a.files}
    messages = sum(f.reduced.messages for f in a.files)
    if not messages:
        out.append("no event 16410 messages found: was the event set on the primary and the standby?")
    if Role.STANDBY not in roles and messages:
        out.append("no standby RFS trace: the network/RFS split is unavailable, totals come from the primary only")
    if Role.PRIMARY not in roles and messages:
        out.append("no primary NSS/LNS/LGWR trace with 16410 messages: only RFS time and its I/O split are available")
    for f in a.files:
        if f.reduced.info.role == Role.STANDBY and not f.reduced.waits:
            out.append(f"RFS trace {f.source.label} has no 10046 WAIT lines: rfs_io cannot be told from rfs_other")
    if messages and not any(f.reduced.lgwr.height for f in a.files):
        out.append("no LGWR trace with long-write warnings: warnings cannot be tied to remote writes")
    out += [f"{f.source.label}: {f.reduced.tim.warning}" for f in a.files if f.reduced.tim.warning]
    out += _coverage_findings(a)
    assumed = [f for f in a.files if f.reduced.zone == ASSUMED_UTC]
    if assumed:
        out.append(
            f"{len(assumed)} file(s) have no time zone and none was given (--tz): "
            "UTC assumed for display; durations are unaffected"
        )
    common = Counter(
        f.reduced.zone
        for f in a.files
        if f.reduced.zone.startswith(ASSUMED_COMMON + " ") and f.reduced.zone != ASSUMED_UTC
    )
    out += [
        f"{n} file(s) have no time zone and none was given (--tz): {zone.removesuffix(' (no zone in the file)')}"
        " (one configuration is nearly always in one zone; give --tz HOST=ZONE if not)"
        for zone, n in sorted(common.items())
    ]
    out += _gap_findings(a.gaps)
    out += _copies_findings(a.unmatched)
    out += _trcsess_findings(a.files)
    out += _bad_byte_findings(a.files)
    out += _repair_findings(a.files)
    out += [f"read stopped early: {f.source.label}: {f.stats.error}" for f in a.files if f.stats.error]
    lost = [s for s in a.skipped if s.partial]
    out += [f"not read: {s.label}: {s.reason}" for s in lost]
    out += [f"{s.label}: {s.reason}" for s in a.skipped if not s.partial and COMPANION_HINT in s.reason]
    out += _received_findings(a.files)
    return out


#: how a line becomes its shape: quoted text, hexadecimal and decimal numbers masked, blanks collapsed
SHAPE_MASKS = (
    (r"'[^']*'|\"[^\"]*\"", "'…'"),
    (r"0[xX][0-9a-fA-F]+", "0x…"),
    (r"[0-9]+(?:[.:,/-][0-9]+)*", "N"),
    (r"\s+", " "),
)
#: a shape is cut to this many characters
SHAPE_CHARS = 160


def unparsed_shapes(files: list[FileResult]) -> pl.DataFrame:
    """The lines nobody parsed (a known family's grammar rejected them) by shape: family, the line with its
    quoted text and numbers masked, how many, and the first one (its text, reason, file and line), most
    frequent first. Under --redact the texts are removed already: the shapes are then one per family."""
    return shapes_of(unparsed(files))


def shapes_of(found: pl.DataFrame) -> pl.DataFrame:
    """`unparsed_shapes` of unparsed lines with their file labels (`analyzer.reduce.results.unparsed`)."""
    if not found.height:
        return pl.DataFrame(schema=UNPARSED_SHAPES)
    shape = pl.col("text").fill_null("").str.strip_chars()
    for pattern, mask in SHAPE_MASKS:
        shape = shape.str.replace_all(pattern, mask)
    return (
        found.with_columns(shape=shape.str.slice(0, SHAPE_CHARS))
        .group_by("family", "shape", maintain_order=True)
        .agg(
            count=pl.len(),
            example=pl.col("text").first(),
            reason=pl.col("reason").first(),
            file=pl.col("file").first(),
            line=pl.col("line").first(),
        )
        .sort("count", "family", "shape", descending=[True, False, False])
        .cast(UNPARSED_SHAPES)
    )


def thread_of(f: FileResult) -> int | None:
    """The redo thread a file's row names: for an RFS trace the primary thread whose redo it received (its
    messages' `thrd=`, not the standby instance's own thread; None when it received several), else the
    thread its instance mounts."""
    i = f.reduced.info
    received = sorted(set(f.reduced.threads))
    if i.role == Role.STANDBY and received:
        return received[0] if len(received) == 1 else None
    return i.thread


def _received_findings(files: list[FileResult]) -> list[str]:
    """RFS traces that received the redo of several primary threads (their thread column is empty)."""
    out = []
    for f in files:
        received = sorted(set(f.reduced.threads))
        if f.reduced.info.role == Role.STANDBY and len(received) > 1:
            listed = ", ".join(str(t) for t in received)
            out.append(f"RFS trace {f.source.label} received the redo of threads {listed}")
    return out


def _long_writes(lgwr: pl.DataFrame) -> int:
    """The `log write elapsed time` warnings among a file's LGWR lines (no query for a file without any:
    an upload of thousands of small traces pays a query's fixed cost per file otherwise)."""
    return lgwr.filter(pl.col("kind") == "log_write").height if lgwr.height else 0


def table(a: Analysis) -> pl.DataFrame:
    """One row per file found: classification, time span and line accounting; an RFS trace's thread is the
    redo thread it received (`thread_of`)."""
    rows: list[dict[str, Any]] = []
    for f in a.files:
        i = f.reduced.info
        rows.append(
            {
                "file": f.source.label,
                "kind": i.kind,
                "role": i.role,
                "process": i.process,
                "instance": i.instance,
                "host": i.host,
                "thread": thread_of(f),
                "pid": i.pid,
                "version": i.version,
                "first_at": f.reduced.first_at,
                "last_at": f.reduced.last_at,
                "lines": f.stats.lines,
                "unparsed": f.parsed.unparsed,
                "messages": f.reduced.messages,
                "waits": f.reduced.waits,
                "lgwr_warnings": _long_writes(f.reduced.lgwr),
            }
        )
    return pl.DataFrame(rows, schema=INVENTORY)
