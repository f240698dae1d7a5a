"""The JSON document of an analysis: its parts, datetimes as ISO-8601 UTC, files with their zone, notes in words."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import UTC, datetime

import polars as pl

from analyzer.api import Analysis
from analyzer.inputs.skips import Skipped
from analyzer.report.context import Context
from analyzer.report.model import ISO_FORMAT, SCHEMA_VERSION, document, iso_frame, summary


def test_datetimes_become_iso_8601_utc_text_and_the_rest_is_kept() -> None:
    frame = pl.DataFrame(
        {"at": [datetime(2014, 12, 2, 15, 46, 34, 598000, tzinfo=UTC), None], "n": [1, 2], "s": ["a", None]}
    )
    iso = iso_frame(frame)
    assert iso.schema == pl.Schema({"at": pl.String, "n": pl.Int64, "s": pl.String})
    assert iso["at"].to_list() == ["2014-12-02T15:46:34.598000Z", None] and ISO_FORMAT.endswith("Z")
    assert iso.drop("at").equals(frame.drop("at"))


def test_the_document_has_every_part_of_the_output_contract(paper: Analysis) -> None:
    doc = document(paper, 3)
    assert list(doc) == ["summary", "writes", "unmatched", "files", "coverage", "timeline", "async", "events"]
    assert doc["summary"]["schema_version"] == SCHEMA_VERSION and len(doc["summary"]["top"]) == 3
    assert len(doc["writes"]) == 66 and doc["writes"][0]["sent_at"] == "2014-12-02T15:46:29.211000Z"
    assert (len(doc["files"]), len(doc["coverage"]), doc["unmatched"]) == (6, 6, [])
    json.dumps(doc)  # nothing in it that JSON cannot hold


def test_each_file_says_its_zone_database_and_configuration_and_skipped_inputs_follow(paper: Analysis) -> None:
    first = document(paper, 3)["files"][0]
    assert (first["time_zone"], first["utc_offset"], first["db_unique_name"], first["configuration"]) == (
        "--tz -07:00",
        "-07:00",
        "boston",
        "boston",
    )
    assert first["skipped"] is None
    skipped = replace(paper, skipped=[Skipped("up/x.trm", "trace map (.trm) file: ADR metadata, nothing to parse")])
    last = document(skipped, 3)["files"][-1]
    assert last == {
        "file": "up/x.trm",
        "role": None,
        "skipped": "trace map (.trm) file: ADR metadata, nothing to parse",
    }


def test_the_summary_writes_the_context_s_typed_values(paper: Analysis) -> None:
    c = Context.of(paper)
    said = summary(paper, 3, c)
    n = c.counts
    assert (said["primary_writes"], said["standby_writes"], said["matched_writes"]) == (66, 66, 66)
    assert (n.primary_writes, n.standby_writes, n.matched_writes, n.slow_writes) == (66, 66, 66, 2)
    assert (said["match_rate"], said["slow_writes"], said["unparsed_lines"]) == (n.match_rate, 2, n.unparsed_lines)
    assert said["notes"] == c.notes and said["recommendations"][0]["id"] == c.recommendations[0].id
    assert said == summary(paper, 3)  # built alone, the same
