"""oratcptest client output (`--baseline`): every value of every fixture, the line accounting, rejects."""

from __future__ import annotations

import gzip
from datetime import time
from pathlib import Path

import polars as pl
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from analyzer.base.errors import ExitCode, UsageError
from analyzer.companions.oratcptest import (
    BASELINE_INTERVALS,
    BASELINE_LINES,
    BaselineAverages,
    BaselineRun,
    BaselineSettings,
    parse_baseline,
    read_baseline,
)
from analyzer.companions.oratcptest_lines import parse_line
from analyzer.parse.grammar import LineError

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "oratcptest"
MIB = 1 << 20
Spec = list[tuple[int, int, str, str | None, str | None]]
#: characters str.splitlines() breaks on (a junk line must stay one line)
LINE_BREAKS = "\r\n\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"


def _lines(run: BaselineRun) -> list[tuple[int, str, str | None, str | None]]:
    return [tuple(r) for r in run.lines.select("line", "status", "kind", "reason").iter_rows()]  # type: ignore[misc]


def _expand(spec: Spec) -> list[tuple[int, str, str | None, str | None]]:
    """(first, last, status, kind, reason) ranges -> one tuple per line."""
    return [(n, status, kind, reason) for first, last, status, kind, reason in spec for n in range(first, last + 1)]


def _intervals(run: BaselineRun) -> list[tuple[object, ...]]:
    assert run.intervals.schema == BASELINE_INTERVALS
    return list(run.intervals.iter_rows())


def _request_block(first: int, settings: int, note: bool = True) -> Spec:
    spec: Spec = [(first, first, "parsed", "request", None), (first + 1, first + settings, "parsed", "setting", None)]
    return [*spec, (first + settings + 1, first + settings + 1, "parsed", "unit_note", None)] if note else spec


def test_sync_with_disk_write_every_value() -> None:
    [run] = read_baseline(FIXTURES / "sync-disk-write.txt")
    assert (run.label, run.run, run.first_line) == (str(FIXTURES / "sync-disk-write.txt"), 1, 2)
    assert run.settings == BaselineSettings(
        payload_bytes=16 * 1024,
        payload_content="RANDOM",
        delay_ms=0.0,
        connections=1,
        send_buffer_bytes=4 * MIB,
        mode="SYNC",
        disk_write=True,
        interval_s=10.0,
        duration_s=60.0,
        frequency="NO",
        network_timeout="NO",
        mbyte_bytes=MIB,
        other=(),
    )
    assert (run.ready_at, run.finished_at, run.finished) == (time(23, 59, 41), time(0, 0, 41), True)
    assert run.averages == BaselineAverages(11.152 * MIB, 11.152, 1.402, 0.740, 4 * MIB)
    rows = [
        (18, time(23, 59, 51), 10.0, 11.482, 1.361, 0.702),
        (19, time(0, 0, 1), 20.0, 11.307, 1.382, 0.719),  # past midnight: elapsed keeps counting
        (20, time(0, 0, 11), 30.0, 9.874, 1.583, 0.897),
        (21, time(0, 0, 21), 40.0, 11.512, 1.357, 0.698),
        (22, time(0, 0, 31), 50.0, 11.439, 1.366, 0.705),
        (23, time(0, 0, 41), 60.0, 11.298, 1.383, 0.721),
    ]
    assert _intervals(run) == [(1, line, at, e, mib * MIB, mib, lat, disk) for line, at, e, mib, lat, disk in rows]
    assert _lines(run) == _expand(
        [
            (1, 1, "ignored", None, "outside a client run"),
            *_request_block(2, 11),
            (15, 15, "ignored", None, "blank"),
            (16, 16, "parsed", "ready", None),
            (17, 17, "parsed", "columns", None),
            (18, 23, "parsed", "interval", None),
            (24, 24, "parsed", "finished", None),
            (25, 27, "parsed", "setting", None),
            (28, 28, "ignored", None, "blank"),
            (29, 29, "ignored", None, "after the end of the run"),
        ]
    )
    assert run.lines.schema == BASELINE_LINES
    assert run.unparsed == 0


