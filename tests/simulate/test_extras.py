"""What else a real trace directory holds: a `.trm` map beside every trace and a foreground 10046 trace per host."""

from __future__ import annotations

import re
from pathlib import Path

from tests.simulate.sets import run


def test_every_trace_gets_its_map_and_every_host_a_foreground_trace(tmp_path: Path) -> None:
    result = run(tmp_path, writes=40, threads=2, extras=True)
    traces = [*result.files, *(p for p in result.extras if p.suffix == ".trc")]
    maps = sorted(p for p in result.extras if p.suffix == ".trm")
    assert maps == sorted(p.with_suffix(".trm") for p in traces) and all(p.stat().st_size > 0 for p in maps)
    foreground = sorted(p for p in result.extras if re.fullmatch(r"\w+_ora_\d+\.trc", p.name))
    assert [p.relative_to(tmp_path / "set").parts[0] for p in foreground] == ["prim01", "prim02", "stby01"]


def test_a_foreground_trace_has_10046_lines_and_no_transport_message(tmp_path: Path) -> None:
    result = run(tmp_path, writes=40, threads=1, extras=True)
    primary = next(p for p in result.extras if re.fullmatch(r"sales1_ora_\d+\.trc", p.name))
    text = primary.read_text()
    assert "nam='log file sync'" in text and re.search(r"^(PARSING IN CURSOR|EXEC|WAIT) #\d+", text, re.M)
    assert "SQLNET request data" not in text and "Server received SQLNET" not in text
    assert "*** MODULE NAME:(" in text and not any(p.name.endswith(".trm") for p in result.files)
