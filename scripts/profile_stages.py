"""Where an analysis spends its time and memory, stage by stage (a profile to read, not a benchmark).

    python scripts/profile_stages.py CORPUS [--top 10]

Runs `analyze` and the JSON renderer in this process, with the pipeline's stage functions
wrapped: prints each stage's wall time (summed over calls; `read_file` runs on two threads, so
its sum is about twice its share of the wall clock) and the process's peak RSS while the stage
ran, sampled every 20 ms. `scripts/bench.py` gives the end-to-end figures against grep.
"""

from __future__ import annotations

import argparse
import threading
import time
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

from analyzer import api, insights
from analyzer.report import machine

#: (module, functions) wrapped, in pipeline order
STAGES: list[tuple[ModuleType, list[str]]] = [
    # not `api._sorted`: a wrapper holds its argument, the unsorted table, while the sorted one is built
    (api, ["read_file", "match_sides", "finish", "estimate_offsets", "one_way", "tie_warnings"]),
    (api, ["analyze_files"]),
    (machine, ["summary", "write_json_array"]),
    (insights, ["per_minute"]),
]


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
            self.current, start = name, time.perf_counter()
            try:
                return inner(*args, **kwargs)
            finally:
                self.seconds[name] = self.seconds.get(name, 0.0) + time.perf_counter() - start

        setattr(module, name, timed)


def main() -> None:
    """Profile one analysis of CORPUS and print the table."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("corpus", type=Path)
    ap.add_argument("--top", type=int, default=10)
    args = ap.parse_args()
    recorder = Recorder()
    for module, names in STAGES:
        for name in names:
            recorder.wrap(module, name)
    start = time.perf_counter()
    analysis = api.analyze([str(args.corpus)], api.Options())
    analyzed = time.perf_counter() - start
    with Path("/dev/null").open("w", encoding="utf-8") as out:
        machine.render_json(analysis, out, args.top)
    total = time.perf_counter() - start
    print(f"{'stage':22s} {'seconds':>8s} {'peak RSS MB':>12s}")  # peak: while the stage was the latest to start
    for _, names in STAGES:
        for name in names:
            if name in recorder.seconds:
                peak = recorder.peak.get(name)  # none when the stage ended before a sample
                print(f"{name:22s} {recorder.seconds[name]:8.2f} {'-' if peak is None else f'{peak:.0f}':>12s}")
    print(f"{'analyze (wall)':22s} {analyzed:8.2f}")
    print(f"{'analyze + render_json':22s} {total:8.2f} {max(recorder.peak.values()):12.0f}")


if __name__ == "__main__":
    main()
