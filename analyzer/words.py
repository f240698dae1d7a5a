"""Numbers in words: counts with their noun, durations."""

from __future__ import annotations


def plural(count: int, noun: str) -> str:
    """`1 write`, `1,204 writes`."""
    return f"{count} {noun}" if count == 1 else f"{count:,} {noun}s"


def duration(seconds: float) -> str:
    """`45 s`, `12.5 min`, `3.2 h`."""
    if seconds < 120:
        return f"{seconds:.0f} s"
    return f"{seconds / 60:.1f} min" if seconds < 7200 else f"{seconds / 3600:.1f} h"
