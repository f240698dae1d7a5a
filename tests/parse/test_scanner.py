"""The compiled scanner against the pure path (its oracle): the same tables, line accounting, header state and
reading counts on every chunk: generated lines of every family, odd shapes and byte mutations, both header states,
hostile chunks, the samples, simulated sets of every generation and the real traces."""

from __future__ import annotations

import hashlib
import os
import random
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from polars.testing import assert_frame_equal

from analyzer.api import Options, analyze
from analyzer.base.vocab import MessageKind
from analyzer.base.zones import TimeZones
from analyzer.parse import families as fam
from analyzer.parse import scanner
from analyzer.parse.chunks import FileParser
from analyzer.parse.grammar import LGWR_PREFIXES, MESSAGE_PREFIXES
from analyzer.parse.lines import MAX_LINE_CHARS, Chunk, ReadStats, read_chunks
from analyzer.simulate.options import SimOptions
from analyzer.simulate.runner import simulate
from tests.conftest import REAL_TRACES, ROOT, WITHOUT_REAL_TRACES
from tests.parse.test_fastpath import (
    AWKWARD,
    CANONICAL,
    HEADER_LINES,
    tricky_log_writes,
    tricky_messages,
    tricky_stamps,
    tricky_waits,
)
from tests.strategies import message_lines, stamp_lines, wait_lines

pytestmark = pytest.mark.skipif(not scanner.compiled(), reason="the compiled scanner is not built in this install")

REAL = REAL_TRACES


def assert_same(data: bytes, in_header: bool, first: int = 1) -> scanner.Scanned:
    """The chunk's bytes through the scanner and through the pure path: equal in every table, count and state."""
    chunk = Chunk(data, first, data.count(b"\n"))
    pure_stats, scan_stats = ReadStats(), ReadStats()
    pure, pure_end = fam.parse_chunk(chunk.frame(pure_stats), in_header)
    scanned = scanner.scan(chunk, in_header, scan_stats)
    assert scanned is not None
    got = scanner.parse_scanned(scanned)
    for name in fam.TABLES:
        assert_frame_equal(got.tables[name], pure.tables[name])
    assert (got.parsed, got.ignored) == (pure.parsed, pure.ignored)
    assert scanned.in_header == pure_end
    assert (scan_stats.lines_with_bad_bytes, scan_stats.bad_lines) == (
        pure_stats.lines_with_bad_bytes,
        pure_stats.bad_lines,
    )
    assert got.lines == chunk.count
    return scanned


def test_the_compiled_prefixes_texts_and_families_are_the_python_ones() -> None:
    compiled = scanner._scanner.constants()  # type: ignore[union-attr]
    assert compiled["other_10046"] == list(fam.OTHER_10046_PREFIXES)
    assert compiled["lgwr"] == list(LGWR_PREFIXES)
    assert compiled["message_text"] == list(MESSAGE_PREFIXES.values())
    assert compiled["message_kind"] == [str(kind) for kind in MESSAGE_PREFIXES]
    assert set(compiled["message_kind"]) == {str(kind) for kind in MessageKind}  # type: ignore[arg-type]
    assert compiled["families"] == list(fam.FAMILIES[: len(compiled["families"])])  # type: ignore[arg-type]
    assert compiled["max_line"] == MAX_LINE_CHARS


