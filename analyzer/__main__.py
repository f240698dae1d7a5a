"""`python -m analyzer` and the `dgtrace` command: the command line, with Ctrl-C during start-up
(the imports take a moment) ending in one line and exit code 130 as it does later.

Before polars is imported, its allocator (jemalloc) is told to hand freed memory back to the system
within half a second, on a background thread, rather than keep it for reuse, and to keep one arena per
core: the peak RSS of most runs falls by 5 to 10%, their time does not change (docs/benchmarks.md). A
`_RJEM_MALLOC_CONF` already in the environment is left as it is.
"""

from __future__ import annotations

import os
import sys

#: jemalloc's settings, read once when polars loads: freed pages returned within 500 ms by a background
#: thread; one arena per core (not four: fewer half-used arenas hold less memory)
DECAY = "background_thread:true,dirty_decay_ms:500,muzzy_decay_ms:0"


def allocator_setting() -> tuple[str, str]:
    """The environment variable polars' jemalloc reads, and dgtrace's value for it."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    return "_RJEM_MALLOC_CONF", f"narenas:{max(1, cores)},{DECAY}"


def main() -> None:
    """Console-script entry point."""
    os.environ.setdefault(*allocator_setting())
    try:
        from analyzer.cli import main as run
    except KeyboardInterrupt:
        sys.stderr.write("dgtrace: interrupted\n")
        raise SystemExit(130) from None
    run()


if __name__ == "__main__":
    main()
