"""The events around the writes: log writer events on the writes' timeline, against the simulator's truth."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import polars as pl
import pytest

from analyzer.api import Options, analyze, analyze_files
from analyzer.findings import events
from analyzer.simulate.options import SimOptions
from analyzer.simulate.runner import simulate
from tests.builders import primary_lines, read_trace, standby_lines
from tests.conftest import invoke

#: lgwr_events.csv kinds -> (event, detail) on the timeline
KINDS = {
    "broadcast_wait": ("broadcast_wait", None),
    "log_write": ("log_write", None),
    "switch_to_polling": ("sync_switch", "polling"),
    "switch_to_post_wait": ("sync_switch", "post/wait"),
}


@pytest.fixture(scope="module")
def lgwr_set(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("lgwr") / "set"
    simulate(
        out,
        SimOptions(
            writes=800,
            threads=2,
            format_version="19c",
            lgwr_broadcast_rate=0.03,
            lgwr_mode_switch_every=200,
            lgwr_warning_ms=80,
            seed=5,
        ),
    )
    return out


def test_every_simulated_lgwr_event_is_on_the_timeline_at_its_time(lgwr_set: Path) -> None:
    truth = pl.read_csv(lgwr_set / "lgwr_events.csv")
    analysis = analyze([str(lgwr_set)], Options())
    found = events.around_writes(analysis)
    assert truth.height > 20
    for row in truth.iter_rows(named=True):
        event, detail = KINDS[row["kind"]]
        at = pl.Series([row["at"]]).str.to_datetime(time_zone="UTC", time_unit="us")[0]
        hit = found.filter(
            (pl.col("event") == event)
            & (pl.col("at") == at)
            & (pl.col("thread") == row["thread"])
            & pl.col("host").str.starts_with(row["host"])
        )
        assert hit.height == 1, row
        if detail is not None:
            assert hit["detail"][0] == detail
        if row["elapsed_ms"] is not None:
            assert hit["elapsed_ms"][0] == row["elapsed_ms"]
    per_kind = found.filter(pl.col("event") != "alfs_update").group_by("event").len()
    assert dict(per_kind.iter_rows()) == {
        e: truth.filter(pl.col("kind").is_in([k for k, (ev, _) in KINDS.items() if ev == e])).height
        for e in per_kind["event"]
    }


def test_the_events_csv_puts_them_among_the_writes_in_time_order(lgwr_set: Path) -> None:
    text = invoke(["analyze", str(lgwr_set), "--format", "csv", "--table", "events"]).stdout
    rows = list(csv.DictReader(io.StringIO(text)))
    assert list(rows[0]) == ["at", "event", "thread", "seq", "msgid", "host", "file", "line", "elapsed_ms", "detail"]
    kinds = {r["event"] for r in rows}
    assert {"send", "receive", "finish", "ack", "broadcast_wait", "sync_switch", "alfs_update"} <= kinds
    assert [r["at"] for r in rows] == sorted(r["at"] for r in rows)
    broadcast = next(r for r in rows if r["event"] == "broadcast_wait")
    assert broadcast["detail"].startswith("SCN 0x") and int(broadcast["elapsed_ms"]) > 0


def test_the_json_lists_the_events_and_ties_broadcast_waits_to_writes(lgwr_set: Path) -> None:
    doc = json.loads(invoke(["analyze", str(lgwr_set), "--format", "json"]).stdout)
    kinds = {e["event"] for e in doc["events"]}
    assert {"broadcast_wait", "sync_switch"} <= kinds
    assert not kinds & {"send", "receive", "finish", "ack"}
    tied = [w for w in doc["summary"]["lgwr_warnings"] if w["kind"] == "broadcast_wait"]
    assert tied and any(w["writes"] for w in tied)


def test_a_broadcast_wait_over_fast_remote_writes_says_the_time_was_local() -> None:
    """Two fast remote writes (3 ms) under a 900 ms broadcast wait: the warning covers both."""
    p = primary_lines(
        [
            (1, "2024-01-01 00:00:00.100000", "2024-01-01 00:00:00.103000"),
            (2, "2024-01-01 00:00:00.500000", "2024-01-01 00:00:00.503000"),
        ]
    )
    s = standby_lines(
        [
            (1, "2024-01-01 00:00:00.101000", "2024-01-01 00:00:00.102000", [("RFS write", 500)]),
            (2, "2024-01-01 00:00:00.501000", "2024-01-01 00:00:00.502000", [("RFS write", 500)]),
        ]
    )
    lgwr = ["*** 2024-01-01 00:00:00.950", "Warning: log write broadcast wait time 900ms (SCN 0x3f)"]
    files = [read_trace(p, "db1_nss2_5.trc"), read_trace(s, "sb1_rfs_6.trc"), read_trace(lgwr, "db1_lgwr_1.trc")]
    analysis = analyze_files(files, [], Options())
    tied = analysis.warnings.select("kind", "elapsed_ms", "writes", "remote_total_ms")
    assert tied.rows() == [("broadcast_wait", 900, 2, 3.0)]
    on_timeline = events.timeline(analysis).filter(pl.col("event") == "broadcast_wait")
    assert on_timeline.select("detail", "elapsed_ms").row(0) == ("SCN 0x3f", 900)