#: lines of every family and of none: the literal tests' families, header regions, glued WAIT records, message
#: starts without a msgid, session lines and file markers, non-ASCII text and undecodable bytes
OTHER_LINES = [
    "PARSING IN CURSOR #1 len=6 dep=0 uid=0 oct=3 lid=0 tim=1 hv=1 ad='a' sqlid='b'",
    "select 1 from dual",
    "END OF STMT",
    "PARSE #1:c=0,e=1,p=0,cr=0,cu=0,mis=0,r=0,dep=0,og=1,plh=0,tim=2",
    "EXEC #1:c=0,e=1,p=0,cr=0,cu=0,mis=0,r=0,dep=0,og=1,plh=0,tim=3",
    "FETCH #1:c=0,e=1,p=0,cr=0,cu=0,mis=0,r=1,dep=0,og=1,plh=0,tim=4",
    "STAT #1 id=1 cnt=1 pid=0 pos=1 obj=0 op='FAST DUAL  (cr=0 pr=0 pw=0 str=1 time=1 us cost=2 size=0 card=1)'",
    "XCTEND rlbk=0, rd_only=1, tim=5",
    "=====================",
    " Bind#0",
    "  value=42",
    "EXEC #1:c=0,e=1WAIT #1: nam='db file sequential read' ela= 5 file#=1 block#=2 blocks=1 tim=6",
    "garbage WAIT #7: nam='x' ela= 1 tim=2",
    "... Client sending SQLNET request data [kpurcs] oper='Write' flag=1 thrd=1 seq=2",
    ".. Server received SQLNET data [krsr_rfs_dsp] oper='Write'",
    "*****************************",
    "***** WARNING: something *****",
    "***",
    "*** SESSION ID:(9.1) 2015-03-10 14:08:53.050",
    "*** MODULE NAME:(oracle@prim01 (NSS2)) 2024-10-22T16:18:49.116779+00:00",
    "*** TRACE CONTINUED FROM FILE /u01/app/oracle/diag/x_1.trc ***",
    "*** [ Unix process pid: 9850 ]",
    "*** 2023-05-19T05:28:00.339263 (TESTPDB(11))",
    "Trace file /u01/app/oracle/diag/rdbms/chicago/chicago1/trace/chicago1_rfs_8801.trc",
    "Oracle Database 19c Enterprise Edition Release 19.0.0.0.0 - Production",
    "Oracle Release 11.2",
    "OracleX Release 1",
    "Unix process pid: 4401, image: oracle@prim01 (NSS2)",
    "Warning: log write broadcast wait time 2331ms (SCN 0xa50c01d75d8)",
    "kcrfw_alfs_update_mode: 0 -> 1",
    "Log file sync switching to post/wait",
    "",
    " ",
    " \t ",
    "\t",
    "caf\u00e9 msgid=5",
    "Trace file /tmp/caf\u00e9.trc",
    "WAIT #0: nam='\u00e9v\u00e9nement' ela= 1 p1=0 tim=7127240326127",
    "*** 2024-10-22 16:18:49.590088 [krsr.c:1196] \u00e9",
    *HEADER_LINES,
]
#: undecodable bytes, CR inside a line, and the like (bytes, as a reader may hand them over)
ODD_BYTES = [
    b"\xff\xfe oper='x' msgid=3",
    b"Client sending SQLNET request data [kpurcs] oper='\xe9' flag=1 thrd=1 seq=2 msgid=3",
    b"WAIT #0: nam='RFS write' ela= 857 p1=0\r p2=0 tim=7127240326127",
    b"*** 2024-10-22 16:18:49.590088 [krsr.c:1196]\r",
    b"\r",
    b"\r\r",
    b"\xed\xa0\x80 WAIT #1: nam='x' ela= 1 tim=2",
    b"Oracle \xc3\xa9 Release 19",
]
#: bytes a mutation puts in or over a line
MUTANTS = b"07 \t'=:.()[]*#+-x\r\x80\xc3\xff"


@st.composite
def mutated(draw: st.DrawFn) -> bytes:
    """A canonical or awkward line with bytes replaced, inserted or deleted, or cut short."""
    line = draw(st.sampled_from([*CANONICAL, *AWKWARD])).encode()
    for _ in range(draw(st.integers(1, 3))):
        at = draw(st.integers(0, len(line)))
        what = draw(st.sampled_from(["replace", "insert", "delete", "cut"]))
        byte = bytes([draw(st.sampled_from(MUTANTS))])
        if what == "replace":
            line = line[:at] + byte + line[at + 1 :]
        elif what == "insert":
            line = line[:at] + byte + line[at:]
        elif what == "delete":
            line = line[:at] + line[at + 1 :]
        else:
            line = line[:at]
    return line.replace(b"\n", b"")


any_line = st.one_of(
    message_lines().map(str.encode),
    stamp_lines().map(str.encode),
    wait_lines().map(str.encode),
    tricky_messages().map(str.encode),
    tricky_stamps().map(str.encode),
    tricky_waits().map(str.encode),
    tricky_log_writes().map(str.encode),
    st.sampled_from([*CANONICAL, *AWKWARD, *OTHER_LINES]).map(str.encode),
    st.sampled_from(ODD_BYTES),
    mutated(),
)


def _chunk(lines: list[bytes], ends: list[bytes]) -> bytes:
    return b"".join(line + end for line, end in zip(lines, ends, strict=False))


