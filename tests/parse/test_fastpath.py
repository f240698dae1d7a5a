"""Fast paths agree with the grammar (the spec): generated, awkward and tricky lines, samples, simulated sets."""

from __future__ import annotations

import functools
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from polars.testing import assert_frame_equal

from analyzer.api import Options, analyze
from analyzer.base.zones import TimeZones
from analyzer.parse import families as parse
from analyzer.parse import fastpath, scanner
from analyzer.parse import grammar as g
from analyzer.parse import lines as read
from analyzer.parse.families import (
    TABLES,
    parse_chunk,
    record_row,
)
from analyzer.parse.grammar import LGWR_PREFIXES, MESSAGE_PREFIXES
from analyzer.parse.lines import ReadStats, read_lines
from analyzer.reduce import ingest
from analyzer.simulate.options import SimOptions
from analyzer.simulate.runner import simulate
from tests.conftest import ROOT, lines_frame
from tests.strategies import message_lines, reference_families, stamp_lines, wait_lines


def _records(parsed: Any) -> dict[int, dict[str, object]]:
    out: dict[int, dict[str, object]] = {}
    for name in TABLES:
        if name == "unparsed":
            continue
        for row in parsed.tables[name].to_dicts():
            out[row.pop("line")] = row
    return out


def _grammar_record(family: g.Family, text: str) -> dict[str, object] | None:
    try:
        return record_row(g.parse_line(family, text))
    except g.LineError:
        return None


@settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.one_of(message_lines(), stamp_lines(), wait_lines()), min_size=1, max_size=12))
def test_fast_path_agrees_with_grammar_record(lines: list[str]) -> None:
    """Whatever the fast path accepts, the grammar accepts with the same fields, and vice versa."""
    frame = lines_frame("\n".join(lines))
    parsed, _ = parse_chunk(frame, in_header=False)
    got = _records(parsed)
    unparsed = set(parsed.tables["unparsed"]["line"].to_list())
    families = {"*": g.Family.STAMPS, "W": g.Family.WAIT}
    for number, text in enumerate(lines, 1):
        expected = _grammar_record(families.get(text[:1], g.Family.TRANSPORT), text)
        if expected is None:
            assert number in unparsed, text
        else:
            assert got[number] == {k: expected.get(k) for k in got[number]}, text
    assert parsed.lines == len(lines)


def _grammar_or_reason(family: g.Family, text: str) -> dict[str, object] | str:
    """The grammar's fields, or why the line is unparsed (the grammar's reason: a shape, a range)."""
    try:
        return record_row(g.parse_line(family, text))
    except g.LineError as err:
        return str(err)


def _family(text: str) -> g.Family:
    if text.startswith(LGWR_PREFIXES):
        return g.Family.LGWR
    return {"*": g.Family.STAMPS, "W": g.Family.WAIT}.get(text[:1], g.Family.TRANSPORT)


def assert_agrees_with_grammar(texts: list[str]) -> None:
    """Each line: the grammar's record with the same fields, or unparsed with the grammar's reason."""
    parsed, _ = parse_chunk(lines_frame("\n".join(texts)), in_header=False)
    got: dict[int, dict[str, Any]] = {}
    for name in TABLES:
        if name != "unparsed":
            for row in parsed.tables[name].to_dicts():
                got[row.pop("line")] = row
    unparsed = dict(parsed.tables["unparsed"].select("line", "reason").iter_rows())
    for number, text in enumerate(texts, 1):
        expected = _grammar_or_reason(_family(text), text)
        if isinstance(expected, str):
            assert unparsed.get(number) == expected, text
        else:
            assert got[number] == {k: expected.get(k) for k in got[number]}, text
    for name in TABLES:
        assert parsed.tables[name]["line"].is_sorted(), name


FIELDS = "flag=67111042 thrd=1 seq=2 msgid=3"


