"""Streams the trace files of one primary thread and its truth rows in bounded memory."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import ExitStack, closing
from dataclasses import dataclass, field, replace
from pathlib import Path
from random import Random

from analyzer.simulate.alert import ThreadAlerts
from analyzer.simulate.files import ChunkWriter, Segmenting, TraceFile, chunk_writer
from analyzer.simulate.formats import Generation, HostClock
from analyzer.simulate.headers import Process, header
from analyzer.simulate.model import AsyncStream, Link, Profile, SyncFollower, ThreadModel, Write
from analyzer.simulate.options import SimOptions
from analyzer.simulate.records import LgwrEvents, LgwrText, NssText, RfsText
from analyzer.simulate.topology import ClockSpec, LinkSpec, Names, ThreadLayout
from analyzer.simulate.truth import UtcText, commit_row, link_columns, truth_row

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
    #: the configuration's names (the classic sales/salesdr set by default)
    names: Names = field(default_factory=Names)
    #: SCN of every thread at `scn_start` (it grows by about 25,000 a second)
    scn_base: int = 0
    scn_start: int = 0
    #: part of a share: extended truth rows even with classic options
    share: bool = False

    @property
    def extended(self) -> bool:
        """True for sets that use a newer option (extended truth columns, links, segments) and shares."""
        return self.share or not self.options.classic

    def scn(self, t: int) -> int:
        """The SCN at true time `t`."""
        return self.scn_base + max(0, t - self.scn_start) // 40


@dataclass(frozen=True)
class ThreadJob:
    """One primary thread to simulate: its processes and where its files go."""

    plan: SetPlan
    thread: int
    layout: ThreadLayout
    outdir: Path
    #: seeds this thread's random streams
    key: str
    #: names the thread's temporary part files
    tag: str
    #: when given, the first log sequence, and the seed of the msgid skips (shared by the configurations of a share)
    first_seq: int | None = None
    keys_seed: str | None = None
    #: when the instance started (LGWR's session); else drawn 1 to 30 hours before the first send
    instance_start: int | None = None

    @property
    def job_file(self) -> Path:
        """This job, pickled for a child process."""
        return self.outdir / f".job-{self.tag}.pickle"

    def truth_part(self, link: int) -> Path:
        """Truth rows of one link of this thread, joined into truth.csv afterwards."""
        return self.outdir / (f".truth-{self.tag}.part" if link == 0 else f".truth-{self.tag}-{link}.part")

    @property
    def commit_part(self) -> Path:
        """commit_path.csv rows of this thread (several SYNC destinations only)."""
        return self.outdir / f".commit-{self.tag}.part"

    @property
    def lgwr_part(self) -> Path:
        """lgwr_events.csv rows of this thread."""
        return self.outdir / f".lgwr-{self.tag}.part"

    def alert_part(self, sid: str, link: int, side: int) -> Path:
        """Alert log entries of instance `sid` caused by a link's sender (side 0) or RFS (side 1)."""
        return self.outdir / f".alert-{self.tag}-{link}-{side}-{sid}.part"


@dataclass(frozen=True)
class ThreadOutcome:
    """What one thread wrote."""

    #: primary writes (rounds of the first link)
    writes: int
    #: truth rows per link
    rows: tuple[int, ...]
    trace_bytes: int
    #: trace files kept, in order: first sender, LGWR, first RFS, then the other links' sender and RFS
    files: tuple[Path, ...]
    deleted: tuple[Path, ...]
    #: per link: [first, end) row ranges whose sender or RFS lines were in a deleted segment
    dropped: tuple[tuple[tuple[int, int], ...], ...]
    lgwr_dropped: tuple[tuple[int, int], ...]


@dataclass
class _LinkText:
    """The two trace files of one link, the objects that print into them, and its truth rows."""

    spec: LinkSpec
    sender_file: TraceFile
    receiver_file: TraceFile
    sender: NssText
    rfs: RfsText
    truth: ChunkWriter
    #: extended columns after `srl_write_ms`
    columns: str
    #: when the RFS session started
    receiver_start: int
    rows: int = 0


@dataclass
class _ThreadTexts:
    thread: int
    lgwr_file: TraceFile
    lgwr: LgwrText
    links: list[_LinkText]
    others: list[ChunkWriter] = field(default_factory=list)

    @property
    def trace_files(self) -> list[TraceFile]:
        """Trace files in the order of ThreadOutcome.files."""
        first = self.links[0]
        rest = [f for lt in self.links[1:] for f in (lt.sender_file, lt.receiver_file)]
        return [first.sender_file, self.lgwr_file, first.receiver_file, *rest]

    @property
    def bytes(self) -> int:
        """Bytes written so far to the trace files."""
        return sum(f.bytes for f in self.trace_files)


def host_clock(spec: ClockSpec, gen: Generation) -> HostClock:
    """The printing clock of a host."""
    return HostClock(spec.skew_us, spec.offset_min, gen)


