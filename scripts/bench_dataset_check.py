"""Benchmark: what checking a batch dataset against its manifest costs, in one run.

    python scripts/bench_dataset_check.py [--units 1000] [--writes 2000] [--rounds 5] [--keep DIR]

Builds a dataset of UNITS units (7 partition files each) from the rows of one simulated unit of
WRITES writes, as `dgtrace batch` writes them (`Dataset.commit`: hashed while written), then times,
alternating, the median of ROUNDS rounds with the page cache warm:

- walk: `os.fwalk` of the tables with one `stat` per file (the floor of any sweep);
- sweep before sums: the records read, each named file looked up by descending to it, the walk
  (what every run did before files had sums);
- check of every run: `sweep(verify=False)` (records read, the walk, sizes and times compared);
- --verify: `sweep(verify=True)` (every file hashed with SHA-256);
- read: every file's bytes read, nothing computed (the floor of any hash);
- and, over the same bytes in memory, SHA-256, BLAKE2b and CRC-32 (zlib): the hash's own cost;
- writing the largest partition file 20 times as polars writes it to a file, and through the hashing
  writer the dataset uses (what recording the sums adds to writing).

Prints seconds, MB/s and the ratios to the baselines measured in the same run.
"""

from __future__ import annotations

import argparse
import hashlib
import io
import os
import stat
import statistics
import sys
import tempfile
import time
import zlib
from collections.abc import Callable
from datetime import date, timedelta
from pathlib import Path, PurePosixPath

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import polars as pl  # noqa: E402

from analyzer.batch.engine import EngineName, EngineSpec  # noqa: E402
from analyzer.batch.manifest import HashingWriter  # noqa: E402
from analyzer.batch.query import scan_table  # noqa: E402
from analyzer.batch.run import run_batch  # noqa: E402
from analyzer.batch.schemas import TABLES  # noqa: E402
from analyzer.batch.store import Dataset  # noqa: E402
from analyzer.batch.sweep import sweep  # noqa: E402
from analyzer.simulate import ShareOptions, simulate_share  # noqa: E402


def one_unit(work: Path, writes: int) -> dict[str, pl.DataFrame]:
    """The tables of one simulated configuration and day, as a unit writes them."""
    share, dataset = work / "share", work / "one"
    simulate_share(share, ShareOptions(configs=1, days=1, writes=writes, seed=3))
    run_batch([str(share)], dataset, engine=EngineSpec(EngineName.LOCAL, workers=1))
    return {table: scan_table(dataset, table).collect() for table in TABLES}


def build(dataset: Path, tables: dict[str, pl.DataFrame], units: int) -> None:
    """UNITS copies of the unit, each its own configuration name and day (7 files each)."""
    first = date(2024, 1, 1)
    ds = Dataset(dataset)
    with ds.locked():
        for n in range(units):
            day = first + timedelta(days=n % 365)
            name = f"c{n // 365}"
            frames = {t: f.with_columns(day=pl.lit(day, pl.Date), primary_db=pl.lit(name)) for t, f in tables.items()}
            ds.commit(f"{name}/{day}", "f", name, (name, day), frames, [])


def files_of(dataset: Path) -> list[Path]:
    return [p for table in TABLES for p in (dataset / table).rglob("*.parquet")]


def walk(dataset: Path) -> int:
    count = 0
    for table in TABLES:
        for _, _, files, fd in os.fwalk(dataset / table, follow_symlinks=False):
            for name in files:
                os.stat(name, dir_fd=fd, follow_symlinks=False)
                count += 1
    return count


def sweep_before_sums(dataset: Path) -> None:
    """The records read, each named file looked up through the folders on its way, then the walk."""
    ds = Dataset(dataset)
    with ds.locked():
        for record in ds.units().values():
            for rel in record.outputs:
                path = PurePosixPath(rel)
                with ds.folder(path.parent, create=False) as folder:
                    stat.S_ISREG(os.stat(path.name, dir_fd=folder, follow_symlinks=False).st_mode)
    walk(dataset)


