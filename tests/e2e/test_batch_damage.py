"""`dgtrace batch` on a damaged dataset and in places it cannot write, run as a user runs it (a
subprocess): a partition file cut in half or changed on disk is found and its unit rebuilt from its
inputs; a read-only dataset (run as `nobody`, whom permissions bind), a full disk (a small tmpfs),
`--out` naming a file, a damaged `inputs.json` or `dataset.json`, the lock a folder and
`_dgtrace/tmp` a file each end in one line and their documented exit code; inputs without a trace
end in exit 3 and make no unit. Every case that keeps writes is counted against the simulator's truth."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import duckdb
import polars as pl
import pyarrow.dataset as pads
import pytest

from tests.attackers import arena, nobody_python
from tests.batch.helpers import check_against_truth, copy_share, snapshot, truth

pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parents[2]
#: exit codes of the README's table
OK, PARTIAL, USAGE, NO_INPUT, OUTPUT, UNSAFE = 0, 1, 2, 3, 6, 8


def dgtrace(*args: str, prefix: tuple[list[str], dict[str, str]] | None = None) -> subprocess.CompletedProcess[str]:
    """`dgtrace --quiet ARGS` in a subprocess (as another user when `prefix` gives its command and environment)."""
    argv, env = prefix or ([sys.executable], dict(os.environ))
    command = [*argv, "-m", "analyzer", "--quiet", *args]
    return subprocess.run(command, capture_output=True, text=True, cwd=ROOT, env=env, timeout=300, check=False)


def batch(
    share: Path, out: Path, *extra: str, **kw: tuple[list[str], dict[str, str]]
) -> subprocess.CompletedProcess[str]:
    return dgtrace("batch", str(share), "--out", str(out), "--workers", "1", *extra, **kw)


def one_line(done: subprocess.CompletedProcess[str], code: int, *words: str) -> None:
    """The run ended with `code` and one line on stderr naming `words`, nothing on stdout, no traceback."""
    assert done.returncode == code, (done.returncode, done.stderr[-2000:])
    assert done.stdout == "" and done.stderr.count("\n") == 1 and done.stderr.startswith("dgtrace: error: "), (
        done.stderr
    )
    assert all(w in done.stderr for w in words), done.stderr


def _writes_of(out: Path, db: str) -> Path:
    return next((out / "writes" / f"primary_db={db}").rglob("*.parquet"))


def _read_back(out: Path) -> int:
    """The writes read as users read them: polars (the glob of the README), pyarrow and DuckDB must agree."""
    glob = str(out / "writes" / "**" / "*.parquet")
    by_polars = pl.scan_parquet(glob).collect().height
    by_arrow = pads.dataset(out / "writes", format="parquet", partitioning="hive").count_rows()
    ((by_duck,),) = duckdb.sql(f"select count(*) from read_parquet('{glob}', hive_partitioning=true)").fetchall()
    assert by_polars == by_arrow == by_duck
    return by_polars


# --- case 12: a partition file cut in half ---------------------------------------------------------------


def test_a_partition_file_cut_in_half_is_rebuilt_by_the_next_run(one_day: Path, tmp_path: Path) -> None:
    out = tmp_path / "ds"
    assert batch(one_day, out).returncode == OK
    cut = _writes_of(out, "sales")
    size = cut.stat().st_size
    with cut.open("r+b") as handle:
        handle.truncate(size // 2)
    with pytest.raises(pl.exceptions.ComputeError):  # what the issue saw: the whole table unreadable
        pl.scan_parquet(str(out / "writes" / "**" / "*.parquet")).collect()
    done = batch(one_day, out, "--format", "json")
    assert done.returncode == OK, done.stderr
    summary = json.loads(done.stdout)
    rel = cut.relative_to(out).as_posix()
    assert summary["repaired"] == [
        {
            "unit": "sales+salesdr/2024-10-22",
            "file": rel,
            "problem": f"{size // 2:,} bytes where {size:,} were written",
            "outcome": "rebuilt from its inputs",
            "lost": False,
        }
    ]
    assert summary["units"]["repaired"] == summary["units"]["run"] == 1
    sales = truth(one_day).filter(pl.col("primary_db") == "sales").height
    assert summary["writes"]["replaced"] == summary["writes"]["rewritten"] == sales
    assert summary["verified"] == {"all_hashed": False, "files": 14, "hashed": 0, "hashed_bytes": 0, "damaged_units": 1}
    check_against_truth(out, truth(one_day))
    assert _read_back(out) == truth(one_day).height


def test_verify_finds_a_changed_byte_that_size_and_time_hide(one_day: Path, tmp_path: Path) -> None:
    out = tmp_path / "ds"
    assert batch(one_day, out).returncode == OK
    target = _writes_of(out, "hr")
    before = target.stat()
    data = bytearray(target.read_bytes())
    data[len(data) // 3] ^= 0x01
    target.write_bytes(data)
    os.utime(target, ns=(before.st_atime_ns, before.st_mtime_ns))
    plain = batch(one_day, out, "--format", "json")
    assert json.loads(plain.stdout)["repaired"] == []  # each run trusts what size and time say
    done = batch(one_day, out, "--verify")
    assert done.returncode == OK, done.stderr
    rel = target.relative_to(out).as_posix()
    assert (
        f"repaired: unit hr+hrdr/2024-10-22: {rel}: its content is not what was written (its SHA-256 differs):"
        " rebuilt from its inputs\n"
    ) in done.stdout
    assert "dataset checked: 14 files (hashed), 1 unit damaged" in done.stdout
    check_against_truth(out, truth(one_day))
    again = json.loads(batch(one_day, out, "--verify", "--format", "json").stdout)
    assert again["repaired"] == [] and again["verified"]["hashed"] == again["verified"]["files"] == 14


def test_a_damaged_unit_whose_inputs_are_gone_is_named_with_exit_1(one_day: Path, tmp_path: Path) -> None:
    share = copy_share(one_day, tmp_path / "share")
    out = tmp_path / "ds"
    assert batch(share, out).returncode == OK
    for rfs in share.rglob("salesdr1_rfs_*.trc"):
        rfs.unlink()  # housekeeping deleted them; their rows stay in the dataset ...
    assert batch(share, out).returncode == OK
    _writes_of(out, "sales").write_bytes(b"PAR1")  # ... until the file holding them is damaged
    done = batch(share, out, "--format", "json")
    assert done.returncode == PARTIAL, done.stderr
    (repair,) = json.loads(done.stdout)["repaired"]
    assert repair["lost"] and repair["outcome"].startswith("rebuilt without 2 of its inputs, which are gone")
    rebuilt = pl.scan_parquet(out / "writes").filter(pl.col("primary_db") == "sales").collect()
    assert rebuilt.height == truth(share).filter(pl.col("primary_db") == "sales").height
    assert not rebuilt["matched"].any()  # the primary's halves only: what the inputs still hold


# --- case 13: places the dataset cannot be written, manifests dgtrace did not write -------------------------


def test_a_read_only_dataset_is_one_line_and_exit_6(one_day: Path) -> None:
    """Run as nobody, whom permissions bind (root would write anyway): a dataset of nobody's made read-only,
    with a changed input to write, and a new dataset in a read-only folder."""
    uid, gid = 65534, 65534
    prefix = nobody_python("analyzer", "polars")
    with arena() as place:
        share = copy_share(one_day, place / "share")
        subprocess.run(["chmod", "-R", "a+rX", str(share)], check=True)
        home = place / "nobody"
        home.mkdir()
        os.chown(home, uid, gid)
        out = home / "ds"
        assert batch(share, out, prefix=prefix).returncode == OK
        nss = next(share.rglob("sales1_nss*.trc"))
        nss.write_bytes(nss.read_bytes() + b"\n")  # changed: its unit must be written again
        before = snapshot(out)
        subprocess.run(["chmod", "-R", "a-w", str(out)], check=True)
        one_line(batch(share, out, prefix=prefix), OUTPUT, f"cannot write the dataset {out}: Permission denied")
        assert snapshot(out) == before
        home.chmod(0o555)
        one_line(batch(share, home / "new", prefix=prefix), OUTPUT, f"cannot write the dataset {home / 'new'}")
        home.chmod(0o755)
        subprocess.run(["chmod", "-R", "u+w", str(out)], check=True)
        done = batch(share, out, "--format", "json", prefix=prefix)
        assert done.returncode == OK, done.stderr
        assert json.loads(done.stdout)["units"]["run"] == 1
        check_against_truth(out, truth(share))


@contextlib.contextmanager
def small_disk(place: Path, size: str) -> Iterator[Path]:
    """A tmpfs of `size` at `place` (skips when mounting is not possible here)."""
    place.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(place)], capture_output=True)
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a small tmpfs to fill ({mounted.stderr.strip() or 'mount failed'}): needs root")
    try:
        yield place
    finally:
        subprocess.run(["umount", str(place)], check=False)


def test_a_full_disk_is_one_line_and_exit_6_and_the_next_run_finishes(one_day: Path, tmp_path: Path) -> None:
    share = copy_share(one_day, tmp_path / "share")
    nss = next(share.rglob("sales1_nss*.trc"))
    full = nss.read_bytes()
    nss.write_bytes(full[: full.rfind(b"\n... Client sending", 0, len(full) // 2) + 1])  # half of it tonight
    with small_disk(tmp_path / "disk", "2m") as disk:
        out = disk / "ds"
        assert batch(share, out).returncode == OK
        nss.write_bytes(full)  # grown: its unit is written again
        filler = disk / "filler"
        with contextlib.suppress(OSError), filler.open("wb", buffering=0) as handle:
            while True:  # until the disk is full
                handle.write(b"\0" * 4096)
        one_line(batch(share, out), OUTPUT, f"cannot write the dataset {out}: No space left on device (writing ")
        assert not list((out / "_dgtrace" / "tmp").iterdir())
        assert _read_back(out) > 0  # every file in place is whole
        filler.unlink()
        done = batch(share, out, "--format", "json")
        assert done.returncode == OK, done.stderr
        check_against_truth(out, truth(share))


def test_out_naming_a_file_is_one_line_and_exit_6(one_day: Path, tmp_path: Path) -> None:
    named = tmp_path / "notes.txt"
    named.write_text("mine\n")
    one_line(batch(one_day, named), OUTPUT, f"cannot write the dataset {named}: it is a file, not a folder")
    assert named.read_text() == "mine\n"


@pytest.mark.parametrize(
    "content", ["{", '{"schema_version": 2, "files": []}', '{"schema_version": 2, "files": {"/x": {"size": "a"}}}']
)
def test_a_damaged_record_of_inputs_is_one_line_and_exit_2(one_day: Path, tmp_path: Path, content: str) -> None:
    """inputs.json holds what no input gives back (the inputs deleted since): not rebuilt behind the user's back."""
    out = tmp_path / "ds"
    assert batch(one_day, out).returncode == OK
    (out / "_dgtrace" / "inputs.json").write_text(content)
    before = snapshot(out)
    one_line(batch(one_day, out), USAGE, f"{out / '_dgtrace' / 'inputs.json'}, the record of the dataset's inputs")
    assert snapshot(out) == before
    (out / "_dgtrace" / "inputs.json").unlink()  # as the message says: moved away, made again from the inputs
    assert batch(one_day, out).returncode == OK
    check_against_truth(out, truth(one_day))


