"""Inputs against the manifest: new, changed, unchanged, moved, gone; duplicates read once."""

from __future__ import annotations

import gzip
import os
import shutil
from pathlib import Path

from analyzer.base.zones import TimeZones
from analyzer.batch.inputs import load_records, scan
from analyzer.inputs.limits import Limits
from tests.batch.helpers import copy_share


def _scan(paths: list[Path], known: dict | None = None):  # type: ignore[no-untyped-def]
    return scan([str(p) for p in paths], known or {}, TimeZones(), Limits())


def test_first_scan_probes_every_trace_and_lists_the_rest(one_day: Path) -> None:
    """Traces and alert logs are probed; trace maps and the other files are listed with the reason."""
    found = _scan([one_day])
    traces = sorted(str(p) for pattern in ("*.trc", "alert_*.log") for p in one_day.rglob(pattern))
    assert sorted(s.label for s in found.sources()) == traces
    assert set(found.status.values()) == {"new"}
    reasons = {s.reason for s in found.skipped()}
    assert any(".trm" in r for r in reasons) and any("not a trace" in r for r in reasons)
    assert found.seen == sum(1 for p in one_day.rglob("*") if p.is_file())


def test_second_scan_reads_nothing_again(one_day: Path) -> None:
    first = _scan([one_day])
    again = _scan([one_day], load_records(first.manifest()))
    assert set(again.status.values()) == {"unchanged"}
    assert again.manifest() == first.manifest()


def test_grown_touched_moved_gone(one_day: Path, tmp_path: Path) -> None:
    share = copy_share(one_day, tmp_path / "share")
    first = _scan([share])
    known = load_records(first.manifest())
    rfs = sorted(share.rglob("*_rfs_*.trc"))
    grown, touched, moved, gone = rfs[0], rfs[1], rfs[2], rfs[3]
    with grown.open("a") as handle:
        handle.write("*** 2024-10-22T23:00:00.000000+00:00\n")
    os.utime(touched, ns=(1, 1))
    packed = moved.with_name(moved.name + ".gz")
    packed.write_bytes(gzip.compress(moved.read_bytes()))
    moved.unlink()
    shutil.move(gone, tmp_path / gone.name)
    later = _scan([share], known)
    assert later.status[str(grown)] == "changed"
    assert later.status[str(touched)] == "unchanged"  # a new time, the same content
    assert later.status[str(packed)] == "moved" and str(moved) not in later.status
    assert later.status[str(gone)] == "gone"
    assert str(gone) in {s.label for s in later.sources()}  # its rows stay in the dataset
    new_digest = next(s.sha256 for s in later.sources() if s.label == str(grown))
    assert new_digest != next(s.sha256 for s in first.sources() if s.label == str(grown))


def test_known_inputs_outside_the_paths_given_stay(one_day: Path) -> None:
    hosts = sorted(p for p in one_day.iterdir() if p.is_dir())
    first = _scan([hosts[0]])
    later = _scan([hosts[1]], load_records(first.manifest()))
    labels = {s.label for s in later.sources()}
    assert {s.label for s in first.sources()} <= labels
    assert later.seen == sum(1 for p in hosts[1].rglob("*") if p.is_file())


def test_the_same_content_twice_is_read_once(one_day: Path, tmp_path: Path) -> None:
    share = copy_share(one_day, tmp_path / "share")
    rfs = next(share.rglob("*_rfs_*.trc"))
    twin = rfs.with_name("copy_" + rfs.name + ".gz")
    twin.write_bytes(gzip.compress(rfs.read_bytes()))
    found = _scan([share])
    (dup,) = found.duplicates
    assert dup.reason == f"duplicate of {min(str(rfs), str(twin))}"
    assert dup.label not in {s.label for s in found.sources()}


def test_a_damaged_file_is_skipped_with_its_reason(one_day: Path, tmp_path: Path) -> None:
    share = copy_share(one_day, tmp_path / "share")
    rfs = next(share.rglob("*_rfs_*.trc"))
    broken = rfs.with_name(rfs.name + ".gz")
    broken.write_bytes(gzip.compress(rfs.read_bytes())[:-100])
    rfs.unlink()
    found = _scan([share])
    (skip,) = [s for s in found.skipped() if s.partial]
    assert skip.label == str(broken) and skip.reason.startswith("cannot be read")
    again = _scan([share], load_records(found.manifest()))
    assert again.status[str(broken)] == "unchanged"  # not probed again while it stays as it is


def test_a_dataset_inside_the_share_is_no_input(one_day: Path, tmp_path: Path) -> None:
    """`dgtrace batch SHARE --out SHARE/dataset`: the dataset's own files are never inputs of a later run."""
    share = copy_share(one_day, tmp_path / "share")
    dataset = share / "dataset"
    (dataset / "writes" / "day=2024-10-22").mkdir(parents=True)
    (dataset / "writes" / "day=2024-10-22" / "part-0.parquet").write_bytes(b"PAR1 not a trace")
    (dataset / "_dgtrace").mkdir()
    (dataset / "_dgtrace" / "inputs.json").write_text("{}")
    without = scan([str(share)], {}, TimeZones(), Limits(), dataset=str(dataset))
    assert without.seen == sum(1 for p in one_day.rglob("*") if p.is_file())
    assert not any(str(dataset) in label for label in [*without.status, *(s.label for s in without.sources())])
    naive = _scan([share])
    assert naive.seen == without.seen + 2
