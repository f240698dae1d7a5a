"""Real traces written by real databases (12.1 to 23.2, third-party, beside the repository): per file,
no crash, every line accounted for, every well-formed WAIT line read, the first and last stamps and
the zone as a person reads them, and the unparsed lines named with their reason.

The folder is `$DGTRACE_REAL_TRACES` (`tests.conftest.REAL_TRACES`); without it the tests are skipped.
Nothing of it is copied into the repository: the expectations below are the stamps as printed in each
file, read by eye.
"""

from __future__ import annotations

import bz2
import gzip
import lzma
import re
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from analyzer.api import Options, analyze
from analyzer.base.errors import NoInputError
from analyzer.findings import inventory
from analyzer.findings.redact import REMOVED, redact
from tests.conftest import REAL_TRACES, WITHOUT_REAL_TRACES

REAL = REAL_TRACES
pytestmark = pytest.mark.skipif(not REAL.is_dir(), reason=WITHOUT_REAL_TRACES)

#: a well-formed WAIT line, written independently of grammars/wait.lark: anything up to ` tim=<digits>`
WAIT_LINE = re.compile(r"^WAIT #\d+: nam='[^']*' ela= ?\d+( \S.*)? tim=\d+[ \t]*$")
SIMPLE = ("2023-05-19T05:28:00.339263+02:00", "2023-05-19T05:28:00.350106+02:00")
#: file name -> (first stamp, last stamp) as the file prints them, with its zone; a zone in brackets is
#: not in the file: `[+02:00 from tim]` inferred from epoch tim, `[UTC assumed]` given by nobody
STAMPS: dict[str, tuple[str, str]] = {
    "test_10046_tracefile.trc": (
        "2013-08-26 14:40:23.035 [+02:00 from tim]",
        "2013-08-26 14:43:20.026 [+02:00 from tim]",
    ),
    "main.trc": ("2019-07-09T09:57:07.703515-07:00", "2019-07-09T09:57:12.712362-07:00"),
    "js122a1_ora_9850.trc": ("2019-07-09T09:57:07.703476-07:00", "2019-07-09T09:57:12.712362-07:00"),
    "js122a1_ora_9854.trc": ("2019-07-09T09:57:07.704095-07:00", "2019-07-09T09:57:12.701516-07:00"),
    "FREE_ora_39079.trc": ("2023-04-17T20:30:29.505342+00:00", "2023-04-17T20:30:29.505411+00:00"),
    "FREE_ora_39079_test01.trc": ("2023-04-17T20:30:29.555939+00:00", "2023-04-17T20:30:29.556010+00:00"),
    "broken_trace.trc": SIMPLE,
    "error.trc": ("2024-01-18T10:25:42.126598+01:00", "2024-01-18T12:00:00.092238+01:00"),
    "lobread.trc.xz": ("2023-05-18T13:55:51.311137+02:00", "2023-05-18T13:56:18.679265+02:00"),
    "lobs.trc": ("2023-08-02T18:08:39.807666+02:00", "2023-08-02T18:08:39.807701+02:00"),
    "malformed_stat.trc": ("2026-01-15T06:03:13.715237+01:00", "2026-01-15T06:03:13.715278+01:00"),
    "mixed_execs.trc": ("2022-10-25T15:07:20.941104+02:00", "2022-10-25T15:07:43.941836+02:00"),
    # the compressed copy lacks the first stamp of the plain file (line 26)
    "mixed_execs.trc.bz2": ("2022-10-25T15:07:26.941104+02:00", "2022-10-25T15:07:43.941836+02:00"),
    "no_timezone.trc": ("2023-05-19T05:28:00.339263 [UTC assumed]", "2023-05-19T05:28:00.350106 [UTC assumed]"),
    "parse_error.trc": ("2024-12-10T08:40:08.807553+00:00", "2024-12-10T08:40:08.807603+00:00"),
    "simple_trace.trc": SIMPLE,
    "simple_trace_2x.trc": SIMPLE,
    "simple_trace_missing_parse.trc": SIMPLE,
    "stray_close.trc": SIMPLE,
    "two_statements_one_cursor.trc": SIMPLE,
    "two_statements_one_cursor.trc.gz": SIMPLE,
}
#: the lines left unparsed, on purpose: file -> {line: reason}. Every other file has none. (The
#: malformed STAT line of malformed_stat.trc, and the cut EXEC, XCTEND and LOBWRITE lines of
#: broken_trace.trc, are 10046 lines dgtrace does not read: ignored, category 10046.)
UNPARSED = {
    # a FETCH line cut short with a WAIT record written after it on the same line: a lost wait
    "broken_trace.trc": {43: "a WAIT record at column 104, after a record cut short"},
}
#: compressed copies dgtrace does not decompress (the legacy LZMA format): binary, refused with the reason
BINARY = {"lobread.trc.lzma"}
OPENERS = {".gz": gzip.decompress, ".bz2": bz2.decompress, ".xz": lzma.decompress, ".lzma": lzma.decompress}


