"""Who sends to whom: the processes, hosts and clocks of each primary thread's redo transport links."""

from __future__ import annotations

import base64
from dataclasses import dataclass, replace
from random import Random

from analyzer.simulate.formats import Generation, async_sender_name, sync_sender_name
from analyzer.simulate.headers import Process

#: ASYNC destinations are farther away: their round trip is this many times the SYNC one's
ASYNC_RTT_FACTOR = 5.0


@dataclass(frozen=True)
class Names:
    """db_unique_names and host names of one Data Guard configuration.

    Hosts are patterns with `{n}` (instance number, two digits). The further databases of the
    topologies (second SYNC standby, far sync, ASYNC destination) are named after the primary.
    """

    primary_db: str = "sales"
    standby_db: str = "salesdr"
    primary_host: str = "prim{n:02d}"
    standby_host: str = "stby01"
    #: first three octets of the primary hosts' addresses (23ai RFS sessions print the client's)
    network: str = "10.20.30"

    @property
    def second_db(self) -> str:
        """The second SYNC standby of `two-sync`."""
        return f"{self.primary_db}bc"

    @property
    def far_sync_db(self) -> str:
        """The far sync instance(s) of `far-sync`."""
        return f"{self.primary_db}fs"

    @property
    def async_db(self) -> str:
        """The ASYNC destination of `async_sender`."""
        return f"{self.primary_db}ar"

    def host(self, db: str, n: int) -> str:
        """Host of instance `n` of database `db`."""
        if db == self.primary_db:
            return self.primary_host.format(n=n)
        if db == self.standby_db:
            return self.standby_host.format(n=n)
        return f"{db}{n:02d}"


@dataclass(frozen=True)
class ClockSpec:
    """A host's clock: skew (µs ahead of true time), UTC offset (minutes), and its RFS `tim` shift."""

    skew_us: int
    offset_min: int
    tim_shift: int


@dataclass(frozen=True)
class LinkSpec:
    """One sender -> RFS connection that carries one thread's redo."""

    #: how its writes are drawn: "first" (the thread's first SYNC destination), "follower" (a further
    #: SYNC destination), "async" (the primary's ASYNC sender), "forward" (a far sync's ASYNC sender)
    kind: str
    #: SYNC, FASTSYNC or ASYNC (the truth's `transport`)
    transport: str
    sender: Process
    receiver: Process
    sender_clock: ClockSpec
    receiver_clock: ClockSpec
    #: LOG_ARCHIVE_DEST_n of the sending database
    dest: int
    rtt_ms: float


@dataclass(frozen=True)
class ThreadLayout:
    """The LGWR of a primary instance and the links that carry its thread's redo (the first one first)."""

    lgwr: Process
    lgwr_clock: ClockSpec
    links: tuple[LinkSpec, ...]


@dataclass(frozen=True)
class Clocks:
    """Clocks of a set: the primary hosts' and every other host's (they share the standby's skew and zone)."""

    primary: ClockSpec
    standby: ClockSpec
    #: seeds the `tim` counters of hosts other than the first standby
    seed: str
    epoch_tim: bool
    start: int

    def of(self, host: str, names: Names) -> ClockSpec:
        """The clock of a non-primary host."""
        if host == names.standby_host.format(n=1):
            return self.standby
        if self.epoch_tim:
            return replace(self.standby, tim_shift=self.standby.skew_us)
        counter = Random(f"{self.seed}:tim:{host}").randrange(10**11, 9 * 10**12)
        return replace(self.standby, tim_shift=counter - self.start)


def base_processes(
    names: Names, thread: int, sender: str, rng: Random, day: str = ""
) -> tuple[Process, Process, Process]:
    """The SYNC sender and LGWR of primary instance `thread`, and the RFS serving it on the first standby.

    Draws from `rng` in the order the classic sets always have.
    """
    name = sync_sender_name(2, lns=sender == "lns")
    nss = background(names, names.primary_db, thread, name, rng.randrange(30, 60), rng, day)
    lgwr = background(names, names.primary_db, thread, "LGWR", rng.randrange(10, 30), rng, day)
    rfs = rfs_process(names, names.standby_db, 1, nss, thread, rng, day)
    return nss, lgwr, rfs