def check(dataset: Path, *, verify: bool) -> None:
    ds = Dataset(dataset)
    with ds.locked():
        swept = sweep(ds, verify=verify)
    assert not swept.damaged and swept.removed == 0


def read_all(paths: list[Path]) -> None:
    buffer = bytearray(1 << 20)
    view = memoryview(buffer)
    for path in paths:
        fd = os.open(path, os.O_RDONLY)
        try:
            while os.readv(fd, [view]):
                pass
        finally:
            os.close(fd)


def write_plain(frame: pl.DataFrame, folder: Path) -> None:
    for n in range(20):
        frame.write_parquet(folder / f"plain-{n}.parquet", compression="zstd")


def write_hashed(frame: pl.DataFrame, folder: Path) -> None:
    for n in range(20):
        fd = os.open(folder / f"hashed-{n}.parquet", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        try:
            raw = HashingWriter(fd)
            with io.BufferedWriter(raw, 1 << 20) as out:
                frame.write_parquet(out, compression="zstd")
            raw.sums()
        finally:
            os.close(fd)


def timed(work: Callable[[], object]) -> float:
    start = time.perf_counter()
    work()
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--units", type=int, default=1000)
    parser.add_argument("--writes", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--keep", type=Path, help="build the dataset in this folder (kept)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="dgtrace-bench-check-") as scratch:
        work = args.keep or Path(scratch)
        dataset = work / "dataset"
        start = time.perf_counter()
        if not dataset.exists():
            build(dataset, one_unit(work, args.writes), args.units)
        paths = files_of(dataset)
        size = sum(p.stat().st_size for p in paths)
        data = b"".join(p.read_bytes() for p in paths)
        largest = pl.read_parquet(max(paths, key=lambda p: p.stat().st_size), hive_partitioning=False)
        scratch_out = work / "written"
        scratch_out.mkdir(exist_ok=True)
        print(
            f"dataset: {args.units:,} units, {len(paths):,} files, {size / 1e6:,.1f} MB"
            f" (built in {time.perf_counter() - start:.1f} s); median of {args.rounds} rounds, page cache warm"
        )
        steps: dict[str, Callable[[], object]] = {
            "walk (stat every file)": lambda: walk(dataset),
            "sweep before sums": lambda: sweep_before_sums(dataset),
            "check of every run": lambda: check(dataset, verify=False),
            "read every file": lambda: read_all(paths),
            "--verify (SHA-256 of every file)": lambda: check(dataset, verify=True),
            "SHA-256 of the bytes in memory": lambda: hashlib.sha256(data).digest(),
            "BLAKE2b of the bytes in memory": lambda: hashlib.blake2b(data).digest(),
            "CRC-32 of the bytes in memory": lambda: zlib.crc32(data),
            "write 20 files (polars to a file)": lambda: write_plain(largest, scratch_out),
            "write 20 files (hashing writer)": lambda: write_hashed(largest, scratch_out),
        }
        rounds: dict[str, list[float]] = {name: [] for name in steps}
        for _ in range(args.rounds):  # alternating, so that the machine's load falls on each alike
            for name, step in steps.items():
                rounds[name].append(timed(step))
        seconds = {name: statistics.median(values) for name, values in rounds.items()}
        base_walk, base_read = seconds["walk (stat every file)"], seconds["read every file"]
        plain, hashed = seconds["write 20 files (polars to a file)"], seconds["write 20 files (hashing writer)"]
        print(f"{'step':<36} {'s':>8} {'MB/s':>9} {'x walk':>8} {'x read':>8}")
        for name, value in seconds.items():
            rate = f"{size / 1e6 / value:,.0f}" if value and not name.startswith("write") else "-"
            print(f"{name:<36} {value:>8.3f} {rate:>9} {value / base_walk:>8.2f} {value / base_read:>8.2f}")
        print(f"the hashing writer: {hashed / plain:.2f} x polars writing to a file ({largest.height:,} rows a file)")


if __name__ == "__main__":
    main()
