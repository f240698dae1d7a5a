"""Per-generation text layout: host clocks, ADR wall-clock lines, krs stamps, WAIT line shapes."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

from analyzer.simulate.model import RFS_EVENTS

ORACLE_BASE = "/u01/app/oracle"
#: idle wait of an RFS process between two messages of its client
IDLE_EVENT = "SQL*Net message from client"
_IDLE_PARAMS = "driver id=1413697536 #bytes=1 p3=0"
#: p1..p3 of the RFS events (their parameter names are empty, so 10046 prints p1= p2= p3=)
_RFS_PARAMS = ("p1=0 p2=0 p3=0", "p1=0 p2=0 p3=2147483647", "p1=0 p2=0 p3=0", "p1=0 p2=0 p3=0")


@dataclass(frozen=True)
class Generation:
    """What changes in the trace text between Oracle releases (docs/formats.md sections 1, 2 and 4)."""

    name: str
    banner: tuple[str, ...]
    #: 18c+: RU version on its own line and the build label
    version: str | None
    build_label: str | None
    oracle_home: str
    #: uname release and version of the simulated hosts
    kernel: tuple[str, str]
    #: digits after the second in krs stamps: 3 (ms, the paper) or 6 (µs)
    stamp_digits: int
    #: 12.2+ layout: ISO-8601 ADR lines with UTC offset and `[file.c:line]` krs stamps
    iso: bool
    #: `ela= N` up to 21c, `ela=N` in 23ai
    ela_space: bool
    #: obj# printed when there is no object
    no_object: str
    #: tim= is Unix-epoch µs (Linux up to 12.1), else a host counter
    epoch_tim: bool
    #: 23c+: `NID:` in the pid line and a `CLID:` header line
    nid: bool
    #: source lines of the krs stamps: send (krsu.c), ack (krsu.c), received (krsr.c), finished
    krs_lines: tuple[int, int, int, int]
    #: UTC day on which simulated sets of this generation start
    start: datetime

    def krs_suffix(self, source: str, line: int) -> str:
        """The `<line> <file>` or `[file:line]` tail of a krs stamp line."""
        return f" [{source}:{line}]" if self.iso else f" {line} {source}"

    def wait_template(self, event: str, params: str) -> str:
        """A 10046 WAIT line of cursor #0 with `%d` slots for ela and tim."""
        sep = " " if self.ela_space else ""
        return f"WAIT #0: nam='{event}' ela={sep}%d {params} obj#={self.no_object} tim=%d\n"

    def rfs_wait_templates(self) -> tuple[str, ...]:
        """WAIT templates of the RFS events, indexed like model.RFS_EVENTS."""
        return tuple(self.wait_template(e, p) for e, p in zip(RFS_EVENTS, _RFS_PARAMS, strict=True))

    def idle_template(self) -> str:
        """WAIT template of the idle wait between two writes."""
        return self.wait_template(IDLE_EVENT, _IDLE_PARAMS)


_OPTIONS_LINE = "With the Partitioning, Real Application Clusters, Automatic Storage Management, OLAP,"

