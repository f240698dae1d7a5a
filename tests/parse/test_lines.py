"""Read stage: chunked, lossy, line-exact reading of awkward bytes."""

from __future__ import annotations

import io
from pathlib import Path

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from analyzer.api import Options, analyze
from analyzer.base.schemas import LINES
from analyzer.base.zones import TimeZones
from analyzer.inputs.sniff import encoding_of
from analyzer.parse.families import merge, parse_chunk
from analyzer.parse.lines import (
    DENSE_NEWLINES,
    MAX_LINE_CHARS,
    SMALL_BLOCK,
    Chunk,
    ReadStats,
    _decode,
    _newlines,
    read_lines,
)
from tests.conftest import PAPER

PAPER_LINES = (PAPER / "stby01/diag/rdbms/chicago/chicago1/trace/chicago1_rfs_8801.trc").read_bytes().split(b"\n")[:80]


def _read(data: bytes, chunk: int = 1 << 20) -> tuple[list[tuple[int, str]], ReadStats]:
    stats = ReadStats()
    frames = list(read_lines(io.BytesIO(data), stats, chunk_bytes=chunk))
    assert all(frame.schema == LINES for frame in frames)  # the read -> parse interface
    rows = pl.concat(frames).rows() if frames else []
    return rows, stats


@pytest.mark.parametrize("first", [b"x^2 + 1", b"x\x01ab", b"x\x9cab", b"x\xdaab", b"(\xb5/\xfdab"])
def test_a_block_that_starts_like_compressed_data_is_read_as_text(first: bytes) -> None:
    """polars decompresses what starts like zlib or zstd data (or fails, or yields nothing)."""
    rows, stats = _read(first + b"\nsecond line\n")
    assert rows == [(1, first.decode("utf-8", errors="replace")), (2, "second line")]
    assert stats.lines == 2


def test_empty_file() -> None:
    assert _read(b"") == ([], ReadStats())


def test_crlf_blank_lines_and_unterminated_last_line() -> None:
    rows, stats = _read(b"a\r\n\r\n\nb")
    assert rows == [(1, "a"), (2, ""), (3, ""), (4, "b")]
    assert (stats.crlf_lines, stats.unterminated_last_line, stats.lines) == (2, True, 4)


def test_undecodable_bytes_are_replaced_and_counted() -> None:
    rows, stats = _read("select 'caf\xe9' from dual\nok\n".encode("latin-1"))
    assert rows[0][1] == "select 'caf\ufffd' from dual"
    assert (stats.lines_with_bad_bytes, stats.bad_lines) == (1, [1])


def test_nul_and_unit_separator_bytes_do_not_break_lines() -> None:
    rows, stats = _read(b"a\x00b\nc\x1fd\ne\n")
    assert rows == [(1, "ab"), (2, "c\x1fd"), (3, "e")]
    assert (stats.nul_bytes, stats.nul_runs) == (1, 1)


@pytest.mark.parametrize("chunk", [3, 4096, 1 << 20])
def test_a_run_of_nul_bytes_is_removed_and_the_lines_around_it_kept(chunk: int) -> None:
    """A crash leaves zero-filled blocks in a file: the lines after them are read, numbered as in an editor."""
    before = b"".join(b"before %d\n" % i for i in range(500))
    after = b"".join(b"after %d\n" % i for i in range(500))
    rows, stats = _read(before + b"cut li" + bytes(300_000) + b"ne\n" + after + b"\x00" * 5, chunk)
    assert [text for _, text in rows] == [f"before {i}" for i in range(500)] + ["cut line"] + [
        f"after {i}" for i in range(500)
    ]
    assert (stats.nul_bytes, stats.nul_runs, stats.lines) == (300_005, 2, 1001)
    assert stats.repairs() == ["300,005 NUL byte(s) in 2 run(s) removed"]


@pytest.mark.parametrize("chunk", [1, 5, 4096, 1 << 20])
def test_classic_mac_line_ends_are_line_ends(chunk: int) -> None:
    rows, stats = _read(b"first\rsecond\r\rfourth\rfifth\rsixth", chunk)
    assert rows == [(1, "first"), (2, "second"), (3, ""), (4, "fourth"), (5, "fifth"), (6, "sixth")]
    assert (stats.cr_lines, stats.crlf_lines, stats.unterminated_last_line) == (5, 0, True)
    assert stats.repairs() == ["5 line(s) ended by CR alone (classic Mac OS) read as line ends"]
    many = b"".join(b"line %d\r" % i for i in range(20_000)) + b"crlf\r\nlast\r"
    rows, stats = _read(many, max(chunk, 4096))
    assert [text for _, text in rows[-3:]] == ["line 19999", "crlf", "last"]
    assert (stats.lines, stats.cr_lines, stats.crlf_lines) == (20_002, 20_001, 1)


def test_a_stray_cr_inside_a_unix_file_stays_inside_its_line() -> None:
    rows, stats = _read(b"select 'a\rb' from dual\nnext\n")
    assert rows == [(1, "select 'a\rb' from dual"), (2, "next")]
    assert stats.cr_lines == 0 and stats.repairs() == []


