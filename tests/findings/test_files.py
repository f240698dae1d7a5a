"""Each file as the reports see it (`findings.files`): identity, span, the zone and offsets its stamps were read
in, and its line accounting, on the MAA paper's traces, a simulated 19c set and small hand-made traces."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from analyzer.api import Analysis, Options, analyze
from analyzer.base.zones import parse_zones
from analyzer.findings.files import coverage, file_views, oracle_versions, unparsed
from analyzer.simulate import SimOptions, simulate
from tests.builders import ack, krs, send
from tests.conftest import write

PAPER = "samples/paper-2014"


def test_each_file_of_the_paper_s_example(paper: Analysis) -> None:
    views = file_views(paper)
    assert [v.label for v in views] == [f.source.label for f in paper.files]
    nss = next(v for v in views if v.label.endswith("boston1_nss2_4401.trc"))
    assert (nss.role, nss.host, nss.version, nss.db_unique_name) == ("primary", "prim01", "11.2.0.4.0", "boston")
    assert (nss.zone, nss.offsets_min, nss.offset, nss.zone_text, nss.own_zone) == (
        "--tz -07:00",
        (-420,),
        "-07:00",
        "--tz -07:00",
        False,
    )
    assert nss.first_at == datetime(2014, 12, 2, 15, 46, 28, 861000, tzinfo=UTC)  # 08:46:28.861 at -07:00
    assert (nss.lines, nss.parsed, nss.ignored, nss.unparsed, nss.first_problem) == (164, 161, 3, 0, "")
    assert {v.db_unique_name for v in views if v.role == "standby"} == {"chicago"}
    assert oracle_versions(views) == ["11.2.0.4.0"]


def test_the_views_count_the_lines_as_the_coverage_does(paper: Analysis) -> None:
    views, frame = file_views(paper), coverage(paper)
    assert frame["file"].to_list() == [v.label for v in views]
    for name in ("lines", "parsed", "ignored", "unparsed"):
        assert frame[name].to_list() == [getattr(v, name) for v in views], name
    assert all(v.lines == v.parsed + v.ignored + v.unparsed for v in views)


def test_a_zone_by_name_gives_the_offset_it_had_then(paper: Analysis) -> None:
    a = analyze([PAPER], Options(zones=parse_zones(["America/Denver"])))
    assert {(v.offsets_min, v.zone_text) for v in file_views(a)} == {((-420,), "--tz America/Denver: -07:00")}


def test_a_file_that_spans_a_change_of_offset_gives_both(tmp_path: Path) -> None:
    """Denver went from -07:00 to -06:00 at 2014-03-09 02:00 local: a trace from 01:59 to 03:01 says both."""
    lines = ["*** 2014-03-09 01:59:59.000", send(1), krs("2014-03-09 01:59:59.400"), ack(1)]
    lines += ["*** 2014-03-09 03:01:00.000", send(2), krs("2014-03-09 03:01:00.400"), ack(2)]
    write(tmp_path / "db1_nss2_1.trc", lines)
    (view,) = file_views(analyze([str(tmp_path)], Options(zones=parse_zones(["America/Denver"]))))
    assert (view.offsets_min, view.offset) == ((-420, -360), "-07:00/-06:00")
    assert view.zone_text == "--tz America/Denver: -07:00/-06:00"


def test_files_with_their_own_zone_say_it_and_their_offsets(tmp_path: Path) -> None:
    simulate(tmp_path / "set", SimOptions(format_version="19c", writes=20, seed=3, primary_tz="+01:00"))
    views = file_views(analyze([str(tmp_path / "set")]))
    assert {v.zone for v in views} == {"ISO ADR lines of the file"} and all(v.own_zone for v in views)
    assert {v.role: v.offsets_min for v in views} == {"primary": (60,), "standby": (0,)}
    assert {v.role: v.offset for v in views} == {"primary": "+01:00", "standby": "+00:00"}
    assert {v.zone_text for v in views} == {"ISO ADR lines of the file: +01:00", "ISO ADR lines of the file: +00:00"}


def test_the_first_problem_of_a_file_is_its_first_unparsed_line_then_its_bad_bytes(tmp_path: Path) -> None:
    lines = ["*** 2014-12-02 08:46:34.000", send(1), krs("2014-12-02 08:46:34.598"), ack(1)]
    bad = "Client sending SQLNET request data [kpurcs] oper='Write' thrd=x seq=1 msgid=2"
    path = write(tmp_path / "db1_nss2_1.trc", [*lines, bad])
    path.write_bytes(path.read_bytes() + b"\xff\xfe not text\n")
    a = analyze([str(tmp_path)])
    (view,) = file_views(a)
    assert view.unparsed == view.unparsed_lines.height == 1 and view.lines_with_bad_bytes == 1
    reason = view.unparsed_lines["reason"][0]
    assert view.first_problem == f"line 5: {reason}; 1 lines with bad bytes"
    assert unparsed(a).select("file", "line").rows() == [(view.label, 5)]
