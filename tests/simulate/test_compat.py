"""Simulated sets keep their bytes: every file of a few pinned option sets (a classic one per generation, the
first six, recorded before the newer options existed, and one with them) has the SHA-256 recorded in
tests/golden/simulate-digests.json (written by scripts/regen_golden.py)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from analyzer.simulate import SimOptions, simulate
from tests.conftest import ROOT

DIGESTS = ROOT / "tests" / "golden" / "simulate-digests.json"
CASES: list[dict[str, Any]] = json.loads(DIGESTS.read_text(encoding="utf-8"))["cases"]


def test_every_generation_is_pinned() -> None:
    classic = [c for c in CASES if SimOptions(**c["options"]).classic]
    assert {case["options"].get("format_version", "19c") for case in classic} == {"11.2", "12.1", "19c", "23ai"}
    assert len(classic) < len(CASES)


@pytest.mark.parametrize("case", CASES, ids=lambda c: "-".join(f"{k}={v}" for k, v in sorted(c["options"].items())))
def test_same_options_and_seed_give_the_pinned_bytes(tmp_path: Path, case: dict[str, Any]) -> None:
    out = tmp_path / "set"
    simulate(out, SimOptions(**case["options"]))
    written = {
        p.relative_to(out).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(out.rglob("*"))
        if p.is_file()
    }
    assert sorted(written) == sorted(case["files"])
    changed = [name for name, digest in written.items() if case["files"][name] != digest]
    assert not changed, f"bytes changed for the same options and seed: {changed}"
