"""Benchmark: dgtrace end to end against `grep -c msgid=` on the same simulated corpus, in one run.

    python scripts/bench.py [--sizes 1GB,2GB] [--outputs json,text,csv,markdown,html] [--runs 3] [--gzip]
                            [--format-version 19c] [--threads 2] [--corpus-dir bench-corpus] [--code DIR]
                            [--against DIR] [--small-files N] [--members N]

For each size, builds (or reuses) a corpus with `dgtrace simulate` (19c, `mixed` scenario, two primary
RAC threads; `--threads 1`: a single-instance primary, whose one RFS trace is most of the corpus), then
times, alternating within each round, `grep -c msgid=` over its trace files and `dgtrace analyze`
in each output asked for (JSON, the default text report and CSV by default; Markdown, HTML), every
output drained through a pipe (GNU grep stops at the first match when its output is /dev/null). It
prints, per size and command, the median wall time, MB/s, the ratio to grep measured in the same
rounds, the CPU seconds (user and system, every thread), the cores they kept busy, `best x grep` (the
ratio those CPU seconds would give with every core busy all the time: what more parallelism alone could
reach) and the peak RSS, then the exponents k of time ~ size^k and peak RSS ~ size^k between
consecutive sizes. `--gzip` also times the gzipped corpus: `gzip -dc | grep -c` against `dgtrace
analyze` of the .gz files.

`--small-files N` times, instead of the corpora, N distinct small traces (copies of the bundled 18 KB RFS
sample, each with a line of its own at the end, since identical files are read once): the fixed cost of
a file, which an upload of thousands of small members pays thousands of times.

`--members N` times a zip of N tiny distinct traces (five stamp lines and one of its own each, as a
collection of foreground traces holds: nothing to match) against `unzip -p ZIP | grep -c line` in the
same rounds, and prints members per second: the cost of a member, which an upload of 100,000 pays.

`--batch` times `dgtrace batch` instead: over an archive share (`dgtrace simulate-share`, 3
configurations x 3 days, older days gzipped, with alert logs, .trm maps and foreground traces;
`--share-writes` writes per thread, configuration and day) into a fresh dataset directory each
round, with each engine of `--engines` (local, dask), against `zcat -f | grep -c msgid=` over the
same trace files in the same rounds; then a second run over the same share (nothing to do). It
prints seconds, MB/s (of the uncompressed traces), writes per second, the ratio to grep and the CPU
columns above (the batch's worker processes included).

`--against DIR` also times another source tree (another commit's: `git archive COMMIT | tar -x -C DIR`),
each of its commands right after the same command of this tree, in the same rounds: a before/after
comparison measured under the same load, as "json (before)", "text (before)", "local (before)".

These machines are shared and noisy: only ratios measured in one run mean something. The last
line is the whole result as JSON.
"""

from __future__ import annotations

import argparse
import gzip
import itertools
import json
import math
import os
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import zipfile
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from analyzer.base.units import parse_size  # noqa: E402
from scripts.reliability_table import command_environ, many_members_zip  # noqa: E402

DGTRACE = [sys.executable, "-m", "analyzer"]
#: the source tree whose analyzer runs (`--code`: another commit's, `git archive COMMIT | tar -x -C DIR`)
CODE = ROOT
#: `--outputs` name -> the analyze arguments that select it
OUTPUTS = {
    "json": ["--format", "json"],
    "text": [],
    "csv": ["--format", "csv"],
    "markdown": ["--format", "markdown"],
    "html": ["--format", "html"],
}


#: the cores the commands may use: `best x grep` is the time their CPU seconds would take on all of them
CORES = os.cpu_count() or 1


@dataclass(frozen=True)
class Run:
    """One timed command: wall seconds, the peak resident set size of the child (MB) and the CPU
    seconds (user and system) of the child, its threads and the processes it waited for."""

    seconds: float
    peak_mb: float
    cpu_s: float


def timed(cmd: list[str], tree: Path | None = None) -> Run:
    """Run a command, draining its stdout through a pipe; wall time, the child's peak RSS and CPU seconds.
    `tree`: the source tree whose analyzer `python -m analyzer` runs (default CODE)."""
    tree = tree or CODE
    env = command_environ(**({"PYTHONPATH": str(tree)} if tree != ROOT else {}))
    start = time.perf_counter()
    with tempfile.TemporaryFile() as errors:
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=errors, cwd=tree, env=env)
        assert proc.stdout is not None
        while proc.stdout.read(1 << 20):
            pass
        _, status, usage = os.wait4(proc.pid, 0)  # wait4: the child's resource use with its status
        seconds = time.perf_counter() - start
        exit_code = proc.returncode = os.waitstatus_to_exitcode(status)  # reaped here, not by `proc`
        proc.stdout.close()
        if exit_code not in (0, 1):  # grep -c exits 1 when a file has no match; dgtrace 1 is "partial"
            errors.seek(0)
            raise SystemExit(f"{' '.join(cmd[:5])}... failed with exit code {exit_code}: {errors.read(500).decode()}")
    return Run(seconds, usage.ru_maxrss / 1024, usage.ru_utime + usage.ru_stime)