def test_sync_without_disk_write_sizes_in_bytes_and_kbytes() -> None:
    [run] = read_baseline(FIXTURES / "sync-no-write.txt")
    assert run.settings == BaselineSettings(
        payload_bytes=512 * 1024,
        payload_content="RANDOM",
        delay_ms=0.0,
        connections=1,
        send_buffer_bytes=262144,
        mode="SYNC",
        disk_write=False,
        interval_s=20.0,
        duration_s=120.0,
        frequency="NO",
        network_timeout="NO",
    )
    assert (run.ready_at, run.finished_at) == (time(8, 14, 2), time(8, 16, 2))
    # `Socket send buffer = 256 kbytes` after the test: the buffer it ended with
    assert run.averages == BaselineAverages(104.218 * MIB, 104.218, 4.797, None, 256 * 1024)
    rows = [
        (time(8, 14, 22), 104.613, 4.779),
        (time(8, 14, 42), 106.020, 4.716),
        (time(8, 15, 2), 98.337, 5.084),
        (time(8, 15, 22), 105.871, 4.723),
        (time(8, 15, 42), 105.502, 4.739),
        (time(8, 16, 2), 104.966, 4.763),
    ]
    assert _intervals(run) == [
        (1, 18 + i, at, 20.0 * (i + 1), mib * MIB, mib, lat, None) for i, (at, mib, lat) in enumerate(rows)
    ]
    assert run.lines.height == 27 and run.unparsed == 0


def test_async_has_no_latency_column() -> None:
    [run] = read_baseline(FIXTURES / "async.txt")
    assert run.settings.mode == "ASYNC" and run.settings.disk_write is False
    assert (run.settings.payload_bytes, run.settings.send_buffer_bytes) == (MIB, None)  # (system default)
    assert (run.settings.interval_s, run.settings.duration_s) == (15.0, 60.0)
    assert run.averages == BaselineAverages(231.013 * MIB, 231.013, None, None, 3 * MIB)
    rows = [
        (time(16, 2, 25), 231.608),
        (time(16, 2, 40), 228.940),
        (time(16, 2, 55), 233.117),
        (time(16, 3, 10), 230.386),
    ]
    assert _intervals(run) == [
        (1, 18 + i, at, 15.0 * (i + 1), mib * MIB, mib, None, None) for i, (at, mib) in enumerate(rows)
    ]
    kinds = [k for _, _, k, _ in _lines(run)]
    assert kinds.count("interval") == 4 and kinds.count("columns") == 1 and run.unparsed == 0


