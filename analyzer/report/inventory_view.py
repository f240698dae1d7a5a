"""Renderers of `dgtrace inventory`: a table of the files found and the findings, as text or JSON."""

from __future__ import annotations

import json
from typing import TextIO

from rich.text import Text

from analyzer.findings import inventory
from analyzer.match.analysis import Analysis
from analyzer.report import model
from analyzer.report.context import Table
from analyzer.report.fmt import common_dir, printable, short_label
from analyzer.report.text import IDENTITY, console_for, identity_cells, print_table


def render_inventory_text(a: Analysis, out: TextIO) -> None:
    """The files with their classification, the skipped inputs, and the findings in words."""
    console = console_for(out)
    rows = inventory.table(a)
    labels = rows["file"].to_list()
    common = common_dir(labels)
    counts = ("lines", "unparsed", "messages", "waits", "lgwr_warnings")
    files = Table(
        (*IDENTITY, "lines", "unparsed", "messages", "waits", "lgwr warnings"),
        [(*identity_cells(r, common), *(f"{r[k]:,}" for k in counts)) for r in rows.iter_rows(named=True)],
        optional=("version", "instance", "waits", "unparsed", "process", "first (UTC)"),
        paths=("file",),
    )
    short = [short_label(label, common) for label in labels]
    print_table(console, "Trace files", files, short)
    if a.skipped:
        skipped = Table(("input", "reason"), [(s.label, s.reason) for s in a.skipped], paths=("input",))
        console.print()
        print_table(console, f"Skipped ({len(a.skipped):,})", skipped, [s.label for s in a.skipped])
    shapes = inventory.unparsed_shapes(a.files)
    if shapes.height:
        table = Table(
            ("family", "shape", "count", "example", "first"),
            [
                (r["family"], r["shape"][:80], f"{r['count']:,}", (r["example"] or "")[:60], f"{r['file']}:{r['line']}")
                for r in shapes.iter_rows(named=True)
            ],
            optional=("example",),
            paths=("first",),
        )
        console.print()
        print_table(console, f"Unparsed lines by shape ({shapes.height:,})", table, shapes["file"].to_list())
    found = inventory.findings(a)
    console.print()
    console.print(
        Text(
            "Findings:"
            if found
            else "Findings: none: primary and standby traces with 16410 and 10046 lines, overlapping in time."
        )
    )
    for line in found:
        console.print(Text(f"- {printable(line)}"), overflow="fold")
    console.file.flush()


def render_inventory_json(a: Analysis, out: TextIO) -> None:
    """`{"files": [...], "skipped": [...], "findings": [...], "unparsed_shapes": [...]}`."""
    doc = {
        "files": model.iso_frame(inventory.table(a)).to_dicts(),
        "skipped": [{"input": s.label, "reason": s.reason, "partial": s.partial} for s in a.skipped],
        "findings": inventory.findings(a),
        "unparsed_shapes": inventory.unparsed_shapes(a.files).to_dicts(),
    }
    json.dump(doc, out, indent=1)
    out.write("\n")
