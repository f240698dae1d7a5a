"""Benchmark: dgtrace end to end against `grep -c msgid=` on the same simulated corpus, same run.

    python scripts/bench.py [--size 1GB] [--format-version 19c] [--runs 3] [--corpus DIR] [--scaling]

Builds (or reuses) a corpus with `dgtrace simulate`, then times, alternating, `grep -c msgid=`
over its trace files and `dgtrace analyze --format json` (its output drained through a pipe),
and prints medians, MB/s, the ratio dgtrace/grep and dgtrace's peak RSS. Machines here are
shared and noisy: only the ratio measured in one run means anything. `--scaling` also builds a
corpus of half the size (same scenario) and reports the exponents k of time ~ size^k and of
peak RSS ~ size^k (1 is linear growth; memory should stay well under it).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from analyzer.units import parse_size

ROOT = Path(__file__).resolve().parent.parent
DGTRACE = [sys.executable, "-m", "analyzer"]


@dataclass(frozen=True)
class Run:
    """One timed command: wall seconds and peak resident set size of the child (MB)."""

    seconds: float
    peak_mb: float


def timed(cmd: list[str]) -> Run:
    """Run a command, draining its stdout through a pipe; measure wall time and the child's peak RSS.

    A pipe, not /dev/null: GNU grep notices /dev/null and stops at the first match.
    """
    start = time.perf_counter()
    with tempfile.TemporaryFile() as errors:
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=errors, cwd=ROOT)
        assert proc.stdout is not None
        while proc.stdout.read(1 << 20):
            pass
        _, status, usage = os.wait4(proc.pid, 0)
        seconds = time.perf_counter() - start
        code = os.waitstatus_to_exitcode(status)
        if code not in (0, 1):  # grep -c exits 1 when a file has no match
            errors.seek(0)
            raise SystemExit(f"{' '.join(cmd[:4])}... failed with exit code {code}: {errors.read(500).decode()}")
    return Run(seconds, usage.ru_maxrss / 1024)


def build_corpus(corpus: Path, size: str, generation: str) -> list[Path]:
    """Simulate the corpus unless it is already there; return its trace files."""
    if not (corpus / "truth.csv").exists():
        subprocess.run(
            [*DGTRACE, "simulate", str(corpus), "--size", size, "--format-version", generation, "--scenario", "mixed"],
            check=True,
            cwd=ROOT,
        )
    return sorted(corpus.rglob("*.trc"))


def measure(files: list[Path], runs: int) -> dict[str, object]:
    """Alternate grep and dgtrace runs over the same files; medians, MB/s, ratio, peak RSS."""
    size_mb = sum(f.stat().st_size for f in files) / 1e6
    grep = ["grep", "-c", "msgid=", *map(str, files)]
    dgtrace = [*DGTRACE, "analyze", *map(str, files), "--format", "json"]
    timed(grep)  # warm the page cache
    g_runs, d_runs = [], []
    for _ in range(runs):
        g_runs.append(timed(grep))
        d_runs.append(timed(dgtrace))
    g = statistics.median(r.seconds for r in g_runs)
    d = statistics.median(r.seconds for r in d_runs)
    return {
        "input_mb": round(size_mb, 1),
        "files": len(files),
        "runs": runs,
        "grep_s": round(g, 3),
        "grep_mb_s": round(size_mb / g, 1),
        "dgtrace_s": round(d, 3),
        "dgtrace_mb_s": round(size_mb / d, 1),
        "ratio_dgtrace_over_grep": round(d / g, 2),
        "dgtrace_peak_rss_mb": round(max(r.peak_mb for r in d_runs), 1),
    }


def exponent(big: float, small: float, big_mb: float, small_mb: float) -> float:
    """k in value ~ size^k from two measurements."""
    return round(math.log(big / small) / math.log(big_mb / small_mb), 2)


def main() -> None:
    """Parse options, build the corpus, print the figures (text and one JSON line)."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--size", default="1GB")
    ap.add_argument("--format-version", default="19c")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--corpus", type=Path, default=None)
    ap.add_argument("--scaling", action="store_true")
    args = ap.parse_args()
    corpus = args.corpus or ROOT / "bench-corpus" / f"{args.format_version}-{args.size}"
    files = build_corpus(corpus, args.size, args.format_version)
    result = {"corpus": str(corpus), **measure(files, args.runs)}
    if args.scaling:
        half_size = f"{parse_size(args.size) // 2}"
        half_corpus = corpus.parent / f"{corpus.name}-half"
        small = measure(build_corpus(half_corpus, half_size, args.format_version), args.runs)
        sizes = (result["input_mb"], small["input_mb"])
        result["scaling"] = {
            "half_corpus": str(half_corpus),
            "half_input_mb": small["input_mb"],
            "half_grep_s": small["grep_s"],
            "half_dgtrace_s": small["dgtrace_s"],
            "half_peak_rss_mb": small["dgtrace_peak_rss_mb"],
            "time_exponent": exponent(result["dgtrace_s"], small["dgtrace_s"], *sizes),  # type: ignore[arg-type]
            "rss_exponent": exponent(result["dgtrace_peak_rss_mb"], small["dgtrace_peak_rss_mb"], *sizes),  # type: ignore[arg-type]
        }
    for key, value in result.items():
        print(f"{key:28s} {value}")
    print(json.dumps(result))


if __name__ == "__main__":
    main()
