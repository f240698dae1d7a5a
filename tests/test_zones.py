"""Time zones: --tz values, per host and default."""

from __future__ import annotations

from analyzer.zones import parse_zones


def test_parse_zones_per_host() -> None:
    zones = parse_zones(["-07:00", "stby01=+01:00"])
    assert zones.default_min == -420
    assert zones.per_host == {"stby01": 60}