@pytest.mark.parametrize("content", ["[", "[1]", '{"schema_version": "2"}'])
def test_a_damaged_dataset_json_is_put_right(one_day: Path, tmp_path: Path, content: str) -> None:
    """dataset.json says the schema version, which every partition file says too: `batch` writes it again;
    `report`, which writes nothing, says to run `batch`."""
    out = tmp_path / "ds"
    assert batch(one_day, out).returncode == OK
    described = (out / "_dgtrace" / "dataset.json").read_text()
    (out / "_dgtrace" / "dataset.json").write_text(content)
    one_line(dgtrace("report", str(out)), USAGE, "dataset.json is not one dgtrace wrote", "run dgtrace batch")
    done = batch(one_day, out, "--format", "json")
    assert done.returncode == OK, done.stderr
    (repair,) = json.loads(done.stdout)["repaired"]
    assert repair["file"] == "_dgtrace/dataset.json" and "(schema version 2, as its files say)" in repair["outcome"]
    assert (out / "_dgtrace" / "dataset.json").read_text() == described
    assert dgtrace("report", str(out)).returncode == OK
    (out / "_dgtrace" / "dataset.json").write_text(described.replace('"schema_version": 2', '"schema_version": 3'))
    one_line(batch(one_day, out), USAGE, "schema version 3; this dgtrace writes version 2")  # a newer dgtrace's


