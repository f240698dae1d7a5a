"""Golden tests on the bundled samples: the MAA paper's answers, and every line accounted for."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from analyzer.api import analyze
from scripts.regen_golden import SAMPLES, sample_outputs
from tests.conftest import PAPER, ROOT

GOLDEN = ROOT / "tests" / "golden"


def _write(paper, msgid: int) -> dict[str, object]:  # type: ignore[no-untyped-def]
    rows = paper.writes.filter(msgid=msgid).to_dicts()
    assert len(rows) == 1
    return rows[0]


def test_paper_example_1_is_standby_io(paper) -> None:  # type: ignore[no-untyped-def]
    """msgid 117468: 163 ms, almost all of it `RFS write` on the standby."""
    w = _write(paper, 117468)
    assert (w["thread"], w["seq"], w["total_ms"], w["rfs_ms"], w["network_ms"]) == (
        1,
        1584,
        163.0,
        163.0,
        0.0,
    )
    assert w["rfs_io_ms"] == pytest.approx(162.679)  # RFS write 162381 us + RFS random i/o 298 us
    assert w["verdict"] == "rfs_io" and w["slow"]
    assert w["sent_at"].isoformat() == "2014-12-02T15:46:34.598000+00:00"  # 08:46:34.598 at UTC-7


def test_paper_example_2_is_network(paper) -> None:  # type: ignore[no-untyped-def]
    """msgid 124705: 138 ms, about 137 ms of it before RFS even received the write."""
    w = _write(paper, 124705)
    assert (w["thread"], w["seq"], w["total_ms"], w["rfs_ms"], w["network_ms"]) == (
        2,
        1311,
        138.0,
        1.0,
        137.0,
    )
    assert w["rfs_io_ms"] == pytest.approx(0.606)
    assert w["verdict"] == "network" and w["slow"]


def test_paper_lgwr_warnings_get_their_breakdown(paper) -> None:  # type: ignore[no-untyped-def]
    rows = {r["elapsed_ms"]: r for r in paper.warnings.to_dicts()}
    assert (rows[163]["msgid"], rows[163]["verdict"], rows[163]["thread"]) == (117468, "rfs_io", 1)
    assert (rows[138]["msgid"], rows[138]["verdict"], rows[138]["thread"]) == (124705, "network", 2)


def test_paper_sample_matches_completely(paper) -> None:  # type: ignore[no-untyped-def]
    assert paper.unmatched.height == 0
    assert paper.writes.height == paper.primary_exchanges == paper.standby_exchanges
    assert paper.writes.filter("slow")["msgid"].sort().to_list() == [117468, 124705]


def _sample_files() -> list[Path]:
    return sorted(p for p in (ROOT / "samples").rglob("*.trc"))


@pytest.mark.parametrize("path", _sample_files(), ids=lambda p: p.name)
def test_every_sample_line_is_accounted_for(path: Path) -> None:
    result = analyze([str(path)])
    (f,) = result.files
    physical = path.read_bytes().count(b"\n")
    assert f.stats.lines == physical
    assert sum(f.parsed.parsed.values()) + sum(f.parsed.ignored.values()) + f.parsed.unparsed == physical
    assert f.parsed.unparsed == 0


@pytest.mark.parametrize("sample", sorted(SAMPLES))
def test_sample_output_matches_golden(sample: str) -> None:
    """JSON and text output of each sample equal the files scripts/regen_golden.py wrote."""
    doc, text = sample_outputs(sample, SAMPLES[sample])
    expected = (GOLDEN / f"{sample}.json").read_text(encoding="utf-8")
    assert json.loads(doc) == json.loads(expected)
    assert text == (GOLDEN / f"{sample}.txt").read_text(encoding="utf-8")


def test_samples_are_reproducible(tmp_path: Path) -> None:
    """samples/paper-2014 is what scripts/make_paper_samples.py writes, byte for byte."""
    from scripts.make_paper_samples import main

    main(tmp_path)
    made = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*.trc"))
    assert made == sorted(p.relative_to(PAPER) for p in PAPER.rglob("*.trc"))
    for rel in made:
        assert (tmp_path / rel).read_bytes() == (PAPER / rel).read_bytes()