GENERATIONS: dict[str, Generation] = {
    "11.2": Generation(
        name="11.2",
        banner=(
            "Oracle Database 11g Enterprise Edition Release 11.2.0.4.0 - 64bit Production",
            _OPTIONS_LINE,
            "Data Mining and Real Application Testing options",
        ),
        version=None,
        build_label=None,
        oracle_home=f"{ORACLE_BASE}/product/11.2.0.4/dbhome_1",
        kernel=("2.6.39-400.294.3.el6uek.x86_64", "#2 SMP Thu Jun 9 11:41:07 PDT 2016"),
        stamp_digits=3,
        iso=False,
        ela_space=True,
        no_object="-1",
        epoch_tim=True,
        nid=False,
        krs_lines=(5837, 6058, 826, 1459),
        start=datetime(2014, 11, 18, 14, 0, tzinfo=UTC),
    ),
    "12.1": Generation(
        name="12.1",
        banner=(
            "Oracle Database 12c Enterprise Edition Release 12.1.0.2.0 - 64bit Production",
            _OPTIONS_LINE,
            "Advanced Analytics and Real Application Testing options",
        ),
        version=None,
        build_label=None,
        oracle_home=f"{ORACLE_BASE}/product/12.1.0.2/dbhome_1",
        kernel=("3.8.13-118.20.2.el7uek.x86_64", "#2 SMP Fri Nov 17 15:11:12 PST 2017"),
        stamp_digits=6,
        iso=False,
        ela_space=True,
        no_object="-1",
        epoch_tim=True,
        nid=False,
        krs_lines=(7412, 7631, 1022, 1688),
        start=datetime(2018, 3, 6, 14, 0, tzinfo=UTC),
    ),
    "19c": Generation(
        name="19c",
        banner=("Oracle Database 19c Enterprise Edition Release 19.0.0.0.0 - Production",),
        version="19.22.0.0.0",
        build_label="RDBMS_19.22.0.0.0DBRU_LINUX.X64_240112",
        oracle_home=f"{ORACLE_BASE}/product/19.0.0.0/dbhome_1",
        kernel=("5.4.17-2136.328.3.el8uek.x86_64", "#2 SMP Fri Feb 9 16:02:52 PST 2024"),
        stamp_digits=6,
        iso=True,
        ela_space=True,
        no_object="-1",
        epoch_tim=False,
        nid=False,
        krs_lines=(10652, 10873, 1196, 1871),
        start=datetime(2024, 10, 22, 14, 0, tzinfo=UTC),
    ),
    "23ai": Generation(
        name="23ai",
        banner=("Oracle Database 23ai Enterprise Edition Release 23.0.0.0.0 - Production",),
        version="23.6.0.24.10",
        build_label="RDBMS_23.6.0.24.10_LINUX.X64_241007",
        oracle_home=f"{ORACLE_BASE}/product/23.0.0/dbhome_1",
        kernel=("5.15.0-303.171.5.2.el9uek.x86_64", "#2 SMP Wed Oct 30 19:22:26 PDT 2024"),
        stamp_digits=6,
        iso=True,
        ela_space=False,
        no_object="4294967295",
        epoch_tim=False,
        nid=True,
        krs_lines=(11921, 12144, 1240, 1933),
        start=datetime(2025, 5, 6, 14, 0, tzinfo=UTC),
    ),
}


