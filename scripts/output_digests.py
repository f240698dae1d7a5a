"""SHA-256 of every output of `dgtrace analyze`, `inventory`, `batch` and `report` on the bundled samples
and on simulated sets.

    python scripts/output_digests.py                 # print `digest  set/output` lines
    python scripts/output_digests.py --write DIR     # also keep the outputs in DIR (to diff them)

Each set is analysed in every format (text at a fixed width, JSON, Markdown, HTML, and CSV of
every table) and inventoried (text and JSON); a small simulated share is turned into a dataset by
`dgtrace batch` (its run summary without the seconds, and every table of the dataset read back as
CSV), whose trend `dgtrace report` writes in every format. A change that must not move any output
(a refactoring) leaves every digest as it was; `tests/golden/outputs.sha256` holds them (written by
`scripts/regen_golden.py`) and `tests/e2e/test_outputs.py` compares.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from analyzer.simulate import ShareOptions, SimOptions, simulate, simulate_share  # noqa: E402

#: sample or simulated set -> the analyze arguments used for it
SAMPLE_ARGS = {"paper-2014": ["--tz", "-07:00"]}
#: simulated sets: one per generation, with what makes each differ (zones, skew, scenario)
SIMULATED = {
    "sim-11.2": SimOptions(format_version="11.2", scenario="mixed", writes=300, seed=11, primary_tz="-07:00"),
    "sim-12.1": SimOptions(format_version="12.1", scenario="network", writes=300, seed=12, standby_skew_s=2.5),
    "sim-19c": SimOptions(format_version="19c", scenario="log-switch", writes=400, seed=19, log_switch_every=60),
    "sim-23ai": SimOptions(format_version="23ai", scenario="standby-io", writes=300, seed=23, threads=3),
}
#: the analyze arguments each simulated set is run with
SIMULATED_ARGS = {"sim-11.2": ["--tz", "-07:00"]}
#: output name -> analyze arguments
OUTPUTS = {
    "text": [],
    "json": ["--format", "json"],
    "markdown": ["--format", "markdown"],
    "html": ["--format", "html"],
    "csv-writes": ["--format", "csv"],
    "csv-timeline": ["--format", "csv", "--table", "timeline"],
    "csv-events": ["--format", "csv", "--table", "events"],
}
#: inventory name -> inventory arguments
INVENTORIES = {"inventory-text": [], "inventory-json": ["--format", "json"]}
#: the share `batch` and `report` run on: small, several configurations and days, gzipped older days
SHARE = ShareOptions(configs=2, days=2, writes=40, log_switch_every=30, seed=5)
#: report name -> report arguments
REPORTS = {
    "report-text": [],
    "report-markdown": ["--format", "markdown"],
    "report-json": ["--format", "json"],
    "report-html": ["--format", "html"],
}
#: the terminal width of the text report
COLUMNS = "200"


def _sets(workdir: Path) -> Iterator[tuple[str, str, list[str]]]:
    """(name, input path relative to the repository, extra arguments) of every set."""
    for sample, args in SAMPLE_ARGS.items():
        yield sample, f"samples/{sample}", args
    for name, options in SIMULATED.items():
        outdir = workdir / name
        simulate(outdir, options)
        yield name, str(outdir), SIMULATED_ARGS.get(name, [])


def outputs(workdir: Path) -> Iterator[tuple[str, bytes]]:
    """(set/output, bytes) of every output, rendered in-process as the CLI prints them."""
    from typer.testing import CliRunner

    from analyzer.cli import app

    runner = CliRunner(env={"COLUMNS": COLUMNS, "NO_COLOR": "1"})
    for name, path, args in _sets(workdir):
        for output, flags in OUTPUTS.items():
            result = runner.invoke(app, ["analyze", path, *args, *flags])
            if result.exit_code:
                raise SystemExit(f"analyze {name} {output} failed ({result.exit_code}): {result.output}")
            # simulated sets live in a temporary directory: labels are made relative to it
            yield f"{name}/{output}", result.stdout_bytes.replace(str(workdir).encode() + b"/", b"")
        for output, flags in INVENTORIES.items():
            result = runner.invoke(app, ["inventory", path, *args, *flags])
            if result.exit_code:
                raise SystemExit(f"inventory {name} failed ({result.exit_code}): {result.output}")
            yield f"{name}/{output}", result.stdout_bytes.replace(str(workdir).encode() + b"/", b"")
    yield from _batch_outputs(runner, workdir)


def _batch_outputs(runner: Any, workdir: Path) -> Iterator[tuple[str, bytes]]:
    """`batch` on a simulated share (run summary without its timings, each dataset table as sorted CSV),
    then `report` of the dataset in every format."""
    import polars as pl

    from analyzer.cli import app

    share, dataset = workdir / "share", workdir / "dataset"
    simulate_share(share, SHARE)
    result = runner.invoke(app, ["batch", str(share), "--out", str(dataset), "--workers", "1", "--format", "json"])
    if result.exit_code:
        raise SystemExit(f"batch failed ({result.exit_code}): {result.output}")
    summary = json.loads(result.stdout)
    for timing in ("seconds", "phases", "dataset"):
        summary.pop(timing, None)
    yield "share/batch-json", json.dumps(summary, indent=1, sort_keys=True).encode()
    for table in sorted(p for p in dataset.iterdir() if p.is_dir() and not p.name.startswith("_")):
        for part in sorted(table.rglob("*.parquet")):
            frame = pl.read_parquet(part, hive_partitioning=False)
            key = part.relative_to(dataset).as_posix()
            yield f"share/{key}.csv", frame.write_csv().encode().replace(str(workdir).encode(), b"WORKDIR")
    for output, flags in REPORTS.items():
        result = runner.invoke(app, ["report", str(dataset), *flags])
        if result.exit_code:
            raise SystemExit(f"report {output} failed ({result.exit_code}): {result.output}")
        yield f"share/{output}", result.stdout_bytes.replace(str(workdir).encode(), b"WORKDIR")


def digests(keep: Path | None = None) -> list[str]:
    """`sha256  set/output` lines, sorted."""
    os.chdir(ROOT)
    lines = []
    with tempfile.TemporaryDirectory(prefix="dgtrace-digests-") as tmp:
        for key, data in outputs(Path(tmp)):
            lines.append(f"{hashlib.sha256(data).hexdigest()}  {key}")
            if keep is not None:
                target = keep / key
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(data)
    return sorted(lines, key=lambda line: line.split("  ", 1)[1])


def main() -> None:
    """Print the digests (and keep the outputs with --write)."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--write", type=Path, help="keep every output under this directory")
    args = parser.parse_args()
    print("\n".join(digests(args.write)))


if __name__ == "__main__":
    main()
