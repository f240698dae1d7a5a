"""Trace simulator: realistic Data Guard SYNC trace sets (NSS, LGWR, RFS) and their truth."""

from analyzer.simulate.model import SCENARIOS, Profile
from analyzer.simulate.options import FORMAT_VERSIONS, SimOptions, SimResult
from analyzer.simulate.runner import simulate
from analyzer.simulate.truth import TRUTH_COLUMNS
from analyzer.units import parse_size

__all__ = [
    "FORMAT_VERSIONS",
    "SCENARIOS",
    "TRUTH_COLUMNS",
    "Profile",
    "SimOptions",
    "SimResult",
    "parse_size",
    "simulate",
]
