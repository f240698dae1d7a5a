"""Write samples/paper-2014: the MAA paper's two examples inside realistic 11.2.0.4 trace files.

The paper ("Best Practices for Synchronous Redo Transport", 2015, section "Diagnosing High Log
File SYNC Waits") prints two long writes: msgid 117468 on thread 1 (163 ms, almost all `RFS
write`) and msgid 124705 on thread 2 (138 ms, almost all network). This script places exactly
those lines, with the paper's stamps, among ordinary fast writes of a two-node RAC primary
(one NSS trace per instance, one LGWR trace per instance) and a standby with one RFS process
per primary thread. Deterministic: run it again and the files are byte-identical.

    python scripts/make_paper_samples.py [OUTDIR]
"""

from __future__ import annotations

import random
import sys
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

OUT = Path(__file__).resolve().parent.parent / "samples" / "paper-2014"
UTC_OFFSET = timedelta(hours=-7)  # the paper's hosts ran at UTC-7 (tim= is epoch microseconds)
MSG = "oper='Write' flag=67111042 thrd={thread} seq={seq} msgid={msgid}"


@dataclass(frozen=True)
class Write:
    """True times of one remote write, as the hosts printed them (naive local, microseconds)."""

    thread: int
    seq: int
    msgid: int
    t1: datetime
    t2: datetime
    t3: datetime
    t4: datetime
    io: tuple[tuple[str, int, datetime], ...]  # (event, ela_us, end time)


def ms(t: datetime) -> str:
    """A krs / ADR timestamp truncated to milliseconds, as 11.2 prints it."""
    return t.strftime("%Y-%m-%d %H:%M:%S.") + f"{t.microsecond // 1000:03d}"


def tim(t: datetime) -> int:
    """10046 tim: Unix-epoch microseconds on 11.2 Linux (local time -> UTC)."""
    return int((t - UTC_OFFSET).replace(tzinfo=UTC).timestamp() * 1_000_000)


def header(host: str, sid: str, db: str, pname: str, pid: int, thread: int) -> list[str]:
    """An 11.2.0.4 Linux trace header (TAB separators, `ORACLE_HOME = `)."""
    image = f"oracle@{host}" + (f" ({pname.upper()})" if pname != "rfs" else "")
    return [
        f"Trace file /u01/app/oracle/diag/rdbms/{db}/{sid}/trace/{sid}_{pname}_{pid}.trc",
        "Oracle Database 11g Enterprise Edition Release 11.2.0.4.0 - 64bit Production",
        "With the Partitioning, Real Application Clusters, Automatic Storage Management, OLAP,",
        "Data Mining and Real Application Testing options",
        "ORACLE_HOME = /u01/app/oracle/product/11.2.0.4/dbhome_1",
        "System name:\tLinux",
        f"Node name:\t{host}",
        "Release:\t2.6.39-400.17.1.el6uek.x86_64",
        "Version:\t#1 SMP Fri Feb 22 18:16:18 PST 2013",
        "Machine:\tx86_64",
        f"Instance name: {sid}",
        f"Redo thread mounted by this instance: {thread}",
        "Oracle process number: 27",
        f"Unix process pid: {pid}, image: {image}",
        "",
        "",
    ]


def session(start: datetime, sid_serial: str) -> list[str]:
    """The session block that follows the header."""
    stamp = ms(start)
    keys = [
        "SESSION ID:(" + sid_serial + ")",
        "CLIENT ID:()",
        "SERVICE NAME:(SYS$BACKGROUND)",
        "MODULE NAME:()",
        "ACTION NAME:()",
    ]
    return [f"*** {stamp}", *[f"*** {k} {stamp}" for k in keys], " "]


def ordinary_writes(
    rng: random.Random, thread: int, seq: int, first_msgid: int, start: datetime, count: int
) -> list[Write]:
    """Fast writes: ~0.3 ms each way on the network, ~0.6 ms of SRL write."""
    writes, t = [], start
    for i in range(count):
        t1 = t
        t2 = t1 + timedelta(microseconds=rng.randint(250, 450))
        io: list[tuple[str, int, datetime]] = []
        cursor = t2 + timedelta(microseconds=rng.randint(30, 90))
        if rng.random() < 0.4:
            ela = rng.randint(150, 400)
            cursor += timedelta(microseconds=ela)
            io.append(("RFS random i/o", ela, cursor))
        ela = rng.randint(400, 1200)
        cursor += timedelta(microseconds=ela)
        io.append(("RFS write", ela, cursor))
        t3 = cursor + timedelta(microseconds=rng.randint(20, 80))
        t4 = t3 + timedelta(microseconds=rng.randint(250, 450))
        writes.append(Write(thread, seq, first_msgid + i, t1, t2, t3, t4, tuple(io)))
        t = t4 + timedelta(milliseconds=rng.randint(180, 420))
    return writes


def paper_write(thread: int) -> Write:
    """The paper's example for this thread, with its printed stamps and WAIT lines."""
    day = datetime(2014, 12, 2, 8, 46)
    if thread == 1:
        a, b = (
            day + timedelta(seconds=34, microseconds=598_000),
            day + timedelta(seconds=34, microseconds=761_000),
        )
        io = (
            ("RFS random i/o", 298, _from_tim(1417535194598944)),
            ("RFS write", 162381, _from_tim(1417535194761203)),
        )
        return Write(1, 1584, 117468, a, a, b, b, io)
    t1, t4 = (
        day + timedelta(seconds=49, microseconds=879_000),
        day + timedelta(seconds=50, microseconds=17_000),
    )
    t2, t3 = day + timedelta(seconds=50, microseconds=16_000), t4
    io = (
        ("RFS random i/o", 360, _from_tim(1417535210017013)),
        ("RFS write", 246, _from_tim(1417535210017052)),
    )
    return Write(2, 1311, 124705, t1, t2, t3, t4, io)