@pytest.mark.parametrize(
    ("planted", "words"),
    [("_dgtrace/lock", "is a folder, not the lock file"), ("_dgtrace/tmp", "is not a folder: dgtrace did not make it")],
)
def test_the_lock_a_folder_or_tmp_a_file_is_refused_in_one_line(
    one_day: Path, tmp_path: Path, planted: str, words: str
) -> None:
    out = tmp_path / "ds"
    assert batch(one_day, out).returncode == OK
    place = out / planted
    if place.is_dir():
        shutil.rmtree(place)
        place.write_text("")
    else:
        place.unlink()
        place.mkdir()
    one_line(batch(one_day, out), UNSAFE, str(place), words)


# --- case 16: inputs without any trace --------------------------------------------------------------------


def test_inputs_without_a_trace_end_in_exit_3_and_make_no_unit(one_day: Path, tmp_path: Path) -> None:
    stray = tmp_path / "upload"
    stray.mkdir()
    (stray / "notes.txt").write_text("no trace here\n")
    (stray / "foreign.trc").write_text("Trace file /u01/x.trc\nhello\n")  # a trace by its name, without a stamp
    alert = next(one_day.rglob("alert_*.log"))
    shutil.copy(alert, stray / alert.name)
    shutil.copy(next(one_day.rglob("*.trm")), stray / "x.trm")
    out = tmp_path / "ds"
    done = batch(stray, out)
    one_line(done, NO_INPUT, f"no trace file found in {stray}", "4 files or archive members skipped")
    assert not list(out.rglob("*.parquet")) and not (out / "_dgtrace" / "inputs.json").exists()
    assert not list((out / "_dgtrace" / "units").iterdir())
