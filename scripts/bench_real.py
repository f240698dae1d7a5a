"""Throughput of `dgtrace analyze` on real 10046 foreground traces (MB/s), at this checkout and at a commit.

    python scripts/bench_real.py [--real DIR] [--copies 12] [--runs 3] [--commit SHA ...]

The real traces (`--real DIR`, else `$DGTRACE_REAL_TRACES`: a folder of real 10046 traces; they are never
copied into the repository) are small: each `*.trc` is written `--copies` times end to end into one file of a
temporary corpus (a repeated header starts a new process incarnation, as a reused pid would), so
that reading, not start-up, dominates. The corpus is then analysed `--runs` times
(`dgtrace analyze CORPUS --format json`, output drained through a pipe); the median wall time and
MB/s are printed. `--commit SHA` also runs the analyzer of that commit (`git archive` into a temporary
folder) on the same corpus, alternating with the checkout's runs: a before/after comparison under the
same load. These machines are shared and noisy: only figures measured together compare.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
REAL = os.environ.get("DGTRACE_REAL_TRACES")


def build_corpus(real: Path, copies: int, out: Path) -> list[Path]:
    """Each uncompressed real trace `copies` times end to end, one corpus file per trace."""
    files = []
    for trace in sorted(real.rglob("*.trc")):
        target = out / trace.name
        data = trace.read_bytes()
        with target.open("wb") as handle:
            for _ in range(copies):
                handle.write(data)
        files.append(target)
    return files


def checkout(commit: str, into: Path) -> Path:
    """The tree of `commit` (analyzer/ and grammars/ are what runs) extracted into `into`."""
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", commit], check=True, capture_output=True).stdout
    with tempfile.TemporaryFile() as tar:
        tar.write(archive)
        tar.seek(0)
        with tarfile.open(fileobj=tar) as tree:
            tree.extractall(into, filter="data")
    return into


def timed(command: list[str], code: Path) -> float:
    """Wall seconds of one run of `command` with the analyzer of `code`, its output drained through a pipe."""
    env = {**os.environ, "PYTHONPATH": str(code)}  # before the editable install of the checkout
    start = time.perf_counter()
    with tempfile.TemporaryFile() as errors:
        proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=errors, cwd=code, env=env)
        assert proc.stdout is not None
        while proc.stdout.read(1 << 20):
            pass
        # 3: no event 16410 message, as expected of 10046 foreground traces (said once all are read)
        if proc.wait() not in (0, 1, 3):
            errors.seek(0)
            raise SystemExit(f"analyze failed ({proc.returncode}): {errors.read(500).decode()}")
    return time.perf_counter() - start


def measure(corpus: Path, codes: dict[str, Path], runs: int) -> dict[str, dict[str, object]]:
    """Median wall time and MB/s of `dgtrace analyze CORPUS --format json` for each code, run in turn."""
    size_mb = sum(f.stat().st_size for f in corpus.iterdir()) / 1e6
    command = [sys.executable, "-m", "analyzer", "--quiet", "analyze", str(corpus), "--format", "json"]
    seconds: dict[str, list[float]] = {name: [] for name in codes}
    for _ in range(runs):  # alternating: the machine's load falls on both alike
        for name, code in codes.items():
            seconds[name].append(timed(command, code))
    out: dict[str, dict[str, object]] = {}
    for name, times in seconds.items():
        median = statistics.median(times)
        out[name] = {
            "input_mb": round(size_mb, 1),
            "files": len(list(corpus.iterdir())),
            "runs_s": [round(t, 2) for t in times],
            "median_s": round(median, 2),
            "mb_s": round(size_mb / median, 1),
        }
    return out


def main() -> None:
    """Build the corpus, measure this checkout (and `--commit`), print the figures (text and one JSON line)."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--real", type=Path, default=Path(REAL) if REAL else None)
    ap.add_argument("--copies", type=int, default=12)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument(
        "--commit",
        action="append",
        default=[],
        help="also measure the analyzer of this commit (repeatable; runs alternate)",
    )
    args = ap.parse_args()
    if args.real is None or not args.real.is_dir():
        raise SystemExit(f"{args.real}: no such folder: give --real DIR or set DGTRACE_REAL_TRACES (real traces)")
    with tempfile.TemporaryDirectory(prefix="dgtrace-real-") as tmp:
        corpus = Path(tmp, "corpus")
        corpus.mkdir()
        build_corpus(args.real, args.copies, corpus)
        codes = {commit: checkout(commit, Path(tmp, f"code-{n}")) for n, commit in enumerate(args.commit)}
        codes["checkout"] = ROOT
        for code in codes.values():  # bytecode as an installed dgtrace has it (see scripts/bench.py `compiled`)
            subprocess.run([sys.executable, "-m", "compileall", "-q", str(code / "analyzer")], check=True)
        result = measure(corpus, codes, args.runs)
    for name, figures in result.items():
        print(f"{name:12s} " + "  ".join(f"{k} {v}" for k, v in figures.items()))
    print(json.dumps(result))


if __name__ == "__main__":
    main()
