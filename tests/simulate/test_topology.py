"""Who sends to whom in a simulated set: names of the databases and hosts, each thread's links and their clocks."""

from __future__ import annotations

from random import Random

import pytest

from analyzer.simulate.formats import GENERATIONS
from analyzer.simulate.topology import (
    ASYNC_RTT_FACTOR,
    Clocks,
    ClockSpec,
    Names,
    ThreadLayout,
    TopologyOptions,
    base_processes,
    thread_layout,
)

NAMES = Names()
CLOCKS = Clocks(ClockSpec(0, -420, 0), ClockSpec(2_500_000, 330, 77), "1", epoch_tim=False, start=10**15)


def _layout(topology: str, transport: str = "sync", async_sender: bool = False, gen: str = "19c") -> ThreadLayout:
    topo = TopologyOptions(GENERATIONS[gen], transport, topology, async_sender, 1.0)
    base = base_processes(NAMES, 2, "nss", Random("1:set"))
    return thread_layout(topo, NAMES, CLOCKS, 2, base, Random("1:topology:2"))


def _links(layout: ThreadLayout) -> list[tuple[str, str, str, str, int]]:
    return [(s.kind, s.transport, s.sender.image, s.receiver.db, s.dest) for s in layout.links]


def test_the_databases_and_hosts_of_a_configuration_are_named_after_its_primary() -> None:
    assert (NAMES.second_db, NAMES.far_sync_db, NAMES.async_db) == ("salesbc", "salesfs", "salesar")
    assert [NAMES.host(db, 2) for db in ("sales", "salesdr", "salesfs")] == ["prim02", "stby01", "salesfs02"]


def test_the_base_processes_of_a_thread_and_the_rfs_that_names_its_client() -> None:
    nss, lgwr, rfs = base_processes(NAMES, 2, "lns", Random("1:set"))
    assert (nss.image, nss.host, nss.thread, lgwr.image) == ("LNS1", "prim02", 2, "LGWR")
    assert (rfs.host, rfs.sid, rfs.module, rfs.client_ip) == (
        "stby01",
        "salesdr1",
        "oracle@prim02 (LNS1)",
        "10.20.30.12",
    )


@pytest.mark.parametrize(
    ("topology", "async_sender", "links"),
    [
        ("single", False, [("first", "FASTSYNC", "NSS2", "salesdr", 2)]),
        ("two-sync", True, [
            ("first", "FASTSYNC", "NSS2", "salesdr", 2),
            ("follower", "FASTSYNC", "NSS3", "salesbc", 3),
            ("async", "ASYNC", "TT02", "salesar", 4),
        ]),
        ("far-sync", False, [("first", "FASTSYNC", "NSS2", "salesfs", 2), ("forward", "ASYNC", "TT02", "salesdr", 2)]),
    ],
)  # fmt: skip
def test_each_topology_gives_a_thread_its_links_in_order(
    topology: str, async_sender: bool, links: list[tuple[str, str, str, str, int]]
) -> None:
    assert _links(_layout(topology, "fastsync", async_sender)) == links


def test_asynchronous_links_are_slower_and_other_hosts_keep_their_own_tim_counter() -> None:
    layout = _layout("far-sync")
    first, forward = layout.links
    assert forward.rtt_ms == ASYNC_RTT_FACTOR * first.rtt_ms
    assert forward.sender.host == first.receiver.host == "salesfs02" and forward.sender_clock == first.receiver_clock
    assert forward.receiver_clock == CLOCKS.standby  # the terminal standby: the first standby's clock
    assert (first.receiver_clock.skew_us, first.receiver_clock.offset_min) == (2_500_000, 330)
    assert first.receiver_clock.tim_shift != CLOCKS.standby.tim_shift  # a host counter of its own
    assert _layout("single", gen="12.1").links[0].receiver_clock == CLOCKS.standby