AWKWARD = [
    f"Client sending SQLNET request data [kpurcs] oper='a thrd=5 seq=6' {FIELDS}",
    f"Client sending SQLNET request data [kpurcs] oper='a msgid=5' {FIELDS}",
    f"... Client received SQLNET call [kpurcs] response oper='' {FIELDS}",
    "Client sending SQLNET request data [kpurcs] oper='x' flag=1 thrd=1 seq=2 msgid=+3",
    "Client sending SQLNET request data [kpurcs] oper='x' flag=1 thrd=1 seq=-2 msgid=3",
    "Client sending SQLNET request data [kpurcs] oper='x' flag=1 thrd=1 seq=2 msgid=99999999999999999999",
    "Client sending SQLNET request data [kpurcs] oper='x' flag=0x1F thrd=01 seq=002 msgid=0003",
    "Server received SQLNET data [krsr_rfs_dsp] oper='x' flag=1 thrd=1 seq=2 msgid= 3",
    "... Server finished processing SQLNET data [krsr_rfs_dsp] oper='x' flag=1 thrd=1 seq=2 msgid=3 ",
    "*** 2024-01-01 00:00:60.123 [krsu.c:1]",
    "*** 0000-01-01 00:00:00.123 [krsu.c:1]",
    "*** 0999-01-01 00:00:00.123 5837 krsu.c",
    "*** 2023-02-29 00:00:00.123 [krsu.c:1]",
    "*** 2024-02-29 23:59:59.123456789 [krsu.c:99999999999999999999]",
    "*** 2024-02-29 23:59:59.1 [krsu.c:1]",
    "*** 2014-12-02 08:46:34.598 5837 krsu.c",
    "*** 2024-01-01 00:00:60.123",
    "*** 2024-01-01 00:00:00.1234567",
    "*** 2024-01-01T00:00:00.12-07:30",
    "*** 2024-01-01T00:00:00.123456789+05:45 (CDB$ROOT(1))",
    "*** 2024-01-01T00:00:60.123+00:00",
    "*** SESSION ID:(9.1) 2015-03-10 14:08:53.050",
    "*** MODULE NAME:(sqlplus@db (TNS V1-V3)) 2024-01-01T00:00:00.123456+05:45",
    "*** MODULE NAME:(x) 2024-01-01T00:00:00.1) 2024-01-01T00:00:00.2+00:00",
    "*** ACTION NAME:() 2023-02-29T00:00:00.123+00:00",
    "*** CLIENT ID:(a) 2024-01-01 00:00:00.123 [krsu.c:1]",
    "*** SERVICE NAME:(z) 2024-01-01T00:00:00.123+15:00",
    "*** Module Name:(z) 2024-01-01T00:00:00.123+01:00",
    "WAIT #0: nam='x' ela= 1 driver tim=5 tim=7",
    "WAIT #0: nam='x' ela=1 p1 ela=2 tim=7",
    "WAIT #0: nam='' ela= 1 tim=+7",
    "WAIT #99999999999999999999: nam='x' ela= 1 tim=7",
    "WAIT #3: nam='RFS write' ela= 857 p1=0 p2=0 p3=0 obj#=-1 tim=7127240326127",
    "Warning: log write elapsed time 163ms, size 18KB",
    "Warning: log write elapsed time 99999999999999999999ms, size 1KB",
    "Warning: log write elapsed time 1ms, size +1KB",
    "Warning: log write elapsed time 1ms, size 1KB ",
    "Warning: log write elapsed time 1ms, size 1KBKB",
    "Warning: log write broadcast wait time 2331ms (SCN 0xa50c01d75d8)",
    # byte and character offsets differ past a non-ASCII character: such keys go to the grammar
    "WAIT #0: nam='\u00e9v\u00e9nement' ela= 1 p1=0 p2=0 p3=0 obj#=-1 tim=7127240326127",
    f"Client sending SQLNET request data [kpurcs] oper='\u00e9crire' {FIELDS}",
    "WAIT #0: nam='x' ela= 1 p1=a\x0cb tim=7",  # the grammar ends a value at a form feed
    "WAIT #0: nam='x' ela= 1 p1=0 tim=5 tim=7127240326127",
    "WAIT #0: nam='a tim=1' ela= 1 tim=7127240326127",
    "*** 2024-12-09 06:43:21.039191 [krsr.c:16852]x",  # canonical up to the source, which is not
    "*** 2024-12-09 06:43:21.039191  [krsr.c:16852]",
    "*** 2024-12-09 06:43:21.039191 [krsr.c]",
]


