"""Alert logs (`trace/alert_<SID>.log`) of the instances of a simulated set.

Each thread writes the entries it causes (RFS attach, log switches, standby log selection) to a part
file per instance, keyed by true time; `write_alert_logs` then writes each instance's startup entry
and merges its parts in time order (a standby instance serves every thread).
"""

from __future__ import annotations

import heapq
import json
from collections.abc import Iterator, Sequence
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from random import Random
from typing import TYPE_CHECKING

from analyzer.simulate.files import ChunkWriter, chunk_writer
from analyzer.simulate.formats import (
    Generation,
    HostClock,
    alert_time,
    archive_dest,
    log_switch_lines,
    online_log_member,
    rfs_attach,
    rfs_selected,
    srl_selected,
    standby_log_number,
    startup_lines,
)
from analyzer.simulate.headers import Process
from analyzer.simulate.model import Write
from analyzer.simulate.topology import ClockSpec, LinkSpec, ThreadLayout

if TYPE_CHECKING:
    from analyzer.simulate.writer import SetPlan, ThreadJob

#: the protection mode RFS reports, by the `protection` option (every simulated primary has a SYNC destination)
MODES = {"availability": "MAXIMUM AVAILABILITY", "protection": "MAXIMUM PROTECTION"}


def database_ids(seed: int, primary_db: str) -> tuple[int, int]:
    """(dbid, resetlogs branch) of a configuration's database."""
    rng = Random(f"{seed}:dbid:{primary_db}")
    return rng.randrange(10**9, 4 * 10**9), rng.randrange(8 * 10**8, 12 * 10**8)


def _clock(spec: ClockSpec, gen: Generation) -> HostClock:
    return HostClock(spec.skew_us, spec.offset_min, gen)


class ThreadAlerts:
    """The alert entries one thread causes, in its instances' part files."""

    def __init__(self, job: ThreadJob, stack: ExitStack) -> None:
        """Open a part file per instance that the thread's links touch."""
        plan = job.plan
        self._gen = plan.generation
        self._job = job
        self._ids = database_ids(plan.options.seed, plan.names.primary_db)
        self._stamp = 861_000_000 + plan.scn_base % 9_000_000
        #: per link: the entries of its sender's and its receiver's instance (each part in time order)
        self._parts: list[tuple[ChunkWriter, ChunkWriter]] = []
        self._clocks: list[tuple[HostClock, HostClock]] = []
        for index, spec in enumerate(job.layout.links):
            sender = stack.enter_context(chunk_writer(job.alert_part(spec.sender.sid, index, 0)))
            receiver = stack.enter_context(chunk_writer(job.alert_part(spec.receiver.sid, index, 1)))
            self._parts.append((sender, receiver))
            self._clocks.append((_clock(spec.sender_clock, self._gen), _clock(spec.receiver_clock, self._gen)))

    def _entry(self, index: int, side: int, t: int, text: str) -> None:
        block = f"{alert_time(self._gen, self._clocks[index][side], t)}\n{text}"
        self._parts[index][side].parts.append(f"{t:016d}\t{json.dumps(block)}\n")

    def attach(self, index: int, t: int) -> None:
        """The link's RFS process took its sender's connection at `t`."""
        spec = self._job.layout.links[index]
        client = "ASYNC" if spec.transport == "ASYNC" else "SYNC"
        rfs = spec.receiver
        mode = MODES[self._job.plan.options.protection]
        text = rfs_attach(self._gen, self._job.thread + 2, rfs.pid, client, spec.sender.pid, mode)
        self._entry(index, 1, t, text)

    def new_log(self, index: int, w: Write, rfs_end: int) -> None:
        """The link's first write `w` of a new log: switch, standby log selection on both sides."""
        gen, spec, thread = self._gen, self._job.layout.links[index], self._job.thread
        if spec.kind == "first":
            group = (thread - 1) * 3 + 1 + w.seq % 3
            member = online_log_member(gen, spec.sender.db, group, self._stamp)
            scn = self._job.plan.scn(w.t1)
            switch = log_switch_lines(gen, thread, w.seq, scn, group, member)
            self._entry(index, 0, w.t1 - 300, switch)
        lno = standby_log_number(thread, w.seq)
        rfs = (thread + 2, spec.receiver.pid)
        self._entry(index, 1, w.t2 + 1, rfs_selected(gen, rfs, lno, thread, w.seq, self._ids))
        sender = srl_selected(gen, spec.sender.image, spec.sender.pid, thread, w.seq, spec.dest)
        self._entry(index, 0, max(w.t4, rfs_end) + 10, sender)


