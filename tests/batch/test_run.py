"""`run_batch`: incremental, idempotent, one-sided writes matched later, interruptions, exit codes."""

from __future__ import annotations

import gzip
import json
import shutil
import zipfile
from pathlib import Path
from typing import BinaryIO

import polars as pl
import pytest

from analyzer.api import analyze
from analyzer.base.errors import ExitCode, Interrupted, NoInputError, UsageError
from analyzer.batch.run import RunSummary, run_batch
from analyzer.batch.store import Dataset
from tests.batch.helpers import INLINE, batch, check_against_truth, copy_share, snapshot, truth, writes


def test_first_run_then_a_run_that_does_nothing(one_day: Path, tmp_path: Path) -> None:
    out = tmp_path / "ds"
    first = batch(one_day, out)
    check_against_truth(out, truth(one_day))
    assert first.exit_code is ExitCode.OK
    assert first.inputs["new"] == first.inputs["seen"] and first.inputs["unchanged"] == 0
    assert first.units["run"] == first.units["planned"] and first.writes["added"] == truth(one_day).height
    assert "trace map (.trm) file: ADR metadata, nothing to parse" in first.to_json()["skipped_by_reason"]
    before = snapshot(out)
    second = batch(one_day, out)
    assert second.units["run"] == 0 and second.inputs["unchanged"] == second.inputs["seen"]
    assert second.writes == {"added": 0, "replaced": 0, "rewritten": 0, "removed": 0, "total": truth(one_day).height}
    assert snapshot(out) == before  # not one file written


def test_standby_tonight_primary_tomorrow(one_day: Path, tmp_path: Path) -> None:
    share = copy_share(one_day, tmp_path / "share")
    held = tmp_path / "held"
    held.mkdir()
    for host in share.glob("salesdb0*"):  # the sales primary's traces arrive a night late
        shutil.move(host, held / host.name)
    out = tmp_path / "ds"
    batch(share, out)
    early = writes(out).filter(pl.col("standby_db") == "salesdr")
    assert early.height == truth(share).filter(pl.col("primary_db") == "sales").height
    assert not early["matched"].any() and early["primary_db"].is_null().all()  # no primary known yet
    for host in held.iterdir():
        shutil.move(host, share / host.name)
    later = batch(share, out)
    assert later.units["retired"] == 1  # the standby alone is now part of its configuration
    assert later.writes["removed"] == early.height
    check_against_truth(out, truth(share))


