"""What an analysis gives: its exit code says whether any input was lost."""

from __future__ import annotations

from dataclasses import replace

from analyzer.base.errors import ExitCode
from analyzer.base.schemas import CLOCK, UNMATCHED, WARNINGS, WRITES, empty
from analyzer.inputs.skips import Skipped
from analyzer.match.analysis import Analysis
from analyzer.parse.lines import ReadStats
from analyzer.reduce.results import FileResult, Options
from tests.builders import read_trace, standby_lines

STANDBY = standby_lines([(1, "2024-01-01 10:00:00.110", "2024-01-01 10:00:00.140", [("RFS write", 20000)])])


def _analysis(files: list[FileResult], skipped: list[Skipped]) -> Analysis:
    return Analysis(
        options=Options(),
        files=files,
        skipped=skipped,
        writes=empty(WRITES),
        unmatched=empty(UNMATCHED),
        warnings=empty(WARNINGS),
        clock=empty(CLOCK),
        primary_exchanges=0,
        standby_exchanges=0,
    )


def test_the_exit_code_is_partial_when_any_input_was_lost() -> None:
    whole = read_trace(STANDBY, "s.trc")
    assert _analysis([whole], [Skipped("x.trm", "trace map")]).exit_code is ExitCode.OK
    assert _analysis([whole], [Skipped("u.zip", "corrupt", partial=True)]).exit_code is ExitCode.PARTIAL
    cut = replace(whole, stats=replace(ReadStats(), error="truncated"))
    assert _analysis([cut], []).exit_code is ExitCode.PARTIAL
