"""Every output of `dgtrace analyze` on the samples and simulated sets of every generation, by digest.

`tests/golden/outputs.sha256` is written by `scripts/regen_golden.py`; a change that moves any
output (in any format) fails here until the golden file is regenerated and the diff reviewed.
"""

from __future__ import annotations

import pytest

from scripts.output_digests import digests
from tests.conftest import ROOT


@pytest.mark.slow
def test_every_output_is_unchanged() -> None:
    golden = (ROOT / "tests" / "golden" / "outputs.sha256").read_text(encoding="utf-8").splitlines()
    assert digests() == golden
