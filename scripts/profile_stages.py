"""Where an analysis spends its time and memory, stage by stage (a profile to read, not a benchmark).

    python scripts/profile_stages.py CORPUS [--top 10]
    python scripts/profile_stages.py --chunks TRACE [--count 4] [--sites 12]
    python scripts/profile_stages.py --read TRACE

Runs `analyze` and the JSON renderer in this process, with the pipeline's stage functions
wrapped: prints each stage's wall time (summed over calls; `read_ended` runs on two threads, so
its sum is about twice its share of the wall clock; `end_file` runs inside both: for the small
files `read_small_ended` parses together, it is their reduction alone, the bulk of a small file's cost;
for a file read alone it also holds the reading and parsing of the chunks it pulls), the CPU
seconds of the process (every thread) while a stage ran and the cores they make (CPU seconds per
second), only for the stages whose calls do not overlap (`read_files` is the whole reading stage),
the process's peak RSS while the stage ran, sampled every 20 ms, and the polars queries the analysis
ran (a file's fixed cost).
`scripts/bench.py` gives the end-to-end figures against grep.

`--chunks TRACE` looks inside the reading stage instead: the first `--count` chunks of one trace file
read, scanned by the compiled scanner and the lines it hands back parsed (with `DGTRACE_SCANNER=python`:
each chunk as a frame, sorted into line families and each family's fast path), then parsed whole, their
RFS I/O waits placed and reduced on one thread, with the milliseconds per chunk of each step and the
number of polars queries a chunk runs (each eager DataFrame operation is one; their fixed cost is what a
small file pays), then the `--sites` analyzer lines whose queries took longest. `--read TRACE` reads one trace file as
`analyze` does, nothing wrapped: a run to profile with `perf record`.
"""

from __future__ import annotations

import argparse
import functools
import itertools
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import polars as pl

from analyzer import api
from analyzer.base.zones import TimeZones
from analyzer.findings import insights
from analyzer.inputs.classify import Source
from analyzer.match import finish
from analyzer.parse import families as parse
from analyzer.parse import scanner
from analyzer.parse.chunks import FileParser
from analyzer.parse.lines import ReadStats, read_chunks
from analyzer.reduce import ingest
from analyzer.reduce.placement import PlacementTally
from analyzer.reduce.reducer import FileReducer
from analyzer.report import machine

#: (module, functions) wrapped, in pipeline order
STAGES: list[tuple[ModuleType, list[str]]] = [
    # not `finish._sorted`: a wrapper holds its argument, the unsorted table, while the sorted one is built
    (ingest, ["read_ended", "read_small_ended", "end_file"]),  # end_file: inside the two before it
    (api, ["read_files"]),  # the whole reading stage: the calls above, on both threads
    (api, ["match_sides", "finish"]),
    (finish, ["estimate_offsets", "one_way", "tie_warnings"]),
    (api, ["analyze_files"]),
    (machine, ["summary", "write_json_array"]),
    (insights, ["per_minute"]),
]


#: stages whose calls run on the reading threads at the same time (their CPU seconds would count twice)
ON_THREADS = {"read_ended", "read_small_ended", "end_file"}


def rss_mb() -> float:
    """This process's resident set size (MB)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


class Recorder:
    """Wall time per stage, and the peak RSS seen while each stage was the latest to start."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}
        self.cpu: dict[str, float] = {}  # the process's CPU seconds (every thread) while the stage ran
        self.peak: dict[str, float] = {}
        self.current = "start"
        threading.Thread(target=self._sample, daemon=True).start()

    def _sample(self) -> None:
        while True:
            self.peak[self.current] = max(self.peak.get(self.current, 0.0), rss_mb())
            time.sleep(0.02)

    def wrap(self, module: ModuleType, name: str) -> None:
        """Time every call of `module.name` (the module attribute is replaced)."""
        inner: Callable[..., Any] = getattr(module, name)

        def timed(*args: Any, **kwargs: Any) -> Any:
            self.current, start, cpu = name, time.perf_counter(), time.process_time()
            try:
                return inner(*args, **kwargs)
            finally:
                self.seconds[name] = self.seconds.get(name, 0.0) + time.perf_counter() - start
                self.cpu[name] = self.cpu.get(name, 0.0) + time.process_time() - cpu

        setattr(module, name, timed)


