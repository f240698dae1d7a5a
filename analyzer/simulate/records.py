"""Text of each remote write in the NSS, RFS and LGWR traces, printed from the model's true times."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from random import Random

from analyzer.simulate.formats import (
    DEST_CHECK_MESSAGE,
    SWITCH_MESSAGE,
    Generation,
    HostClock,
    adaptive_sync_switch,
    adaptive_sync_update,
    broadcast_warning,
    standby_log_number,
)
from analyzer.simulate.model import (
    IO_EVENTS,
    NOISE_NSS_BLANKS,
    NOISE_NSS_MESSAGE,
    NOISE_RFS_BLANKS,
    NOISE_RFS_MESSAGE,
    NOISE_RFS_WAIT,
    Write,
)
from analyzer.simulate.truth import UtcText

_FIELDS = "oper='Write' flag=67111042 thrd={thread} seq={seq} msgid="
SEND = "Client sending SQLNET request data [kpurcs] " + _FIELDS
ACK = "... Client received SQLNET call [kpurcs] response " + _FIELDS
RECEIVED = "... Server received SQLNET data [krsr_rfs_dsp] " + _FIELDS
FINISHED = "... Server finished processing SQLNET data [krsr_rfs_dsp] " + _FIELDS

#: ADR prints a bare wall-clock line when about a second has passed (0.7 .. 1.05 s here)
_ADR_MIN_GAP_US = 700_000
_ADR_SPREAD_US = 350_000
#: the ADR line is written a few µs after the stamp taken for the line that triggers it
_ADR_LAG_US = 9


class _ProcessText:
    """Shared state of one trace file: its buffer, host clock and ADR cadence.

    `record` methods append a write's lines to the buffer and return the printed readings (host clock µs,
    truncated like the stamps) that truth.csv is computed from.
    """

    def __init__(self, clock: HostClock, out: list[str], start: int) -> None:
        self._clock = clock
        self._out = out
        self._next_adr = start + _ADR_MIN_GAP_US
        self._seq = -1

    def _adr(self, t: int) -> None:
        self._out.append(self._clock.adr(t + _ADR_LAG_US))
        self._next_adr = t + _ADR_MIN_GAP_US + t % _ADR_SPREAD_US

    def _stamped(self, t: int, suffix: str, message: str) -> str:
        """A krs stamp line followed by its message (krs style: stamp first)."""
        return f"*** {self._clock.krs(self._clock.printed(t))}{suffix}{message}\n"


class NssText(_ProcessText):
    """Event 16410 client lines of one sender (NSS, LNS, NSA, TT): send stamp below, ack stamp above."""

    def __init__(
        self,
        gen: Generation,
        clock: HostClock,
        thread: int,
        out: list[str],
        start: int,
        dest: int = 2,
        transport: str = "SYNC",
    ) -> None:
        """Lines for primary `thread` sent to LOG_ARCHIVE_DEST_`dest`, appended to `out`; session started at `start`."""
        super().__init__(clock, out, start)
        self._thread = thread
        self._dest = dest
        self._switch = SWITCH_MESSAGE["ASYNC" if transport == "ASYNC" else "SYNC"]
        send_line, ack_line = gen.krs_lines[0], gen.krs_lines[1]
        self._send_sfx = gen.krs_suffix("krsu.c", send_line) + "\n"
        self._ack_sfx = gen.krs_suffix("krsu.c", ack_line) + "\n"
        self._switch_sfx = gen.krs_suffix("krsu.c", send_line - 2417) + "\n"
        self._send = self._ack = ""

    def record(self, w: Write) -> tuple[int, int]:
        """Append one write; return the printed (t1, t4) readings of the primary clock."""
        out, clock = self._out, self._clock
        if w.seq != self._seq:
            self._seq = w.seq
            self._send = SEND.format(thread=self._thread, seq=w.seq)
            self._ack = ACK.format(thread=self._thread, seq=w.seq)
        if w.t1 >= self._next_adr:
            self._adr(w.t1)
        if w.new_log:
            switch = self._switch.format(thread=self._thread, seq=w.seq, dest=self._dest)
            out.append(self._stamped(w.t1 - 40, self._switch_sfx, switch))
        if w.noise == NOISE_NSS_MESSAGE:
            out.append(DEST_CHECK_MESSAGE.format(dest=self._dest, thread=self._thread, seq=w.seq))
        nl = "\n\n" if w.noise == NOISE_NSS_BLANKS else "\n"
        q1, q4 = clock.printed(w.t1), clock.printed(w.t4)
        out.append(f"{self._send}{w.msgid}{nl}*** {clock.krs(q1)}{self._send_sfx}")
        if w.t4 >= self._next_adr:
            self._adr(w.t4)
        out.append(f"*** {clock.krs(q4)}{self._ack_sfx}{nl[1:]}{self._ack}{w.msgid}\n")
        return q1, q4


class RfsText(_ProcessText):
    """Event 16410 server lines of one RFS process with its 10046 WAIT lines.

    ADR lines go only before WAIT lines, so each one is anchored by the `tim` right after it.
    """

    def __init__(
        self,
        gen: Generation,
        clock: HostClock,
        thread: int,
        out: list[str],
        start: int,
        tim_shift: int,
    ) -> None:
        """Lines for writes of primary `thread`; `tim = true µs + tim_shift`."""
        super().__init__(clock, out, start)
        self._thread = thread
        self._tim_shift = tim_shift
        recv_line, done_line = gen.krs_lines[2], gen.krs_lines[3]
        self._recv_sfx = gen.krs_suffix("krsr.c", recv_line) + "\n"
        self._done_sfx = gen.krs_suffix("krsr.c", done_line) + "\n"
        self._info_sfx = gen.krs_suffix("krsr.c", done_line + 3807) + "\n"
        self._waits = gen.rfs_wait_templates()
        self._idle = gen.idle_template()
        self._cf_read = gen.wait_template("control file sequential read", "file#=0 block#=1 blocks=1")
        self._recv = self._done = ""
        self._prev_t3 = start

    @property
    def last_end(self) -> int:
        """True µs when the RFS finished its last write (its last wait, for FASTSYNC)."""
        return self._prev_t3

    def record(self, w: Write) -> tuple[int, int, int, int]:
        """Append one write; return printed (t2, t3) standby readings and the I/O wait time (µs).

        The last value is the I/O wait time printed after the finished message (FASTSYNC), else 0.
        """
        if w.seq != self._seq:
            self._seq = w.seq
            self._recv = RECEIVED.format(thread=self._thread, seq=w.seq)
            self._done = FINISHED.format(thread=self._thread, seq=w.seq)
        self._between(w)
        out, clock, waits, shift = self._out, self._clock, self._waits, self._tim_shift
        blank = "\n" if w.noise == NOISE_RFS_BLANKS else ""
        q2, q3 = clock.printed(w.t2), clock.printed(w.t3)
        out.append(f"{self._recv}{w.msgid}\n{blank}*** {clock.krs(q2)}{self._recv_sfx}{blank}")
        io = late = 0
        t3 = w.t3
        inside = w.waits
        if inside and inside[-1][2] > t3:
            inside = tuple(x for x in w.waits if x[2] <= t3)
        for event, ela, end in inside:
            if end >= self._next_adr:
                self._adr(end)
            out.append(waits[event] % (ela, end + shift))
            if blank:
                out.append(blank)
            if event in IO_EVENTS:
                io += ela
        out.append(f"{self._done}{w.msgid}\n{blank}*** {clock.krs(q3)}{self._done_sfx}")
        self._prev_t3 = t3
        if len(inside) < len(w.waits):  # FASTSYNC: the standby redo log write comes after the finish
            for event, ela, end in w.waits[len(inside) :]:
                if end >= self._next_adr:
                    self._adr(end)
                out.append(waits[event] % (ela, end + shift))
                if event in IO_EVENTS:
                    late += ela
                self._prev_t3 = end
        return q2, q3, io, late

    def _between(self, w: Write) -> None:
        """Lines between the previous write and this one: log switch, noise, the idle wait."""
        out, prev = self._out, self._prev_t3
        if w.new_log:
            lno = standby_log_number(self._thread, w.seq)
            pick = f"krsr_srl_pick: Standby log LNO:{lno} chosen for T-{self._thread}.S-{w.seq}"
            out.append(self._stamped(prev + 4, self._info_sfx, pick))
        if w.noise == NOISE_RFS_MESSAGE:
            progress = f"krsr_rfs_progress: T-{self._thread}.S-{w.seq} last write {w.size_kb} KB"
            out.append(self._stamped(prev + 6, self._info_sfx, progress))
        elif w.noise == NOISE_RFS_WAIT:
            out.append(self._cf_read % (5, prev + 11 + self._tim_shift))
        idle_end = w.t2 - 2
        if idle_end >= self._next_adr:
            self._adr(idle_end)
        idle = idle_end - prev - 12
        out.append(self._idle % (idle if idle > 0 else 0, idle_end + self._tim_shift))


@dataclass(frozen=True)
class LgwrEvents:
    """LGWR lines beyond the long-write warnings, drawn from their own random stream."""

    gen: Generation
    rng: Random
    #: probability per LGWR write of a `log write broadcast wait time` warning
    broadcast_rate: float
    #: an adaptive log file sync switch (post/wait <-> polling) every this many writes; 0: never
    switch_every: int
    #: SCN of the thread at a true time
    scn: Callable[[int], int]
    host: str
    thread: int


class LgwrText:
    """`Warning: log write elapsed time` lines of one LGWR, each under its ADR wall-clock line.

    With `events`, also broadcast wait warnings and adaptive log file sync switches, and a row per line
    for lgwr_events.csv appended to `rows` (`count` rows so far).
    """

    def __init__(
        self,
        clock: HostClock,
        threshold_ms: int,
        out: list[str],
        events: LgwrEvents | None = None,
        rows: list[str] | None = None,
    ) -> None:
        """Warn for LGWR writes of at least `threshold_ms`."""
        self._clock = clock
        self._threshold = threshold_ms
        self._out = out
        self._events = events
        self._rows = rows if rows is not None else []
        self.count = 0
        self._writes = 0
        self._last = 0
        self._polling = False
        self._utc = UtcText()

    def record(self, w: Write) -> None:
        """Append the warning of this write if its LGWR elapsed time reaches the threshold."""
        if self._events is not None:
            self._record_events(w, self._events)
            return
        ms = w.lgwr_elapsed // 1000
        if ms >= self._threshold:
            when = self._clock.adr(w.lgwr_start + w.lgwr_elapsed)
            self._out.append(f"{when}Warning: log write elapsed time {ms}ms, size {w.size_kb}KB\n")

    def _record_events(self, w: Write, ev: LgwrEvents) -> None:
        """The write's lines in time order: a mode switch before it, its warnings after it."""
        out, clock, rng = self._out, self._clock, ev.rng
        self._writes += 1
        if ev.switch_every and self._writes % ev.switch_every == 0:
            at = max(w.lgwr_start, self._last + 1)
            self._polling = to_polling = not self._polling
            values = _alfs_values(rng, to_polling)
            delay, rate = rng.randrange(0, 4), rng.randrange(2, 400)
            out.append(adaptive_sync_update(to_polling, values))
            out.append(clock.adr(at) + adaptive_sync_switch(to_polling, delay, rate))
            self._row(at, "switch_to_polling" if to_polling else "switch_to_post_wait", "", ev)
        end = w.lgwr_start + w.lgwr_elapsed
        ms = w.lgwr_elapsed // 1000
        if ms >= self._threshold:
            at = max(end, self._last + 1)
            out.append(f"{clock.adr(at)}Warning: log write elapsed time {ms}ms, size {w.size_kb}KB\n")
            self._row(at, "log_write", str(ms), ev)
        if rng.random() < ev.broadcast_rate:
            at = max(end + 3, self._last + 1)
            wait_ms = int(300.0 * math.exp(0.8 * rng.gauss(0.0, 1.0))) + 1
            out.append(clock.adr(at) + broadcast_warning(ev.gen, wait_ms, ev.scn(at)))
            self._row(at, "broadcast_wait", str(wait_ms), ev)

    def _row(self, at: int, kind: str, elapsed: str, ev: LgwrEvents) -> None:
        self._last = at
        self._rows.append(f"{self._utc(self._clock.adr_reading(at))},{ev.host},{ev.thread},{kind},{elapsed}\n")
        self.count += 1


def _alfs_values(rng: Random, to_polling: bool) -> tuple[int, ...]:
    """Plausible counters for the `kcrfw_alfs_update_mode:` line (their meaning is undocumented)."""
    if to_polling:
        sync = rng.randrange(1200, 4000)
        poll = sync + rng.randrange(-600, 400)
        return (rng.randrange(2, 40), rng.randrange(10, 300), sync, poll, poll // 2, rng.randrange(100, 800), 1064)
    return (rng.randrange(0, 2), 1, rng.randrange(1, 6), rng.randrange(10, 20))
