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
            "new": 10,
            "changed": 1,
            "unchanged": 180,
            "moved": 0,
            "gone": 0,
            "sources": 81,
            "skipped": 3,
        },
        skipped=[
            {"input": "a.trm", "reason": "trace map", "partial": False},
            {"input": "b.trc", "reason": "duplicate of a.trc", "partial": False},
            {"input": "c.trc.gz", "reason": "cannot be read: truncated", "partial": partial},
        ],
        units={"planned": 10, "run": 2, "unchanged": 8, "retired": 0, "failed": 0},
        writes={"added": 400, "replaced": 200, "rewritten": 400, "removed": 0, "total": 3600},
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


def test_text_summary() -> None:
    out = io.StringIO()
    render_summary_text(_summary(True), out)
    text = out.getvalue()
    assert text.startswith("dgtrace batch: /data/dg (local, 2 workers) in 12.5 s\n")
    assert "inputs: 191 seen: 10 new, 1 changed, 180 unchanged, 0 moved, 0 gone" in text
    assert "writes: 400 added, 200 replaced by 400, 0 removed; 3,600 in the dataset" in text
    assert "damaged: c.trc.gz: cannot be read: truncated" in text
