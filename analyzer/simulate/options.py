"""Simulator settings and result (frozen dataclasses), with the parsing of sizes and UTC offsets."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from analyzer.errors import UsageError
from analyzer.simulate.formats import GENERATIONS
from analyzer.simulate.model import SCENARIOS
from analyzer.units import parse_offset

#: Oracle generations the simulator can write
FORMAT_VERSIONS = tuple(GENERATIONS)
#: scenario presets
SCENARIO_NAMES = tuple(SCENARIOS)
#: remote writes per primary thread when neither `writes` nor `size_bytes` is given
DEFAULT_WRITES = 1000


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

    def __post_init__(self) -> None:
        """Reject values the simulator cannot honour, with a message for the user."""
        _check_choice("--scenario", self.scenario, SCENARIO_NAMES)
        _check_choice("--format-version", self.format_version, FORMAT_VERSIONS)
        _check_choice("sender", self.sender, ("nss", "lns"))
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

    @property
    def writes_per_thread(self) -> int | None:
        """The write budget per thread, or None when the size budget applies."""
        if self.size_bytes is not None:
            return None
        return DEFAULT_WRITES if self.writes is None else self.writes


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


def _check_choice(name: str, value: str, choices: tuple[str, ...]) -> None:
    if value not in choices:
        raise UsageError(f"{name} {value!r} is not one of: {', '.join(choices)}")


def _check_positive(name: str, value: int | None) -> None:
    if value is not None and value < 1:
        raise UsageError(f"{name} must be at least 1, not {value}")
