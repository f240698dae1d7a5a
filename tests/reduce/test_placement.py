"""Where a receiver's RFS I/O waits fall, tallied chunk by chunk: inside a write or after its `Server finished`."""

from __future__ import annotations

import itertools

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from analyzer.parse.families import parse_chunk
from analyzer.reduce.placement import PlacementTally, WaitPlacement
from tests.builders import done, krs, recv, send, wait
from tests.conftest import lines_frame


def _tally(*chunks: list[str]) -> WaitPlacement:
    tally = PlacementTally()
    for lines in chunks:
        parsed, _ = parse_chunk(lines_frame("\n".join(lines)), in_header=False)
        tally.add(parsed.tables["messages"], parsed.tables["waits"])
    return tally.placement


def test_rfs_io_waits_are_placed_by_the_server_message_before_them() -> None:
    affirm = [
        recv(1),
        krs("2024-01-01 00:00:00.000000"),
        wait("RFS write", 400),
        done(1),
        krs("2024-01-01 00:00:00.001000"),
    ]
    noaffirm = [recv(2), krs("2024-01-01 00:00:01.000000"), done(2), krs("2024-01-01 00:00:01.000100")]
    noaffirm += [wait("RFS write", 400), wait("RFS random i/o", 50), wait("SQL*Net message from client", 9000)]
    assert _tally(affirm) == WaitPlacement(inside=1, after_finish=0)
    assert _tally(noaffirm) == WaitPlacement(inside=0, after_finish=2), "idle waits do not count"


def test_a_chunk_that_starts_with_waits_takes_the_last_message_of_the_one_before() -> None:
    first = [recv(1), krs("2024-01-01 00:00:00.000000"), done(1), krs("2024-01-01 00:00:00.000100")]
    second = [wait("RFS write", 400), recv(2), krs("2024-01-01 00:00:01.000000"), wait("RFS write", 300)]
    assert _tally(first, second) == WaitPlacement(inside=1, after_finish=1)
    assert _tally([wait("RFS write", 400)]) == WaitPlacement(), "before any message: neither"


#: lines of a receiver's trace, by what they are to the tally
_LINES = {
    "recv": recv(1),
    "done": done(1),
    "send": send(1),
    "io": wait("RFS write", 400),
    "random": wait("RFS random i/o", 50),
    "idle": wait("SQL*Net message from client", 9000),
    "stamp": krs("2024-01-01 00:00:00.000000"),
}


def _by_the_rule(kinds: list[str]) -> WaitPlacement:
    """The rule in words: an I/O wait counts for the last server message before it, none before the first."""
    last, inside, after = None, 0, 0
    for kind in kinds:
        if kind in ("recv", "done"):
            last = kind
        elif kind in ("io", "random") and last is not None:
            inside, after = inside + (last == "recv"), after + (last == "done")
    return WaitPlacement(inside, after)


@settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(sorted(_LINES)), max_size=40), st.lists(st.integers(0, 40), max_size=4))
def test_the_tally_follows_the_rule_across_any_chunking(kinds: list[str], cuts: list[int]) -> None:
    bounds = [0, *sorted(min(cut, len(kinds)) for cut in cuts), len(kinds)]
    chunks = [[_LINES[kind] for kind in kinds[a:b]] for a, b in itertools.pairwise(bounds)]
    assert _tally(*[chunk for chunk in chunks if chunk]) == _by_the_rule(kinds)