class HostClock:
    """Prints true times (µs since the epoch) through one host: clock skew, UTC offset, truncation.

    Date and time-of-day strings are cached per second, which keeps formatting cheap.
    """

    def __init__(self, skew_us: int, offset_min: int, generation: Generation) -> None:
        """A clock `skew_us` ahead of true time, shown at UTC offset `offset_min`."""
        self._skew = skew_us
        self._shift = offset_min * 60_000_000
        self._krs_div = 1000 if generation.stamp_digits == 3 else 1
        self._krs_fmt = f"%s.%0{generation.stamp_digits}d"
        self._iso = generation.iso
        sign = "-" if offset_min < 0 else "+"
        self._zone = f"{sign}{abs(offset_min) // 60:02d}:{abs(offset_min) % 60:02d}"
        self._sec = -1
        self._space = ""
        self._tee = ""

    def printed(self, t: int) -> int:
        """The host clock's reading at true time `t`, truncated to the krs stamp resolution (µs)."""
        reading = t + self._skew
        return reading - reading % self._krs_div

    def krs(self, reading: int) -> str:
        """Local date and time of a `printed` reading, as in a krs stamp (no zone)."""
        sec, frac = divmod(reading + self._shift, 1_000_000)
        if sec != self._sec:
            self._roll(sec)
        return self._krs_fmt % (self._space, frac // self._krs_div)

    def wall(self, t: int) -> str:
        """Local wall-clock time at true time `t` in the ADR format (ms, or ISO µs with offset)."""
        sec, frac = divmod(t + self._skew + self._shift, 1_000_000)
        if sec != self._sec:
            self._roll(sec)
        if self._iso:
            return f"{self._tee}.{frac:06d}{self._zone}"
        return f"{self._space}.{frac // 1000:03d}"

    def adr_reading(self, t: int) -> int:
        """The host clock's reading (µs, UTC based) that the ADR line of true time `t` prints."""
        reading = t + self._skew
        return reading if self._iso else reading - reading % 1000

    def ctime(self, t: int) -> str:
        """Local time at true time `t` in the ctime layout of <= 12.1 alert logs: `Tue Nov 18 09:18:49 2014`."""
        moment = datetime.fromtimestamp((t + self._skew + self._shift) // 1_000_000, UTC)
        return f"{moment:%a %b} {moment.day:2d} {moment:%H:%M:%S %Y}"

    def adr(self, t: int) -> str:
        """A bare ADR `***` line (with a leading empty line) for true time `t`."""
        suffix = " (CDB$ROOT(1))" if self._iso else ""
        return f"\n*** {self.wall(t)}{suffix}\n"

    def _roll(self, sec: int) -> None:
        moment = datetime.fromtimestamp(sec, UTC)
        day, hms = moment.strftime("%Y-%m-%d"), moment.strftime("%H:%M:%S")
        self._sec, self._space, self._tee = sec, f"{day} {hms}", f"{day}T{hms}"


# --- shapes of the newer simulated files: every choice below is listed in docs/simulator.md ("What is simulated")


def sync_sender_name(dest: int, lns: bool = False) -> str:
    """SYNC sender of LOG_ARCHIVE_DEST_n: NSSn from 11.2.0.4 on (n = destination), LNS1 in 11.1 style."""
    return "LNS1" if lns else f"NSS{dest}"


def async_sender_name(gen: Generation, dest: int) -> str:
    """ASYNC sender: NSAn (n = destination) up to 12.1, the redo transport worker TT02 from 12.2 on (INFERRED)."""
    return "TT02" if gen.iso else f"NSA{dest}"


#: krs message printed by a sender when its destination moves to a new log (before the first write of it)
SWITCH_MESSAGE = {
    "SYNC": "krsu_sync_switch: SYNC transport moves to T-{thread}.S-{seq} (LAD:{dest})",
    "ASYNC": "krsu_async_switch: ASYNC transport moves to T-{thread}.S-{seq} (LAD:{dest})",
}
#: unstamped krs noise message of a sender
DEST_CHECK_MESSAGE = "krsu_dest_check: LAD:{dest} VALID, T-{thread}.S-{seq} acked\n"


def standby_log_number(thread: int, seq: int) -> int:
    """The standby redo log (LNO) an RFS picks for a new log: four per thread from 11, in turn."""
    return 11 + (thread - 1) * 4 + seq % 4


def segment_file_name(stem: str, segment: int) -> str:
    """File of segment `segment` of a process's trace: `<stem>.trc`, then `<stem>_1.trc`, `<stem>_2.trc` (INFERRED)."""
    return f"{stem}.trc" if segment == 0 else f"{stem}_{segment}.trc"


#: last lines of a segment and first lines after the next segment's header (VERIFIED, 23.2 tracefile_identifier)
TRACE_CONTINUES = "\n*** TRACE CONTINUES IN FILE {path} ***\n\n"
TRACE_CONTINUED = "\n*** TRACE CONTINUED FROM FILE {path} ***\n\n"


def broadcast_warning(gen: Generation, ms: int, scn: int) -> str:
    """LGWR's broadcast wait warning: with the SCN as 12.2 prints it, without as 11.1 does (11.2 INFERRED)."""
    if gen.name == "11.2":
        return f"Warning: log write broadcast wait time {ms}ms\n"
    return f"Warning: log write broadcast wait time {ms}ms (SCN 0x{scn:x})\n"


#: fields of the `kcrfw_alfs_update_mode:` line, per direction (names as seen in 12.2)
ALFS_FIELDS = {
    True: ("long#", "sync#", "sync", "poll", "rw", "ack", "min_sleep"),
    False: ("curr_sched_delay", "switch_sched_delay", "curr_sync_count_delta", "switch_sync_count_delta"),
}


def adaptive_sync_update(to_polling: bool, values: tuple[int, ...]) -> str:
    """The `kcrfw_alfs_update_mode:` line LGWR prints before it switches; `values` match ALFS_FIELDS."""
    pairs = " ".join(f"{k}={v}" for k, v in zip(ALFS_FIELDS[to_polling], values, strict=True))
    return f"kcrfw_alfs_update_mode: {'post->poll' if to_polling else 'poll->post'} {pairs}\n"


def adaptive_sync_switch(to_polling: bool, delay_us: int, rate: int) -> str:
    """The lines under the ADR line of an adaptive log file sync switch."""
    if to_polling:
        return (
            "Log file sync switching to polling\n"
            f"Current scheduling delay is {delay_us} usec\n"
            f"Current approximate redo synch write rate is {rate} per sec\n"
        )
    return f"Log file sync switching to post/wait\nCurrent approximate redo synch write rate is {rate} per sec\n"


# --- alert log (trace/alert_<SID>.log) ---------------------------------------------------------------------------


def alert_time(gen: Generation, clock: HostClock, t: int) -> str:
    """The time line above each alert entry: ctime layout up to 12.1, ISO-8601 with offset from 12.2 on."""
    return clock.wall(t) if gen.iso else clock.ctime(t)


def alert_prefix(gen: Generation, process: str, pid: int) -> str:
    """`NSS2 (PID:4401): ` before a background process's message from 12.2 on (VERIFIED 19c); nothing before."""
    return f"{process} (PID:{pid}): " if gen.iso else ""


def log_switch_lines(gen: Generation, thread: int, seq: int, scn: int, group: int, member: str) -> str:
    """`Thread N advanced to log sequence S (LGWR switch)` with the current log's member line."""
    tail = f",  current SCN: {scn}" if gen.iso else ""
    return (
        f"Thread {thread} advanced to log sequence {seq} (LGWR switch){tail}\n"
        f"  Current log# {group} seq# {seq} mem# 0: {member}\n"
    )


def online_log_member(gen: Generation, db: str, group: int, stamp: int) -> str:
    """ASM file name of an online redo log member (lower case up to 12.1, upper case from 12.2)."""
    name = f"+DATA/{db}/onlinelog/group_{group}.{256 + group}.{stamp}"
    return name.upper().replace("GROUP_", "group_") if gen.iso else name


def srl_selected(gen: Generation, sender: str, pid: int, thread: int, seq: int, dest: int) -> str:
    """Primary side: the destination's standby redo log was selected for the new log (INFERRED shapes)."""
    if gen.iso:
        return f"{alert_prefix(gen, sender, pid)}SRL selected for T-{thread}.S-{seq} for LAD:{dest}\n"
    return (
        f"LNS: Standby redo logfile selected for thread {thread} sequence {seq} "
        f"for destination LOG_ARCHIVE_DEST_{dest}\n"
    )


def rfs_attach(gen: Generation, rfs_no: int, pid: int, client: str, client_pid: int, mode: str) -> str:
    """Standby side: an RFS process takes a sender's connection (19c shape VERIFIED; <= 12.1 INFERRED)."""
    if gen.iso:
        prefix = alert_prefix(gen, "rfs", pid)
        return (
            f"{prefix}krsr_rfs_atc: Identified database type as 'PHYSICAL STANDBY': "
            f"Client is {client} (PID:{client_pid})\n"
            f"{prefix}Primary database is in {mode} mode\n"
        )
    return (
        f"RFS[{rfs_no}]: Assigned to RFS process {pid}\n"
        f"RFS[{rfs_no}]: Identified database type as 'physical standby': Client is LGWR {client} pid {client_pid}\n"
        f"Primary database is in {mode} mode\n"
    )


def rfs_selected(gen: Generation, rfs: tuple[int, int], lno: int, thread: int, seq: int, ids: tuple[int, int]) -> str:
    """Standby side: RFS (number, pid) selected standby log `lno` for a new log; ids = (dbid, branch).

    19c shape VERIFIED; the <= 12.1 shape is INFERRED.
    """
    (rfs_no, pid), (dbid, branch) = rfs, ids
    if gen.iso:
        return f"{alert_prefix(gen, 'rfs', pid)}Selected LNO:{lno} for T-{thread}.S-{seq} dbid {dbid} branch {branch}\n"
    return f"RFS[{rfs_no}]: Selected log {lno} for thread {thread} sequence {seq} dbid {dbid} branch {branch}\n"


def startup_lines(gen: Generation, parameters: tuple[tuple[str, str], ...]) -> str:
    """Instance startup entry: the banner line and the non-default parameters (`  name = value`, 24 wide)."""
    lines = ["Starting ORACLE instance (normal)", *gen.banner, "System parameters with non-default values:"]
    lines += [f"  {name:<24} = {value}" for name, value in parameters]
    return "\n".join(lines) + "\n"


def archive_dest(service: str, transport: str, db: str, standby_source: bool = False) -> str:
    """Value of a LOG_ARCHIVE_DEST_n parameter: SYNC AFFIRM, SYNC NOAFFIRM (FASTSYNC) or ASYNC."""
    attrs = {"SYNC": "SYNC AFFIRM", "FASTSYNC": "SYNC NOAFFIRM", "ASYNC": "ASYNC NOAFFIRM"}[transport]
    valid = "STANDBY_LOGFILES,STANDBY_ROLE" if standby_source else "ONLINE_LOGFILES,PRIMARY_ROLE"
    return f'"SERVICE={service} {attrs} VALID_FOR=({valid}) DB_UNIQUE_NAME={db}"'


# --- trace maps and an unrelated foreground ----------------------------------------------------------------------


def trace_map(trace_name: str, size: int) -> bytes:
    """Content of the `.trm` beside a `.trc`: ADR's binary index. Invented bytes of no meaning (never parsed)."""
    return b"TRM\x00\x02\x00\x00\x00" + size.to_bytes(8, "little") + trace_name.encode("ascii") + b"\x00" * 8


def cursor_wait(gen: Generation, cursor: int, event: str, ela: int, params: str, tim: int) -> str:
    """A 10046 WAIT line of a foreground cursor."""
    sep = " " if gen.ela_space else ""
    return f"WAIT #{cursor}: nam='{event}' ela={sep}{ela} {params} obj#={gen.no_object} tim={tim}\n"


def cursor_parse(cursor: int, sql: str, command: int, tim: int, ids: tuple[int, int, str], elapsed: int) -> str:
    """A statement's `PARSING IN CURSOR` block and its PARSE line (10046); ids = (hash value, address, sql_id)."""
    hv, address, sqlid = ids
    return (
        "=====================\n"
        f"PARSING IN CURSOR #{cursor} len={len(sql)} dep=0 uid=109 oct={command} lid=109 tim={tim} "
        f"hv={hv} ad='{address:x}' sqlid='{sqlid}'\n"
        f"{sql}\nEND OF STMT\n"
        f"PARSE #{cursor}:c=0,e={elapsed},p=0,cr=0,cu=0,mis=0,r=0,dep=0,og=1,plh=0,tim={tim}\n"
    )


def cursor_exec(cursor: int, elapsed: int, gets: tuple[int, int], rows: int, plan: int, tim: int) -> str:
    """An EXEC line (10046); gets = (consistent, current)."""
    cr, cu = gets
    return f"EXEC #{cursor}:c=0,e={elapsed},p=0,cr={cr},cu={cu},mis=0,r={rows},dep=0,og=1,plh={plan},tim={tim}\n"


def transaction_end(tim: int) -> str:
    """The XCTEND line of a commit (10046)."""
    return f"XCTEND rlbk=0, rd_only=0, tim={tim}\n"


def cursor_close(cursor: int, tim: int) -> str:
    """A CLOSE line (10046)."""
    return f"CLOSE #{cursor}:c=0,e=3,dep=0,type=3,tim={tim}\n"
