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
    opts = plan.options
    rng = Random(f"{opts.seed}:thread:{thread}")
    first_send = plan.start + rng.randrange(50_000)
    budget = None if opts.size_bytes is None else opts.size_bytes // opts.threads
    with ExitStack() as stack:
        texts = _open_thread(plan, thread, processes, outdir, stack, rng, first_send)
        model = ThreadModel(plan.profile, rng, first_send, opts.noise)
        done = _stream(texts, model, truth, opts.writes_per_thread, budget)
    return done, texts.bytes


@dataclass(frozen=True)
class _ThreadTexts:
    """The three trace files of one thread and the objects that print into them."""

    thread: int
    files: tuple[ChunkWriter, ChunkWriter, ChunkWriter]
    nss: NssText
    lgwr: LgwrText
    rfs: RfsText

    @property
    def bytes(self) -> int:
        """Bytes written so far to the three files."""
        return sum(f.bytes for f in self.files)


def _open_thread(
    plan: _SetPlan,
    thread: int,
    processes: tuple[Process, Process, Process],
    outdir: Path,
    stack: ExitStack,
    rng: Random,
    first_send: int,
) -> _ThreadTexts:
    """Create the NSS, LGWR and RFS files of `thread` with their headers."""
    opts, gen = plan.options, plan.generation
    primary, standby = parse_offset(opts.primary_tz), parse_offset(opts.standby_tz)
    clocks = (
        HostClock(0, primary, gen),
        HostClock(0, primary, gen),
        HostClock(plan.standby_skew_us, standby, gen),
    )
    nss_start = first_send - rng.randrange(500_000, 3_000_000)
    starts = (
        nss_start,
        nss_start - rng.randrange(3_600, 30 * 3_600) * 1_000_000,  # LGWR: instance startup
        nss_start + rng.randrange(5_000, 40_000),  # RFS: started when NSS connected
    )
    files = tuple(
        stack.enter_context(_chunk_writer(outdir / p.trace_dir / p.file_name)) for p in processes
    )
    for file, process, clock, start in zip(files, processes, clocks, starts, strict=True):
        file.parts.append(header(gen, process, clock, start))
    return _ThreadTexts(
        thread,
        (files[0], files[1], files[2]),
        NssText(gen, clocks[0], thread, files[0].parts, nss_start),
        LgwrText(clocks[1], opts.lgwr_warning_ms, files[1].parts),
        RfsText(gen, clocks[2], thread, files[2].parts, starts[2], plan.tim_shift),
    )


def _stream(
    texts: _ThreadTexts,
    model: ThreadModel,
    truth: ChunkWriter,
    limit: int | None,
    budget: int | None,
) -> int:
    """Print writes until `limit` writes or `budget` bytes; flush every BATCH writes."""
    nss, rfs, lgwr, thread = texts.nss, texts.rfs, texts.lgwr, texts.thread
    utc = _UtcText()
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
            for f in (*texts.files, truth):
                f.flush()
            if budget is not None and texts.bytes >= budget:
                break
    return done


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