def test_two_runs_in_one_file_are_separate_and_account_for_every_line() -> None:
    path = FIXTURES / "two-runs.txt"
    sync, async_ = read_baseline(path)
    assert (sync.run, sync.first_line, async_.run, async_.first_line) == (1, 6, 2, 42)
    # an older client prints neither Test frequency / Network Timeout nor the Mbyte note
    assert sync.settings == BaselineSettings(8192, "RANDOM", 0.0, 1, None, "SYNC", True, 10.0, 30.0)
    assert async_.settings == BaselineSettings(MIB, "RANDOM", 0.0, 1, None, "ASYNC", False, 10.0, 30.0)
    assert sync.averages == BaselineAverages(3.896 * MIB, 3.896, 2.006, 0.814, 166400)
    assert async_.averages == BaselineAverages(110.990 * MIB, 110.990, None, None, 2 * MIB)
    assert _intervals(sync) == [
        (1, 19, time(21, 40, 15), 10.0, 3.912 * MIB, 3.912, 1.997, 0.811),
        (1, 20, time(21, 40, 25), 20.0, 3.870 * MIB, 3.870, 2.019, 0.823),
        (1, 21, time(21, 40, 35), 30.0, 3.905 * MIB, 3.905, 2.001, 0.809),
    ]
    assert _intervals(async_) == [
        (2, 55, time(21, 43, 1), 10.0, 112.384 * MIB, 112.384, None, None),
        (2, 56, time(21, 43, 11), 20.0, 109.527 * MIB, 109.527, None, None),
        (2, 57, time(21, 43, 21), 30.0, 111.060 * MIB, 111.060, None, None),
    ]
    outside, after = "outside a client run", "after the end of the run"
    assert _lines(sync) == _expand(
        [
            (1, 1, "ignored", None, outside),
            (2, 2, "ignored", None, "blank"),
            (3, 3, "ignored", None, outside),
            (4, 4, "ignored", None, "blank"),
            (5, 5, "ignored", None, outside),
            *_request_block(6, 9, note=False),
            (16, 16, "ignored", None, "blank"),
            (17, 17, "parsed", "ready", None),
            (18, 18, "parsed", "columns", None),
            (19, 21, "parsed", "interval", None),
            (22, 22, "parsed", "finished", None),
            (23, 25, "parsed", "setting", None),
            (26, 26, "ignored", None, "blank"),
            (27, 27, "ignored", None, after),
            (28, 28, "ignored", None, "blank"),
            (29, 29, "ignored", None, after),
            (30, 30, "ignored", "server_started", "server side"),
            (31, 31, "ignored", None, "blank"),
            (32, 32, "ignored", "server_request", "server side"),
            (33, 35, "ignored", "setting", "server side"),  # the server's own "Disk write = YES (oratcp.tmp)"
            (36, 36, "ignored", None, "blank"),
            (37, 37, "ignored", "server_done", "server side"),
            (38, 38, "ignored", None, "blank"),
            (39, 39, "ignored", None, after),
            (40, 40, "ignored", None, "blank"),
            (41, 41, "ignored", None, after),
        ]
    )
    assert _lines(async_)[0] == (42, "parsed", "request", None) and _lines(async_)[-1][0] == 60
    every = pl.concat([sync.lines, async_.lines])["line"].to_list()
    assert every == list(range(1, len(path.read_text(encoding="utf-8").splitlines()) + 1))


def test_damaged_lines_are_unparsed_with_reasons_and_good_values_kept() -> None:
    [run] = read_baseline(FIXTURES / "damaged.txt")
    problems = {line: reason for line, status, _, reason in _lines(run) if status == "unparsed"}
    assert problems == {
        2: "unknown size unit 'Mbps'",
        6: "Transport mode = 'FASTSYNC': expected SYNC or ASYNC",
        14: "19.7 without its unit (line cut short?)",
        15: "not an oratcptest client line: unexpected 'Exception in' at column 1",
        16: "unknown throughput unit 'Mbit/s'",
        18: "setting 'Test duration' between interval lines",
        20: "interval line after 'Test finished.'",
        22: "a second 'Avg. throughput' line",
        23: "Avg. latency = 'fast': expected a number with its unit",
    }
    assert run.unparsed == 9
    # what was readable stays: the other settings, two intervals, the first of each average
    assert run.settings == BaselineSettings(None, "RANDOM", None, 1, 2 * MIB, None, True, 5.0, 15.0)
    assert [r[1] for r in _intervals(run)] == [13, 17]
    assert run.averages == BaselineAverages(20.212 * MIB, 20.212, 0.776, 0.401, None)


def test_gzip_file_reads_like_the_plain_one(tmp_path: Path) -> None:
    packed = tmp_path / "baseline.txt.gz"
    packed.write_bytes(gzip.compress((FIXTURES / "two-runs.txt").read_bytes()))
    plain, gz = read_baseline(FIXTURES / "two-runs.txt"), read_baseline(packed)
    assert [r.settings for r in gz] == [r.settings for r in plain]
    assert [r.averages for r in gz] == [r.averages for r in plain]
    assert all(a.intervals.equals(b.intervals) and a.lines.equals(b.lines) for a, b in zip(gz, plain, strict=True))