@dataclass(frozen=True)
class Instance:
    """One instance that gets an alert log."""

    process: Process
    clock: ClockSpec
    parameters: tuple[tuple[str, str], ...]

    @property
    def path(self) -> Path:
        """The alert log below the output directory."""
        p = self.process
        return Path(p.trace_dir, f"alert_{p.sid}.log")


def instances(plan: SetPlan, layouts: Sequence[ThreadLayout]) -> list[Instance]:
    """Every instance of the set's layouts (primary, standbys, far syncs), each once, with its parameters."""
    names = plan.names
    dbs = sorted({p.db for lay in layouts for s in lay.links for p in (s.sender, s.receiver)})
    found: dict[str, tuple[Process, ClockSpec]] = {}
    dests: dict[str, dict[int, str]] = {}
    for lay in layouts:
        found.setdefault(lay.lgwr.sid, (lay.lgwr, lay.lgwr_clock))
        for spec in lay.links:
            found.setdefault(spec.sender.sid, (spec.sender, spec.sender_clock))
            found.setdefault(spec.receiver.sid, (spec.receiver, spec.receiver_clock))
            dests.setdefault(spec.sender.sid, {})[spec.dest] = _dest(spec, names.primary_db)
    result = []
    for sid, (process, clock) in sorted(found.items()):
        params = [
            ("db_name", f'"{names.primary_db.upper()}"'),
            ("db_unique_name", f'"{process.db}"'),
            ("log_archive_config", f'"DG_CONFIG=({",".join(dbs)})"'),
        ]
        if process.db == names.primary_db:
            params.append(("thread", str(process.thread)))
        else:
            params.append(("fal_server", f'"{names.primary_db}"'))
        for dest, value in sorted(dests.get(sid, {}).items()):
            params += [(f"log_archive_dest_{dest}", value), (f"log_archive_dest_state_{dest}", '"ENABLE"')]
        result.append(Instance(process, clock, tuple(params)))
    return result


def _dest(spec: LinkSpec, primary_db: str) -> str:
    return archive_dest(spec.receiver.db, spec.transport, spec.receiver.db, spec.sender.db != primary_db)


def write_alert_logs(outdir: Path, plan: SetPlan, jobs: Sequence[ThreadJob], startup: int) -> list[Path]:
    """Write every instance's alert log (startup at `startup`, then the jobs' entries); remove the parts."""
    gen = plan.generation
    written = []
    for inst in instances(plan, [job.layout for job in jobs]):
        path = outdir / inst.path
        path.parent.mkdir(parents=True, exist_ok=True)
        sid = inst.process.sid
        parts = [job.alert_part(sid, k, side) for job in jobs for k in range(len(job.layout.links)) for side in (0, 1)]
        parts = [p for p in parts if p.exists()]
        clock = _clock(inst.clock, gen)
        with path.open("w", encoding="ascii", newline="\n") as out:
            out.write(f"{alert_time(gen, clock, startup)}\n{startup_lines(gen, inst.parameters)}")
            for line in heapq.merge(*(_lines(p) for p in parts)):
                out.write(json.loads(line.split("\t", 1)[1]))
        for part in parts:
            part.unlink()
        written.append(path)
    return written


def _lines(path: Path) -> Iterator[str]:
    with path.open(encoding="ascii") as handle:
        yield from handle
