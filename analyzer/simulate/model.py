"""True event times of SYNC remote writes, drawn from each scenario's delay distributions (µs)."""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass
from random import Random
from statistics import NormalDist
from typing import NamedTuple

#: RFS wait events written as 10046 WAIT lines inside a write (index = event code)
RFS_EVENTS = ("RFS write", "RFS random i/o", "RFS sequential i/o", "RFS dispatch")
EV_WRITE, EV_RANDOM, EV_SEQUENTIAL, EV_DISPATCH = range(4)
#: events whose time is standby I/O (rfs_io); the others count as rfs_other
IO_EVENTS = frozenset({EV_WRITE, EV_RANDOM, EV_SEQUENTIAL})

#: noise items; a write carries at most one (0 = none)
(
    NOISE_NONE,
    NOISE_NSS_BLANKS,
    NOISE_RFS_BLANKS,
    NOISE_NSS_MESSAGE,
    NOISE_RFS_MESSAGE,
    NOISE_RFS_WAIT,
    NOISE_RFS_DISPATCH,
) = range(7)
_NOISE_KINDS = 6

#: largest ASYNC message: redo ready while one is in flight is coalesced up to this size
MAX_ASYNC_KB = 1024

#: fixed part of each one-way network delay (stack and NIC); keeps the RFS idle wait positive
_MIN_ONE_WAY_US = 20

# Frequent small draws (CPU gaps, jitter, ordinary I/O) read a table of quantiles with one
# getrandbits call, several times cheaper than expovariate/gauss; rare spikes draw exactly.
_BITS = 12
_QUANTILES = [(i + 0.5) / (1 << _BITS) for i in range(1 << _BITS)]
#: unit-mean exponential
_EXP = tuple(-math.log(1.0 - q) for q in _QUANTILES)
#: lognormal with median 1 and sigma 0.5 / 1.0
_LOGN_HALF = tuple(math.exp(0.5 * NormalDist().inv_cdf(q)) for q in _QUANTILES)
_LOGN_ONE = tuple(math.exp(NormalDist().inv_cdf(q)) for q in _QUANTILES)


@dataclass(frozen=True)
class Profile:
    """Delay distributions of one scenario (medians in ms; rates are per remote write)."""

    rtt_ms: float
    #: a network spike adds a lognormal delay to the request or the reply
    net_spike_rate: float
    net_spike_ms: float
    #: an I/O spike adds a lognormal delay to the standby's `RFS write`
    io_spike_rate: float
    io_spike_ms: float
    #: writes per log sequence; the first `switch_writes` writes of a new log pay extra standby I/O
    log_switch_every: int
    switch_ms: float
    switch_writes: int
    #: RFS stalls outside any wait (CPU, scheduling): rfs_other
    stall_rate: float
    stall_ms: float
    #: mean idle time of NSS between the ack of one write and the next send
    gap_ms: float
    #: a bandwidth-bound link: with this probability per write a congested period starts, `congestion_writes`
    #: writes long, each request of which waits in a queue (a lognormal delay of median `congestion_ms`)
    congestion_rate: float = 0.0
    congestion_writes: int = 0
    congestion_ms: float = 0.0


#: fields added to `Profile` after the classic sets, with their defaults (scenario.json names them only when used)
LATER_PROFILE: dict[str, object] = {"congestion_rate": 0.0, "congestion_writes": 0, "congestion_ms": 0.0}

SCENARIOS: dict[str, Profile] = {
    "baseline": Profile(1.0, 0.002, 40.0, 0.002, 40.0, 2000, 8.0, 2, 0.0, 0.0, 2.0),
    "standby-io": Profile(1.0, 0.001, 60.0, 0.04, 180.0, 2000, 8.0, 2, 0.0, 0.0, 2.0),
    "network": Profile(1.0, 0.04, 150.0, 0.001, 40.0, 2000, 8.0, 2, 0.0, 0.0, 2.0),
    "bandwidth": Profile(1.0, 0.0, 0.0, 0.001, 40.0, 2000, 8.0, 2, 0.0, 0.0, 2.0, 0.0008, 50, 150.0),
    "log-switch": Profile(1.0, 0.001, 40.0, 0.001, 40.0, 300, 160.0, 4, 0.0, 0.0, 2.0),
    "mixed": Profile(2.0, 0.01, 120.0, 0.01, 150.0, 800, 90.0, 3, 0.004, 150.0, 2.0),
}


