"""Streams a simulated trace set to disk in bounded memory: traces, truth.csv, scenario.json."""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from random import Random

from analyzer.errors import UsageError
from analyzer.simulate.formats import GENERATIONS, Generation, HostClock
from analyzer.simulate.headers import Process, header
from analyzer.simulate.model import Profile, ThreadModel, Write, resolve_profile
from analyzer.simulate.options import SimOptions, SimResult, parse_offset
from analyzer.simulate.records import LgwrText, NssText, RfsText

TRUTH_COLUMNS = "thread,seq,msgid,sent_at,total_ms,network_ms,rfs_ms,rfs_io_ms,rfs_other_ms,verdict"
PRIMARY_DB, STANDBY_DB = "sales", "salesdr"
#: writes generated between two flushes (and size checks): about 200 KB of text
BATCH = 256


class ChunkWriter:
    """Collects text pieces and writes them out in one chunk per batch."""

    def __init__(self, path: Path) -> None:
        """Create (truncate) `path`."""
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self.parts: list[str] = []
        self.bytes = 0
        self._file = path.open("wb")

    def flush(self) -> None:
        """Write the pending pieces."""
        data = "".join(self.parts).encode("ascii")
        self.parts.clear()
        self._file.write(data)
        self.bytes += len(data)

    def close(self) -> None:
        """Flush and close the file."""
        self.flush()
        self._file.close()


@contextmanager
def _chunk_writer(path: Path) -> Iterator[ChunkWriter]:
    writer = ChunkWriter(path)
    try:
        yield writer
    finally:
        writer.close()


class _UtcText:
    """ISO-8601 UTC text of µs readings, cached per second."""

    def __init__(self) -> None:
        self._sec = -1
        self._text = ""

    def __call__(self, reading: int) -> str:
        sec, frac = divmod(reading, 1_000_000)
        if sec != self._sec:
            self._sec, self._text = sec, f"{datetime.fromtimestamp(sec, UTC):%Y-%m-%dT%H:%M:%S}"
        return f"{self._text}.{frac:06d}Z"


@dataclass(frozen=True)
class _SetPlan:
    """Settings shared by every thread of one trace set."""

    options: SimOptions
    generation: Generation
    profile: Profile
    start: int
    standby_skew_us: int
    tim_shift: int


def simulate(outdir: Path, options: SimOptions) -> SimResult:
    """Write a trace set with its truth under `outdir`, which must be new or empty."""
    _prepare(outdir)
    plan = _plan(options)
    set_rng = Random(f"{options.seed}:set")
    files: list[Path] = []
    writes = trace_bytes = 0
    with _chunk_writer(outdir / "truth.csv") as truth:
        truth.parts.append(TRUTH_COLUMNS + "\n")
        for thread in range(1, options.threads + 1):
            processes = _processes(options, thread, set_rng)
            done, written = _run_thread(plan, thread, processes, outdir, truth)
            files += [outdir / p.trace_dir / p.file_name for p in processes]
            writes += done
            trace_bytes += written
    result = SimResult(
        tuple(files), outdir / "truth.csv", outdir / "scenario.json", writes, trace_bytes
    )
    _write_scenario(plan, result, outdir)
    return result


def _prepare(outdir: Path) -> None:
    if outdir.exists() and (not outdir.is_dir() or any(outdir.iterdir())):
        raise UsageError(f"{outdir} exists and is not an empty directory; choose a new one")
    outdir.mkdir(parents=True, exist_ok=True)


def _plan(options: SimOptions) -> _SetPlan:
    gen = GENERATIONS[options.format_version]
    rng = Random(f"{options.seed}:clock")
    start = int(gen.start.timestamp()) * 1_000_000 + rng.randrange(6 * 3600 * 1_000_000)
    skew = round(options.standby_skew_s * 1_000_000)
    # Linux up to 12.1: tim is the standby's gettimeofday(); later: a counter since some boot
    tim_shift = skew if gen.epoch_tim else rng.randrange(10**11, 9 * 10**12) - start
    return _SetPlan(options, gen, resolve_profile(options), start, skew, tim_shift)


