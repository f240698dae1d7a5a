"""How values are written for people: milliseconds in table cells, short file labels, UTC times;
text from the traces made safe for a terminal (`printable`) and for Markdown (`escape_markdown`)."""

from __future__ import annotations

import os
import re
from datetime import datetime
from typing import TextIO

from analyzer.base.words import ms

#: control characters (ANSI escapes included) that trace text must not send to a terminal
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
#: what Markdown would read as markup: HTML tags, links and images, code spans, table cells, escapes
_MARKDOWN = re.compile(r"([\\`<>\[\]|])")


def printable(text: str) -> str:
    """Trace text made safe for a terminal: control characters (ANSI escapes) written as `\\xNN`."""
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group(0)):02x}", text)


def escape_markdown(text: str) -> str:
    """Text shown as it is in Markdown: `<`, `>`, `[`, `]`, `|`, backticks and backslashes escaped,
    line breaks as `<br>` (the only tag the Markdown reports write themselves), and the other control
    characters (ANSI escapes) written as `\\xNN`, as `printable` writes them (a Markdown file is read in
    terminals too)."""
    return printable(_MARKDOWN.sub(r"\\\1", text).replace("\r", "").replace("\n", "<br>"))


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


def short_label(label: str, common: str) -> str:
    """A label relative to `common`, the common directory of all labels (`common_dir`, computed once
    for all of them: an upload may hold tens of thousands), for report tables."""
    return os.path.relpath(label, common) if common else label


def at_text(value: datetime | None) -> str:
    """A UTC time with microseconds, empty when unknown."""
    return value.strftime("%Y-%m-%d %H:%M:%S.%f") if value else ""


#: the narrowest width a report is laid out for
MIN_WIDTH = 30


def terminal_width(out: TextIO) -> int | None:
    """COLUMNS when set; else the width of the terminal `out` writes to; None for a pipe or a file."""
    columns = os.environ.get("COLUMNS", "")
    if columns.isdigit() and int(columns) >= MIN_WIDTH:
        return int(columns)
    try:
        if out.isatty():
            return max(MIN_WIDTH, os.get_terminal_size(out.fileno()).columns)
    except (OSError, ValueError):
        pass
    return None