def cpu_figures(runs: list[Run], grep_s: float) -> dict[str, float]:
    """The median CPU seconds of a command's runs, the cores they kept busy (CPU seconds per second of
    the median run) and `best x grep`: the ratio to grep that the same CPU seconds would give with
    every one of CORES cores busy all the time (what parallelism alone could reach; below it, only
    less work per byte gets)."""
    cpu = statistics.median(r.cpu_s for r in runs)
    seconds = statistics.median(r.seconds for r in runs)
    return {
        "cpu_s": round(cpu, 2),
        "cores": round(cpu / seconds, 2) if seconds else 0.0,
        "best_ratio_to_grep": round(cpu / CORES / grep_s, 2) if grep_s else 0.0,
    }


def build_corpus(corpus: Path, size: str, generation: str, threads: int = 2) -> list[Path]:
    """Simulate the corpus unless it is already there; its trace files."""
    if not (corpus / "truth.csv").exists():
        command = ["simulate", str(corpus), "--size", size, "--format-version", generation, "--scenario", "mixed"]
        command += ["--threads", str(threads)]
        subprocess.run([*DGTRACE, *command], check=True, cwd=ROOT)
    return sorted(corpus.rglob("*.trc"))


#: the trace `--small-files` copies (an RFS trace of the bundled sample: 16410 messages and 10046 waits)
SMALL_SAMPLE = ROOT / "samples/paper-2014/stby01/diag/rdbms/chicago/chicago1/trace/chicago1_rfs_8801.trc"


def small_files(corpus_dir: Path, count: int) -> list[Path]:
    """`count` distinct copies of SMALL_SAMPLE (built once, kept beside the corpora); their paths."""
    folder = corpus_dir / f"small-{count}"
    if not folder.exists():
        part = folder.with_name(folder.name + ".part")
        shutil.rmtree(part, ignore_errors=True)
        part.mkdir(parents=True)
        text = SMALL_SAMPLE.read_bytes()
        for n in range(count):
            (part / f"chicago1_rfs_{10_000 + n}.trc").write_bytes(text + f"copy {n}\n".encode())
        part.replace(folder)
    return sorted(folder.glob("*.trc"))


def members_zip(corpus_dir: Path, count: int) -> Path:
    """A zip of `count` tiny distinct traces (built once, kept beside the corpora), as the reliability
    table's `members-*-distinct` cases build it, and the bundled sample's traces (writes to match)."""
    target = corpus_dir / f"members-{count}.zip"
    if not target.exists():
        corpus_dir.mkdir(parents=True, exist_ok=True)
        part = target.with_suffix(".part")
        many_members_zip(part, members=count, distinct=True)
        with zipfile.ZipFile(part, "a", zipfile.ZIP_DEFLATED) as archive:
            for trace in sorted(SMALL_SAMPLE.parents[6].rglob("*.trc")):
                archive.write(trace, str(trace.relative_to(SMALL_SAMPLE.parents[6])))
        part.replace(target)
    return target


def gzipped(files: list[Path], corpus: Path) -> list[Path]:
    """A gzipped copy of every file (level 6, kept beside the corpus and reused)."""
    out = []
    for f in files:
        target = corpus.parent / f"{corpus.name}-gz" / f.relative_to(corpus).with_suffix(".trc.gz")
        if not target.exists():
            target.parent.mkdir(parents=True, exist_ok=True)
            with f.open("rb") as raw, gzip.open(target.with_suffix(".part"), "wb", compresslevel=6) as packed:
                shutil.copyfileobj(raw, packed, 1 << 20)
            target.with_suffix(".part").replace(target)
        out.append(target)
    return out


#: `--against DIR`: another source tree whose dgtrace runs, in the same rounds, beside this one's
AGAINST: Path | None = None
#: the suffix of the names of the commands run with AGAINST's analyzer
BEFORE = " (before)"


def names_of(outputs: list[str]) -> list[str]:
    """The dgtrace commands of a round, by name: each output, and its twin of AGAINST's tree."""
    return [n for o in outputs for n in (o, *([o + BEFORE] if AGAINST else []))]