def _files() -> list[Path]:
    return sorted(REAL.rglob("*.trc*")) if REAL.is_dir() else []


def _text(path: Path) -> str:
    data = path.read_bytes()
    opener = OPENERS.get(path.suffix)
    return (opener(data) if opener else data).decode("utf-8", errors="replace")


def _utc(printed: str) -> tuple[datetime, str]:
    """A stamp as printed (ISO with or without its zone, or `YYYY-MM-DD HH:MM:SS.fff`) and the zone
    in brackets when the file has none -> (the UTC instant, the zone as the report says where it came from)."""
    stamp, _, given = printed.partition(" [")
    if given.startswith("+") or given.startswith("-"):
        offset, source = given.split(" ")[0], "inferred from epoch tim"
        stamp += offset
    elif given.startswith("UTC"):
        stamp, source = stamp + "+00:00", "assumed UTC"
    else:
        source = "ISO ADR lines of the file"
    when = datetime.fromisoformat(stamp.replace(" ", "T"))
    return when.astimezone(UTC), source


def test_every_real_trace_is_in_the_table() -> None:
    assert sorted(p.name for p in _files()) == sorted([*STAMPS, *BINARY])


@pytest.mark.parametrize("path", _files(), ids=lambda p: p.name)
def test_a_real_trace_is_read_whole(path: Path) -> None:
    if path.name in BINARY:  # refused at discovery, with the reason
        with pytest.raises(NoInputError, match="not a text trace: binary data"):
            analyze([str(path)], Options())
        return
    analysis = analyze([str(path)], Options())
    (f,) = analysis.files
    assert f.parsed.lines == f.stats.lines  # parsed + ignored + unparsed
    assert f.stats.error is None
    text = _text(path)
    assert f.stats.lines == len(text.splitlines())
    assert f.reduced.waits == sum(1 for line in text.splitlines() if WAIT_LINE.match(line))
    unparsed = dict(f.parsed.tables["unparsed"].select("line", "reason").iter_rows())
    assert unparsed == UNPARSED.get(path.name, {})
    first, last = STAMPS[path.name]
    (first_utc, source), (last_utc, _) = _utc(first), _utc(last)
    assert (f.reduced.first_at, f.reduced.last_at) == (first_utc, last_utc)
    assert f.reduced.zone.startswith(source)
    if source == "inferred from epoch tim":
        assert first.split("[")[1].split(" ")[0] in f.reduced.zone


def test_the_whole_folder_together() -> None:
    """trcsess output beside the traces it merged, a segment and its continuation: read, and said."""
    analysis = analyze([str(REAL)], Options())
    assert all(f.parsed.lines == f.stats.lines for f in analysis.files)
    main = next(f for f in analysis.files if f.source.name == "main.trc")
    assert main.reduced.processes == (9850, 9854)
    words = " ".join(inventory.findings(analysis))
    assert "main.trc is trcsess output of 2 processes (pids 9850, 9854)" in words
    assert analysis.gaps.height == 0  # FREE_ora_39079_test01.trc continues FREE_ora_39079.trc, both here


def test_a_continuation_whose_file_is_missing_is_a_gap(tmp_path: Path) -> None:
    first = next(p for p in _files() if p.name == "FREE_ora_39079.trc")
    analysis = analyze([str(first)], Options())
    (gap,) = analysis.gaps.iter_rows(named=True)
    assert gap["missing"] == "FREE_ora_39079_test01.trc"
    assert gap["from_at"] == _utc(STAMPS["FREE_ora_39079.trc"][1])[0] and gap["to_at"] is None
    assert any(f.startswith("segment FREE_ora_39079_test01.trc of") for f in inventory.findings(analysis))


def test_the_stamps_table_reads_the_zone_given_at_the_end() -> None:
    when, source = _utc("2013-08-26 14:40:23.035 [+02:00 from tim]")
    assert when == datetime(2013, 8, 26, 12, 40, 23, 35000, tzinfo=UTC) and source.startswith("inferred")
    assert _utc("2019-07-09T09:57:07.703515-07:00")[0] - timedelta(hours=7) == datetime(
        2019, 7, 9, 9, 57, 7, 703515, tzinfo=UTC
    )


def test_the_lines_nobody_parsed_by_shape_and_redacted() -> None:
    """Every unparsed line of the real traces in one shape, with its count and an example; under --redact
    the examples and shapes hold none of the traces' text."""
    analysis = analyze([str(REAL)], Options())
    shapes = inventory.unparsed_shapes(analysis.files)
    total = sum(f.parsed.unparsed for f in analysis.files)
    assert total and int(shapes["count"].sum()) == total
    assert shapes["count"].is_sorted(descending=True)
    for r in shapes.iter_rows(named=True):
        assert r["example"] and not any(ch.isdigit() for ch in r["shape"])  # numbers masked
    redacted, _ = redact(analysis)
    hidden = inventory.unparsed_shapes(redacted.files)
    assert int(hidden["count"].sum()) == total
    assert set(hidden["example"]) == set(hidden["shape"]) == {REMOVED}
