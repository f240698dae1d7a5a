"""Trace simulator: realistic Data Guard trace sets (senders, LGWR, RFS, alert logs) and their truth."""

from analyzer.base.units import parse_size
from analyzer.simulate.model import SCENARIOS, Profile
from analyzer.simulate.options import FORMAT_VERSIONS, SimOptions, SimResult
from analyzer.simulate.runner import simulate
from analyzer.simulate.share import ShareOptions, ShareResult, simulate_share
from analyzer.simulate.truth import EXTENDED_COLUMNS, LGWR_EVENT_COLUMNS, SHARE_COLUMNS, TRUTH_COLUMNS

__all__ = [
    "EXTENDED_COLUMNS",
    "FORMAT_VERSIONS",
    "LGWR_EVENT_COLUMNS",
    "SCENARIOS",
    "SHARE_COLUMNS",
    "TRUTH_COLUMNS",
    "Profile",
    "ShareOptions",
    "ShareResult",
    "SimOptions",
    "SimResult",
    "parse_size",
    "simulate",
    "simulate_share",
]
