"""Simulator settings and result (frozen dataclasses), with the parsing of sizes and UTC offsets."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from analyzer.base.errors import UsageError
from analyzer.base.units import parse_offset
from analyzer.simulate.formats import GENERATIONS
from analyzer.simulate.model import SCENARIOS

#: Oracle generations the simulator can write
FORMAT_VERSIONS = tuple(GENERATIONS)
#: scenario presets
SCENARIO_NAMES = tuple(SCENARIOS)
#: remote writes per primary thread when neither `writes` nor `size_bytes` is given
DEFAULT_WRITES = 1000
#: transport of the primary's SYNC destinations: SYNC AFFIRM, or SYNC NOAFFIRM (FASTSYNC, 12.1+)
TRANSPORTS = ("sync", "fastsync")
#: single standby; two SYNC standbys; a far sync that forwards ASYNC to the terminal standby (12.1+)
TOPOLOGIES = ("single", "two-sync", "far-sync")
#: the protection mode the alert logs report (RFS's `Primary database is in ... mode`)
PROTECTION_MODES = ("availability", "protection")
#: smallest --segment-bytes: a segment must hold its header and at least one write
MIN_SEGMENT_BYTES = 4096


@dataclass(frozen=True)
class SimOptions:
    """Everything that shapes one simulated trace set; equal options and seed give equal bytes."""

    #: preset of delay distributions (model.SCENARIOS)
    scenario: str = "baseline"
    #: Oracle generation whose text layout is written: 11.2, 12.1, 19c or 23ai
    format_version: str = "19c"
    #: remote writes per primary thread (default DEFAULT_WRITES when size_bytes is None)
    writes: int | None = None
    #: approximate total size of the .trc files; replaces `writes`
    size_bytes: int | None = None
    #: primary RAC threads (one instance, NSS and LGWR each; one RFS each on the standby)
    threads: int = 2
    #: the overrides below replace the scenario's value when given
    rtt_ms: float | None = None
    net_spike_rate: float | None = None
    io_spike_rate: float | None = None
    log_switch_every: int | None = None
    #: standby clock minus true time, in seconds
    standby_skew_s: float = 0.0
    #: UTC offsets of the hosts' local clocks, `+HH:MM`
    primary_tz: str = "+00:00"
    standby_tz: str = "+00:00"
    #: probability that a remote write carries one noise item (blank lines, other lines)
    noise: float = 0.05
    seed: int = 1
    #: LGWR prints `Warning: log write elapsed time` from this many ms (the hidden parameter)
    lgwr_warning_ms: int = 100
    #: primary sender process: "nss" (NSS2, 11.2.0.4 and later) or "lns" (LNS1, 11.1 style)
    sender: str = "nss"
    # The options below are off by default; a set that uses none of them is written exactly as
    # before they existed (same bytes, the classic truth.csv columns).
    #: "sync" (SYNC AFFIRM) or "fastsync" (SYNC NOAFFIRM)
    transport: str = "sync"
    #: "single", "two-sync" or "far-sync"
    topology: str = "single"
    #: an ASYNC sender beside each thread's SYNC sender, to a third destination
    async_sender: bool = False
    #: cut every process's trace into segments of about this many bytes (between writes)
    segment_bytes: int | None = None
    #: delete this segment (1 = the first after the first file) of every process that has a later one
    drop_segment: int = 0
    #: probability per LGWR write of a `log write broadcast wait time` warning
    lgwr_broadcast_rate: float = 0.0
    #: an adaptive log file sync switch every this many LGWR writes (0: never)
    lgwr_mode_switch_every: int = 0
    #: alert logs, `.trm` trace maps and one unrelated foreground trace per host
    extras: bool = False
    #: "availability" (Maximum Availability) or "protection" (Maximum Protection): what the alert logs say
    protection: str = "availability"

    def __post_init__(self) -> None:
        """Reject values the simulator cannot honour, with a message for the user."""
        _check_choice("--scenario", self.scenario, SCENARIO_NAMES)
        _check_choice("--format-version", self.format_version, FORMAT_VERSIONS)
        _check_choice("sender", self.sender, ("nss", "lns"))
        _check_choice("--transport", self.transport, TRANSPORTS)
        _check_choice("--topology", self.topology, TOPOLOGIES)
        _check_choice("--protection", self.protection, PROTECTION_MODES)
        self._check_new_options()
        if self.writes is not None and self.size_bytes is not None:
            raise UsageError("give --writes or --size, not both")
        _check_positive("--writes", self.writes)
        _check_positive("--size", self.size_bytes)
        _check_positive("--threads", self.threads)
        _check_positive("--log-switch-every", self.log_switch_every)
        for name, rate in (
            ("--net-spike-rate", self.net_spike_rate),
            ("--io-spike-rate", self.io_spike_rate),
            ("--noise", self.noise),
        ):
            if rate is not None and not 0.0 <= rate <= 1.0:
                raise UsageError(f"{name} must be a probability between 0 and 1, not {rate}")
        if self.rtt_ms is not None and not 0.0 <= self.rtt_ms <= 10_000.0:
            raise UsageError(f"--rtt-ms must be between 0 and 10000, not {self.rtt_ms}")
        if abs(self.standby_skew_s) > 86_400:
            raise UsageError("--standby-skew-s must be within one day")
        parse_offset(self.primary_tz)
        parse_offset(self.standby_tz)

    def _check_new_options(self) -> None:
        old = self.format_version == "11.2"
        if old and self.transport == "fastsync":
            raise UsageError("--transport fastsync (SYNC NOAFFIRM) needs --format-version 12.1 or later")
        if self.protection == "protection" and self.transport == "fastsync":
            raise UsageError("--transport fastsync (SYNC NOAFFIRM) is not allowed in Maximum Protection")
        if old and self.topology == "far-sync":
            raise UsageError("--topology far-sync needs --format-version 12.1 or later")
        if self.sender == "lns" and (self.topology != "single" or self.async_sender):
            raise UsageError("the LNS sender is only simulated with a single SYNC destination")
        if self.segment_bytes is not None and self.segment_bytes < MIN_SEGMENT_BYTES:
            raise UsageError(f"--segment-bytes must be at least {MIN_SEGMENT_BYTES}, not {self.segment_bytes}")
        if self.drop_segment < 0:
            raise UsageError(f"--drop-segment must be 1 or more, not {self.drop_segment}")
        if self.drop_segment and self.segment_bytes is None:
            raise UsageError("--drop-segment needs --segment-bytes")
        if not 0.0 <= self.lgwr_broadcast_rate <= 1.0:
            raise UsageError(f"--lgwr-broadcast-rate must be a probability, not {self.lgwr_broadcast_rate}")
        if self.lgwr_mode_switch_every < 0:
            raise UsageError(f"--lgwr-mode-switch-every must be 0 or more, not {self.lgwr_mode_switch_every}")

    @property
    def classic(self) -> bool:
        """True when none of the newer options is used: the set keeps the classic layout and truth columns."""
        return self == SimOptions(**{k: getattr(self, k) for k in CLASSIC_FIELDS})

    @property
    def lgwr_events(self) -> bool:
        """True when LGWR prints more than long-write warnings (lgwr_events.csv is written)."""
        return self.lgwr_broadcast_rate > 0.0 or self.lgwr_mode_switch_every > 0

    @property
    def writes_per_thread(self) -> int | None:
        """The write budget per thread, or None when the size budget applies."""
        if self.size_bytes is not None:
            return None
        return DEFAULT_WRITES if self.writes is None else self.writes


#: options added after the extended sets, with their default: scenario.json names one only when it is not its
#: default, so that the sets that do not use them keep their bytes
LATER_OPTIONS = {"protection": "availability"}

#: the options that existed before topologies, segments, LGWR events and extras
CLASSIC_FIELDS = (
    "scenario",
    "format_version",
    "writes",
    "size_bytes",
    "threads",
    "rtt_ms",
    "net_spike_rate",
    "io_spike_rate",
    "log_switch_every",
    "standby_skew_s",
    "primary_tz",
    "standby_tz",
    "noise",
    "seed",
    "lgwr_warning_ms",
    "sender",
)


@dataclass(frozen=True)
class SimResult:
    """What `simulate` wrote."""

    #: every .trc file, in the order written
    files: tuple[Path, ...]
    #: truth.csv: one row per remote write
    truth: Path
    #: scenario.json: the settings, the resolved scenario and the file list
    scenario: Path
    #: remote writes simulated (rows of truth.csv)
    writes: int
    #: total size of the .trc files
    trace_bytes: int
    #: segments deleted by `drop_segment` (not in `files`)
    deleted: tuple[Path, ...] = ()
    #: lgwr_events.csv, when LGWR events were simulated
    lgwr_events: Path | None = None
    #: alert logs, `.trm` files and foreground traces (`extras`)
    extras: tuple[Path, ...] = ()
    #: commit_path.csv, when a thread's redo goes to several SYNC destinations (one row per redo write)
    commit_path: Path | None = None


def _check_choice(name: str, value: str, choices: tuple[str, ...]) -> None:
    if value not in choices:
        raise UsageError(f"{name} {value!r} is not one of: {', '.join(choices)}")


def _check_positive(name: str, value: int | None) -> None:
    if value is not None and value < 1:
        raise UsageError(f"{name} must be at least 1, not {value}")
