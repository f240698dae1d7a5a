"""Parse stage: line families by priority, header regions, every line accounted for."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from polars.testing import assert_frame_equal

from analyzer.parse.families import (
    FAMILIES,
    OTHER_10046_PREFIXES,
    TABLES,
    Parsed,
    line_families,
    merge,
    parse_chunk,
    parse_files,
    split_families,
)
from analyzer.parse.grammar import LGWR_PREFIXES
from analyzer.simulate.options import SimOptions
from analyzer.simulate.runner import simulate
from tests.conftest import ROOT, lines_frame
from tests.strategies import message_lines, reference_families, stamp_lines, wait_lines

#: lines of every family, header lines and junk (a header region may run into the next file)
TRACE_LINES = st.one_of(
    message_lines(),
    stamp_lines(),
    wait_lines(),
    st.sampled_from(
        [
            "Trace file /u01/diag/rdbms/db/db1/trace/db1_rfs_7.trc",
            "Oracle Database 19c Enterprise Edition Release 19.0.0.0.0 - Production",
            "Node name:\tstby01",
            "Instance name: db1",
            "",
            "PARSE #1:c=0",
            "Warning: log write elapsed time 163ms, size 18KB",
            "**********",
        ]
    ),
    st.text(max_size=30).map(lambda text: text.replace("\n", " ").replace("\r", " ")),
)


@settings(deadline=None)
@given(st.lists(st.text(max_size=40), max_size=30))
def test_every_line_is_accounted_for(lines: list[str]) -> None:
    """Random text: parsed + ignored + unparsed == lines, nothing raises."""
    lines = [x.replace("\n", " ").replace("\r", " ") for x in lines]
    frame = lines_frame("\n".join(lines)) if lines else lines_frame("")
    parsed, _ = parse_chunk(frame, in_header=False)
    assert parsed.lines == frame.height


def test_header_region_ends_at_first_star_line_and_restarts_on_new_header() -> None:
    text = "\n".join(
        [
            "Trace file /u01/app/oracle/diag/rdbms/db/db1/trace/db1_rfs_77.trc",
            "Oracle Database 19c Enterprise Edition Release 19.0.0.0.0 - Production",
            "Node name:\tstby01",
            "",
            "*** 2024-01-01T00:00:00.000001+00:00",
            "Node name: not a header any more",
            "Trace file /u01/app/oracle/diag/rdbms/db/db1/trace/db1_rfs_77.trc",
            "Instance name: db1",
        ]
    )
    rows = parse_chunk(lines_frame(text), in_header=False)[0]
    header_lines = rows.tables["header"]["line"].to_list()
    assert header_lines == [1, 2, 3, 7, 8]
    assert rows.ignored["other"] == 1  # line 6


def test_header_state_carries_across_chunks() -> None:
    first = lines_frame(
        "Trace file /x/db1_nss2_1.trc\nOracle Database 11g Enterprise Edition Release 11.2.0.4.0 - 64bit Production"
    )
    second = lines_frame("Instance name: db1\n*** 2014-12-02 08:46:34.598").with_columns(pl.col("line") + 2)
    part1, state = parse_chunk(first, in_header=False)
    part2, _ = parse_chunk(second, in_header=state)
    merged = merge([part1, part2])
    assert merged.tables["header"]["key"].to_list() == ["Trace file", "banner", "Instance name"]
    assert merged.tables["adr"].height == 1


def test_ignored_categories() -> None:
    text = "\n".join(
        [
            "",
            "   ",
            "PARSING IN CURSOR #1 len=10",
            "=====================",
            "krsr_dump_alert_msg: something",
            "kcrfw_alfs_update_mode: post->poll x=1",
        ]
    )
    parsed, _ = parse_chunk(lines_frame(text), in_header=False)
    assert dict(parsed.ignored) == {"blank": 2, "10046": 2, "other": 1}
    assert parsed.parsed == {"lgwr": 1}


def test_fragments_of_messages_are_unparsed_not_ignored() -> None:
    """A line that mentions msgid= but is no 16410 message (a wrapped copy) is reported."""
    parsed, _ = parse_chunk(lines_frame("seq=1584 msgid=117468"), in_header=False)
    assert parsed.tables["unparsed"]["reason"].to_list() == ["unexpected 'seq=1584 msg' at column 1"]


FRAGMENTS = [
    "",
    " ",
    " \t",
    "***",
    "*** 2024-01-01 00:00:00.5",
    "WAIT #",
    "WAIT #0: nam='x' ela= 1 tim=2",
    "WAIT #12: nam='",
    "msgid=",
    " msgid=1",
    "... Client x",
    "Client ",
    "Client Id = ",
    "Client sending ",
    ".. Server received ",
    "Server finished",
    "Server finished ",
    "****",
    "*",
    "Trace file /x.trc",
    "Oracle Database 19c Release 19.0",
    "Oracle Release",
    "Oracle Release ",
    "Oracle ",
    " Release ",
    "Node name: x",
    *LGWR_PREFIXES,
    *OTHER_10046_PREFIXES,
    "x",
]


lines = st.lists(st.sampled_from(FRAGMENTS), min_size=1, max_size=3).map("".join)


@settings(deadline=None)
@given(st.lists(lines, max_size=40), st.booleans())
def test_classification_follows_the_priority_order(texts: list[str], in_header: bool) -> None:
    frame = lines_frame("\n".join(texts)) if texts else lines_frame("").clear()
    expected, expected_end = reference_families(texts, in_header)
    assert [FAMILIES[c] for c in line_families(frame, in_header)["family"].to_list()] == expected
    assert split_families(frame, in_header)[1] == expected_end


def _equal(single: Parsed, batched: Parsed) -> None:
    for name in TABLES:
        assert_frame_equal(batched.tables[name], single.tables[name])
    assert (batched.parsed, batched.ignored) == (single.parsed, single.ignored)


SAMPLE_TRACES = sorted(Path(__file__).resolve().parents[2].joinpath("samples").rglob("*.trc"))


def test_files_parsed_together_give_what_each_gives_alone() -> None:
    chunks = [lines_frame(path.read_text().removesuffix("\n")) for path in SAMPLE_TRACES]
    assert len(chunks) == 6
    for path, single, batched in zip(SAMPLE_TRACES, chunks, parse_files(chunks), strict=True):
        _equal(parse_chunk(single, in_header=False)[0], batched)
        assert batched.lines == single.height, path.name


def test_a_header_region_ends_where_the_next_file_starts() -> None:
    """A file that ends inside its header (no blank or `***` line after it) does not make the next file's
    first lines header lines; rejected and ignored lines are counted in their own file."""
    ends_in_header = lines_frame(
        "Trace file /u01/diag/rdbms/db/db1/trace/db1_rfs_7.trc\n"
        "Oracle Database 19c Enterprise Edition Release 19.0.0.0.0 - Production\nNode name:\tstby01"
    )
    plain = lines_frame(
        "Node name: not a header here\n"
        "WAIT #0: nam='RFS write' ela= 12 tim=x\n"
        "\n*** 2024-01-01T00:00:00.000001+00:00\nTrace file /u01/diag/rdbms/db/db1/trace/db1_rfs_8.trc"
    )
    empty_file = lines_frame("")
    chunks = [ends_in_header, plain, empty_file, ends_in_header]
    batched = parse_files(chunks)
    for single, part in zip(chunks, batched, strict=True):
        _equal(parse_chunk(single, in_header=False)[0], part)
    assert batched[1].tables["header"]["line"].to_list() == [5]
    assert batched[1].ignored["other"] == 1
    assert batched[1].unparsed == 1 and batched[1].tables["unparsed"]["line"].to_list() == [2]
    assert batched[0].tables["header"].height == batched[3].tables["header"].height == 3
    assert batched[2].lines == 1 and batched[2].ignored["blank"] == 1


def test_alert_logs_parsed_together_give_what_each_gives_alone(tmp_path: Path) -> None:
    """The bundled 11.2 alert logs and a simulated 19c set's, with an empty one between them: each
    as alone, its line numbers its own, every line counted in its own log."""
    simulate(tmp_path, SimOptions(writes=200, format_version="19c", extras=True))
    bundled = sorted((ROOT / "tests" / "fixtures" / "alert").glob("alert_*.log"))
    logs = [*bundled, *sorted(tmp_path.rglob("alert_*.log"))]
    chunks = [lines_frame(path.read_text().removesuffix("\n")) for path in logs]
    chunks.insert(1, lines_frame(""))
    assert len(chunks) >= 4
    batched = parse_files(chunks, alert=True)
    for single, part in zip(chunks, batched, strict=True):
        _equal(parse_chunk(single, in_header=False, alert=True)[0], part)
        assert part.lines == single.height
    assert all(part.tables["alert"].height for k, part in enumerate(batched) if k != 1)


@pytest.mark.slow
@settings(deadline=None)
@given(st.lists(st.lists(TRACE_LINES, max_size=12), min_size=2, max_size=5))
def test_any_files_parsed_together_give_what_each_gives_alone(files: list[list[str]]) -> None:
    chunks = [lines_frame("\n".join(lines)) for lines in files]
    for single, part in zip(chunks, parse_files(chunks), strict=True):
        _equal(parse_chunk(single, in_header=False)[0], part)
