"""Child-process entry point: simulates the primary thread of a pickled ThreadJob (`-m ... JOBFILE`)."""

from __future__ import annotations

import pickle
import sys
from pathlib import Path

from analyzer.simulate.writer import run_thread


def main() -> None:
    """Simulate the job in the file named by the first argument; write pickled (writes, bytes) to stdout."""
    job = pickle.loads(Path(sys.argv[1]).read_bytes())
    pickle.dump(run_thread(job), sys.stdout.buffer)


if __name__ == "__main__":
    main()