class Write(NamedTuple):
    """One remote write; times are true µs since the Unix epoch (no host clock applied)."""

    seq: int
    msgid: int
    size_kb: int
    #: first write of a new log sequence (after a log switch)
    new_log: bool
    #: NOISE_* item carried by this write
    noise: int
    #: sender's send, RFS receive, RFS finish, sender's ack receive
    t1: int
    t2: int
    t3: int
    t4: int
    #: RFS waits of the write, in order: (event code, ela µs, end µs); FASTSYNC waits end after t3
    waits: tuple[tuple[int, int, int], ...]
    #: LGWR's local write starts before t1 and ends after the ack (elapsed covers the remote write)
    lgwr_start: int
    lgwr_elapsed: int
    #: the same redo sent to further SYNC destinations at the same time (their own msgids and timings)
    more: tuple[Write, ...] = ()


class Link:
    """Network and RFS draws of one destination: the request, the standby's work, the reply.

    SYNC (AFFIRM) and ASYNC: the RFS writes the standby redo log before it finishes. FASTSYNC (SYNC
    NOAFFIRM): the RFS finishes right after the receive, and writes the standby redo log after that;
    a message that arrives while it still writes is received when the write is done.
    """

    def __init__(self, profile: Profile, rng: Random, fastsync: bool = False) -> None:
        """Draw from `rng` with the delays of `profile`."""
        self._p = profile
        self._rng = rng
        self._bits = rng.getrandbits
        self._half_rtt = profile.rtt_ms * 500.0
        self._fastsync = fastsync
        #: FASTSYNC: when the RFS's last standby redo log write ends
        self._busy = 0
        #: writes left in the current congested period (`Profile.congestion_rate`)
        self._congested = 0

    @property
    def profile(self) -> Profile:
        """The delays this link draws from."""
        return self._p

    def exchange(
        self, t1: int, size_kb: int, since_switch: int, noise: int
    ) -> tuple[int, int, int, tuple[tuple[int, int, int], ...]]:
        """(t2, t3, t4, waits) of a message sent at `t1`."""
        out, back = self._network(size_kb)
        t2 = t1 + out
        if self._fastsync:
            t2 = max(t2, self._busy + 6)
            waits, t3 = self._rfs_noaffirm(t2, size_kb, since_switch, noise)
        else:
            waits, t3 = self._rfs(t2, size_kb, since_switch, noise)
        return t2, t3, t3 + back, waits

    def _network(self, size_kb: int) -> tuple[int, int]:
        """One-way delays (request with its redo, reply), with jitter and rare spikes."""
        rng, half, bits = self._rng, self._half_rtt, self._bits
        out = half * (0.95 + 0.1 * rng.random()) + 30.0 * _EXP[bits(_BITS)] + 8.0 * size_kb
        back = half * (0.95 + 0.1 * rng.random()) + 30.0 * _EXP[bits(_BITS)]
        if rng.random() < self._p.net_spike_rate:
            extra = _lognormal(rng, self._p.net_spike_ms * 1000.0, 0.6)
            if rng.random() < 0.5:
                out += extra
            else:
                back += extra
        if self._p.congestion_rate:  # no draw without congestion: the other scenarios keep their bytes
            out += self._queued(rng)
        return _MIN_ONE_WAY_US + int(out), _MIN_ONE_WAY_US + int(back)

    def _queued(self, rng: Random) -> float:
        """The queueing delay of a request (µs): 0 outside a congested period."""
        p = self._p
        if not self._congested and rng.random() < p.congestion_rate:
            self._congested = p.congestion_writes
        if not self._congested:
            return 0.0
        self._congested -= 1
        return _lognormal(rng, p.congestion_ms * 1000.0, 0.35)

    def _rfs(
        self, t2: int, size_kb: int, since_switch: int, noise: int
    ) -> tuple[tuple[tuple[int, int, int], ...], int]:
        """RFS work from receive to finish: CPU gaps and waits; returns (waits, t3)."""
        t, waits = self._rfs_start(t2, noise)
        t = self._srl_waits(waits, t, size_kb, since_switch)
        return tuple(waits), t + 10 + int(25.0 * _EXP[self._bits(_BITS)])

    def _rfs_noaffirm(
        self, t2: int, size_kb: int, since_switch: int, noise: int
    ) -> tuple[tuple[tuple[int, int, int], ...], int]:
        """FASTSYNC: finish after the CPU work; the standby redo log waits come after t3."""
        t, waits = self._rfs_start(t2, noise)
        t3 = t + 10 + int(25.0 * _EXP[self._bits(_BITS)])
        self._busy = self._srl_waits(waits, t3 + 4 + int(10.0 * _EXP[self._bits(_BITS)]), size_kb, since_switch)
        return tuple(waits), t3

    def _rfs_start(self, t2: int, noise: int) -> tuple[int, list[tuple[int, int, int]]]:
        """The RFS's first work after the receive, AFFIRM or not: CPU, a rare stall, the dispatch noise.

        Returns the time it ends and the waits so far. The draws are in the order the classic sets' bytes pin.
        """
        rng, p, bits = self._rng, self._p, self._bits
        t = t2 + 15 + int(40.0 * _EXP[bits(_BITS)])
        if rng.random() < p.stall_rate:
            t += int(_lognormal(rng, p.stall_ms * 1000.0, 0.5))
        waits: list[tuple[int, int, int]] = []
        if noise == NOISE_RFS_DISPATCH:
            t = _wait(waits, EV_DISPATCH, 5 + int(20.0 * _EXP[bits(_BITS)]), t) + 3
        return t, waits

    def _srl_waits(self, waits: list[tuple[int, int, int]], t: int, size_kb: int, since_switch: int) -> int:
        """The standby redo log I/O waits from `t` (log switch, random i/o, the write); returns their end."""
        rng, p, bits = self._rng, self._p, self._bits
        if since_switch == 0:
            t = _wait(waits, EV_SEQUENTIAL, int(_lognormal(rng, p.switch_ms * 300.0, 0.5)), t) + 5
        if since_switch == 0 or rng.random() < 0.35:
            t = _wait(waits, EV_RANDOM, 120 + int(200.0 * _EXP[bits(_BITS)]), t) + 4
        return _wait(waits, EV_WRITE, self._srl_write(size_kb, since_switch), t)

    def _srl_write(self, size_kb: int, since_switch: int) -> int:
        """Duration of the standby redo log write: lognormal body, spikes, log-switch penalty."""
        rng, p = self._rng, self._p
        ela = 450.0 * _LOGN_HALF[self._bits(_BITS)] + 2.0 * size_kb
        if since_switch < p.switch_writes:
            scale = 1.0 if since_switch == 0 else 0.5
            ela += _lognormal(rng, p.switch_ms * 1000.0 * scale, 0.5)
        if rng.random() < p.io_spike_rate:
            ela += _lognormal(rng, p.io_spike_ms * 1000.0, 0.7)
        return int(ela)