chunks = st.lists(any_line, min_size=1, max_size=24).flatmap(
    lambda lines: st.tuples(
        st.just(lines), st.lists(st.sampled_from([b"\n", b"\n", b"\r\n"]), min_size=len(lines), max_size=len(lines))
    )
)


@settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(chunks, st.booleans(), st.integers(1, 10**9))
def test_the_scanner_gives_the_pure_tables(
    lines_ends: tuple[list[bytes], list[bytes]], in_header: bool, first: int
) -> None:
    assert_same(_chunk(*lines_ends), in_header, first)


@pytest.mark.slow
# the differential test at twice the profile's examples (ci: 500)
@settings(max_examples=2 * settings().max_examples, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(chunks, st.booleans())
def test_the_scanner_gives_the_pure_tables_on_many_chunks(
    lines_ends: tuple[list[bytes], list[bytes]], in_header: bool
) -> None:
    assert_same(_chunk(*lines_ends), in_header)


@pytest.mark.parametrize("in_header", [False, True])
def test_every_listed_line_together(in_header: bool) -> None:
    lines = [text.encode() for text in [*CANONICAL, *AWKWARD, *OTHER_LINES]] + ODD_BYTES
    scanned = assert_same(b"\n".join(lines) + b"\n", in_header)
    assert scanned.tables["messages"].height and scanned.tables["krs"].height and scanned.tables["waits"].height


@pytest.mark.slow
@pytest.mark.parametrize("in_header", [False, True])
def test_every_listed_line_alone(in_header: bool) -> None:
    for line in [text.encode() for text in [*CANONICAL, *AWKWARD, *OTHER_LINES]] + ODD_BYTES:
        assert_same(line + b"\n", in_header)


def test_canonical_lines_are_the_scanners_and_the_others_go_back() -> None:
    """What the scanner takes itself and what it hands back (the test above holds the results equal)."""
    canonical = [text.encode() for text in CANONICAL if not text.startswith("Warning")]
    scanned = assert_same(b"\n".join(canonical) + b"\n", False)
    assert scanned.rest.is_empty()
    kept = [*OTHER_LINES[11:14], "*** SESSION ID:(9.1) 2015-03-10 14:08:53.050", "caf\u00e9 msgid=5"]
    scanned = assert_same("\n".join(kept).encode() + b"\n", False)
    assert scanned.rest["line"].to_list() == list(range(1, len(kept) + 1))


def test_a_header_region_runs_from_its_start_to_a_blank_or_stamp_line_across_chunks() -> None:
    head = "Trace file /u01/x.trc\nNode name: prim01\nsome text\n"
    scanned = assert_same(head.encode(), False)
    assert scanned.in_header and scanned.rest["family"].to_list() == [fam.FAMILIES.index("header")] * 3
    assert assert_same(b"Version 19.22\n", True).in_header  # carried in from the chunk before
    assert not assert_same(b"Version 19.22\n\nafter\n", True).in_header
    assert not assert_same(b"Version 19.22\n*** 2015-03-10 14:08:53.050\nafter\n", True).in_header


def _hostile(digits: str = "9" * 60_000) -> dict[str, bytes]:
    """Chunks built to break a scanner (each line within the scanner's length, `digits` too)."""
    rng = random.Random(16410)
    message = "Client sending SQLNET request data [kpurcs] oper='Write' flag=67111042"
    return {
        "a million empty lines": b"\n" * 1_000_000,
        "CR runs": b"\r" * 60_000 + b"\n" + b"\r\r\n" * 10_000 + b"\r\n" * 10_000,
        "NUL runs": b"\x00" * 60_000 + b"\nWAIT #\x00: nam='x' ela= 1 tim=2\n" + b"\x00\n" * 10_000,
        "random bytes": bytes(rng.getrandbits(8) for _ in range(200_000)).replace(b"\n", b"")[:65_000]
        + b"\n"
        + b"\n".join(
            bytes(rng.getrandbits(8) for _ in range(rng.randint(0, 300))).replace(b"\n", b"") for _ in range(3_000)
        )
        + b"\n",
        "100,000-digit numbers": "\n".join(
            [
                f"{message} thrd={digits} seq=1 msgid=1",
                f"{message} thrd=1 seq={digits} msgid=1",
                f"{message} thrd=1 seq=1 msgid={digits}",
                f"{message[:-8]}{digits} thrd=1 seq=1 msgid=1",
                f"WAIT #{digits}: nam='x' ela= 1 tim=2",
                f"WAIT #1: nam='x' ela= {digits} tim=2",
                f"WAIT #1: nam='x' ela= 1 tim={digits}",
                f"WAIT #1: nam='x' ela= 1 p1={digits} tim=2",
                f"*** 2024-01-01 00:00:00.{digits} [krsu.c:1]",
                f"*** 2024-01-01 00:00:00.123 [krsu.c:{digits}]",
                f"*** 2024-01-01 00:00:00.123 {digits} krsu.c",
                f"*** {digits}-01-01 00:00:00.123",
            ]
        ).encode()
        + b"\n",
        "nested parentheses": b"*** 2024-01-01T00:00:00.1+00:00 " + b"(" * 30_000 + b")" * 30_000 + b"\n",
        "distinct event names": "\n".join(
            f"WAIT #1: nam='event number {k} of many' ela= {k} p1=0 tim={k}" for k in range(10_000)
        ).encode()
        + b"\n",
        "every prefix of the hot lines": "\n".join(line[:k] for line in CANONICAL for k in range(len(line))).encode()
        + b"\n",
        "a line of the longest length": b"Node name: " + b"x" * (MAX_LINE_CHARS - 11) + b"\n",
    }


@pytest.mark.parametrize("name", list(_hostile()))
@pytest.mark.parametrize("in_header", [False, True])
def test_hostile_chunks_are_scanned_as_the_pure_path_reads_them(name: str, in_header: bool) -> None:
    assert_same(_hostile()[name], in_header)


#: chunks with a line longer than the scanner takes (the reader cuts a line without newline at 256 KiB)
TOO_LONG = {
    "a 3 MB line": b"x" * 3_000_000 + b"\n",
    "100,000-digit numbers": _hostile("7" * 100_000)["100,000-digit numbers"],
    "a line of non-ASCII characters": b"a\n" + "\u00e9".encode() * (MAX_LINE_CHARS // 2 + 1) + b"\nb\n",
    "a line one byte too long": b"*** " + b"*" * (MAX_LINE_CHARS - 3) + b"\n",
}


@pytest.mark.parametrize("name", list(TOO_LONG))
def test_a_chunk_with_a_line_too_long_for_the_scanner_goes_to_the_pure_path(name: str) -> None:
    data = TOO_LONG[name]
    chunk = Chunk(data, 1, data.count(b"\n"))
    assert scanner.scan(chunk, False, ReadStats()) is None
    pure_stats, scan_stats = ReadStats(), ReadStats()
    pure, _ = fam.parse_chunk(chunk.frame(pure_stats), False)
    reader = FileParser(scan_stats)
    got = reader.parse(reader.split(chunk))
    for table in fam.TABLES:
        assert_frame_equal(got.tables[table], pure.tables[table])
    assert (got.parsed, got.ignored, scan_stats) == (pure.parsed, pure.ignored, pure_stats)
    assert pure_stats.cut_lines >= 1


def test_the_scanner_refuses_what_it_cannot_read_safely() -> None:
    """Bytes only (a bytearray could change while the scan runs without the GIL), newline-terminated, and line
    numbers that cannot overflow."""
    with pytest.raises(ValueError, match="newline"):
        scanner.scan(Chunk(b"no newline", 1, 1), False, ReadStats())
    compiled = scanner._scanner
    assert compiled is not None
    with pytest.raises(TypeError):
        compiled.scan(bytearray(b"a\n"), 1, False, True)  # type: ignore[arg-type]
    for first in (-1, 2**63 - 1):
        with pytest.raises(ValueError, match="out of range"):
            compiled.scan(b"a\n", first, False, True)
    assert compiled.scan(b"", 1, False, True) is not None


def _each_chunk_the_same(path: Path, chunk_bytes: int) -> int:
    """Every chunk of a file through both paths, the header state carried; how many chunks."""
    pure_stats, scan_stats = ReadStats(), ReadStats()
    pure_header = scan_header = False
    count = 0
    with path.open("rb") as stream:
        for chunk in read_chunks(stream, ReadStats(), chunk_bytes=chunk_bytes):
            pure, pure_header = fam.parse_chunk(chunk.frame(pure_stats), pure_header)
            scanned = scanner.scan(chunk, scan_header, scan_stats)
            assert scanned is not None
            got, scan_header = scanner.parse_scanned(scanned), scanned.in_header
            for name in fam.TABLES:
                assert_frame_equal(got.tables[name], pure.tables[name])
            assert (got.parsed, got.ignored, scan_header) == (pure.parsed, pure.ignored, pure_header)
            count += 1
    assert (scan_stats.lines_with_bad_bytes, scan_stats.bad_lines) == (
        pure_stats.lines_with_bad_bytes,
        pure_stats.bad_lines,
    )
    return count


@pytest.mark.parametrize("path", sorted((ROOT / "samples").rglob("*.trc")), ids=lambda p: p.name)
def test_the_samples_chunk_by_chunk(path: Path) -> None:
    assert _each_chunk_the_same(path, 2048) >= 1


@pytest.mark.slow
@pytest.mark.skipif(not REAL.is_dir(), reason=WITHOUT_REAL_TRACES)
def test_the_real_traces_chunk_by_chunk() -> None:
    paths = sorted(p for p in REAL.rglob("*.trc") if p.is_file())
    assert paths
    for path in paths:
        _each_chunk_the_same(path, 4096)


@pytest.mark.slow
@pytest.mark.parametrize("generation", ["11.2", "12.1", "19c", "23ai"])
def test_simulated_sets_chunk_by_chunk_and_whole(
    tmp_path: Path, generation: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every chunk of a simulated set of each generation, and the whole analysis, the same either way."""
    simulate(tmp_path / "set", SimOptions(scenario="mixed", format_version=generation, writes=400, noise=0.3, seed=7))
    for path in sorted((tmp_path / "set").rglob("*.trc")):
        _each_chunk_the_same(path, 8192)
    options = Options(zones=TimeZones(default_min=0))
    compiled = analyze([str(tmp_path / "set")], options)
    monkeypatch.setenv(scanner.SWITCH, "python")
    pure = analyze([str(tmp_path / "set")], options)
    assert compiled.writes.height == 800
    for name in ("writes", "unmatched", "warnings"):
        assert_frame_equal(getattr(compiled, name), getattr(pure, name))
    assert [(f.parsed.parsed, f.parsed.ignored, f.stats) for f in compiled.files] == [
        (f.parsed.parsed, f.parsed.ignored, f.stats) for f in pure.files
    ]


def test_the_switch_and_an_install_without_the_module_read_through_the_pure_path(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert scanner.enabled() and scanner.name() == "compiled"
    monkeypatch.setenv(scanner.SWITCH, "python")
    assert not scanner.enabled() and scanner.name() == "python" and scanner.compiled()
    code = (
        "import sys; sys.modules['analyzer.parse._scanner'] = None;"
        "from analyzer.parse import scanner; print(scanner.compiled(), scanner.name())"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    assert done.stdout.split() == ["False", "python"]


def test_the_module_is_built_from_the_sources_in_the_checkout() -> None:
    """The editable install builds the module in place: sources changed since (a pull, an edit) need `make`
    (which reinstalls when they change) or `pip install -e .`, else these tests test another scanner."""
    sources = sorted((ROOT / "analyzer" / "parse").glob("_scanner*.[ch]"))
    if not sources:
        pytest.skip("no C sources beside the tests (an installed wheel is tested)")
    digest = hashlib.sha256(b"".join(path.read_bytes() for path in sources)).hexdigest()
    built = scanner._scanner.constants()["sources"]  # type: ignore[union-attr]
    assert built == digest, "the scanner was built from other sources: run make (or pip install -e .)"


#: the compiler's warnings the C sources are held to (scripts/sanitize_scanner.sh builds with them too)
WARNINGS = ["cc", "-std=c11", "-O2", "-Wall", "-Wextra", "-Wshadow", "-Werror"]


@pytest.mark.skipif(shutil.which("cc") is None, reason="no C compiler")
def test_the_c_sources_compile_cleanly_with_every_warning_an_error() -> None:
    include = sysconfig.get_paths()["include"]
    for source in sorted((ROOT / "analyzer" / "parse").glob("_scanner*.c")):
        done = subprocess.run(
            [*WARNINGS, "-c", "-o", os.devnull, "-DPy_LIMITED_API=0x030B0000", f"-I{include}", str(source)],
            capture_output=True,
            text=True,
            check=False,
        )
        assert done.returncode == 0, done.stderr[-2000:]