def compiled(tree: Path) -> None:
    """The tree's analyzer compiled to bytecode beforehand, as an installed dgtrace is (pip compiles a
    wheel's modules as it installs them): where PYTHONDONTWRITEBYTECODE is set (this machine sets it),
    no run would write them, and every command, and every batch worker, would compile every module it
    imports again (0.13 s a process here)."""
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(tree / "analyzer")], check=True)


def tree_of(name: str) -> Path | None:
    return AGAINST if name.endswith(BEFORE) else None


def commands(
    files: list[Path], outputs: list[str], compressed: bool, baseline: list[str] | None = None
) -> dict[str, list[str]]:
    """The commands of one round: the grep baseline first (`baseline` when given), then dgtrace in each
    output format (and, with `--against`, the same with the other tree's analyzer right after each)."""
    names = [str(f) for f in files]
    if baseline is not None:
        pass
    elif compressed:
        baseline = ["sh", "-c", f"gzip -dc {' '.join(map(shlex.quote, names))} | grep -c msgid="]
    else:
        baseline = ["grep", "-c", "msgid=", *names]
    dgtrace = {n: [*DGTRACE, "--quiet", "analyze", *names, *OUTPUTS[n.removesuffix(BEFORE)]] for n in names_of(outputs)}
    return {"grep": baseline, **dgtrace}


def measure(
    files: list[Path],
    outputs: list[str],
    runs: int,
    size_mb: float,
    *,
    compressed: bool = False,
    baseline: list[str] | None = None,
) -> dict[str, object]:
    """Alternate the commands over the same files `runs` times; medians, MB/s (of `size_mb`, the
    uncompressed size), ratios, peak RSS."""
    plan = commands(files, outputs, compressed, baseline)
    timed(plan["grep"])  # warm the page cache
    rounds: dict[str, list[Run]] = {name: [] for name in plan}
    for _ in range(runs):
        for name, cmd in plan.items():
            rounds[name].append(timed(cmd, tree_of(name)))
    grep_s = statistics.median(r.seconds for r in rounds["grep"])
    result: dict[str, object] = {"files": len(files), "runs": runs, "grep_s": round(grep_s, 3)}
    for name in names_of(outputs):
        seconds = statistics.median(r.seconds for r in rounds[name])
        result[name] = {
            "seconds": round(seconds, 3),
            "ratio_to_grep": round(seconds / grep_s, 2),
            "peak_rss_mb": round(max(r.peak_mb for r in rounds[name]), 1),
            "mb_s": round(size_mb / seconds, 1),
            **cpu_figures(rounds[name], grep_s),
        }
    return result


def exponent(big: float, small: float, big_mb: float, small_mb: float) -> float:
    """k in value ~ size^k from two measurements."""
    return round(math.log(big / small) / math.log(big_mb / small_mb), 2)


def scaling(results: list[dict[str, object]], outputs: list[str]) -> list[dict[str, object]]:
    """Exponents of time and peak RSS between consecutive sizes, per output."""
    out = []
    for small, big in itertools.pairwise(results):
        sizes = (float(big["input_mb"]), float(small["input_mb"]))  # type: ignore[arg-type]
        row: dict[str, object] = {"from_mb": sizes[1], "to_mb": sizes[0]}
        for name in names_of(outputs):
            b, s = big[name], small[name]
            assert isinstance(b, dict) and isinstance(s, dict)
            row[f"{name}_time_exponent"] = exponent(b["seconds"], s["seconds"], *sizes)
            row[f"{name}_rss_exponent"] = exponent(b["peak_rss_mb"], s["peak_rss_mb"], *sizes)
        out.append(row)
    return out


def _print(results: list[dict[str, object]], outputs: list[str]) -> None:
    header = f"{'input':>12} {'command':>23} {'median s':>9} {'MB/s':>7} {'x grep':>7} {CPU_HEADER} {'peak RSS MB':>12}"
    print(header)
    print("-" * len(header))
    for r in results:
        label = f"{r['input_mb']:,.0f} MB" + (" gz" if r.get("gzip") else "")
        print(f"{label:>12} {'grep -c':>23} {r['grep_s']:>9.2f} {'':>7} {'1.00':>7} {'':>{len(CPU_HEADER)}} {'':>12}")
        for name in names_of(outputs):
            m = r[name]
            assert isinstance(m, dict)
            command = f"dgtrace {name}"
            cells = f"{m['seconds']:>9.2f} {m['mb_s']:>7.1f} {m['ratio_to_grep']:>7.2f} {_cpu_cells(m)}"
            print(f"{'':>12} {command:>23} {cells} {m['peak_rss_mb']:>12.0f}")