def test_a_grown_file_replaces_its_rows(one_day: Path, tmp_path: Path) -> None:
    share = copy_share(one_day, tmp_path / "share")
    nss = next(share.rglob("hr1_nss*.trc"))
    full = nss.read_bytes()
    cut = full.rfind(b"\n... Client sending", 0, len(full) // 2)
    nss.write_bytes(full[: cut + 1])
    out = tmp_path / "ds"
    batch(share, out)
    assert not writes(out)["matched"].all()
    nss.write_bytes(full)
    grown = batch(share, out)
    assert grown.inputs["changed"] == 1 and grown.units["run"] == 1
    hr = truth(share).filter(pl.col("primary_db") == "hr").height
    assert grown.writes["replaced"] == grown.writes["rewritten"] == hr  # one-sided rows, now matched
    check_against_truth(out, truth(share))


def test_interrupted_run_leaves_a_dataset_the_next_run_completes(
    one_day: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "ds"
    commit = Dataset.commit
    calls = []

    def stop_on_second(self: Dataset, *args: object, **kwargs: object) -> object:
        calls.append(1)
        if len(calls) == 2:  # SIGTERM while a partition file is being written

            def half(out: BinaryIO) -> None:
                out.write(b"PAR1")
                raise Interrupted(15)

            self.write_atomic(self.root / "writes" / "x.parquet", half)
        return commit(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(Dataset, "commit", stop_on_second)
    with pytest.raises(Interrupted):
        batch(one_day, out)
    assert not list((out / "_dgtrace" / "tmp").iterdir())
    monkeypatch.setattr(Dataset, "commit", commit)
    done = batch(one_day, out)
    assert done.units["run"] == done.units["planned"] - 1
    check_against_truth(out, truth(one_day))


def test_a_damaged_unit_is_rebuilt_from_its_inputs(one_day: Path, tmp_path: Path) -> None:
    out = tmp_path / "ds"
    batch(one_day, out)
    cut = next((out / "writes" / "primary_db=hr").rglob("*.parquet"))
    cut.write_bytes(cut.read_bytes()[: cut.stat().st_size // 2])
    repaired = batch(one_day, out)
    assert repaired.exit_code is ExitCode.OK and repaired.units["repaired"] == repaired.units["run"] == 1
    assert [(r["unit"], r["outcome"]) for r in repaired.repaired] == [("hr+hrdr/2024-10-22", "rebuilt from its inputs")]
    check_against_truth(out, truth(one_day))
    assert batch(one_day, out, verify=True).repaired == []


def test_every_input_is_counted_once(one_day: Path, tmp_path: Path) -> None:
    """known = new + changed + unchanged + moved + gone (files); entries = sources + skipped (files and
    archive members: each read into a unit or skipped, never both); checked against what the manifest
    and the dataset's `files` table hold, over a share with an archive, copies, a damaged file, files
    that are not traces, and a second night with a file gone, one moved and one new."""
    share = copy_share(one_day, tmp_path / "share")
    rfs = next(share.rglob("hrdr1_rfs_*.trc"))
    with zipfile.ZipFile(share / "upload.zip", "w") as archive:
        archive.write(rfs, "copy/" + rfs.name)  # the same content as a file of the share: read once
        archive.writestr("copy/readme.txt", "what this is\n")
    (share / "cut.trc.gz").write_bytes(gzip.compress(rfs.read_bytes())[:-64])
    (share / "empty.trc").write_bytes(b"")
    out = tmp_path / "ds"

    def counted(summary: RunSummary) -> None:
        i = summary.inputs
        assert i["known"] == i["new"] + i["changed"] + i["unchanged"] + i["moved"] + i["gone"]
        assert i["entries"] == i["sources"] + i["skipped"]
        document = json.loads((out / "_dgtrace" / "inputs.json").read_text())
        labels = {s["label"] for f in document["files"].values() for s in [*f["sources"], *f["skipped"]]}
        assert i["known"] == len(document["files"]) and i["entries"] == len(labels)
        files = pl.scan_parquet(out / "files").collect()
        assert i["sources"] == files.filter(pl.col("status") != "skipped")["file"].n_unique()

    first = batch(share, out)
    counted(first)
    assert first.inputs["entries"] == first.inputs["known"] + 2 - 1  # the archive counts as its two members
    assert first.exit_code is ExitCode.PARTIAL  # the cut .gz
    before = first.writes["total"]
    (share / "empty.trc").unlink()  # gone
    shutil.move(share / "upload.zip", share / "moved.zip")  # moved
    nss = next(share.rglob("hr1_nss*.trc"))
    shutil.copy(nss, nss.with_name("hr1_nss2_99999.trc"))  # new, a copy
    second = batch(share, out)
    counted(second)
    assert (second.inputs["gone"], second.inputs["moved"], second.inputs["new"]) == (1, 1, 1)
    w = second.writes
    assert w["total"] == before + w["added"] - w["removed"] - w["replaced"] + w["rewritten"]
    check_against_truth(out, truth(share))


def test_exit_codes(one_day: Path, tmp_path: Path) -> None:
    with pytest.raises(UsageError):
        run_batch([str(tmp_path / "nothing-here")], tmp_path / "ds", engine=INLINE)
    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / "notes.txt").write_text("no trace here\n")
    with pytest.raises(
        NoInputError, match=r"no trace file found in .* \(1 file or archive member skipped: 1 not a trace file"
    ):
        run_batch([str(empty)], tmp_path / "ds", engine=INLINE)
    assert not list((tmp_path / "ds").rglob("*.parquet")) and not list(
        (tmp_path / "ds" / "_dgtrace" / "units").iterdir()
    )
    share = copy_share(one_day, tmp_path / "share")
    rfs = next(share.rglob("*_rfs_*.trc"))
    (rfs.parent / ("x_" + rfs.name + ".gz")).write_bytes(gzip.compress(rfs.read_bytes())[:-64])
    damaged = batch(share, tmp_path / "ds2")
    assert damaged.exit_code is ExitCode.PARTIAL
    assert [d["input"] for d in damaged.to_json()["damaged"]] == [str(rfs.parent / ("x_" + rfs.name + ".gz"))]
    check_against_truth(tmp_path / "ds2", truth(share))  # the rest is all there


@pytest.mark.slow
@pytest.mark.parametrize("version", ["11.2", "23ai"])
def test_other_generations(version: str, tmp_path: Path) -> None:
    """11.2 stamps carry no zone (a source then reaches a day further each way); 23ai has ISO stamps."""
    from analyzer.simulate import ShareOptions, simulate_share

    share = tmp_path / "share"
    simulate_share(share, ShareOptions(configs=2, days=2, writes=30, format_version=version, seed=3))
    summary = batch(share, tmp_path / "ds")
    check_against_truth(tmp_path / "ds", truth(share))
    assert summary.units["planned"] == (8 if version == "11.2" else 4)  # 2 configurations x 4 or 2 days


def test_async_shipments_have_their_own_table(tmp_path: Path) -> None:
    from analyzer.simulate import SimOptions, simulate

    traces = tmp_path / "set"
    simulate(traces, SimOptions(format_version="19c", writes=40, async_sender=True, seed=5))
    batch(traces, tmp_path / "ds")
    expected = pl.read_csv(traces / "truth.csv")
    shipments = pl.scan_parquet(tmp_path / "ds" / "shipments").collect()
    assert shipments.height == expected.filter(pl.col("transport") == "ASYNC").height > 0
    assert set(shipments["transport"]) == {"ASYNC"}
    assert writes(tmp_path / "ds").height == expected.filter(pl.col("transport") != "ASYNC").height
    # the Fast Sync what-if of each write, as the analysis gives it; none for ASYNC shipments
    analysis = analyze([str(traces)]).writes.select("thread", "seq", "msgid", "fastsync_ms")
    stored = writes(tmp_path / "ds").select("thread", "seq", "msgid", "fastsync_ms")
    joined = analysis.join(stored, on=["thread", "seq", "msgid"], how="full", suffix="_stored")
    assert joined.height == analysis.height and joined["fastsync_ms"].null_count() == 0
    assert (joined["fastsync_ms"] == joined["fastsync_ms_stored"]).all()
    assert shipments["fastsync_ms"].null_count() == shipments.height
