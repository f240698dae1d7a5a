"""The run summary of `dgtrace batch` in text and JSON."""

from __future__ import annotations

import io
import json

from analyzer.batch.run import RunSummary
from analyzer.report.batch_view import render_summary_json, render_summary_text


def _summary(partial: bool) -> RunSummary:
    return RunSummary(
        "/data/dg",
        "local, 2 workers",
        inputs={
            "seen": 191,
            "known": 191,
            "new": 10,
            "changed": 1,
            "unchanged": 180,
            "moved": 0,
            "gone": 0,
            "entries": 191,
            "sources": 188,
            "skipped": 3,
        },
        skipped=[
            {"input": "a.trm", "reason": "trace map", "partial": False},
            {"input": "b.trc", "reason": "duplicate of a.trc", "partial": False},
            {"input": "c.trc.gz", "reason": "cannot be read: truncated", "partial": partial},
        ],
        units={"planned": 10, "run": 2, "unchanged": 8, "retired": 0, "repaired": 1, "failed": 0},
        writes={"added": 400, "replaced": 200, "rewritten": 400, "removed": 0, "total": 3600},
        verified={"all_hashed": False, "files": 70, "hashed": 1, "hashed_bytes": 9000, "damaged_units": 1},
        repaired=[
            {
                "unit": "hr+hrdr/2024-10-22",
                "file": "writes/primary_db=hr/day=2024-10-22/hr+hrdr.parquet",
                "problem": "4,500 bytes where 9,000 were written",
                "outcome": "rebuilt from its inputs",
                "lost": False,
            }
        ],
        seconds=12.5,
    )


def test_json_summary_for_a_scheduler() -> None:
    out = io.StringIO()
    render_summary_json(_summary(True), out)
    doc = json.loads(out.getvalue())
    assert doc["exit_code"] == 1
    assert doc["damaged"] == [{"input": "c.trc.gz", "reason": "cannot be read: truncated", "partial": True}]
    assert doc["skipped_by_reason"] == {
        "cannot be read: truncated": 1,
        "duplicate of another input": 1,
        "trace map": 1,
    }
    assert doc["writes"]["added"] == 400 and doc["seconds"] == 12.5
    assert _summary(False).to_json()["exit_code"] == 0
    assert doc["repaired"][0]["outcome"] == "rebuilt from its inputs" and doc["verified"]["damaged_units"] == 1
    lost = _summary(False)
    lost.repaired[0]["lost"] = True  # rebuilt without inputs that are gone: rows lost
    assert lost.to_json()["exit_code"] == 1


def test_text_summary() -> None:
    out = io.StringIO()
    render_summary_text(_summary(True), out)
    text = out.getvalue()
    assert text.startswith("dgtrace batch: /data/dg (local, 2 workers) in 12.5 s\n")
    assert "inputs: 191 files seen, 191 known: 10 new, 1 changed, 180 unchanged, 0 moved, 0 gone;" in text
    assert "191 files and archive members: 188 traces read, 3 skipped\n" in text
    assert "units (configuration x day): 10 planned, 2 run, 8 unchanged, 0 retired, 1 repaired, 0 failed" in text
    assert "dataset checked: 70 files (sizes and times compared, 1 hashed), 1 unit damaged\n" in text
    assert (
        "repaired: unit hr+hrdr/2024-10-22: writes/primary_db=hr/day=2024-10-22/hr+hrdr.parquet:"
        " 4,500 bytes where 9,000 were written: rebuilt from its inputs\n"
    ) in text
    assert "writes: 400 added, 200 replaced by 400, 0 removed; 3,600 in the dataset" in text
    assert "damaged: c.trc.gz: cannot be read: truncated" in text
