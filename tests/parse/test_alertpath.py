"""The alert logs' fast path agrees with the alert grammar (the spec), line for line and table for table."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from polars.testing import assert_frame_equal

from analyzer.parse import alertpath
from analyzer.parse.families import TABLES, parse_chunk, split_alert
from analyzer.simulate.options import SimOptions
from analyzer.simulate.runner import simulate
from tests.conftest import ROOT, lines_frame

#: the three entries of a 19c log switch, as real alert logs print them, and their near relatives
CANONICAL = [
    "Thread 1 advanced to log sequence 1090402 (LGWR switch),  current SCN: 31",
    "Thread 2 advanced to log sequence 77 (LGWR switch)",
    "Thread 1 advanced to log sequence 5",
    "NSS2 (PID:4401): SRL selected for T-1.S-86393 for LAD:3",
    "TT00 (PID:1): SRL selected for T-2.S-1 for LAD:2",
    "rfs (PID:4809): Selected LNO:22 for T-1.S-213918 dbid 3054843085 branch 1129541200",
    "rfs_x (PID:4809): Selected LNO:22 for T-1.S-213918",
]
#: spellings the grammar reads (or rejects) that the fast path leaves to it
LEFT_TO_THE_GRAMMAR = [
    "LGWR (PID:12): Thread 1 advanced to log sequence 9 (LGWR switch)",  # a prefix before Thread
    "Thread 1 advanced to log sequence 9\t(LGWR switch) [krsu.c:10192]\u00e9",  # beyond ASCII
    "Thread 1 advanced to log sequence 12(LGWR switch)",  # the tail without white space
    "Thread 1 advanced to log sequence 1234567890123456789 (LGWR switch)",  # 19 digits
    "Thread 1 advanced to log sequence 99999999999999999999",  # beyond 64 bits: unparsed
    "NSS2 (PID:4401): SRL selected for T-1.S-86393 for LAD:3 [krsu.c:1]",  # a tail
    "LGWR: Standby redo logfile selected for thread 1 sequence 1584 for destination LOG_ARCHIVE_DEST_2",
    "RFS[3]: Selected log 5 for thread 1 sequence 1584 dbid 1234 branch 5678",
    "RFS[3] (PID:9): Selected LNO:5 for T-1.S-1584",  # a bracketed number in the prefix
    "rfs (PID:4809): krsr_rfs_atc: Selected LNO:22 for T-1.S-213918",  # two prefixes
    "rfs (PID:4809): Selected LNO:22 for T-1.S-213918 dbid\x1c",
]


def _both(text: str) -> tuple[dict, dict]:  # type: ignore[type-arg]
    lines = lines_frame(text)
    fast, _ = parse_chunk(lines, False, alert=True)
    spec, _ = parse_chunk(lines, False, fast=False, alert=True)
    return fast.tables, spec.tables


def _assert_agree(text: str) -> None:
    fast, spec = _both(text)
    for name in TABLES:
        assert_frame_equal(fast[name], spec[name], check_row_order=True)


def test_canonical_lines_are_taken_and_agree_with_the_grammar() -> None:
    rows = split_alert(lines_frame("\n".join(CANONICAL)))["alert"]
    found, rest = alertpath.alert_lines(rows)
    assert rest.is_empty() and found["alert"].height == len(CANONICAL)
    assert found["alert"]["kind"].to_list() == ["log_switch"] * 3 + ["srl_selected"] * 2 + ["rfs_selected"] * 2
    assert found["alert"].row(3, named=True) == {
        "line": 4,
        "kind": "srl_selected",
        "process": "NSS2",
        "pid": 4401,
        "thread": 1,
        "seq": 86393,
        "dest": 3,
        "log": None,
        "key": None,
        "detail": None,
    }
    _assert_agree("\n".join(CANONICAL))


@pytest.mark.parametrize("text", LEFT_TO_THE_GRAMMAR)
def test_other_spellings_go_to_the_grammar(text: str) -> None:
    rows = split_alert(lines_frame(text))["alert"]
    found, rest = alertpath.alert_lines(rows)
    assert found["alert"].is_empty() and rest.height == rows.height
    _assert_agree(text)


_NUMBER = st.one_of(st.integers(0, 10**6).map(str), st.sampled_from(["0", "007", "9" * 18, "1" * 19, "\u0663"]))
_TAIL = st.one_of(
    st.just(""),
    st.sampled_from([" (LGWR switch)", "  (LGWR switch),  current SCN: 4", " dbid 1 branch 2", " x ", "\t\tz"]),
    st.text(st.characters(min_codepoint=9, max_codepoint=0x2030), max_size=12).map(lambda t: " " + t),
)
_PREFIX = st.sampled_from(["", "NSS2 (PID:{n}): ", "rfs (PID:{n}): ", "rfs[1] (PID:{n}): ", "x (PID:{n}) : "])


@st.composite
def alert_entries(draw: st.DrawFn) -> str:
    n = [draw(_NUMBER) for _ in range(4)]
    prefix = draw(_PREFIX).format(n=n[0])
    body = draw(
        st.sampled_from(
            [
                "Thread {1} advanced to log sequence {2}",
                "SRL selected for T-{1}.S-{2} for LAD:{3}",
                "Selected LNO:{3} for T-{1}.S-{2}",
            ]
        )
    )
    return prefix + body.format(*n) + draw(_TAIL)


@settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(alert_entries(), min_size=1, max_size=8))
def test_generated_entries_agree_with_the_grammar(lines: list[str]) -> None:
    """Whatever the fast path takes, the grammar reads with the same fields; the rest is the grammar's."""
    _assert_agree("\n".join(line.replace("\n", " ").replace("\r", " ") for line in lines))


def test_real_shaped_alert_logs_agree_with_the_grammar(tmp_path: Path) -> None:
    """The bundled 11.2 alert logs (ctime lines, older spellings) and a simulated 19c set's alert logs."""
    simulate(tmp_path, SimOptions(writes=400, format_version="19c", extras=True))
    bundled = sorted((ROOT / "tests" / "fixtures" / "alert").glob("alert_*.log"))
    logs = [*bundled, *sorted(tmp_path.rglob("alert_*.log"))]
    assert len(logs) >= 3
    taken = 0
    for log in logs:
        text = log.read_text()
        _assert_agree(text.rstrip("\n"))
        taken += alertpath.alert_lines(split_alert(lines_frame(text))["alert"])[0]["alert"].height
    assert taken > 0