class SyncFollower:
    """A further SYNC destination of a primary thread: its sender ships the same redo a few µs after the first.

    Its msgids are its own sequence, started where the first destination's started (so they overlap).
    """

    def __init__(self, link: Link, rng: Random, noise: float, msgids: tuple[int, int]) -> None:
        """Ship over `link`, drawing noise and msgid skips from `rng`."""
        self._link, self._rng, self._noise = link, rng, noise
        self._msgid, self._step = msgids

    def follow(self, w: Write, since_switch: int) -> Write:
        """This destination's write of the redo that the first destination's write `w` carries."""
        rng = self._rng
        t1 = w.t1 + 3 + int(20.0 * _EXP[rng.getrandbits(_BITS)])
        noise = _draw_noise(rng, self._noise)
        t2, t3, t4, waits = self._link.exchange(t1, w.size_kb, since_switch, noise)
        msgid = self._msgid
        self._msgid += _msgid_step(rng, self._step)
        return Write(w.seq, msgid, w.size_kb, w.new_log, noise, t1, t2, t3, t4, waits, 0, 0)


class AsyncStream:
    """ASYNC shipments of the redo of one thread, one message in flight at a time.

    Redo that becomes ready while a message is in flight is coalesced into the next one (same log
    sequence, up to MAX_ASYNC_KB). Its msgids are its own sequence (overlapping the SYNC sender's).
    """

    def __init__(self, link: Link, rng: Random, noise: float, msgids: tuple[int, int]) -> None:
        """Ship over `link`, drawing lags, noise and msgid skips from `rng`."""
        self._link, self._rng, self._noise = link, rng, noise
        self._msgid, self._step = msgids
        #: [ready µs, seq, size KB] of the redo waiting for the next message
        self._pending: list[int] | None = None
        self._free = 0
        self._seq = -1
        self._since = 0
        #: switch_writes of the link's profile: the first log shipped did not just switch
        self._settled = link.profile.switch_writes

    def offer(self, ready: int, seq: int, size_kb: int) -> Write | None:
        """Redo of `size_kb` of log `seq` is ready at `ready`; return the message shipped before it, if any."""
        lag = 60 + int(150.0 * _EXP[self._rng.getrandbits(_BITS)])
        pending = self._pending
        shipped = None
        if pending is not None:
            at = max(pending[0], self._free)
            if seq == pending[1] and ready + lag <= at and pending[2] + size_kb <= MAX_ASYNC_KB:
                pending[2] += size_kb
                return None
            shipped = self._ship(at, pending[1], pending[2])
        self._pending = [ready + lag, seq, size_kb]
        return shipped

    def flush(self) -> Write | None:
        """Ship what is still pending."""
        pending, self._pending = self._pending, None
        return None if pending is None else self._ship(max(pending[0], self._free), pending[1], pending[2])

    def _ship(self, t1: int, seq: int, size_kb: int) -> Write:
        rng = self._rng
        if seq != self._seq:
            self._since = self._settled if self._seq < 0 else 0
            self._seq = seq
        noise = _draw_noise(rng, self._noise)
        t2, t3, t4, waits = self._link.exchange(t1, size_kb, self._since, noise)
        msgid = self._msgid
        self._msgid += _msgid_step(rng, self._step)
        self._free = t4 + 20 + int(200.0 * _EXP[rng.getrandbits(_BITS)])
        write = Write(seq, msgid, size_kb, self._since == 0, noise, t1, t2, t3, t4, waits, 0, 0)
        self._since += 1
        return write