def _site() -> str:
    """The analyzer line that ran the current polars query (`module.py:line`)."""
    frame = sys._getframe(2)
    while frame is not None and "/analyzer/" not in frame.f_code.co_filename:
        frame = frame.f_back  # type: ignore[assignment]
    if frame is None:
        return "(outside the analyzer)"
    return f"{frame.f_code.co_filename.split('/analyzer/')[-1]}:{frame.f_lineno}"


class QueryCount:
    """Counts the polars queries while active: eager DataFrame operations (run through the lazy engine)
    and lazy queries collected (a chain of operations run as one); with the seconds and the count of
    the queries of each analyzer line (`sites`)."""

    def __init__(self) -> None:
        self.queries = 0
        self.sites: dict[str, float] = {}  # seconds
        self.site_calls: Counter[str] = Counter()
        self._inner = pl.LazyFrame._collect_eager  # polars' internal entry of every eager DataFrame operation
        self._collect = pl.LazyFrame.collect

    def _timed(self, run: Callable[..., Any], frame: pl.LazyFrame, *args: Any, **kwargs: Any) -> Any:
        self.queries += 1
        start = time.perf_counter()
        result = run(frame, *args, **kwargs)
        site = _site()
        self.sites[site] = self.sites.get(site, 0.0) + time.perf_counter() - start
        self.site_calls[site] += 1
        return result

    def __enter__(self) -> QueryCount:
        inner, collect = self._inner, self._collect

        def counted(frame: pl.LazyFrame, *args: Any, **kwargs: Any) -> Any:
            return self._timed(inner, frame, *args, **kwargs)

        def collected(frame: pl.LazyFrame, *args: Any, **kwargs: Any) -> Any:
            return self._timed(collect, frame, *args, **kwargs)

        pl.LazyFrame._collect_eager = counted  # type: ignore[method-assign,assignment]
        pl.LazyFrame.collect = collected  # type: ignore[method-assign,assignment]
        return self

    def __exit__(self, *_: object) -> None:
        pl.LazyFrame._collect_eager = self._inner  # type: ignore[method-assign]
        pl.LazyFrame.collect = self._collect  # type: ignore[method-assign]


def chunk_steps(trace: Path, count: int, sites: int = 12) -> None:
    """Milliseconds per chunk of each step of the reading stage on one trace file, its queries per chunk,
    and the `sites` analyzer lines whose queries took longest."""
    seconds: dict[str, float] = {}

    def step(name: str, run: Callable[[], Any]) -> Any:
        start = time.perf_counter()
        result = run()
        seconds[name] = seconds.get(name, 0.0) + time.perf_counter() - start
        return result

    with trace.open("rb") as stream:
        chunks = step("read (read_chunks)", lambda: list(itertools.islice(read_chunks(stream, ReadStats()), count)))
    in_header = False
    for chunk in chunks:  # the parts of a chunk's parse, one by one
        scanned = scanner.scan(chunk, in_header, ReadStats()) if scanner.enabled() else None
        if scanned is not None:
            step("scan (compiled scanner)", functools.partial(scanner.scan, chunk, in_header, ReadStats()))
            step("lines handed back (parsed)", functools.partial(scanner.parse_scanned, scanned))
            in_header = scanned.in_header
            continue
        lines = step("lines as a frame", functools.partial(chunk.frame, ReadStats()))
        groups, end_in_header = step("sort into families", functools.partial(parse.split_families, lines, in_header))
        for family, spec in parse.REGISTRY.items():
            if spec.fast is not None and groups[family.value].height:
                step(f"fast path: {family.value}", functools.partial(spec.fast, groups[family.value]))
        in_header = end_in_header
    reducer, tally, reader = FileReducer(), PlacementTally(), FileParser(ReadStats())
    with QueryCount() as counter:  # the whole of it, then the reduce stage
        for n, chunk in enumerate(chunks):
            part = step("parse (all of it)", functools.partial(reader.parse, reader.split(chunk)))
            tables = part.tables
            step("wait placement (tally.add)", functools.partial(tally.add, tables["messages"], tables["waits"]))
            step("reduce (FileReducer.add)", functools.partial(reducer.add, part, last=n == len(chunks) - 1))
    mb = sum(len(chunk.data) for chunk in chunks) / 1e6
    print(f"{trace.name}: {len(chunks)} chunks of {mb / len(chunks):.1f} MB, {chunks[0].count:,} lines in the first")
    print(f"scanner: {scanner.name()} (DGTRACE_SCANNER=python: the pure path's steps)")
    for name, total in seconds.items():
        print(f"{name:28s} {total / len(chunks) * 1000:8.1f} ms per chunk")
    print(f"{'polars queries':28s} {counter.queries / len(chunks):8.0f} per chunk (parse, placement, reduce)")
    print(f"the {sites} analyzer lines whose queries took longest (ms per chunk, queries per chunk):")
    for site, total in sorted(counter.sites.items(), key=lambda item: -item[1])[:sites]:
        print(f"  {site:34s} {total / len(chunks) * 1000:8.1f} ms {counter.site_calls[site] / len(chunks):6.1f}")


