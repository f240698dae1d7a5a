"""How values are written for people: milliseconds as the stamps allow, short file labels, UTC times, trace
text made safe for a terminal and for Markdown."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from analyzer.report.fmt import at_text, cell, common_dir, escape_markdown, printable, short_label


@pytest.mark.parametrize(
    ("value", "resolution", "text"),
    [
        (None, None, ""),
        (163.0, 1.0, "163"),  # millisecond stamps: no decimals
        (0.3, 2.0, "0"),
        (12.345, 0.1, "12.3"),
        (12.345, 0.05, "12.3"),
        (12.3456, 0.001, "12.346"),  # microsecond stamps
        (12.3456, None, "12.346"),  # resolution unknown
        (1234567.891, 1.0, "1,234,568"),
        (-0.2, 1.0, "0"),  # never "-0"
        (-0.0004, None, "0.000"),
        (-2.6, 1.0, "-3"),
    ],
)
def test_milliseconds_as_the_stamps_allow(value: float | None, resolution: float | None, text: str) -> None:
    assert cell(value, resolution) == text


def test_labels_are_shown_relative_to_the_folder_all_inputs_share() -> None:
    labels = ["up/prim01/trace/a_nss2_1.trc", "up/stby01/trace/b_rfs_2.trc", "up/stby01/trace/b_rfs_3.trc"]
    assert common_dir(labels) == "up"
    assert short_label(labels[1], common_dir(labels)) == "stby01/trace/b_rfs_2.trc"
    assert common_dir(["a.trc", "b.trc"]) == ""  # one level: nothing to shorten
    assert short_label("a.trc", common_dir(["a.trc", "b.trc"])) == "a.trc"
    assert common_dir(["/abs/x/a.trc", "rel/b.trc"]) == ""  # absolute and relative mixed
    assert common_dir(["/up/n1.zip!a.trc", "/up/n2.zip!b.trc"]) == "/up"


def test_utc_times_with_microseconds() -> None:
    assert at_text(datetime(2014, 12, 2, 15, 46, 34, 598000, tzinfo=UTC)) == "2014-12-02 15:46:34.598000"
    assert at_text(None) == ""


def test_trace_text_cannot_drive_a_terminal_or_open_markdown() -> None:
    assert printable("prim\x1b[2J\x1b[31mred\ttab\x7f") == "prim\\x1b[2J\\x1b[31mred\ttab\\x7f"  # TAB stays
    assert escape_markdown("a|b <script> [x](y) `c` \\ one\r\ntwo") == (
        "a\\|b \\<script\\> \\[x\\](y) \\`c\\` \\\\ one<br>two"
    )
