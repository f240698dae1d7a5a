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
    """What changes in the trace text between Oracle releases (trace-formats.md §1, §2, §4)."""

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

    def adr(self, t: int) -> str:
        """A bare ADR `***` line (with a leading empty line) for true time `t`."""
        suffix = " (CDB$ROOT(1))" if self._iso else ""
        return f"\n*** {self.wall(t)}{suffix}\n"

    def _roll(self, sec: int) -> None:
        moment = datetime.fromtimestamp(sec, UTC)
        day, hms = moment.strftime("%Y-%m-%d"), moment.strftime("%H:%M:%S")
        self._sec, self._space, self._tee = sec, f"{day} {hms}", f"{day}T{hms}"
