"""`dgtrace inventory` as text and JSON: the files found, the inputs skipped, the findings."""

from __future__ import annotations

import io
import json
from dataclasses import replace

from analyzer.api import Analysis
from analyzer.inputs.skips import Skipped
from analyzer.report.inventory_view import render_inventory_json, render_inventory_text

SKIPPED = Skipped("up/u.zip!a.trc", "corrupt, truncated or unreadable data (invalid block type)", partial=True)


def test_the_json_lists_files_skipped_inputs_and_findings(paper: Analysis) -> None:
    out = io.StringIO()
    render_inventory_json(replace(paper, skipped=[SKIPPED]), out)
    doc = json.loads(out.getvalue())
    assert list(doc) == ["files", "skipped", "findings", "unparsed_shapes"]
    assert [f["file"] for f in doc["files"]] == [f.source.label for f in paper.files]
    assert doc["skipped"] == [{"input": SKIPPED.label, "reason": SKIPPED.reason, "partial": True}]
    assert doc["findings"] == [f"not read: {SKIPPED.label}: {SKIPPED.reason}"] and out.getvalue().endswith("\n")


def test_the_text_has_the_files_the_skipped_inputs_and_the_findings(paper: Analysis) -> None:
    out = io.StringIO()
    render_inventory_text(replace(paper, skipped=[SKIPPED]), out)
    text = out.getvalue()
    assert text.index("Trace files") < text.index("Skipped (1)") < text.index("Findings:\n- not read: up/u.zip!a.trc")
    assert "chicago1_rfs_8801.trc" in text and "invalid block type" in text


def test_a_complete_set_has_no_finding(paper: Analysis) -> None:
    out = io.StringIO()
    render_inventory_text(paper, out)
    assert "Skipped" not in out.getvalue()
    assert out.getvalue().endswith(
        "Findings: none: primary and standby traces with 16410 and 10046 lines, overlapping in time.\n"
    )
