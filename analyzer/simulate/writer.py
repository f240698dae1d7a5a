"""Streams the three trace files of one primary thread and its truth rows in bounded memory."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from random import Random

from analyzer.simulate.formats import Generation, HostClock
from analyzer.simulate.headers import Process, header
from analyzer.simulate.model import Profile, ThreadModel, Write
from analyzer.simulate.options import SimOptions
from analyzer.simulate.records import LgwrText, NssText, RfsText
from analyzer.units import parse_offset

#: writes generated between two flushes (and size checks): about 200 KB of text
BATCH = 256


@dataclass(frozen=True)
class SetPlan:
    """Settings shared by every thread of one trace set."""

    options: SimOptions
    generation: Generation
    profile: Profile
    #: true µs of the set's first send (threads start within 50 ms of it)
    start: int
    standby_skew_us: int
    #: RFS `tim` = true µs + tim_shift (epoch with skew, or a host counter)
    tim_shift: int
    #: msgid of thread 1's first write; thread n starts n - 1 later and all step by the thread count
    first_msgid: int


@dataclass(frozen=True)
class ThreadJob:
    """One primary thread to simulate: its processes and where its files go."""

    plan: SetPlan
    thread: int
    #: NSS (or LNS), LGWR, RFS
    processes: tuple[Process, Process, Process]
    outdir: Path

    @property
    def job_file(self) -> Path:
        """This job, pickled for a child process."""
        return self.outdir / f".job-{self.thread}.pickle"

    @property
    def truth_part(self) -> Path:
        """Truth rows of this thread, joined into truth.csv afterwards."""
        return self.outdir / f".truth-{self.thread}.part"


class ChunkWriter:
    """Collects text pieces and writes them out in one chunk per batch."""

    def __init__(self, path: Path) -> None:
        """Create (truncate) `path`."""
        path.parent.mkdir(parents=True, exist_ok=True)
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


def run_thread(job: ThreadJob) -> tuple[int, int]:
    """Simulate one primary thread until its budget is spent; return (writes, trace bytes)."""
    opts = job.plan.options
    rng = Random(f"{opts.seed}:thread:{job.thread}")
    first_send = job.plan.start + rng.randrange(50_000)
    budget = None if opts.size_bytes is None else opts.size_bytes // opts.threads
    with ExitStack() as stack:
        texts = _open_thread(job, stack, rng, first_send)
        truth = stack.enter_context(_chunk_writer(job.truth_part))
        msgids = (job.plan.first_msgid + job.thread - 1, opts.threads)
        model = ThreadModel(job.plan.profile, rng, first_send, opts.noise, msgids)
        done = _stream(texts, model, truth, opts.writes_per_thread, budget)
    return done, texts.bytes


def _open_thread(job: ThreadJob, stack: ExitStack, rng: Random, first_send: int) -> _ThreadTexts:
    """Create the NSS, LGWR and RFS files of the job's thread with their headers."""
    plan, thread = job.plan, job.thread
    gen = plan.generation
    primary, standby = parse_offset(plan.options.primary_tz), parse_offset(plan.options.standby_tz)
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
    files = tuple(stack.enter_context(_chunk_writer(job.outdir / p.trace_dir / p.file_name)) for p in job.processes)
    for file, process, clock, start in zip(files, job.processes, clocks, starts, strict=True):
        file.parts.append(header(gen, process, clock, start))
    return _ThreadTexts(
        thread,
        (files[0], files[1], files[2]),
        NssText(gen, clocks[0], thread, files[0].parts, nss_start),
        LgwrText(clocks[1], plan.options.lgwr_warning_ms, files[1].parts),
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
