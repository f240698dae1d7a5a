"""Parse stage: the vectorised fast path agrees with the grammar, and every line is accounted for."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import polars as pl
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from analyzer import grammar as g
from analyzer.grammar import MESSAGE_PREFIXES
from analyzer.parse import TABLES, merge, parse_chunk, record_row
from tests.conftest import lines_frame

KIND_TEXT = list(MESSAGE_PREFIXES.values())
ints = st.integers(min_value=0, max_value=10**12)
words = st.text(alphabet="abcdefghijklmnopqrstuvwxyz_0123456789 '", min_size=0, max_size=8)


@st.composite
def message_lines(draw: st.DrawFn) -> str:
    """16410 message lines, canonical or slightly off (spacing, dots, odd fields)."""
    kind = draw(st.sampled_from(KIND_TEXT))
    lead = draw(st.sampled_from(["", "... ", "..", " ", ". ", "....  "]))
    func = draw(st.sampled_from(["kpurcs", "krsr_rfs_dsp", "k p", ""]))
    resp = " response" if kind.startswith("Client received") and draw(st.booleans()) else ""
    oper = draw(words)
    flag = draw(st.sampled_from(["67111042", "0x04000882", "-1", "12a", "0xZZ"]))
    sep = draw(st.sampled_from([" ", " ", " ", "  ", "\t"]))
    tail = draw(st.sampled_from(["", "", " ", " junk"]))
    fields = f"oper='{oper}'{sep}flag={flag} thrd={draw(ints)} seq={draw(ints)} msgid={draw(ints)}"
    return f"{lead}{kind} [{func}]{resp} {fields}{tail}"


@st.composite
def stamp_lines(draw: st.DrawFn) -> str:
    """`***` lines: krs stamps of three shapes, ADR lines of two generations, and damaged ones."""
    when = draw(st.datetimes(min_value=datetime(2000, 1, 1), max_value=datetime(2099, 12, 31)))
    digits = draw(st.sampled_from([3, 6, 2, 9]))
    frac = f"{when.microsecond:06d}{draw(st.integers(0, 999)):03d}"[:digits]
    base = when.strftime("%Y-%m-%d %H:%M:%S")
    src = draw(st.sampled_from(["krsu.c", "krsr.c", "krs u.c", "x.h"]))
    line = draw(st.integers(0, 99999))
    zone = draw(st.sampled_from(["+00:00", "-07:00", "+05:30", "+0800", ""]))
    return draw(
        st.sampled_from(
            [
                f"*** {base}.{frac} {line} {src}",
                f"*** {base}.{frac} [{src}:{line}]",
                f"*** {base}.{frac}",
                f"*** {base.replace(' ', 'T')}.{frac}{zone}",
                f"*** {base.replace(' ', 'T')}.{frac}{zone} (CDB$ROOT(1))",
                f"*** {base}.{frac} {line}",
            ]
        )
    )


@st.composite
def wait_lines(draw: st.DrawFn) -> str:
    """WAIT lines of both `ela=` spellings, named parameters with spaces and '#'."""
    event = draw(st.sampled_from(["RFS write", "RFS random i/o", "SQL*Net message from client", "x'y"]))
    ela = draw(st.sampled_from([" ", "", "  "])) + str(draw(ints))
    params = draw(
        st.sampled_from(
            [
                "p1=0 p2=0 p3=0 obj#=-1",
                "driver id=1413697536 #bytes=1 p3=0 obj#=4294967295",
                "",
                "p1 =0",
                "file#=7 block#=1",
            ]
        )
    )
    params = f" {params}" if params else ""
    return f"WAIT #{draw(ints)}: nam='{event}' ela={ela}{params} tim={draw(ints)}"


def _records(parsed: Any) -> dict[int, dict[str, object]]:
    out: dict[int, dict[str, object]] = {}
    for name in TABLES:
        if name == "unparsed":
            continue
        for row in parsed.tables[name].to_dicts():
            out[row.pop("line")] = row
    return out


def _grammar(family: g.Family, text: str) -> dict[str, object] | None:
    try:
        return record_row(g.parse_line(family, text))
    except g.LineError:
        return None


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.one_of(message_lines(), stamp_lines(), wait_lines()), min_size=1, max_size=12))
def test_fast_path_agrees_with_grammar(lines: list[str]) -> None:
    """Whatever the fast path accepts, the grammar accepts with the same fields, and vice versa."""
    frame = lines_frame("\n".join(lines))
    parsed, _ = parse_chunk(frame, in_header=False)
    got = _records(parsed)
    unparsed = set(parsed.tables["unparsed"]["line"].to_list())
    families = {"*": g.Family.STAMPS, "W": g.Family.WAIT}
    for number, text in enumerate(lines, 1):
        expected = _grammar(families.get(text[:1], g.Family.TRANSPORT), text)
        if expected is None:
            assert number in unparsed, text
        else:
            assert got[number] == {k: expected.get(k) for k in got[number]}, text
    assert parsed.lines == len(lines)


@settings(max_examples=100, deadline=None)
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