#: the CPU columns of both tables: CPU seconds, cores kept busy, the ratio to grep with every core busy
CPU_HEADER = f"{'CPU s':>7} {'cores':>5} {'best x grep':>11}"


def _cpu_cells(m: dict[str, float]) -> str:
    return f"{m['cpu_s']:>7.1f} {m['cores']:>5.2f} {m['best_ratio_to_grep']:>11.2f}"


def build_share(share: Path, writes: int) -> tuple[list[Path], int, float]:
    """Simulate the share unless it is there: its trace files, its writes, its trace MB (uncompressed)."""
    if not (share / "truth.csv").exists():
        command = ["simulate-share", str(share), "--configs", "3", "--days", "3", "--writes", str(writes)]
        subprocess.run([*DGTRACE, *command], check=True, cwd=ROOT)
    files = sorted(p for p in share.rglob("*") if p.name.endswith((".trc", ".trc.gz")))
    with (share / "truth.csv").open() as truth:
        rows = sum(1 for _ in truth) - 1
    trace_mb = sum(_content_bytes(f) for f in files) / 1e6
    return files, rows, trace_mb


def _content_bytes(path: Path) -> int:
    if path.suffix != ".gz":
        return path.stat().st_size
    with gzip.open(path, "rb") as stream:
        return sum(len(block) for block in iter(lambda: stream.read(1 << 20), b""))


def measure_batch(share: Path, engines: list[str], runs: int, work: Path) -> dict[str, object]:
    """grep, then `dgtrace batch` into a fresh directory with each engine, then a re-run, per round."""
    files, rows, trace_mb = build_share(share, 0)
    names = " ".join(shlex.quote(str(f)) for f in files)
    grep = ["sh", "-c", f"zcat -f {names} | grep -c msgid="]
    timed(grep)  # warm the page cache
    named = names_of(engines)
    rounds: dict[str, list[Run]] = {name: [] for name in ["grep", *named, "rerun"]}
    for n in range(runs):
        rounds["grep"].append(timed(grep))
        for name in named:
            engine, out = name.removesuffix(BEFORE), work / f"ds-{n}"
            extra = ["--workers", str(os.cpu_count() or 1)]
            rounds[name].append(
                timed(
                    [*DGTRACE, "--quiet", "batch", str(share), "--out", str(out), "--engine", engine, *extra],
                    tree_of(name),
                )
            )
            if name == engines[0]:
                rounds["rerun"].append(timed([*DGTRACE, "--quiet", "batch", str(share), "--out", str(out)]))
            shutil.rmtree(out)
    grep_s = statistics.median(r.seconds for r in rounds["grep"])
    result: dict[str, object] = {
        "share": str(share),
        "trace_files": len(files),
        "writes": rows,
        "trace_mb": round(trace_mb, 1),
        "runs": runs,
        "grep_s": round(grep_s, 3),
    }
    for name in [*named, "rerun"]:
        seconds = statistics.median(r.seconds for r in rounds[name])
        result[name] = {
            "seconds": round(seconds, 3),
            "ratio_to_grep": round(seconds / grep_s, 2),
            "mb_s": round(trace_mb / seconds, 1),
            "writes_s": round(rows / seconds),
            "peak_rss_mb": round(max(r.peak_mb for r in rounds[name]), 1),
            **cpu_figures(rounds[name], grep_s),
        }
    return result


def _print_batch(result: dict[str, object], engines: list[str]) -> None:
    print(f"{result['trace_files']} trace files, {result['trace_mb']} MB of traces, {result['writes']:,} writes")
    columns = f"{'median s':>9} {'MB/s':>7} {'writes/s':>9} {'x grep':>7} {CPU_HEADER}"
    header = f"{'command':>33} {columns} {'peak RSS MB':>12}"
    print(header)
    print("-" * len(header))
    print(f"{'zcat -f | grep -c':>33} {result['grep_s']:>9.2f} {'':>7} {'':>9} {'1.00':>7}")
    for name in [*names_of(engines), "rerun"]:
        m = result[name]
        assert isinstance(m, dict)
        label = f"batch --engine {name}" if name != "rerun" else "batch again (no work)"
        cells = f"{m['seconds']:>9.2f} {m['mb_s']:>7.1f} {m['writes_s']:>9,} {m['ratio_to_grep']:>7.2f} {_cpu_cells(m)}"
        print(f"{label:>33} {cells} {m['peak_rss_mb']:>12.0f}")