@pytest.mark.parametrize(
    ("encoding", "bom"),
    [("utf-16", True), ("utf-16-le", False), ("utf-16-be", False), ("utf-32", True), ("utf-8-sig", True)],
)
@pytest.mark.parametrize("chunk", [3, 1 << 20])
def test_utf16_utf32_and_byte_order_marks_are_decoded(encoding: str, bom: bool, chunk: int) -> None:
    text = "".join(f"*** 2024-01-01T00:00:{i % 60:02d}.000000+00:00 café {i}\n" for i in range(300))
    rows, stats = _read(text.encode(encoding), chunk)
    assert [t for _, t in rows] == text.splitlines()
    assert stats.bom is bom and stats.lines_with_bad_bytes == 0
    assert stats.encoding == {"utf-16": "utf-16-le", "utf-32": "utf-32-le", "utf-8-sig": "utf-8"}.get(
        encoding, encoding
    )
    assert stats.repairs()[0] in {
        "decoded from UTF-16-LE (its byte-order mark)",
        "decoded from UTF-16-LE (the zero bytes of every other position)",
        "decoded from UTF-16-BE (the zero bytes of every other position)",
        "decoded from UTF-32-LE (its byte-order mark)",
        "UTF-8 byte-order mark removed",
    }


@pytest.mark.parametrize("shape", ["newlines", "one line"])
def test_chunks_are_bounded_in_lines_and_bytes_whatever_the_line_structure(shape: str) -> None:
    data = b"\n" * 3_000_000 if shape == "newlines" else b"x" * 3_000_000
    stats = ReadStats()
    heights, sizes = [], []
    for frame in read_lines(io.BytesIO(data), stats, chunk_bytes=1 << 20, chunk_lines=100_000):
        heights.append(frame.height)
        sizes.append(int(frame["text"].str.len_bytes().sum()))
    assert max(heights) <= 100_000 + 65_536 and max(sizes) <= MAX_LINE_CHARS
    assert stats.lines == (3_000_000 if shape == "newlines" else 1)


@settings(deadline=None)
@given(st.lists(st.integers(min_value=0, max_value=200), max_size=2000), st.binary(max_size=300))
def test_a_block_s_newlines_are_counted_exactly_whatever_its_line_lengths(lengths: list[int], tail: bytes) -> None:
    """Short lines are counted one way, long ones another: both give `bytes.count`."""
    block = b"".join(b"x" * n + b"\n" for n in lengths) + tail
    assert _newlines(block) == block.count(b"\n")