def _processes(options: SimOptions, thread: int, rng: Random) -> tuple[Process, Process, Process]:
    """The NSS and LGWR of primary instance `thread`, and the RFS serving it on the standby."""
    sender = "NSS2" if options.sender == "nss" else "LNS1"
    nss = _background(thread, sender, rng.randrange(30, 60), rng)
    lgwr = _background(thread, "LGWR", rng.randrange(10, 30), rng)
    rfs = Process(
        host="stby01",
        db=STANDBY_DB,
        sid=f"{STANDBY_DB}1",
        pname="rfs",
        image="",
        pid=rng.randrange(2000, 99_999),
        number=rng.randrange(60, 400),
        thread=1,
        session=f"{rng.randrange(100, 5000)}.{rng.randrange(1, 60000)}",
        service="SYS$USERS",
        module=f"oracle@{nss.host} ({sender})",
        client_ip=f"10.20.30.{10 + thread}",
        connection_id=base64.b64encode(rng.randbytes(16)).decode("ascii"),
    )
    return nss, lgwr, rfs


def _background(thread: int, name: str, number: int, rng: Random) -> Process:
    """A background process (NSS2, LNS1, LGWR) of primary instance `thread`."""
    return Process(
        host=f"prim{thread:02d}",
        db=PRIMARY_DB,
        sid=f"{PRIMARY_DB}{thread}",
        pname=name.lower(),
        image=name,
        pid=rng.randrange(2000, 99_999),
        number=number,
        thread=thread,
        session=f"{rng.randrange(100, 2000)}.{rng.randrange(1, 60000)}",
        service="SYS$BACKGROUND",
        module="",
    )


def _run_thread(
    plan: _SetPlan,
    thread: int,
    processes: tuple[Process, Process, Process],
    outdir: Path,
    truth: ChunkWriter,
) -> tuple[int, int]:
    """Simulate one primary thread until its budget is spent; return (writes, trace bytes)."""
    opts, gen = plan.options, plan.generation
    rng = Random(f"{opts.seed}:thread:{thread}")
    first_send = plan.start + rng.randrange(50_000)
    session = first_send - rng.randrange(500_000, 3_000_000)
    primary, standby = parse_offset(opts.primary_tz), parse_offset(opts.standby_tz)
    clocks = (HostClock(0, primary, gen), HostClock(0, primary, gen))
    rfs_clock = HostClock(plan.standby_skew_us, standby, gen)
    with ExitStack() as stack:
        nss_f, lgwr_f, rfs_f = (
            stack.enter_context(_chunk_writer(outdir / p.trace_dir / p.file_name))
            for p in processes
        )
        for file, process, clock in zip(
            (nss_f, lgwr_f, rfs_f), processes, (*clocks, rfs_clock), strict=True
        ):
            file.parts.append(header(gen, process, clock, session))
        nss = NssText(gen, clocks[0], thread, nss_f.parts, session)
        lgwr = LgwrText(clocks[1], opts.lgwr_warning_ms, lgwr_f.parts)
        rfs = RfsText(gen, rfs_clock, thread, rfs_f.parts, session, plan.tim_shift)
        model = ThreadModel(plan.profile, rng, first_send, opts.noise)
        utc = _UtcText()
        limit = opts.writes_per_thread
        budget = None if opts.size_bytes is None else opts.size_bytes // opts.threads
        done = 0
        for w in model.writes():
            q1, q4 = nss.record(w)
            q2, q3, io = rfs.record(w)
            lgwr.record(w)
            truth.parts.append(_truth_row(thread, w, utc(q1), q4 - q1, q3 - q2, io))
            done += 1
            if done == limit:
                break
            if done % BATCH == 0:
                for f in (nss_f, lgwr_f, rfs_f, truth):
                    f.flush()
                if budget is not None and nss_f.bytes + lgwr_f.bytes + rfs_f.bytes >= budget:
                    break
    return done, nss_f.bytes + lgwr_f.bytes + rfs_f.bytes


def _truth_row(thread: int, w: Write, sent_at: str, total: int, rfs: int, io: int) -> str:
    """One truth.csv row from the printed values (µs); the verdict is the largest component."""
    network, other = total - rfs, rfs - io
    verdict = "network"
    if io > network:
        verdict = "rfs_io"
    if other > max(network, io):
        verdict = "rfs_other"
    return (
        f"{thread},{w.seq},{w.msgid},{sent_at},{total / 1000:.3f},{network / 1000:.3f},"
        f"{rfs / 1000:.3f},{io / 1000:.3f},{other / 1000:.3f},{verdict}\n"
    )


def _write_scenario(plan: _SetPlan, result: SimResult, outdir: Path) -> None:
    start = datetime.fromtimestamp(plan.start / 1_000_000, UTC).isoformat()
    document = {
        "options": asdict(plan.options),
        "profile": asdict(plan.profile),
        "start_utc": start,
        "files": [f.relative_to(outdir).as_posix() for f in result.files],
        "truth": result.truth.name,
        "writes": result.writes,
        "trace_bytes": result.trace_bytes,
    }
    result.scenario.write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")