def main() -> None:
    """Parse options, build the corpora, measure, print a table and one JSON line."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", default="1GB,2GB", help="corpus sizes, comma-separated (default 1GB,2GB)")
    ap.add_argument(
        "--outputs", default="json,text,csv", help="dgtrace outputs to time (json, text, csv, markdown, html)"
    )
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--gzip", action="store_true", help="also time the gzipped corpus of each size")
    ap.add_argument("--format-version", default="19c")
    ap.add_argument("--threads", type=int, default=2, help="primary RAC threads of the corpora (default 2)")
    ap.add_argument("--corpus-dir", type=Path, default=ROOT / "bench-corpus")
    ap.add_argument("--code", type=Path, help="time the analyzer of this source tree (another commit's) instead")
    ap.add_argument(
        "--against",
        type=Path,
        help="also time another source tree (`git archive COMMIT | tar -x -C DIR`), after each command of this one",
    )
    ap.add_argument("--small-files", type=int, help="time this many distinct small traces instead of the corpora")
    ap.add_argument("--members", type=int, help="time a zip of this many tiny distinct traces instead")
    ap.add_argument("--batch", action="store_true", help="time dgtrace batch over an archive share instead")
    ap.add_argument("--share-writes", type=int, default=20000, help="--batch: writes per thread, configuration, day")
    ap.add_argument("--engines", default="local,dask", help="--batch: engines to time (local, dask)")
    args = ap.parse_args()
    if args.against is not None:
        global AGAINST
        AGAINST = args.against.resolve()
    if args.code is not None:  # `python -m analyzer` from that tree, ahead of the checkout's editable install
        global CODE
        CODE = args.code.resolve()
        os.environ["PYTHONPATH"] = str(CODE)
    for tree in {CODE, *([AGAINST] if AGAINST is not None else [])}:
        compiled(tree)
    if args.batch:
        engines = [e for e in args.engines.split(",") if e]
        share = args.corpus_dir / f"share-{args.share_writes}"
        build_share(share, args.share_writes)
        with tempfile.TemporaryDirectory(dir=args.corpus_dir) as work:
            result = measure_batch(share, engines, args.runs, Path(work))
        _print_batch(result, engines)
        print(json.dumps(result))
        return
    outputs = [o for o in args.outputs.split(",") if o]
    unknown = set(outputs) - set(OUTPUTS)
    if unknown:
        ap.error(f"unknown outputs: {', '.join(sorted(unknown))}")
    if args.members:
        zipped = members_zip(args.corpus_dir, args.members)
        counted = ["sh", "-c", f"unzip -p {shlex.quote(str(zipped))} | grep -c line"]
        row = {"members": args.members, **measure([zipped], outputs, args.runs, 0.0, baseline=counted)}
        for name in names_of(outputs):
            figures = row[name]
            assert isinstance(figures, dict)
            figures["members_per_s"] = round(args.members / figures["seconds"])
            print(f"{name}: {figures['members_per_s']:,} members/s, {figures['ratio_to_grep']} x unzip | grep")
        print(json.dumps({"results": [row]}))
        return
    if args.small_files:
        files = small_files(args.corpus_dir, args.small_files)
        input_mb = round(sum(f.stat().st_size for f in files) / 1e6, 1)
        row = {"small_files": len(files), "input_mb": input_mb, **measure(files, outputs, args.runs, input_mb)}
        _print([row], outputs)
        print(json.dumps({"results": [row]}))
        return
    results: list[dict[str, object]] = []
    compressed: list[dict[str, object]] = []
    for size in sorted(args.sizes.split(","), key=parse_size):
        threads = "" if args.threads == 2 else f"-{args.threads}t"
        corpus = args.corpus_dir / f"{args.format_version}-{size}{threads}"
        files = build_corpus(corpus, size, args.format_version, args.threads)
        input_mb = round(sum(f.stat().st_size for f in files) / 1e6, 1)
        results.append({"corpus": str(corpus), "input_mb": input_mb, **measure(files, outputs, args.runs, input_mb)})
        if args.gzip:
            packed = gzipped(files, corpus)
            row = measure(packed, outputs, args.runs, input_mb, compressed=True)
            compressed.append({"input_mb": input_mb, "gzip": True, **row})
    _print(results + compressed, outputs)
    exponents = scaling(results, outputs)
    for row in exponents:
        print(
            f"{row['from_mb']:,.0f} -> {row['to_mb']:,.0f} MB: "
            + ", ".join(f"{k.removesuffix('_exponent')} ^{v}" for k, v in row.items() if k.endswith("exponent"))
        )
    print(json.dumps({"results": results, "gzip": compressed, "scaling": exponents}))


if __name__ == "__main__":
    main()