def background(names: Names, db: str, n: int, name: str, number: int, rng: Random, day: str = "") -> Process:
    """A background process (NSS2, LNS1, LGWR, TT02 ...) of instance `n` of `db`."""
    return Process(
        host=names.host(db, n),
        db=db,
        sid=f"{db}{n}",
        pname=name.lower(),
        image=name,
        pid=rng.randrange(2000, 99_999),
        number=number,
        thread=n,
        session=f"{rng.randrange(100, 2000)}.{rng.randrange(1, 60000)}",
        service="SYS$BACKGROUND",
        module="",
        day=day,
    )


def rfs_process(names: Names, db: str, n: int, client: Process, client_no: int, rng: Random, day: str = "") -> Process:
    """The RFS process of instance `n` of `db` that serves `client` (a sender)."""
    return Process(
        host=names.host(db, n),
        db=db,
        sid=f"{db}{n}",
        pname="rfs",
        image="",
        pid=rng.randrange(2000, 99_999),
        number=rng.randrange(60, 400),
        thread=1 if db != names.far_sync_db else n,
        session=f"{rng.randrange(100, 5000)}.{rng.randrange(1, 60000)}",
        service="SYS$USERS",
        module=f"oracle@{client.host} ({client.image})",
        client_ip=f"{names.network}.{10 + client_no}",
        connection_id=base64.b64encode(rng.randbytes(16)).decode("ascii"),
        day=day,
    )


@dataclass(frozen=True)
class TopologyOptions:
    """The parts of the options that shape the links."""

    gen: Generation
    transport: str
    topology: str
    async_sender: bool
    rtt_ms: float


def thread_layout(
    topo: TopologyOptions,
    names: Names,
    clocks: Clocks,
    thread: int,
    base: tuple[Process, Process, Process],
    rng: Random,
) -> ThreadLayout:
    """The links of primary thread `thread`; `base` comes from `base_processes`, the rest draws from `rng`."""
    nss, lgwr, rfs = base
    day = nss.day
    sync = "FASTSYNC" if topo.transport == "fastsync" else "SYNC"
    far_rtt = topo.rtt_ms * ASYNC_RTT_FACTOR
    primary = clocks.primary
    links: list[LinkSpec] = []
    if topo.topology == "far-sync":
        fs_db = names.far_sync_db
        fs_clock = clocks.of(names.host(fs_db, thread), names)
        fs_rfs = rfs_process(names, fs_db, thread, nss, thread, rng, day)
        links.append(LinkSpec("first", sync, nss, fs_rfs, primary, fs_clock, 2, topo.rtt_ms))
        tt = background(names, fs_db, thread, async_sender_name(topo.gen, 2), rng.randrange(30, 60), rng, day)
        terminal = replace(rfs, module=f"oracle@{tt.host} ({tt.image})", client_ip=f"{names.network}.{40 + thread}")
        links.append(LinkSpec("forward", "ASYNC", tt, terminal, fs_clock, clocks.standby, 2, far_rtt))
    else:
        links.append(LinkSpec("first", sync, nss, rfs, primary, clocks.standby, 2, topo.rtt_ms))
    if topo.topology == "two-sync":
        nss3 = background(names, names.primary_db, thread, sync_sender_name(3), rng.randrange(30, 60), rng, day)
        bc_rfs = rfs_process(names, names.second_db, 1, nss3, thread, rng, day)
        bc_clock = clocks.of(bc_rfs.host, names)
        links.append(LinkSpec("follower", sync, nss3, bc_rfs, primary, bc_clock, 3, topo.rtt_ms))
    if topo.async_sender:
        dest = 4 if topo.topology == "two-sync" else 3
        name = async_sender_name(topo.gen, dest)
        sender = background(names, names.primary_db, thread, name, rng.randrange(30, 60), rng, day)
        ar_rfs = rfs_process(names, names.async_db, 1, sender, thread, rng, day)
        ar_clock = clocks.of(ar_rfs.host, names)
        links.append(LinkSpec("async", "ASYNC", sender, ar_rfs, primary, ar_clock, dest, far_rtt))
    return ThreadLayout(lgwr, primary, tuple(links))
