"""`dgtrace batch` and `dgtrace report` on the command line: formats, exit codes, errors in one line."""

from __future__ import annotations

import gzip
import json
import signal
from pathlib import Path

import pytest

from tests.batch.helpers import copy_share, truth
from tests.conftest import invoke, stop_while_writing


@pytest.mark.slow
def test_batch_then_report(one_day: Path, tmp_path: Path) -> None:
    out = tmp_path / "ds"
    result = invoke(["batch", str(one_day), "--out", str(out), "--workers", "1"])
    assert result.stdout.startswith(f"dgtrace batch: {out} (local, 1 worker) in ")
    assert f"{truth(one_day).height:,} added" in result.stdout
    assert result.stderr == ""  # no progress bar outside a terminal
    again = json.loads(invoke(["batch", str(one_day), "--out", str(out), "-f", "json", "--workers", "1"]).stdout)
    assert again["units"]["run"] == 0 and again["exit_code"] == 0
    text = invoke(["report", str(out)]).stdout
    assert "configuration" in text.splitlines()[2] and "hr -> hrdr" in text
    md = invoke(["report", str(out), "-f", "markdown", "--db", "sales"]).stdout
    assert "| sales -\\> salesdr |" in md and "hr -\\> hrdr" not in md
    doc = json.loads(
        invoke(["report", str(out), "-f", "json", "--since", "2000-01-01", "--until", "2000-01-02"]).stdout
    )
    assert doc["days"] == []
    page = tmp_path / "trend.html"
    invoke(["report", str(out), "-f", "html", "-o", str(page)])
    assert page.read_text().count('id="trend-') == 2
    earlier = page.read_text()
    stopped = stop_while_writing(["report", str(out), "-f", "html", "-o", str(page)], page)
    assert (stopped.returncode, stopped.stderr) == (128 + signal.SIGTERM, "dgtrace: stopped by SIGTERM\n")
    assert page.read_text() == earlier and sorted(p.name for p in tmp_path.iterdir()) == ["ds", "trend.html"]


def test_exit_codes(one_day: Path, tmp_path: Path) -> None:
    missing = invoke(["batch", str(tmp_path / "nope"), "--out", str(tmp_path / "ds")], code=2)
    assert missing.stderr.startswith("dgtrace: error: ") and missing.stderr.count("\n") == 1
    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / "x.log").write_text("nothing\n")
    invoke(["batch", str(empty), "--out", str(tmp_path / "ds"), "--workers", "1"], code=3)
    share = copy_share(one_day, tmp_path / "share")
    rfs = next(share.rglob("*_rfs_*.trc"))
    (rfs.parent / ("cut_" + rfs.name + ".gz")).write_bytes(gzip.compress(rfs.read_bytes())[:-50])
    damaged = invoke(["batch", str(share), "--out", str(tmp_path / "ds2"), "-f", "json", "--workers", "1"], code=1)
    assert json.loads(damaged.stdout)["damaged"][0]["input"].endswith("cut_" + rfs.name + ".gz")
    invoke(["batch", str(share), "--out", str(tmp_path / "ds3"), "--scheduler", "tcp://127.0.0.1:1"], code=2)
    invoke(["report", str(tmp_path / "empty")], code=2)
    invoke(["report", str(tmp_path / "ds2"), "--since", "yesterday"], code=2)
