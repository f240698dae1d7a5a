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


SCENARIOS: dict[str, Profile] = {
    "baseline": Profile(1.0, 0.002, 40.0, 0.002, 40.0, 2000, 8.0, 2, 0.0, 0.0, 2.0),
    "standby-io": Profile(1.0, 0.001, 60.0, 0.04, 180.0, 2000, 8.0, 2, 0.0, 0.0, 2.0),
    "network": Profile(1.0, 0.04, 150.0, 0.001, 40.0, 2000, 8.0, 2, 0.0, 0.0, 2.0),
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
    #: NSS send, RFS receive, RFS finish, NSS ack receive
    t1: int
    t2: int
    t3: int
    t4: int
    #: RFS waits inside the write, in order: (event code, ela µs, end µs)
    waits: tuple[tuple[int, int, int], ...]
    #: LGWR's local write starts before t1 and ends after the ack (elapsed covers the remote write)
    lgwr_start: int
    lgwr_elapsed: int


class ThreadModel:
    """Draws the writes of one primary thread: one NSS, one outstanding write at a time."""

    def __init__(self, profile: Profile, rng: Random, start_us: int, noise: float, msgids: tuple[int, int]) -> None:
        """Prepare a thread whose first send happens at `start_us`.

        `msgids` is (first, step): threads of a set interleave their msgids, so none is used twice.
        """
        self._p = profile
        self._msgids = msgids
        self._rng = rng
        self._start = start_us
        self._noise = noise
        self._half_rtt = profile.rtt_ms * 500.0
        self._bits = rng.getrandbits

    def writes(self) -> Iterator[Write]:
        """Yield writes forever; the caller stops when its budget is reached."""
        rng = self._rng
        seq = rng.randrange(900, 4000)
        msgid, step = self._msgids
        in_log = 0
        since_switch = self._p.switch_writes  # the first log of the set did not just switch
        t = self._start
        while True:
            if in_log == self._p.log_switch_every:
                seq, in_log, since_switch = seq + 1, 0, 0
            write = self._write(t, seq, msgid, since_switch)
            yield write
            in_log += 1
            since_switch += 1
            msgid += step if rng.random() >= 0.01 else step * rng.randint(2, 5)
            t = write.t4 + 20 + int(_EXP[self._bits(_BITS)] * self._p.gap_ms * 1000.0)

    def _write(self, t1: int, seq: int, msgid: int, since_switch: int) -> Write:
        rng, bits = self._rng, self._bits
        size_kb = int(12.0 * _LOGN_ONE[bits(_BITS)]) or 1
        noise = rng.randrange(1, _NOISE_KINDS + 1) if rng.random() < self._noise else NOISE_NONE
        out, back = self._network(size_kb)
        t2 = t1 + out
        waits, t3 = self._rfs(t2, size_kb, since_switch, noise)
        t4 = t3 + back
        lgwr_start = t1 - 15 - int(30.0 * _EXP[bits(_BITS)])
        local_end = lgwr_start + int(500.0 * _LOGN_HALF[bits(_BITS)]) + size_kb
        lgwr_end = (t4 if t4 > local_end else local_end) + 20 + int(40.0 * _EXP[bits(_BITS)])
        new_log = since_switch == 0
        elapsed = lgwr_end - lgwr_start
        return Write(seq, msgid, size_kb, new_log, noise, t1, t2, t3, t4, waits, lgwr_start, elapsed)

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
        return _MIN_ONE_WAY_US + int(out), _MIN_ONE_WAY_US + int(back)

    def _rfs(
        self, t2: int, size_kb: int, since_switch: int, noise: int
    ) -> tuple[tuple[tuple[int, int, int], ...], int]:
        """RFS work from receive to finish: CPU gaps and waits; returns (waits, t3)."""
        rng, p, bits = self._rng, self._p, self._bits
        t = t2 + 15 + int(40.0 * _EXP[bits(_BITS)])
        if rng.random() < p.stall_rate:
            t += int(_lognormal(rng, p.stall_ms * 1000.0, 0.5))
        waits: list[tuple[int, int, int]] = []
        if noise == NOISE_RFS_DISPATCH:
            t = _wait(waits, EV_DISPATCH, 5 + int(20.0 * _EXP[bits(_BITS)]), t) + 3
        if since_switch == 0:
            t = _wait(waits, EV_SEQUENTIAL, int(_lognormal(rng, p.switch_ms * 300.0, 0.5)), t) + 5
        if since_switch == 0 or rng.random() < 0.35:
            t = _wait(waits, EV_RANDOM, 120 + int(200.0 * _EXP[bits(_BITS)]), t) + 4
        t = _wait(waits, EV_WRITE, self._srl_write(size_kb, since_switch), t)
        return tuple(waits), t + 10 + int(25.0 * _EXP[bits(_BITS)])

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


def _wait(waits: list[tuple[int, int, int]], event: int, ela: int, start: int) -> int:
    """Append a wait that starts at `start`; return its end."""
    end = start + ela
    waits.append((event, ela, end))
    return end


def _lognormal(rng: Random, median: float, sigma: float) -> float:
    return median * math.exp(sigma * rng.gauss(0.0, 1.0))