def _from_tim(value: int) -> datetime:
    return datetime.fromtimestamp(value / 1_000_000, UTC).replace(tzinfo=None) + UTC_OFFSET


def with_adr(lines: list[tuple[datetime, str]]) -> list[str]:
    """Insert an ADR `***` line before the first line of every new second (as ADR does)."""
    out, last = [], None
    for when, text in lines:
        if last is None or (when - last).total_seconds() >= 1.0:
            out.append(f"*** {ms(when)}")
            last = when
        out.append(text)
    return out


def nss_lines(writes: list[Write]) -> list[tuple[datetime, str]]:
    """NSS: the send message with its stamp below, the ack stamp above the received message."""
    lines: list[tuple[datetime, str]] = []
    for w in writes:
        msg = MSG.format(thread=w.thread, seq=w.seq, msgid=w.msgid)
        lines += [
            (w.t1, f"Client sending SQLNET request data [kpurcs] {msg}"),
            (w.t1, f"*** {ms(w.t1)} 5837 krsu.c"),
            (w.t4, f"*** {ms(w.t4)} 6058 krsu.c"),
            (w.t4, f"... Client received SQLNET call [kpurcs] response {msg}"),
        ]
    return lines


def rfs_lines(writes: list[Write], rng: random.Random) -> list[tuple[datetime, str]]:
    """RFS: received + stamp, the I/O WAIT lines, finished + stamp, then an idle wait."""
    lines: list[tuple[datetime, str]] = []
    previous_end: datetime | None = None
    for w in writes:
        msg = MSG.format(thread=w.thread, seq=w.seq, msgid=w.msgid)
        if previous_end is not None:
            idle = int((w.t2 - previous_end).total_seconds() * 1_000_000) - rng.randint(5, 40)
            lines.append(
                (
                    w.t2,
                    f"WAIT #0: nam='SQL*Net message from client' ela= {idle} driver id=1413697536 #bytes=1 p3=0"
                    f" obj#=-1 tim={tim(w.t2) - 20}",
                )
            )
        lines += [
            (w.t2, f"... Server received SQLNET data [krsr_rfs_dsp] {msg}"),
            (w.t2, f"*** {ms(w.t2)} 826 krsr.c"),
        ]
        for event, ela, end in w.io:
            p3 = 2147483647 if event == "RFS random i/o" else 0
            lines.append((end, f"WAIT #0: nam='{event}' ela= {ela} p1=0 p2=0 p3={p3} obj#=-1 tim={tim(end)}"))
        lines += [
            (w.t3, f"... Server finished processing SQLNET data [krsr_rfs_dsp] {msg}"),
            (w.t3, f"*** {ms(w.t3)} 1459 krsr.c"),
        ]
        previous_end = w.t3
    return lines


def lgwr_lines(writes: list[Write], sizes: dict[int, int]) -> list[str]:
    """LGWR: a long-write warning (threshold lowered to 100 ms) for each write that took that long."""
    out = []
    for w in writes:
        elapsed = (w.t4 - w.t1).total_seconds() * 1000
        if elapsed >= 100:
            printed = w.t4 + timedelta(microseconds=900)
            out += [
                f"*** {ms(printed)}",
                f"Warning: log write elapsed time {round(elapsed)}ms, size {sizes[w.msgid]}KB",
            ]
    return out


def write_file(path: Path, lines: list[str]) -> None:
    """Write one trace file (LF line ends, final newline)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def main(out: Path = OUT) -> None:
    """Write every sample file under `out`."""
    rng = random.Random(2014)
    day = datetime(2014, 12, 2, 8, 46)
    plan = {
        1: (1584, 117468, day + timedelta(seconds=29, microseconds=211_000)),
        2: (1311, 124705, day + timedelta(seconds=44, microseconds=87_000)),
    }
    sizes = {117468: 18, 124705: 22}
    for thread, (seq, msgid, start) in plan.items():
        before = ordinary_writes(rng, thread, seq, msgid - 18, start, 18)
        special = paper_write(thread)
        gap = special.t4 + timedelta(milliseconds=rng.randint(200, 300))
        after = ordinary_writes(rng, thread, seq, msgid + 1, gap, 14)
        before = [w for w in before if w.t4 < special.t1]
        writes = [*before, special, *after]
        host, sid, pid = f"prim0{thread}", f"boston{thread}", 4400 + thread
        trace = out / host / "diag" / "rdbms" / "boston" / sid / "trace"
        first = writes[0].t1 - timedelta(milliseconds=350)
        nss = (
            header(host, sid, "boston", "nss2", pid, thread)
            + session(first, f"{140 + thread}.1")
            + with_adr(nss_lines(writes))
        )
        write_file(trace / f"{sid}_nss2_{pid}.trc", nss)
        lgwr = (
            header(host, sid, "boston", "lgwr", pid - 30, thread)
            + session(first, f"{10 + thread}.1")
            + lgwr_lines(writes, sizes)
        )
        write_file(trace / f"{sid}_lgwr_{pid - 30}.trc", lgwr)
        rfs_pid = 8800 + thread
        stby = out / "stby01" / "diag" / "rdbms" / "chicago" / "chicago1" / "trace"
        rfs = (
            header("stby01", "chicago1", "chicago", "rfs", rfs_pid, 1)
            + session(first, f"{60 + thread}.3")
            + with_adr(rfs_lines(writes, rng))
        )
        write_file(stby / f"chicago1_rfs_{rfs_pid}.trc", rfs)


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else OUT)