def test_fast_paths_agree_with_the_grammar_on_awkward_lines() -> None:
    assert_agrees_with_grammar(AWKWARD)


@pytest.mark.parametrize("text", AWKWARD)
def test_each_awkward_line_alone(text: str) -> None:
    assert_agrees_with_grammar([text])


free_text = st.text(alphabet="ab '=_#:.thrdseqmigelam0123456789", max_size=14)


@st.composite
def tricky_messages(draw: st.DrawFn) -> str:
    kind = draw(st.sampled_from(list(MESSAGE_PREFIXES.values())))
    lead = draw(st.sampled_from(["", "... "]))
    oper = draw(st.one_of(free_text, st.sampled_from(["Write", "x thrd=1 seq=2", "msgid=4", " msgid=5"])))
    numbers = [draw(st.sampled_from(["1", "0", "007", "+1", "-1", "", "1x", "9" * 20])) for _ in range(3)]
    return f"{lead}{kind} [kpurcs] oper='{oper}' flag=1 thrd={numbers[0]} seq={numbers[1]} msgid={numbers[2]}"


@st.composite
def tricky_stamps(draw: st.DrawFn) -> str:
    year = draw(st.sampled_from(["0000", "0001", "0999", "1000", "2024", "9999"]))
    day = draw(st.sampled_from(["01-01", "02-29", "02-30", "12-31"]))
    clock = draw(st.sampled_from(["00:00:00", "23:59:59", "00:00:60", "24:00:00"]))
    fraction = draw(st.text(alphabet="0123456789", min_size=1, max_size=9))
    src = draw(st.sampled_from([" [krsu.c:10652]", " 5837 krsu.c", "", "+00:00", "-07:30 (X(1))", " [k.c:]", " 1 k"]))
    sep = "T" if src[:1] in "+-" else " "
    return f"*** {year}-{day}{sep}{clock}.{fraction}{src}"


@st.composite
def tricky_waits(draw: st.DrawFn) -> str:
    event = draw(st.sampled_from(["RFS write", "", "a tim=1", "x' ela= 2"]))
    ela = draw(st.sampled_from([" 1", "1", "  1", " +1", " 1x"]))
    params = draw(st.sampled_from(["", " p1=0", " driver tim=5", " ela=3", " a=1 tim=2"]))
    tim = draw(st.sampled_from(["7", "+7", "7 ", "9" * 20]))
    return f"WAIT #{draw(st.sampled_from(['0', '12', '-1']))}: nam='{event}' ela={ela}{params} tim={tim}"


@st.composite
def tricky_log_writes(draw: st.DrawFn) -> str:
    elapsed, size = (draw(st.sampled_from(["1", "0163", "+1", "", "1 ", "9" * 20])) for _ in range(2))
    return f"Warning: log write elapsed time {elapsed}ms, size {size}{draw(st.sampled_from(['KB', 'KB ', 'kB']))}"


@settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(
        st.one_of(tricky_messages(), tricky_stamps(), tricky_waits(), tricky_log_writes()), min_size=1, max_size=16
    )
)
def test_fast_paths_agree_with_the_grammar_on_tricky_lines(texts: list[str]) -> None:
    assert_agrees_with_grammar(texts)


