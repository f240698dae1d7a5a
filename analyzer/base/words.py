"""Numbers in words: counts with their noun, durations, milliseconds as the stamps allow."""

from __future__ import annotations

import math


def plural(count: int, noun: str) -> str:
    """`1 write`, `1,204 writes`."""
    return f"{count} {noun}" if count == 1 else f"{count:,} {noun}s"


def duration(seconds: float) -> str:
    """`45 s`, `12.5 min`, `3.2 h`."""
    if seconds < 120:
        return f"{seconds:.0f} s"
    return f"{seconds / 60:.1f} min" if seconds < 7200 else f"{seconds / 3600:.1f} h"


def decimals(resolution_ms: float | None) -> int:
    """The decimals a value of this resolution (ms) may show: none for millisecond stamps (11.2: 1 to 2 ms),
    one for tenths, three (microseconds) for finer stamps and when the resolution is unknown."""
    if resolution_ms is None:
        return 3
    return 0 if resolution_ms >= 0.5 else 1 if resolution_ms >= 0.05 else 3


def ms(value: float | None, resolution_ms: float | None = None, *, unit: bool = True, signed: bool = False) -> str:
    """Milliseconds for people, never finer than the stamps they come from (`resolution_ms`; None: microseconds).

    With its unit (a sentence): at most three significant digits below 100 ms, none above it
    (`1,836 ms`, `12.5 ms`, `2.3 ms`, `0.601 ms`), `n/a` when unknown. Without (a table cell): a fixed
    number of decimals, so that a column lines up (`137`, `2.922`), empty when unknown. A value
    derived from millisecond stamps shows no decimal either way (`137 ms`, not `137.000`), and
    `-0` is written `0`. `signed`: a sign always (`+0.003 ms`), for offsets.
    """
    if value is None:
        return "n/a" if unit else ""
    most = decimals(resolution_ms)
    size = abs(value)
    if not unit:
        places = most
    elif size >= 100 or size == 0:
        places = 0
    elif size >= 10:
        places = min(1, most)
    else:
        places = min(max(0, 2 - math.floor(math.log10(size))), most)
    text = f"{value:{'+' if signed else ''},.{places}f}"
    if unit and size < 10 and "." in text:
        text = text.rstrip("0").rstrip(".")
    if not text.strip("+-0.,"):  # a zero: no sign, unless one is asked for
        text = ("+" if signed else "") + text.lstrip("+-")
    return f"{text} ms" if unit else text
