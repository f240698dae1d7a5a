"""Text of each remote write in the NSS, RFS and LGWR traces, printed from the model's true times."""

from __future__ import annotations

from analyzer.simulate.formats import Generation, HostClock
from analyzer.simulate.model import (
    IO_EVENTS,
    NOISE_NSS_BLANKS,
    NOISE_NSS_MESSAGE,
    NOISE_RFS_BLANKS,
    NOISE_RFS_MESSAGE,
    NOISE_RFS_WAIT,
    Write,
)

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
    """Event 16410 client lines of one NSS (or LNS) process: send stamp below, ack stamp above."""

    def __init__(self, gen: Generation, clock: HostClock, thread: int, out: list[str], start: int) -> None:
        """Lines for primary `thread`, appended to `out`; the session started at `start`."""
        super().__init__(clock, out, start)
        self._thread = thread
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
            switch = f"krsu_sync_switch: SYNC transport moves to T-{self._thread}.S-{w.seq} (LAD:2)"
            out.append(self._stamped(w.t1 - 40, self._switch_sfx, switch))
        if w.noise == NOISE_NSS_MESSAGE:
            out.append(f"krsu_dest_check: LAD:2 VALID, T-{self._thread}.S-{w.seq} acked\n")
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

    def record(self, w: Write) -> tuple[int, int, int]:
        """Append one write; return printed (t2, t3) standby readings and the I/O wait time (µs)."""
        if w.seq != self._seq:
            self._seq = w.seq
            self._recv = RECEIVED.format(thread=self._thread, seq=w.seq)
            self._done = FINISHED.format(thread=self._thread, seq=w.seq)
        self._between(w)
        out, clock, waits, shift = self._out, self._clock, self._waits, self._tim_shift
        blank = "\n" if w.noise == NOISE_RFS_BLANKS else ""
        q2, q3 = clock.printed(w.t2), clock.printed(w.t3)
        out.append(f"{self._recv}{w.msgid}\n{blank}*** {clock.krs(q2)}{self._recv_sfx}{blank}")
        io = 0
        for event, ela, end in w.waits:
            if end >= self._next_adr:
                self._adr(end)
            out.append(waits[event] % (ela, end + shift))
            if blank:
                out.append(blank)
            if event in IO_EVENTS:
                io += ela
        out.append(f"{self._done}{w.msgid}\n{blank}*** {clock.krs(q3)}{self._done_sfx}")
        self._prev_t3 = w.t3
        return q2, q3, io

    def _between(self, w: Write) -> None:
        """Lines between the previous write and this one: log switch, noise, the idle wait."""
        out, prev = self._out, self._prev_t3
        if w.new_log:
            lno = 11 + (self._thread - 1) * 4 + w.seq % 4
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


class LgwrText:
    """`Warning: log write elapsed time` lines of one LGWR, each under its ADR wall-clock line."""

    def __init__(self, clock: HostClock, threshold_ms: int, out: list[str]) -> None:
        """Warn for LGWR writes of at least `threshold_ms`."""
        self._clock = clock
        self._threshold = threshold_ms
        self._out = out

    def record(self, w: Write) -> None:
        """Append the warning of this write if its LGWR elapsed time reaches the threshold."""
        ms = w.lgwr_elapsed // 1000
        if ms >= self._threshold:
            when = self._clock.adr(w.lgwr_start + w.lgwr_elapsed)
            self._out.append(f"{when}Warning: log write elapsed time {ms}ms, size {w.size_kb}KB\n")