def test_number_lengths_mixed_in_one_chunk_keep_line_order() -> None:
    """The usual msgid and tim lengths are guessed from the first lines; the others take the second cut."""
    message = "Client sending SQLNET request data [kpurcs] oper='Write' flag=67111042 thrd=1 seq=2 msgid="
    wait = "WAIT #0: nam='RFS write' ela= 857 p1=0 p2=0 p3=0 obj#=-1 tim="
    numbers = ["123456", "12345", "1234567", "123456", "99999999999999999999", "+23456", "023456"]
    texts = [f"{start}{n}" for n in numbers for start in (message, wait)]
    assert_agrees_with_grammar(texts)
    parsed, _ = parse_chunk(lines_frame("\n".join(texts)), in_header=False)
    assert parsed.tables["messages"]["msgid"].to_list() == [123456, 12345, 1234567, 123456, 23456]
    assert parsed.tables["waits"]["tim"].to_list() == [123456, 12345, 1234567, 123456, 23456]


#: canonical lines of each fast path; one character changed, inserted or removed, they must agree with the grammar
CANONICAL = [
    "Client sending SQLNET request data [kpurcs] oper='Write' flag=67111042 thrd=1 seq=3763 msgid=109555",
    "... Client received SQLNET call [kpurcs] response oper='Write' flag=67111042 thrd=1 seq=3763 msgid=109553",
    "... Server finished processing SQLNET data [krsr_rfs_dsp] oper='Write' flag=0x4000 thrd=1 seq=3763 msgid=1",
    "*** 2024-10-22 16:18:49.590088 [krsr.c:1196]",
    "*** 2017-02-09 13:12:59.372643 3981 krsb.c",
    "*** 2014-12-02 08:46:34.598 5837 krsu.c",
    "*** 2015-03-10 14:08:53.050",
    "*** 2024-10-22T16:18:49.116779+00:00 (CDB$ROOT(1))",
    "WAIT #0: nam='RFS write' ela= 857 p1=0 p2=0 p3=0 obj#=-1 tim=7127240326127",
    "WAIT #1397: nam='SQL*Net message to client' ela=9 driver id=1413697536 #bytes=1 obj#=4294967295 tim=98778561313",
    "Warning: log write elapsed time 163ms, size 18KB",
]


SUBSTITUTES = ["", " ", "\t", "0", "7", "x", "'", "=", "+", "-", ".", ":", "#", "(", "]", "\u00e9", "\x0c"]


def _one_character_off(text: str) -> list[str]:
    """`text` with one character replaced or removed, or one inserted, that stay in its family."""
    family = reference_families([text], in_header=False)[0][0]
    variants = {text[:i] + sub + text[i + 1 :] for i in range(len(text)) for sub in SUBSTITUTES}
    variants |= {text[:i] + sub + text[i:] for i in range(len(text) + 1) for sub in SUBSTITUTES}
    return sorted(v for v in variants - {text} if reference_families([v], False)[0][0] == family == _family(v).value)


@pytest.mark.parametrize("text", CANONICAL, ids=lambda t: t[:30])
def test_one_character_off_a_canonical_line_agrees_with_the_grammar(text: str) -> None:
    """Lines that look canonical but differ in a character go to the grammar (or are still canonical).

    After 64 canonical lines, so that the guessed precision and number lengths are those of `text`.
    """
    assert_agrees_with_grammar([text] * 64 + _one_character_off(text))


def test_stamp_precisions_mixed_in_one_chunk_keep_line_order() -> None:
    texts = [f"*** 2024-01-01 00:00:0{n}.{'1' * n} [krsu.c:{n}]" for n in (3, 6, 3, 9, 6)]
    parsed, _ = parse_chunk(lines_frame("\n".join(texts)), in_header=False)
    krs = parsed.tables["krs"]
    assert krs["line"].to_list() == [1, 2, 3, 4, 5]
    assert krs["digits"].to_list() == [3, 6, 3, 6, 6]
    assert krs["local"][3] == datetime(2024, 1, 1, 0, 0, 9, 111111)


SAMPLE_FILES = sorted((ROOT / "samples").rglob("*.trc"))


def _parse(path: Path, fast: bool) -> parse.Parsed:
    parts, state = [], False
    with path.open("rb") as stream:
        for lines in read_lines(stream, ReadStats(), chunk_bytes=4096):
            part, state = parse.parse_chunk(lines, state, fast=fast)
            parts.append(part)
    return parse.merge(parts)