def test_truncated_gzip_keeps_the_runs_before_the_damage(tmp_path: Path) -> None:
    data = gzip.compress((FIXTURES / "two-runs.txt").read_bytes())
    cut = tmp_path / "cut.txt.gz"
    cut.write_bytes(data[: len(data) - 30])
    runs = read_baseline(cut)
    assert runs[0].averages == read_baseline(FIXTURES / "two-runs.txt")[0].averages
    last = runs[-1].lines.filter(pl.col("line").is_null())
    assert last["status"].to_list() == ["unparsed"]
    assert last["reason"][0].startswith("the gz stream ends early")


def test_crlf_and_no_break_spaces_from_a_web_page_read_alike() -> None:
    text = (FIXTURES / "sync-disk-write.txt").read_text(encoding="utf-8")
    pasted = text.replace("        ", "\u00a0" * 8).replace("\n", "\r\n")
    [run] = parse_baseline(pasted, "pasted")
    [plain] = read_baseline(FIXTURES / "sync-disk-write.txt")
    assert (run.settings, run.averages) == (plain.settings, plain.averages)
    assert run.intervals.equals(plain.intervals)


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("server-only.txt", "only oratcptest server output; the measurements are printed by the client"),
        ("intervals-only.txt", "3 oratcptest client line(s) but no '[Requesting a test]' block"),
        ("iperf.txt", "not oratcptest client output (no '[Requesting a test]' line)"),
    ],
)
def test_not_client_output_is_a_usage_error_naming_the_file(name: str, message: str) -> None:
    with pytest.raises(UsageError) as caught:
        read_baseline(FIXTURES / name)
    assert str(caught.value).startswith(f"{FIXTURES / name}: {message}")
    assert caught.value.exit_code == ExitCode.USAGE


def test_missing_and_empty_files_are_usage_errors(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="no such file"):
        read_baseline(tmp_path / "nope.txt")
    (tmp_path / "empty.txt").write_text("", encoding="utf-8")
    with pytest.raises(UsageError, match="not oratcptest client output"):
        read_baseline(tmp_path / "empty.txt")
    (tmp_path / "bad.gz").write_bytes(b"not gzip at all")
    with pytest.raises(UsageError, match="cannot be read"):
        read_baseline(tmp_path / "bad.gz")


def _is_shape(line: str) -> bool:
    try:
        parse_line(line)
    except LineError:
        return False
    return True


@settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    junk=st.lists(
        st.text(st.characters(codec="utf-8", exclude_characters=LINE_BREAKS), max_size=40), min_size=1, max_size=12
    ),
    data=st.data(),
)
def test_junk_mixed_in_never_raises_and_keeps_the_good_rows(junk: list[str], data: st.DataObject) -> None:
    """Junk lines (no oratcptest shape) anywhere in a two-run file: same settings, intervals, averages."""
    assume(not any(_is_shape(j) for j in junk))
    lines = (FIXTURES / "two-runs.txt").read_text(encoding="utf-8").splitlines()
    for j in junk:
        lines.insert(data.draw(st.integers(0, len(lines))), j)
    text = "\n".join(lines)
    runs = parse_baseline(text, "junk")
    clean = read_baseline(FIXTURES / "two-runs.txt")
    assert [r.settings for r in runs] == [r.settings for r in clean]
    assert [r.averages for r in runs] == [r.averages for r in clean]
    columns = [c for c in BASELINE_INTERVALS if c != "line"]
    assert [r.intervals.select(columns).rows() for r in runs] == [r.intervals.select(columns).rows() for r in clean]
    # an empty junk line drawn last ends the text with a newline: that is no line of its own
    assert sum(r.lines.height for r in runs) == len(text.splitlines())
