"""Reliability of `dgtrace batch`: a damaged dataset, and places it cannot write, through an installed dgtrace.

    python scripts/reliability_batch.py [--dgtrace PATH] [--timeout 300] [--work DIR] [CASE ...]

Simulates a small archive share (2 configurations, one day, 160 writes in its truth) and writes its
dataset once with the dgtrace under test (the reference). Each case then damages a copy of that
dataset, or the place it is written, runs `dgtrace batch` once (`--format json`) and prints one row:
the exit code, wall seconds, the run's stderr line; then puts the cause right where the case has one
(space freed, the file system writable again, the planted thing removed), runs `dgtrace batch` again
and reads the writes back with polars (`DIR/writes/**/*.parquet`, as the README does): how many,
against the truth, and whether they are row for row those of the reference ("unreadable" when polars
cannot read them). Cases that need a file system of their own (a small tmpfs) need root to mount it
and say "skipped" otherwise.

The dgtrace under test runs in a subprocess (`--dgtrace`: e.g. a script running an older checkout);
polars, which reads the dataset back, is this checkout's.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import polars as pl  # noqa: E402

from scripts.reliability_table import Result, run  # noqa: E402

#: (the case's own arguments after `batch SHARE --out DIR`, what puts the cause right afterwards)
Setup = tuple[list[str], Callable[[], None]]


@dataclass(frozen=True)
class Place:
    """Where a case runs: its copy of the share, its dataset, and a folder for what else it needs."""

    share: Path
    dataset: Path
    work: Path


@dataclass(frozen=True)
class Case:
    name: str
    what: str
    #: damages the place; the arguments of the case's run and the fix (None: the case cannot run here)
    setup: Callable[[Place], Setup | None]
    #: the dataset lives on a tmpfs of this size (mounted before setup)
    disk: str | None = None


def _nothing() -> None:
    return None


def _writes_file(dataset: Path, db: str = "sales") -> Path:
    return next((dataset / "writes" / f"primary_db={db}").rglob("*.parquet"))


def cut_partition(place: Place) -> Setup:
    target = _writes_file(place.dataset)
    target.write_bytes(target.read_bytes()[: target.stat().st_size // 2])
    return [], _nothing


def flipped_byte(place: Place) -> Setup:
    target = _writes_file(place.dataset)
    before = target.stat()
    data = bytearray(target.read_bytes())
    data[len(data) // 3] ^= 0x01
    target.write_bytes(data)
    os.utime(target, ns=(before.st_atime_ns, before.st_mtime_ns))
    return ["--verify"], _nothing


def no_trace(place: Place) -> Setup:
    upload = place.work / "upload"
    upload.mkdir()
    (upload / "notes.txt").write_text("no trace here\n")
    (upload / "foreign.trc").write_text("Trace file /u01/x.trc\nhello\n")
    shutil.copy(next(place.share.rglob("alert_*.log")), upload / "alert_x1.log")
    shutil.copy(next(place.share.rglob("*.trm")), upload / "x.trm")
    shutil.rmtree(place.dataset)
    return ["--paths", str(upload)], _nothing


def _changed_input(place: Place) -> None:
    """An input grown by a line: its unit must be written again."""
    nss = next(place.share.rglob("sales1_nss*.trc"))
    nss.write_bytes(nss.read_bytes() + b"\n")


def read_only_fs(place: Place) -> Setup | None:
    _changed_input(place)
    remount = ["mount", "-o", "remount,ro", str(place.dataset.parent)]
    if subprocess.run(remount, capture_output=True).returncode != 0:
        return None
    return [], lambda: _mount(["-o", "remount,rw", str(place.dataset.parent)])


def full_disk(place: Place) -> Setup:
    _changed_input(place)
    filler = place.dataset.parent / "filler"
    with contextlib.suppress(OSError), filler.open("wb", buffering=0) as handle:
        while True:
            handle.write(b"\0" * 4096)
    return [], lambda: filler.unlink()


def out_is_file(place: Place) -> Setup:
    shutil.rmtree(place.dataset)
    place.dataset.write_text("a file of mine\n")
    return [], _nothing


def inputs_json_cut(place: Place) -> Setup:
    manifest = place.dataset / "_dgtrace" / "inputs.json"
    manifest.write_bytes(manifest.read_bytes()[: manifest.stat().st_size // 2])

    def move_away() -> None:
        manifest.rename(place.work / "inputs.json.damaged")

    return [], move_away


def dataset_json_cut(place: Place) -> Setup:
    described = place.dataset / "_dgtrace" / "dataset.json"
    described.write_bytes(described.read_bytes()[: described.stat().st_size // 2])
    return [], _nothing


def lock_folder(place: Place) -> Setup:
    lock = place.dataset / "_dgtrace" / "lock"
    lock.unlink()
    lock.mkdir()
    return [], lambda: lock.rmdir()


def tmp_file(place: Place) -> Setup:
    tmp = place.dataset / "_dgtrace" / "tmp"
    shutil.rmtree(tmp)
    tmp.write_text("")
    return [], lambda: tmp.unlink()


CASES = [
    Case("cut-partition", "a writes partition file cut in half", cut_partition),
    Case("flipped-byte", "a byte of a writes file changed, size and time kept; --verify", flipped_byte),
    Case("no-trace", "inputs without a trace (a note, a .trm, an alert log, a foreign .trc)", no_trace),
    Case("read-only-fs", "the dataset's file system read-only, an input changed", read_only_fs, disk="4m"),
    Case("full-disk", "the dataset's disk full, an input changed", full_disk, disk="4m"),
    Case("out-is-file", "--out naming a file", out_is_file),
    Case("inputs-json-cut", "_dgtrace/inputs.json cut in half (moved away after)", inputs_json_cut),
    Case("dataset-json-cut", "_dgtrace/dataset.json cut in half", dataset_json_cut),
    Case("lock-folder", "_dgtrace/lock a folder (removed after)", lock_folder),
    Case("tmp-file", "_dgtrace/tmp a file (removed after)", tmp_file),
]


def _mount(args: list[str]) -> None:
    subprocess.run(["mount", *args], check=True, capture_output=True)


@contextlib.contextmanager
def disk(folder: Path, size: str | None) -> Iterator[bool]:
    """`folder`, a tmpfs of `size` when one is asked for (False: it could not be mounted)."""
    folder.mkdir(parents=True, exist_ok=True)
    if size is None:
        yield True
        return
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(folder)], capture_output=True)
    if mounted.returncode != 0:
        yield False
        return
    try:
        yield True
    finally:
        subprocess.run(["umount", str(folder)], check=False, capture_output=True)


def writes_of(dataset: Path, share: Path) -> pl.DataFrame | None:
    """The dataset's writes as a user reads them, the share's folder in their file names as `SHARE`
    (None: polars cannot read them)."""
    try:
        frame = pl.scan_parquet(str(dataset / "writes" / "**" / "*.parquet"), hive_partitioning=True).collect()
    except (pl.exceptions.PolarsError, OSError):
        return None
    names = [c for c, t in frame.schema.items() if t == pl.String]
    frame = frame.with_columns(pl.col(names).str.replace_all(str(share), "SHARE", literal=True))
    return frame.sort(frame.columns, nulls_last=True)


def last_words(stderr: str, home: Path) -> str:
    """The last line of stderr with words in it (typer draws its usage errors in a box), the case's
    folder left out of its paths."""
    lines = [line.strip("│╭╰─╮╯ ").replace(f"{home}/", "") for line in stderr.splitlines()]
    return next((line for line in reversed(lines) if line), "")[:100].replace("|", "/")


def batch(dgtrace: str, share: Path, dataset: Path, extra: list[str], tmp: Path, timeout: float) -> Result:
    paths = [str(share)]
    if "--paths" in extra:  # a case giving other inputs
        at = extra.index("--paths")
        paths, extra = [extra[at + 1]], extra[:at] + extra[at + 2 :]
    command = [dgtrace, "batch", *paths, "--out", str(dataset), "--workers", "1", "--format", "json", *extra]
    return run(command, tmpdir=tmp, timeout=timeout)


def run_case(case: Case, dgtrace: str, base: Path, work: Path, timeout: float) -> str:
    """Build a case, run it, put it right, run again; its row."""
    reference = writes_of(base / "dataset", base / "share")
    expected = sum(1 for _ in (base / "share" / "truth.csv").open()) - 1
    home = work / case.name
    shutil.rmtree(home, ignore_errors=True)
    home.mkdir(parents=True)
    with disk(home / "disk", case.disk) as mounted:
        if not mounted:
            return f"| {case.name} | {case.what} | skipped: cannot mount a tmpfs here (needs root) | | | |"
        place = Place(home / "share", home / "disk" / "ds", home)
        shutil.copytree(base / "share", place.share)
        first = batch(dgtrace, place.share, place.dataset, [], home / "tmp", timeout)
        if first.code != 0:
            failed = first.stderr.strip()[-80:]
            return f"| {case.name} | {case.what} | the first run failed ({first.code}): {failed} | | | |"
        setup = case.setup(place)
        if setup is None:
            return f"| {case.name} | {case.what} | skipped: cannot remount read-only here | | | |"
        extra, fix = setup
        result = batch(dgtrace, place.share, place.dataset, extra, home / "tmp", timeout)
        fix()
        kept = "-"
        if case.name != "no-trace" and place.dataset.is_dir():
            batch(dgtrace, place.share, place.dataset, [], home / "tmp", timeout)
            got = writes_of(place.dataset, place.share)
            same = got is not None and reference is not None and got.equals(reference)
            kept = (
                "unreadable" if got is None else f"{got.height:,} / {expected:,}, {'same' if same else 'NOT the same'}"
            )
        elif case.name == "no-trace":
            kept = f"{len(list(place.dataset.rglob('*.parquet')))} partition files"
    code = "timeout" if result.code is None else str(result.code)
    message = last_words(result.stderr, home)
    try:
        repaired = len(json.loads(result.stdout)["repaired"])
    except (ValueError, KeyError, TypeError):
        repaired = 0
    note = f"{repaired} repaired" if repaired else message
    return f"| {case.name} | {case.what} | {code} | {result.seconds:.1f} | {note} | {kept} |"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("cases", nargs="*", help="only these cases (default: all)")
    parser.add_argument("--dgtrace", default=shutil.which("dgtrace") or "dgtrace", help="the dgtrace to run")
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds before a run is killed")
    parser.add_argument("--work", type=Path, help="keep everything in this folder (default: a temporary one)")
    options = parser.parse_args()
    dgtrace = str(Path(options.dgtrace).absolute()) if os.sep in options.dgtrace else options.dgtrace
    with tempfile.TemporaryDirectory(prefix="reliability-batch-") as scratch:
        work = options.work or Path(scratch)
        base = work / "base"
        if not (base / "dataset").exists():
            shutil.rmtree(base, ignore_errors=True)
            share = base / "share"
            simulate = [dgtrace, "simulate-share", str(share), "--configs", "2", "--days", "1", "--writes", "40"]
            subprocess.run(simulate, check=True, capture_output=True)
            done = batch(dgtrace, share, base / "dataset", [], work / "tmp", options.timeout)
            if done.code != 0:
                raise SystemExit(f"the reference dataset could not be written: {done.stderr}")
        print(f"dgtrace: {dgtrace}")
        print()
        print(
            "| case | the dataset, or the place it is written | exit | s | stderr, or repairs | writes read back then |"
        )
        print("|---|---|---|---|---|---|")
        for case in CASES:
            if not options.cases or case.name in options.cases:
                print(run_case(case, dgtrace, base, work / "cases", options.timeout), flush=True)


if __name__ == "__main__":
    main()