@pytest.mark.parametrize("path", SAMPLE_FILES, ids=lambda p: p.name)
def test_sample_tables_are_the_same_either_way(path: Path) -> None:
    quick, spec = _parse(path, True), _parse(path, False)
    for name in TABLES:
        assert_frame_equal(quick.tables[name], spec.tables[name])
    assert (quick.parsed, quick.ignored) == (spec.parsed, spec.ignored)


@pytest.mark.slow
@pytest.mark.parametrize("alone", [False, True], ids=["small-files-together", "each-file-in-chunks"])
@pytest.mark.parametrize("generation", ["11.2", "12.1", "19c", "23ai"])
def test_simulated_writes_are_the_same_either_way(
    tmp_path: Path, generation: str, alone: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The whole analysis with every line of a known family parsed by its grammar gives the same writes as
    the usual one (the compiled scanner when it is built, else the fast paths);
    the set's files read together as small files do (`parse_files`), or each alone in 8 KB chunks, split
    and parsed on two threads (`parse_groups`)."""
    real_line = g.parse_line
    if alone:
        monkeypatch.setattr(ingest, "SMALL_BYTES", 0)
        monkeypatch.setattr(ingest, "read_chunks", functools.partial(read.read_chunks, chunk_bytes=8192))
    simulate(tmp_path / "set", SimOptions(scenario="mixed", format_version=generation, writes=150, noise=0.3, seed=4))
    options = Options(zones=TimeZones(default_min=0))
    quick = analyze([str(tmp_path / "set")], options)
    by_grammar = []
    monkeypatch.setattr(g, "parse_line", lambda family, text: by_grammar.append(text) or real_line(family, text))
    for name in ("parse_chunk", "parse_groups", "parse_files"):
        monkeypatch.setattr(parse, name, functools.partial(getattr(parse, name), fast=False))
    monkeypatch.setenv(scanner.SWITCH, "python")  # the grammar for every line, not the compiled scanner
    spec = analyze([str(tmp_path / "set")], options)
    assert len(by_grammar) >= sum(sum(f.parsed.parsed.values()) for f in spec.files)  # every line the grammar's
    assert quick.writes.height == 300
    assert_frame_equal(quick.writes, spec.writes)
    assert_frame_equal(quick.unmatched, spec.unmatched)
    assert_frame_equal(quick.warnings, spec.warnings)
    assert [f.parsed.parsed for f in quick.files] == [f.parsed.parsed for f in spec.files]


HEADER_LINES = [
    "Node name:\tprim01.example.com",
    "Node name:      prim01",
    "Version:\t#2 SMP Fri Oct 23 22:27:16 PDT 2020",
    "Version = odd",
    "Version 19.22.0.0.0",
    "Release:\t5.4.17-2136.309.5.el8uek.x86_64",
    "ORACLE_HOME = /u01/app/oracle/product/11.2.0.4/dbhome_1",
    "ORACLE_HOME:    /u01/app/oracle/product/19.0.0/dbhome_1",
    "VM name:\tKVM CPUID feature flags: 0x01000089",
    "Database name: FREE ",
    "Redo thread mounted by this instance: 0 <none>",
    "Redo thread mounted by this instance:",
    "Redo thread mounted by this instance",
    "Instance name: caf\u00e9",
    "Oracle process number: 27",
    "Node namex: y",
    "Unix process pid: 4401, image: oracle@prim01 (NSS2)",
]


@pytest.mark.parametrize("text", HEADER_LINES)
def test_header_field_fast_path_agrees_with_the_grammar(text: str) -> None:
    found, rest = fastpath.header_fields(lines_frame(text))
    try:
        expected = record_row(g.parse_line(g.Family.HEADER, text))
    except g.LineError:
        assert found["header"].is_empty() and rest.height == 1
        return
    if found["header"].height:
        assert found["header"].drop("line").row(0, named=True) == expected
    else:
        assert rest.height == 1
