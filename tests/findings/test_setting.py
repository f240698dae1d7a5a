"""A configuration's setup from its files and alert logs: versions, protection mode, DATA_GUARD_SYNC_LATENCY,
its destinations ("not seen" where the uploads do not say), and whether Fast Sync can be offered."""

from __future__ import annotations

from pathlib import Path

import pytest

from analyzer.api import Options, analyze
from analyzer.findings.setting import Setting, destination_rows, setting
from analyzer.match import alerts
from analyzer.simulate import SimOptions, simulate
from tests.conftest import ROOT

DENVER = ROOT / "tests" / "fixtures" / "alert" / "alert_denver2.log"


@pytest.mark.parametrize(
    ("given", "available", "said"),
    [
        (Setting(("19.22.0.0.0",), "MAXIMUM AVAILABILITY", "a:1"), True, "Maximum Availability (a:1)"),
        (Setting(("19.22.0.0.0",), "MAXIMUM PROTECTION", "a:7"), False, "only in Maximum Availability"),
        (Setting(("11.2.0.4.0",), "MAXIMUM AVAILABILITY", "a:1"), False, "needs Oracle Database 12c or later"),
        (Setting(("19.22.0.0.0",), "MAXIMUM PERFORMANCE", "a:1"), False, "raised to first"),
        (Setting(("19.22.0.0.0",)), None, "the protection mode (Fast Sync needs Maximum Availability)"),
        (Setting((), "MAXIMUM AVAILABILITY", "a:1"), None, "the Oracle version (Fast Sync needs 12c or later)"),
    ],
)
def test_fast_sync_only_in_maximum_availability_on_12c_or_later(
    given: Setting, available: bool | None, said: str
) -> None:
    option = given.fast_sync()
    assert option.available is available and said in option.why


def test_destinations_from_the_alert_logs_and_links_they_do_not_set(tmp_path: Path) -> None:
    out = tmp_path / "set"
    simulate(out, SimOptions(topology="two-sync", writes=30, threads=1, extras=True, protection="protection"))
    a = analyze([str(out)], Options())
    (c,) = a.topology.configurations
    found = setting(a, c, alerts.entries(a.files))
    assert found.protection == "MAXIMUM PROTECTION" and "/alert_sales" in (found.protection_source or "")
    assert found.sync_latency_s is None and found.versions == ("19.0.0.0.0", "19.22.0.0.0")
    rows = {(d.database, d.dest): d for d in found.destinations}
    assert {k: (d.target, d.transport, d.affirm, d.net_timeout_s) for k, d in rows.items()} == {
        ("sales", 2): ("salesdr", "SYNC", "AFFIRM", None),  # NET_TIMEOUT not in the value: not seen
        ("sales", 3): ("salesbc", "SYNC", "AFFIRM", None),
    }
    assert found.fast_sync().available is False
    # without alert logs, the links still get a row each, their attributes not seen
    bare = analyze([str(p) for p in out.rglob("*.trc")], Options())
    (c,) = bare.topology.configurations
    unseen = destination_rows(bare.destinations, c)
    assert [(d.dest, d.target, d.transport) for d in unseen] == [(2, "salesdr", None), (3, "salesbc", None)]
    assert all("no alert log sets it" in d.source for d in unseen)


def test_net_timeout_and_state_of_a_real_shaped_primary_alert_log() -> None:
    a = analyze([str(DENVER)], Options())
    names = {"denver", "austin"}
    settings = a.destinations.filter(a.destinations["database"].is_in(list(names)))
    last = settings.group_by("database", "dest", maintain_order=True).last()
    assert last.filter(last["dest"] == 3).select("transport", "net_timeout_s").rows() == [("ASYNC", None)]
    assert alerts.sync_latency(alerts.entries(a.files), "denver") == (None, None)