def run_thread(job: ThreadJob) -> ThreadOutcome:
    """Simulate one primary thread until its budget is spent."""
    plan, opts = job.plan, job.plan.options
    rng = Random(job.key)
    first_send = plan.start + rng.randrange(50_000)
    budget = None if opts.size_bytes is None else opts.size_bytes // opts.threads
    segmenting = None if opts.segment_bytes is None else Segmenting(opts.segment_bytes, opts.drop_segment)
    with ExitStack() as stack:
        texts = _open_thread(job, stack, rng, first_send, segmenting)
        msgids = (plan.first_msgid + job.thread - 1, opts.threads)
        followers, streams = _extra_models(job, msgids)
        keys = None if job.keys_seed is None else Random(job.keys_seed)
        model = ThreadModel(
            plan.profile,
            rng,
            first_send,
            opts.noise,
            msgids,
            fastsync=opts.transport == "fastsync",
            followers=followers,
            keys=keys,
            first_seq=job.first_seq,
        )
        if plan.extended:
            alerts = ThreadAlerts(job, stack) if opts.extras else None
            commit = stack.enter_context(chunk_writer(job.commit_part)) if followers else None
            texts.others += [commit] if commit is not None else []
            done = _stream(texts, model, streams, (opts.writes_per_thread, budget), alerts, commit)
        else:
            done = _stream_classic(texts, model, opts.writes_per_thread, budget)
    files = texts.trace_files
    return ThreadOutcome(
        done,
        tuple(lt.rows for lt in texts.links),
        texts.bytes,
        tuple(p for f in files for p in f.kept),
        tuple(p for f in files for p in f.deleted),
        tuple(tuple(lt.sender_file.dropped + lt.receiver_file.dropped) for lt in texts.links),
        tuple(texts.lgwr_file.dropped),
    )


def _open_thread(
    job: ThreadJob, stack: ExitStack, rng: Random, first_send: int, segmenting: Segmenting | None
) -> _ThreadTexts:
    """Create the thread's trace files with their headers, drawing the session starts from `rng`."""
    plan, thread, layout = job.plan, job.thread, job.layout
    gen, opts = plan.generation, plan.options
    nss_start = first_send - rng.randrange(500_000, 3_000_000)
    lgwr_start = nss_start - rng.randrange(3_600, 30 * 3_600) * 1_000_000  # LGWR: instance startup
    rfs_start = nss_start + rng.randrange(5_000, 40_000)  # RFS: started when NSS connected
    if job.instance_start is not None:
        lgwr_start = job.instance_start + 5_000_000

    def open_file(process: Process, clock: HostClock, start: int) -> TraceFile:
        file = stack.enter_context(closing(TraceFile(job.outdir, process, segmenting, _header(gen, clock))))
        file.parts.append(header(gen, process, clock, start))
        return file

    lgwr_clock = host_clock(layout.lgwr_clock, gen)
    links = []
    for index, spec in enumerate(layout.links):
        if index == 0:
            send_start, recv_start = nss_start, rfs_start
        else:
            lrng = Random(f"{job.key}:link:{index}")
            send_start = first_send - lrng.randrange(500_000, 3_000_000)
            recv_start = send_start + lrng.randrange(5_000, 40_000)
        links.append(_link_text(job, spec, index, open_file, (send_start, recv_start), stack))
    lgwr_file = open_file(layout.lgwr, lgwr_clock, lgwr_start)
    if not opts.lgwr_events:
        lgwr = LgwrText(lgwr_clock, opts.lgwr_warning_ms, lgwr_file.parts)
        return _ThreadTexts(thread, lgwr_file, lgwr, links)
    rows = stack.enter_context(chunk_writer(job.lgwr_part))
    events = LgwrEvents(
        gen,
        Random(f"{job.key}:lgwr"),
        opts.lgwr_broadcast_rate,
        opts.lgwr_mode_switch_every,
        plan.scn,
        layout.lgwr.host,
        thread,
    )
    lgwr = LgwrText(lgwr_clock, opts.lgwr_warning_ms, lgwr_file.parts, events, rows.parts)
    return _ThreadTexts(thread, lgwr_file, lgwr, links, [rows])


def _link_text(
    job: ThreadJob,
    spec: LinkSpec,
    index: int,
    open_file: Callable[[Process, HostClock, int], TraceFile],
    starts: tuple[int, int],
    stack: ExitStack,
) -> _LinkText:
    gen, thread = job.plan.generation, job.thread
    send_clock, recv_clock = host_clock(spec.sender_clock, gen), host_clock(spec.receiver_clock, gen)
    sender_file = open_file(spec.sender, send_clock, starts[0])
    receiver_file = open_file(spec.receiver, recv_clock, starts[1])
    truth = stack.enter_context(chunk_writer(job.truth_part(index)))
    sender = NssText(gen, send_clock, thread, sender_file.parts, starts[0], spec.dest, spec.transport)
    rfs = RfsText(gen, recv_clock, thread, receiver_file.parts, starts[1], spec.receiver_clock.tim_shift)
    sent, received = spec.sender, spec.receiver
    columns = link_columns((sent.db, sent.host), (received.db, received.host), sent.image)
    return _LinkText(spec, sender_file, receiver_file, sender, rfs, truth, columns, starts[1])


