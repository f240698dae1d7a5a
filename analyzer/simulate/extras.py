"""Files a real trace directory also holds: `.trm` trace maps and an unrelated foreground 10046 trace."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from random import Random
from typing import TYPE_CHECKING

from analyzer.base.units import parse_offset
from analyzer.simulate.formats import (
    HostClock,
    cursor_close,
    cursor_exec,
    cursor_parse,
    cursor_wait,
    trace_map,
    transaction_end,
)
from analyzer.simulate.headers import Process, header

if TYPE_CHECKING:
    from analyzer.simulate.writer import SetPlan, ThreadJob

#: statements of the foreground session: (SQL text, command type, commits)
_STATEMENTS = (
    ("INSERT INTO orders (order_id, customer_id, amount) VALUES (:1, :2, :3)", 2, True),
    ("UPDATE stock SET quantity = quantity - :1 WHERE item_id = :2", 6, True),
    ("SELECT status FROM orders WHERE order_id = :1", 3, False),
)
_NET = "driver id=1413697536 #bytes=1 p3=0"


def write_extras(outdir: Path, plan: SetPlan, jobs: Sequence[ThreadJob], traces: Sequence[Path]) -> tuple[Path, ...]:
    """One foreground trace per host of the set, then a `.trm` beside every `.trc`; return the new files."""
    written: list[Path] = []
    hosts: dict[str, tuple[Process, int]] = {}
    for job in jobs:
        lay = job.layout
        for process, skew in [(lay.lgwr, lay.lgwr_clock.skew_us)] + [
            (p, c.skew_us) for s in lay.links for p, c in ((s.sender, s.sender_clock), (s.receiver, s.receiver_clock))
        ]:
            hosts.setdefault(process.host, (process, skew))
    for host, (process, skew) in sorted(hosts.items()):
        path = _foreground(outdir, plan, process, skew, Random(f"{jobs[0].key}:foreground:{host}"))
        written.append(path)
    for trace in (*traces, *written):
        trm = trace.with_suffix(".trm")
        trm.write_bytes(trace_map(trace.name, trace.stat().st_size))
        written.append(trm)
    return tuple(written)


def _foreground(outdir: Path, plan: SetPlan, instance: Process, skew: int, rng: Random) -> Path:
    """`<sid>_ora_<pid>.trc`: a client session's 10046 level 12 trace (commits wait on `log file sync`)."""
    gen = plan.generation
    primary = instance.db == plan.names.primary_db
    offset = plan.options.primary_tz if primary else plan.options.standby_tz
    clock = HostClock(skew, parse_offset(offset), gen)
    process = Process(
        host=instance.host,
        db=instance.db,
        sid=instance.sid,
        pname="ora",
        image="",
        pid=rng.randrange(2000, 99_999),
        number=rng.randrange(60, 400),
        thread=instance.thread,
        session=f"{rng.randrange(100, 5000)}.{rng.randrange(1, 60000)}",
        service=instance.db,
        module="JDBC Thin Client",
        day=instance.day,
    )
    tim_shift = skew if gen.epoch_tim else rng.randrange(10**11, 9 * 10**12) - plan.start
    t = plan.start + rng.randrange(1_000_000, 20_000_000)
    out = [header(gen, process, clock, t)]
    cursor = rng.randrange(10**14, 2 * 10**14)
    next_adr = t + 800_000
    scn = plan.scn(t)
    for i in range(40):
        # a primary session writes and reads; a standby (Active Data Guard) session only reads
        sql, oct_, commits = _STATEMENTS[i % len(_STATEMENTS) if primary else 2]
        t += 50 + rng.randrange(400)
        if t >= next_adr:
            out.append(clock.adr(t))
            next_adr = t + 700_000 + rng.randrange(350_000)
        tim = t + tim_shift
        ids = (rng.randrange(10**9, 4 * 10**9), rng.randrange(16**9, 16**10), _sqlid(rng))
        out.append(cursor_parse(cursor, sql, oct_, tim, ids, rng.randrange(20, 90)))
        t += rng.randrange(60, 900)
        rows = 1 if oct_ != 3 else 0
        elapsed, gets = rng.randrange(40, 800), (rng.randrange(1, 9), rng.randrange(0, 7))
        out.append(cursor_exec(cursor, elapsed, gets, rows, rng.randrange(10**8, 4 * 10**9), t + tim_shift))
        out.append(cursor_wait(gen, cursor, "SQL*Net message to client", 2, _NET, t + 4 + tim_shift))
        if commits:
            t += 30
            out.append(transaction_end(t + tim_shift))
            ela = 300 + rng.randrange(2500)
            t += ela
            scn += rng.randrange(1, 40)
            params = f"buffer#={rng.randrange(1, 9000)} sync scn={scn} p3=0"
            out.append(cursor_wait(gen, 0, "log file sync", ela, params, t + tim_shift))
        ela = 200 + rng.randrange(20_000)
        t += ela
        out.append(cursor_wait(gen, cursor, "SQL*Net message from client", ela, _NET, t + tim_shift))
        out.append(cursor_close(cursor, t + 20 + tim_shift))
    path = outdir / process.trace_dir / process.file_name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(out), encoding="ascii", newline="\n")
    return path


def _sqlid(rng: Random) -> str:
    alphabet = "0123456789abcdfghjkmnpqrstuvwxyz"
    return "".join(alphabet[rng.randrange(32)] for _ in range(13))
