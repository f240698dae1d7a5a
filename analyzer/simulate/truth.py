"""The answer keys of a simulated set: truth.csv rows (one per remote write) and lgwr_events.csv rows.

Rows are written by each thread into part files while it runs; `join_parts` concatenates them into
the final CSV, adding what is only known at the end (which rows lost their lines with a deleted segment).
"""

from __future__ import annotations

import shutil
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import BinaryIO

#: the columns of classic sets (only the options that existed before topologies, segments and shares)
TRUTH_COLUMNS = "thread,seq,msgid,sent_at,total_ms,network_ms,rfs_ms,rfs_io_ms,rfs_other_ms,verdict"
#: every other set of `simulate`
EXTENDED_COLUMNS = (
    f"{TRUTH_COLUMNS},transport,srl_write_ms,primary_db,standby_db,primary_host,standby_host,sender,evidence"
)
#: the truth.csv of `simulate-share`
SHARE_COLUMNS = f"{EXTENDED_COLUMNS},day"
#: commit_path.csv (sets with several SYNC destinations): one row per redo write, sent at once to every SYNC
#: destination; the commit waits for the slowest (`commit_ms`), the lists are in link order, `;`-separated
COMMIT_COLUMNS = "primary_db,thread,seq,sent_at,commit_ms,slowest_db,standby_dbs,msgids,totals_ms"
#: lgwr_events.csv
LGWR_EVENT_COLUMNS = "at,host,thread,kind,elapsed_ms,evidence"
#: `evidence` of a row whose lines are all in the set / of one that lost some with a deleted segment
COMPLETE, MISSING_SEGMENT = "complete", "missing_segment"


class UtcText:
    """ISO-8601 UTC text of µs readings, cached per second."""

    def __init__(self) -> None:
        """An empty cache."""
        self._sec = -1
        self._text = ""

    def __call__(self, reading: int) -> str:
        """`2024-10-22T16:18:49.081732Z` for a reading in µs since the epoch."""
        sec, frac = divmod(reading, 1_000_000)
        if sec != self._sec:
            self._sec, self._text = sec, f"{datetime.fromtimestamp(sec, UTC):%Y-%m-%dT%H:%M:%S}"
        return f"{self._text}.{frac:06d}Z"


def truth_row(thread: int, seq: int, msgid: int, sent_at: str, total: int, rfs: int, io: int) -> str:
    """One classic truth.csv row from the printed values (µs); the verdict is the largest component."""
    network, other = total - rfs, rfs - io
    verdict = "network"
    if io > network:
        verdict = "rfs_io"
    if other > max(network, io):
        verdict = "rfs_other"
    return (
        f"{thread},{seq},{msgid},{sent_at},{total / 1000:.3f},{network / 1000:.3f},"
        f"{rfs / 1000:.3f},{io / 1000:.3f},{other / 1000:.3f},{verdict}\n"
    )


def commit_row(primary_db: str, thread: int, seq: int, sent_at: str, path: Sequence[tuple[str, int, int]]) -> str:
    """One commit_path.csv row: a redo write's (standby db, msgid, total µs) on each SYNC destination, the
    first destination's send time; the commit is the largest total (the first such destination on a tie)."""
    slowest = max(range(len(path)), key=lambda i: (path[i][2], -i))
    dbs = ";".join(db for db, _, _ in path)
    msgids = ";".join(str(m) for _, m, _ in path)
    totals = ";".join(f"{t / 1000:.3f}" for _, _, t in path)
    commit, db = path[slowest][2], path[slowest][0]
    return f"{primary_db},{thread},{seq},{sent_at},{commit / 1000:.3f},{db},{dbs},{msgids},{totals}\n"


def link_columns(primary: tuple[str, str], standby: tuple[str, str], sender: str) -> str:
    """The extended columns a link's rows share after `srl_write_ms`, from (db, host) of each side and the sender."""
    return f",{primary[0]},{standby[0]},{primary[1]},{standby[1]},{sender}"


@dataclass(frozen=True)
class TruthPart:
    """Rows of one part file and how to finish them."""

    path: Path
    #: [first, end) row ranges whose lines were in a deleted segment
    dropped: tuple[tuple[int, int], ...] = ()
    #: add the `evidence` column (extended sets); classic parts are copied as they are
    evidence: bool = False
    #: text appended to every row after the evidence (the share's `,<day>`)
    tail: str = ""


def join_parts(out: Path, columns: str, parts: Sequence[TruthPart]) -> None:
    """Write `columns` and every part's rows to `out`, removing the parts."""
    with out.open("wb") as handle:
        handle.write(f"{columns}\n".encode("ascii"))
        for part in parts:
            if part.evidence:
                _finish_rows(part, handle)
            else:
                with part.path.open("rb") as source:
                    shutil.copyfileobj(source, handle, 1 << 20)
            part.path.unlink()


def _finish_rows(part: TruthPart, handle: BinaryIO) -> None:
    """Copy a part's rows with their `evidence` (and tail) added."""
    ranges = sorted(part.dropped)
    complete, missing = f",{COMPLETE}{part.tail}\n", f",{MISSING_SEGMENT}{part.tail}\n"
    batch: list[str] = []
    with part.path.open(encoding="ascii") as source:
        for index, line in enumerate(source):
            lost = any(first <= index < end for first, end in ranges)
            batch.append(line[:-1] + (missing if lost else complete))
            if len(batch) == 4096:
                handle.write("".join(batch).encode("ascii"))
                batch.clear()
    handle.write("".join(batch).encode("ascii"))
