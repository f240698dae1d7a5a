"""The simulator's settings: what it refuses and why, the classic sets, the write budget per thread."""

from __future__ import annotations

import pytest

from analyzer.base.errors import UsageError
from analyzer.simulate.options import CLASSIC_FIELDS, DEFAULT_WRITES, SimOptions


@pytest.mark.parametrize(
    "options",
    [
        {"writes": 10, "size_bytes": 1000},
        {"format_version": "10.2"},
        {"scenario": "nope"},
        {"primary_tz": "Europe/Paris"},
        {"standby_tz": "+15:00"},
        {"noise": 1.5},
        {"threads": 0},
    ],
)
def test_bad_options_are_usage_errors(options: dict[str, object]) -> None:
    with pytest.raises(UsageError):
        SimOptions(**options)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "options",
    [
        {"format_version": "11.2", "transport": "fastsync"},
        {"format_version": "11.2", "topology": "far-sync"},
        {"topology": "ring"},
        {"transport": "async"},
        {"sender": "lns", "topology": "two-sync"},
        {"drop_segment": 1},
        {"segment_bytes": 100},
        {"lgwr_broadcast_rate": 2.0},
        {"protection": "performance"},
        {"protection": "protection", "transport": "fastsync"},  # NOAFFIRM needs Maximum Availability
    ],
)
def test_impossible_combinations_are_usage_errors(options: dict[str, object]) -> None:
    with pytest.raises(UsageError):
        SimOptions(**options)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"writes": 10, "size_bytes": 1000}, "give --writes or --size, not both"),
        ({"noise": 1.5}, "--noise must be a probability between 0 and 1, not 1.5"),
        ({"rtt_ms": -1.0}, "--rtt-ms must be between 0 and 10000, not -1.0"),
        ({"standby_skew_s": 90_000.0}, "--standby-skew-s must be within one day"),
        ({"format_version": "11.2", "transport": "fastsync"}, "--transport fastsync (SYNC NOAFFIRM) needs"),
        ({"drop_segment": 1}, "--drop-segment needs --segment-bytes"),
    ],
)
def test_a_refusal_names_the_option_to_change(options: dict[str, object], message: str) -> None:
    with pytest.raises(UsageError) as refused:
        SimOptions(**options)  # type: ignore[arg-type]
    assert str(refused.value).startswith(message)


def test_a_set_is_classic_until_a_newer_option_is_used() -> None:
    assert SimOptions().classic and SimOptions(scenario="mixed", seed=9, threads=3, sender="lns").classic
    for newer in ({"transport": "fastsync"}, {"topology": "two-sync"}, {"extras": True}, {"lgwr_mode_switch_every": 5}):
        assert not SimOptions(**newer).classic  # type: ignore[arg-type]
    assert "transport" not in CLASSIC_FIELDS and "seed" in CLASSIC_FIELDS


def test_the_write_budget_per_thread_and_whether_lgwr_events_are_written() -> None:
    assert (SimOptions().writes_per_thread, SimOptions(writes=50).writes_per_thread) == (DEFAULT_WRITES, 50)
    assert SimOptions(size_bytes=1 << 20).writes_per_thread is None  # the size budget applies instead
    assert not SimOptions().lgwr_events
    assert SimOptions(lgwr_broadcast_rate=0.1).lgwr_events and SimOptions(lgwr_mode_switch_every=10).lgwr_events


def test_maximum_protection_makes_a_set_extended() -> None:
    assert not SimOptions(protection="protection").classic
    assert SimOptions(protection="availability").classic
