"""Small simulated sets for the simulator's tests: made with small defaults, their files and truth rows."""

from __future__ import annotations

import csv
from pathlib import Path

from analyzer.simulate import SimOptions, SimResult, simulate

GENERATIONS = ("11.2", "12.1", "19c", "23ai")
TRUTH_HEADER = [
    "thread", "seq", "msgid", "sent_at", "total_ms", "network_ms",
    "rfs_ms", "rfs_io_ms", "rfs_other_ms", "verdict",
]  # fmt: skip


def run(tmp_path: Path, name: str = "set", **options: object) -> SimResult:
    """Simulate into tmp_path/name with small defaults."""
    settings: dict[str, object] = {"writes": 300, "noise": 0.2}
    settings.update(options)
    return simulate(tmp_path / name, SimOptions(**settings))  # type: ignore[arg-type]


def files_of(result: SimResult, pname: str) -> list[Path]:
    """The trace files of one process name (`nss2`, `rfs`, `lgwr`)."""
    return [f for f in result.files if f"_{pname}_" in f.name]


def truth_of(result: SimResult) -> list[dict[str, str]]:
    """The rows of the set's truth.csv."""
    with result.truth.open(newline="") as handle:
        return list(csv.DictReader(handle))


def us(value: str) -> int:
    """Milliseconds as truth.csv prints them, in microseconds."""
    return round(float(value) * 1000)
