"""The run summary of `dgtrace batch`: a few lines for a person, or one JSON document for a scheduler."""

from __future__ import annotations

import json
from typing import TextIO

from analyzer.batch.run import RunSummary


def render_summary_json(summary: RunSummary, out: TextIO) -> None:
    """One JSON document (`RunSummary.to_json`)."""
    out.write(json.dumps(summary.to_json(), indent=1) + "\n")


def render_summary_text(summary: RunSummary, out: TextIO) -> None:
    """What was seen, skipped and done, in a few lines."""
    document = summary.to_json()
    i, u, w = summary.inputs, summary.units, summary.writes
    out.write(f"dgtrace batch: {summary.dataset} ({summary.engine}) in {summary.seconds:.1f} s\n")
    if summary.migrated_from is not None:
        out.write(
            f"dataset brought from schema version {summary.migrated_from} to {document['schema_version']}"
            " in place (its rows kept, no input read again)\n"
        )
    out.write(
        f"inputs: {i.get('seen', 0):,} files seen, {i.get('known', 0):,} known: {i.get('new', 0):,} new,"
        f" {i.get('changed', 0):,} changed, {i.get('unchanged', 0):,} unchanged, {i.get('moved', 0):,} moved,"
        f" {i.get('gone', 0):,} gone; {i.get('entries', 0):,} files and archive members:"
        f" {i.get('sources', 0):,} traces read, {i.get('skipped', 0):,} skipped\n"
    )
    for reason, count in document["skipped_by_reason"].items():
        out.write(f"  skipped {count:,}: {reason}\n")
    out.write(
        f"units (configuration x day): {u.get('planned', 0):,} planned, {u.get('run', 0):,} run,"
        f" {u.get('unchanged', 0):,} unchanged, {u.get('retired', 0):,} retired, {u.get('repaired', 0):,} repaired,"
        f" {u.get('failed', 0):,} failed\n"
    )
    out.write(
        f"writes: {w.get('added', 0):,} added, {w.get('replaced', 0):,} replaced by {w.get('rewritten', 0):,},"
        f" {w.get('removed', 0):,} removed; {w.get('total', 0):,} in the dataset\n"
    )
    for item in document["damaged"]:
        out.write(f"damaged: {item['input']}: {item['reason']}\n")
    for item in summary.failed:
        out.write(f"failed: unit {item['unit']}: {item['error']}\n")
    v = summary.verified
    if v:
        how = "hashed" if v.get("all_hashed") else f"sizes and times compared, {v.get('hashed', 0):,} hashed"
        damaged = v.get("damaged_units", 0)
        units = "unit" if damaged == 1 else "units"
        out.write(f"dataset checked: {v.get('files', 0):,} files ({how}), {damaged:,} {units} damaged\n")
    for item in summary.repaired:
        where = f"unit {item['unit']}: {item['file']}" if item["unit"] else item["file"]
        out.write(f"repaired: {where}: {item['problem']}: {item['outcome']}\n")
    if summary.swept_files:
        out.write(f"removed {summary.swept_files:,} files an interrupted run had left\n")
