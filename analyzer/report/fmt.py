"""How values are written for people: milliseconds in table cells, short file labels, UTC times."""

from __future__ import annotations

import os
from datetime import datetime

from analyzer.words import ms


def cell(value: float | None, resolution_ms: float | None = None) -> str:
    """A table cell of milliseconds: as many decimals as the stamps allow (`words.ms`), empty when unknown."""
    return ms(value, resolution_ms, unit=False)


def common_dir(labels: list[str]) -> str:
    """The directory all labels are in ("" when none: a single level, or absolute and relative mixed)."""
    parents = [os.path.dirname(x) for x in labels]
    try:
        return os.path.commonpath(parents) if parents and all(parents) else ""
    except ValueError:  # absolute and relative paths mixed
        return ""


def short_label(label: str, labels: list[str]) -> str:
    """A label relative to the common directory of all labels (for report tables)."""
    common = common_dir(labels)
    return os.path.relpath(label, common) if common else label


def at_text(value: datetime | None) -> str:
    """A UTC time with microseconds, empty when unknown."""
    return value.strftime("%Y-%m-%d %H:%M:%S.%f") if value else ""
