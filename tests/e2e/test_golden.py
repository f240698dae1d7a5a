"""Golden files are written by scripts/regen_golden.py, never by hand: each matches its line in the manifest."""

from __future__ import annotations

from scripts.regen_golden import GENERATED, MANIFEST, manifest_lines


def test_every_golden_file_is_as_the_generator_wrote_it() -> None:
    lines = MANIFEST.read_text(encoding="utf-8").splitlines()
    assert lines[0] == f"# {GENERATED}"
    recorded, now = lines[1:], manifest_lines()
    assert [line.split("  ", 1)[1] for line in now] == [line.split("  ", 1)[1] for line in recorded], (
        "a golden file was added or removed by hand: run scripts/regen_golden.py"
    )
    edited = [b.split("  ", 1)[1] for a, b in zip(recorded, now, strict=True) if a != b]
    assert edited == [], f"edited by hand (run scripts/regen_golden.py and review the diff): {edited}"