@pytest.mark.parametrize("line", [b"\n", b"ab\n", b"*** 2024-10-22 16:18:52.879219 [krsr.c:1871]\n"])
def test_bare_newlines_and_trace_lines_take_both_ways_of_counting(line: bytes) -> None:
    block = line * (65_536 // len(line))
    assert (block.count(b"\n", 0, 1024) > DENSE_NEWLINES) == (len(line) < 32)
    assert _newlines(block) == 65_536 // len(line)


@pytest.mark.parametrize("chunk", [1, 7, 64, 4096])
def test_chunk_size_does_not_change_the_lines(chunk: int) -> None:
    data = (PAPER / "stby01/diag/rdbms/chicago/chicago1/trace/chicago1_rfs_8801.trc").read_bytes()
    assert _read(data, chunk)[0] == _read(data)[0]


def test_megabyte_lines_are_cut_and_counted() -> None:
    rows, stats = _read(b"x" * (3 * MAX_LINE_CHARS) + b"\nnext\n")
    assert [len(t) for _, t in rows] == [MAX_LINE_CHARS, 4]
    assert stats.cut_lines == 1


def test_binary_junk_without_newlines_stays_bounded() -> None:
    rows, stats = _read(b"\xff" * 5_000_000 + b"\nafter\n", chunk=1 << 16)
    assert rows[-1] == (len(rows), "after")
    assert all(len(t) <= MAX_LINE_CHARS for _, t in rows)
    assert stats.cut_lines >= 1


def test_latin1_bytes_inside_a_trace_keep_the_writes(tmp_path: Path) -> None:
    """A damaged line is counted; every write around it is still matched."""
    for src in PAPER.rglob("*.trc"):
        target = tmp_path / src.relative_to(PAPER)
        target.parent.mkdir(parents=True, exist_ok=True)
        data = src.read_bytes()
        if "rfs_8801" in src.name:
            data = data.replace(b"\n*** 2014-12-02 08:46:33", b"\nbinary \xff\xfe junk\r\n*** 2014-12-02 08:46:33", 1)
        target.write_bytes(data)
    result = analyze([str(tmp_path)], Options(zones=TimeZones(default_min=-420)))
    assert result.writes.height == 66
    damaged = next(f for f in result.files if "rfs_8801" in f.source.label)
    assert damaged.stats.lines_with_bad_bytes == 1
    assert damaged.parsed.lines == damaged.stats.lines


def _expected_lines(data: bytes) -> int:
    """Lines in a short input by the reader's documented rules: its encoding, NUL bytes
    removed, CR alone ends lines when the text has CR and no LF, a last line without LF counts."""
    encoding, bom = encoding_of(data[:4096])
    text = data[bom:].decode(encoding, errors="replace").encode() if encoding != "utf-8" else data[bom:]
    text = text.replace(b"\x00", b"")
    if b"\r" in text and b"\n" not in text:
        text = text.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
    return text.count(b"\n") + (0 if not text or text.endswith(b"\n") else 1)


@settings(deadline=None)
@given(
    st.one_of(
        st.binary(max_size=3000), st.lists(st.sampled_from([b"ab", b"\r", b"\n", b"\x00", b"\xff\xfe"])).map(b"".join)
    ),
    st.integers(min_value=1, max_value=700),
)
def test_random_bytes_are_read_and_every_line_accounted_for(data: bytes, chunk: int) -> None:
    """Any bytes, any chunk size: no exception, and lines read = parsed + ignored + unparsed."""
    stats = ReadStats()
    parts = []
    in_header = False
    for lines in read_lines(io.BytesIO(data), stats, chunk_bytes=chunk):
        assert lines.schema == LINES
        part, in_header = parse_chunk(lines, in_header)
        parts.append(part)
    merged = merge(parts)
    assert merged.lines == stats.lines == _expected_lines(data)


@settings(deadline=None)
@given(st.lists(st.sampled_from(PAPER_LINES), max_size=60), st.binary(max_size=40))
def test_trace_lines_mixed_with_junk(picked: list[bytes], junk: bytes) -> None:
    """Real-shaped lines shuffled with junk bytes: accounting holds and good lines still parse."""
    data = b"\n".join([*picked, junk, *picked]) + b"\n"
    stats = ReadStats()
    merged = merge(parse_chunk(lines, False)[0] for lines in read_lines(io.BytesIO(data), stats, chunk_bytes=256))
    assert merged.lines == stats.lines
    messages = sum(1 for line in picked if b"msgid=" in line and b"SQLNET" in line)
    assert merged.tables["messages"].height >= 2 * messages - 1


@settings(deadline=None)
@given(st.text(alphabet=st.characters(max_codepoint=127), max_size=400))
def test_ascii_blocks_read_strictly_give_the_lossy_reader_s_lines(text: str) -> None:
    """An all-ASCII block is read by the strict UTF-8 reader (faster): the same lines as the lossy one."""
    data = text.encode() + b"\n"
    assert _decode(data, all_ascii=True).equals(_decode(data))


def test_reader_cuts_before_an_opening_message() -> None:
    """Chunks end just before `Client sending` / `Server received`, else at a newline."""
    body = b"".join(
        b"... Server received SQLNET data [f] oper='Write' flag=1 thrd=1 seq=1 msgid=%d\n"
        b"WAIT #0: nam='RFS write' ela= 5 tim=1\n"
        b"... Server finished processing SQLNET data [f] oper='Write' flag=1 thrd=1 seq=1 msgid=%d\n" % (i, i)
        for i in range(200)
    )
    stats = ReadStats()
    frames = list(read_lines(io.BytesIO(body), stats, chunk_bytes=2048))
    assert len(frames) > 5
    assert all(f["text"][0].startswith("... Server received") for f in frames)
    assert pl.concat(frames)["line"].to_list() == list(range(1, 601))


@settings(deadline=None)
@given(st.lists(st.sampled_from(["ab", " ", "\r", "\n", "\x1f", '"', ",", "\t", "x^", "\x7f", "\x00"])).map("".join))
def test_small_ascii_blocks_split_in_python_give_the_csv_reader_s_lines(text: str) -> None:
    """A small all-ASCII block is split in Python; padded past SMALL_BLOCK, the same lines go
    through polars' reader (or its exact fallback): the same lines, CR before a line end dropped."""
    data = text.encode() + b"\n"
    pad = b"p" * 80 + b"\n"
    padded = data + pad * (SMALL_BLOCK // len(pad) + 1)
    assert len(data) <= SMALL_BLOCK < len(padded)
    small, large = _decode(data, all_ascii=True), _decode(padded, all_ascii=True)
    assert small.equals(large.head(small.height)) and small.height == data.count(b"\n")


@pytest.mark.parametrize(
    "data",
    [
        b"Trace file /u01/x_nss2_1.trc\r\nMODULE NAME:(oracle@prim01 (NSS2))\r\n\r\nlast\n",
        "ORACLE_HOME = /u01/caf\xe9\nMODULE NAME:(x)\n".encode(),
        b"one\nbad \xff byte\n" + b"x" * (MAX_LINE_CHARS + 5) + b"\n",
    ],
    ids=["ascii-crlf", "utf8", "undecodable-and-long"],
)
def test_a_chunks_head_reads_its_lines_as_its_frame_does(data: bytes) -> None:
    chunk = Chunk(data, 1, data.count(b"\n"))
    assert chunk.head(400) == chunk.frame(ReadStats())["text"].to_list()
    assert chunk.head(2) == chunk.frame(ReadStats())["text"].to_list()[:2]
