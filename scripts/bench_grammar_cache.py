"""Benchmark: what keeping the parsers' tables (JSON, `analyzer.parse.tables`) saves a process, in one run.

    python scripts/bench_grammar_cache.py [--runs 7]

Each round, alternating, in a fresh Python process each: `import` only (the baseline every process
pays), every grammar's parser built from its grammar (no tables kept: a first run, or a cache folder
that is not private), and every parser loaded from the kept tables (a warm private cache folder).
Prints the median seconds of each and the ratios to the baseline and to the build.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
IMPORT = "import analyzer.parse.grammar as g"
#: every family's parser, through `parser` (tables loaded when kept, else built and kept)
ALL = IMPORT + "\nfor f in g.Family: g.parser(f)"


def _seconds(code: str, cache_home: str) -> float:
    env = {**os.environ, "XDG_CACHE_HOME": cache_home}
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, check=True)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    times: dict[str, list[float]] = {"import only": [], "built (no tables kept)": [], "loaded (tables kept)": []}
    with tempfile.TemporaryDirectory() as warm:
        _seconds(ALL, warm)  # the tables are kept
        for _ in range(args.runs):
            with tempfile.TemporaryDirectory() as cold:
                times["built (no tables kept)"].append(_seconds(ALL, cold))
            times["loaded (tables kept)"].append(_seconds(ALL, warm))
            times["import only"].append(_seconds(IMPORT, warm))
    base = statistics.median(times["import only"])
    built = statistics.median(times["built (no tables kept)"])
    print(f"{'process':<24} {'median s':>9} {'x import':>9} {'above import s':>15}")
    for name, values in times.items():
        median = statistics.median(values)
        print(f"{name:<24} {median:>9.3f} {median / base:>9.2f} {median - base:>15.3f}")
    loaded = statistics.median(times["loaded (tables kept)"])
    less = (built - base) / max(loaded - base, 1e-6)
    print(f"kept tables save {built - loaded:.3f} s a process ({less:.0f}x less work than building)")


if __name__ == "__main__":
    main()