class ThreadModel:
    """Draws the writes of one primary thread: one SYNC sender, one outstanding write at a time."""

    def __init__(
        self,
        profile: Profile,
        rng: Random,
        start_us: int,
        noise: float,
        msgids: tuple[int, int],
        *,
        fastsync: bool = False,
        followers: tuple[SyncFollower, ...] = (),
        keys: Random | None = None,
        first_seq: int | None = None,
    ) -> None:
        """Prepare a thread whose first send happens at `start_us`.

        `msgids` is (first, step): threads of a set interleave their msgids, so none is used twice.
        `followers` are further SYNC destinations: the next write waits for every acknowledgement.
        `keys` draws the msgid skips instead of `rng` and `first_seq` replaces the drawn first log
        sequence, so that sets with other delays can share the same (thread, seq, msgid) keys.
        """
        self._p = profile
        self._msgids = msgids
        self._rng = rng
        self._start = start_us
        self._noise = noise
        self._bits = rng.getrandbits
        self._link = Link(profile, rng, fastsync)
        self._followers = followers
        self._keys = keys
        self._first_seq = first_seq

    def writes(self) -> Iterator[Write]:
        """Yield writes forever; the caller stops when its budget is reached."""
        rng = self._rng
        keys = rng if self._keys is None else self._keys
        seq = rng.randrange(900, 4000) if self._first_seq is None else self._first_seq
        msgid, step = self._msgids
        in_log = 0
        since_switch = self._p.switch_writes  # the first log of the set did not just switch
        t = self._start
        while True:
            if in_log == self._p.log_switch_every:
                seq, in_log, since_switch = seq + 1, 0, 0
            write = self._write(t, seq, msgid, since_switch)
            ack = write.t4
            if self._followers:
                more = tuple(f.follow(write, since_switch) for f in self._followers)
                ack = max(ack, *(m.t4 for m in more))
                end = max(write.lgwr_start + write.lgwr_elapsed, ack + 20)
                write = write._replace(more=more, lgwr_elapsed=end - write.lgwr_start)
            yield write
            in_log += 1
            since_switch += 1
            msgid += _msgid_step(keys, step)
            t = ack + 20 + int(_EXP[self._bits(_BITS)] * self._p.gap_ms * 1000.0)

    def _write(self, t1: int, seq: int, msgid: int, since_switch: int) -> Write:
        rng, bits = self._rng, self._bits
        size_kb = int(12.0 * _LOGN_ONE[bits(_BITS)]) or 1
        noise = _draw_noise(rng, self._noise)
        t2, t3, t4, waits = self._link.exchange(t1, size_kb, since_switch, noise)
        lgwr_start = t1 - 15 - int(30.0 * _EXP[bits(_BITS)])
        local_end = lgwr_start + int(500.0 * _LOGN_HALF[bits(_BITS)]) + size_kb
        lgwr_end = (t4 if t4 > local_end else local_end) + 20 + int(40.0 * _EXP[bits(_BITS)])
        new_log = since_switch == 0
        elapsed = lgwr_end - lgwr_start
        return Write(seq, msgid, size_kb, new_log, noise, t1, t2, t3, t4, waits, lgwr_start, elapsed)


def _draw_noise(rng: Random, probability: float) -> int:
    return rng.randrange(1, _NOISE_KINDS + 1) if rng.random() < probability else NOISE_NONE


def _msgid_step(rng: Random, step: int) -> int:
    """msgid rises by `step` with every write, and sometimes skips a few."""
    return step if rng.random() >= 0.01 else step * rng.randint(2, 5)


def _wait(waits: list[tuple[int, int, int]], event: int, ela: int, start: int) -> int:
    """Append a wait that starts at `start`; return its end."""
    end = start + ela
    waits.append((event, ela, end))
    return end


def _lognormal(rng: Random, median: float, sigma: float) -> float:
    return median * math.exp(sigma * rng.gauss(0.0, 1.0))