def _header(gen: Generation, clock: HostClock) -> Callable[[Process, int], str]:
    """The header of a later segment of a process on a host with `clock`."""
    return lambda process, t: header(gen, process, clock, t)


def _extra_models(
    job: ThreadJob, msgids: tuple[int, int]
) -> tuple[tuple[SyncFollower, ...], list[tuple[int, AsyncStream]]]:
    """The models of the links after the first: SYNC followers, and ASYNC streams with their link index."""
    plan, opts = job.plan, job.plan.options
    followers: list[SyncFollower] = []
    streams: list[tuple[int, AsyncStream]] = []
    for index, spec in enumerate(job.layout.links[1:], 1):
        lrng = Random(f"{job.key}:model:{index}")
        profile = replace(plan.profile, rtt_ms=spec.rtt_ms)
        if spec.kind == "follower":
            link = Link(profile, lrng, spec.transport == "FASTSYNC")
            followers.append(SyncFollower(link, lrng, opts.noise, msgids))
        else:
            streams.append((index, AsyncStream(Link(profile, lrng), lrng, opts.noise, msgids)))
    return tuple(followers), streams


def _stream_classic(texts: _ThreadTexts, model: ThreadModel, limit: int | None, budget: int | None) -> int:
    """Print writes until `limit` writes or `budget` bytes; flush every BATCH writes (classic sets)."""
    first, lgwr, thread = texts.links[0], texts.lgwr, texts.thread
    nss, rfs, truth = first.sender, first.rfs, first.truth
    files = (first.sender_file, texts.lgwr_file, first.receiver_file, truth)
    utc = UtcText()
    done = 0
    for w in model.writes():
        q1, q4 = nss.record(w)
        q2, q3, io, _ = rfs.record(w)
        lgwr.record(w)
        truth.parts.append(truth_row(thread, w.seq, w.msgid, utc(q1), q4 - q1, q3 - q2, io))
        done += 1
        if done == limit:
            break
        if done % BATCH == 0:
            for f in files:
                f.flush()
            if budget is not None and texts.bytes >= budget:
                break
    first.rows = done
    return done


def _stream(
    texts: _ThreadTexts,
    model: ThreadModel,
    streams: list[tuple[int, AsyncStream]],
    limits: tuple[int | None, int | None],
    alerts: ThreadAlerts | None,
    commit: ChunkWriter | None = None,
) -> int:
    """Print the rounds of every link until `limits` (primary writes, bytes) are reached; with `commit`,
    each redo write's commit path (the slowest SYNC destination) as a commit_path.csv row."""
    limit, budget = limits
    links, lgwr, thread = texts.links, texts.lgwr, texts.thread
    lgwr_file = texts.lgwr_file
    followers = [i for i, lt in enumerate(links) if lt.spec.kind == "follower"]
    forwards = {i for i, lt in enumerate(links) if lt.spec.kind == "forward"}
    segmenting = lgwr_file.segmenting
    utc = UtcText()
    if alerts is not None:
        for index, lt in enumerate(links):
            alerts.attach(index, lt.receiver_start)

    def emit(index: int, w: Write) -> tuple[int, int]:
        lt = links[index]
        q1, q4 = lt.sender.record(w)
        q2, q3, io, late = lt.rfs.record(w)
        row = truth_row(thread, w.seq, w.msgid, utc(q1), q4 - q1, q3 - q2, io)
        lt.truth.parts.append(f"{row[:-1]},{lt.spec.transport},{late / 1000:.3f}{lt.columns}\n")
        lt.rows += 1
        if alerts is not None and w.new_log:
            alerts.new_log(index, w, lt.rfs.last_end)
        if segmenting:
            lt.sender_file.mark(lt.rows, w.t4 + 3)
            lt.receiver_file.mark(lt.rows, lt.rfs.last_end + 3)
        return q1, q4 - q1

    done = 0
    for w in model.writes():
        q1, total = emit(0, w)
        path = [(links[0].spec.receiver.db, w.msgid, total)]
        for index, more in zip(followers, w.more, strict=True):
            path.append((links[index].spec.receiver.db, more.msgid, emit(index, more)[1]))
        if commit is not None:
            commit.parts.append(commit_row(links[0].spec.sender.db, thread, w.seq, utc(q1), path))
        for index, stream in streams:
            ready = links[0].rfs.last_end if index in forwards else w.t1
            shipped = stream.offer(ready, w.seq, w.size_kb)
            if shipped is not None:
                emit(index, shipped)
        lgwr.record(w)
        if segmenting:
            lgwr_file.mark(lgwr.count, w.lgwr_start + w.lgwr_elapsed + 5)
        done += 1
        if done == limit:
            break
        if done % BATCH == 0:
            _flush(texts)
            if budget is not None and texts.bytes >= budget:
                break
    for index, stream in streams:
        shipped = stream.flush()
        if shipped is not None:
            emit(index, shipped)
    return done


def _flush(texts: _ThreadTexts) -> None:
    for f in texts.trace_files:
        f.flush()
    for lt in texts.links:
        lt.truth.flush()
    for other in texts.others:
        other.flush()
