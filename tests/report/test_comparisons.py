"""The comparison sections every human report shares: what each holds, and when it is left out."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from analyzer.api import Analysis, Options, analyze
from analyzer.report.comparisons import awr_table, baseline_table, comparison_blocks, what_if_table
from analyzer.report.context import Context, Table
from analyzer.report.model import summary
from analyzer.simulate import SimOptions, simulate

FIXTURES = Path("tests/fixtures")
PAPER = "samples/paper-2014"


def _titles(a: Analysis) -> list[str]:
    return [b.title for b in comparison_blocks(Context.of(a))]


def test_the_fast_sync_what_if_is_shown_when_writes_are_slow(paper: Analysis) -> None:
    c = Context.of(paper)
    (block,) = comparison_blocks(c)
    assert block.title.startswith("What if: Fast Sync")
    sentence, table = block.parts
    assert isinstance(sentence, str) and sentence.startswith("With Fast Sync, slow writes would fall from 2 to 1")
    assert isinstance(table, Table) and [r[0] for r in table.rows] == ["as measured", "with Fast Sync (no standby I/O)"]
    assert table.rows[0][1:3] == ("66", "2") and table.rows[1][1:3] == ("66", "1")


def test_no_comparison_without_slow_writes_or_companion_files(paper: Analysis) -> None:
    calm = replace(paper, options=replace(paper.options, threshold_ms=10_000))
    assert _titles(calm) == []


def test_every_companion_gets_its_section(paper: Analysis) -> None:
    options = replace(
        paper.options,
        baselines=(str(FIXTURES / "oratcptest" / "two-runs.txt"),),
        awr=(str(FIXTURES / "awr" / "awr-12c-primary.txt"),),
        distance_km=1200.0,
    )
    a = analyze([PAPER], options)
    assert _titles(a) == [
        "What if: Fast Sync, and the network at the oratcptest round trip",
        "Against the oratcptest baseline",
        "Against AWR and Statspack",
        "Distance and the physical floor",
    ]
    c = Context.of(a)
    rows = what_if_table(c).rows
    assert [r[0] for r in rows][-1].startswith("network at most ") and len(rows) == 3
    base = baseline_table(c)
    assert [r[0] for r in base.rows] == ["two-runs.txt", "two-runs.txt"]
    assert {r[8] for r in base.rows} <= {"network", "total", "throughput only"}
    (check,) = c.checks.awr
    events = awr_table(check)
    assert [r[0] for r in events.rows] == ["log file sync", "SYNC Remote Write", "log file parallel write"]
    assert all(r[4] in ("", "none in its window") for r in events.rows)  # a report of 2025: no trace write in it
    awr_parts = next(b for b in comparison_blocks(c) if b.title.startswith("Against AWR")).parts
    assert any(isinstance(p, str) and "does not overlap" in p for p in awr_parts)
    distance = comparison_blocks(c)[-1].parts[0]
    assert isinstance(distance, str) and "Over 1,200 km light in fibre needs about 12.0 ms" in distance


def test_the_awr_histograms_are_set_beside_the_writes_of_their_window(tmp_path: Path) -> None:
    """The `*-sim-*` reports were written for the set of seed 7 at UTC+02:00 (tests/findings/test_reconcile.py)."""
    out = tmp_path / "set"
    simulate(out, SimOptions(scenario="standby-io", writes=600, seed=7, primary_tz="+02:00", standby_tz="+02:00"))
    reports = (
        str(FIXTURES / "awr" / "awr-19c-sim-primary.txt"),
        str(FIXTURES / "awr" / "statspack-19c-sim-standby.txt"),
    )
    a = analyze([str(out)], Options(awr=(*reports, str(FIXTURES / "awr" / "awr-19c-primary.txt"))))
    c = Context.of(a)
    parts = next(b for b in comparison_blocks(c) if b.title == "Against AWR and Statspack").parts
    tables = [p for p in parts if isinstance(p, Table) and p.headers[0] == "bucket"]
    checks = [h for check in c.checks.awr for h in check.histograms if h.writes]
    assert [h.event for h in checks] == ["SYNC Remote Write", "RFS write"] and len(tables) == 2  # not the other hours'
    for h, table in zip(checks, tables, strict=True):
        sentence = parts[parts.index(table) - 1]
        assert isinstance(sentence, str) and sentence.startswith(f"{h.event} (")
        assert [r[0] for r in table.rows] == [b.label for b in h.buckets]
        assert [r[2] for r in table.rows] == [f"{b.awr_pct:.1f}" for b in h.buckets]
        assert [int(r[4]) for r in table.rows] == [b.trace_writes for b in h.buckets]
        assert sum(int(r[4]) for r in table.rows) == h.writes
    doc = [r for r in summary(a, 10, c)["awr"] if r["histograms"]]
    assert [h["event"] for r in doc for h in r["histograms"]] == ["SYNC Remote Write", "RFS write", "SYNC Remote Write"]
    first = doc[0]["histograms"][0]
    assert first["writes"] == checks[0].writes and first["finding"] == parts[parts.index(tables[0]) - 1]
    assert [b["trace_writes"] for b in first["buckets"]] == [b.trace_writes for b in checks[0].buckets]