def read_one(trace: Path) -> None:
    """Read, parse and reduce one trace file as `analyze` does (`ingest.read_file`), nothing wrapped:
    a run to put under a native profiler (`perf record python scripts/profile_stages.py --read TRACE`)."""
    source = Source(str(trace), lambda: trace.open("rb"), stored_bytes=trace.stat().st_size)
    wall, cpu = time.perf_counter(), time.process_time()
    found = ingest.read_file(source, TimeZones())
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    print(f"{trace.name}: {found.stats.lines:,} lines, {wall:.2f} s wall, {cpu:.2f} s CPU, peak RSS {rss_mb():.0f} MB")


def main() -> None:
    """Profile one analysis of CORPUS and print the table."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("corpus", type=Path, nargs="?")
    ap.add_argument("--top", type=int, default=10)
    ap.add_argument("--chunks", type=Path, metavar="TRACE", help="the reading stage's steps on one trace file")
    ap.add_argument("--count", type=int, default=4, help="--chunks: how many chunks")
    ap.add_argument("--read", type=Path, metavar="TRACE", help="read_file on one trace, nothing wrapped (for perf)")
    ap.add_argument("--sites", type=int, default=12, help="--chunks: how many of the costliest query lines to list")
    args = ap.parse_args()
    if args.read is not None:
        if not args.read.is_file():
            ap.error(f"--read {args.read}: not a file")
        read_one(args.read)
        return
    if args.chunks is not None:
        chunk_steps(args.chunks, args.count, args.sites)
        return
    if args.corpus is None:
        ap.error("a CORPUS, --chunks TRACE or --read TRACE")
    recorder = Recorder()
    for module, names in STAGES:
        for name in names:
            recorder.wrap(module, name)
    start, cpu = time.perf_counter(), time.process_time()
    with QueryCount() as counter:
        analysis = api.analyze([str(args.corpus)], api.Options())
    analyzed, analyzed_cpu = time.perf_counter() - start, time.process_time() - cpu
    with Path("/dev/null").open("w", encoding="utf-8") as out:
        machine.render_json(analysis, out, args.top)
    total, total_cpu = time.perf_counter() - start, time.process_time() - cpu
    # peak: while the stage was the latest to start; CPU: of every thread, so only for a stage whose calls
    # do not overlap (not those run on the reading threads); cores: CPU seconds per second
    print(f"{'stage':22s} {'seconds':>8s} {'CPU s':>7s} {'cores':>6s} {'peak RSS MB':>12s}")
    for _, names in STAGES:
        for name in names:
            if name in recorder.seconds:
                peak = recorder.peak.get(name)  # none when the stage ended before a sample
                seconds = recorder.seconds[name]
                used = "-" if name in ON_THREADS else f"{recorder.cpu[name]:7.2f} {recorder.cpu[name] / seconds:6.2f}"
                print(f"{name:22s} {seconds:8.2f} {used:>14s} {'-' if peak is None else f'{peak:.0f}':>12s}")
    print(f"{'analyze (wall)':22s} {analyzed:8.2f} {analyzed_cpu:7.2f} {analyzed_cpu / analyzed:6.2f}")
    peak = max(recorder.peak.values())
    print(f"{'analyze + render_json':22s} {total:8.2f} {total_cpu:7.2f} {total_cpu / total:6.2f} {peak:12.0f}")
    files, queries = len(analysis.files), counter.queries
    print(f"polars queries of analyze: {queries:,} for {files:,} files ({queries / max(files, 1):.0f} a file)")


if __name__ == "__main__":
    main()
