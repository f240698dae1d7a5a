"""Hypothesis strategies of real-shaped trace lines, and the line-family rules written one line at a time."""

from __future__ import annotations

import re
from datetime import datetime

from hypothesis import strategies as st

from analyzer.parse.families import OTHER_10046_PREFIXES
from analyzer.parse.grammar import LGWR_PREFIXES, MESSAGE_PREFIXES

KIND_TEXT = list(MESSAGE_PREFIXES.values())


ints = st.integers(min_value=0, max_value=10**12)


words = st.text(alphabet="abcdefghijklmnopqrstuvwxyz_0123456789 '", min_size=0, max_size=8)


@st.composite
def message_lines(draw: st.DrawFn) -> str:
    """16410 message lines, canonical or slightly off (spacing, dots, odd fields)."""
    kind = draw(st.sampled_from(KIND_TEXT))
    lead = draw(st.sampled_from(["", "... ", "..", " ", ". ", "....  "]))
    func = draw(st.sampled_from(["kpurcs", "krsr_rfs_dsp", "k p", ""]))
    resp = " response" if kind.startswith("Client received") and draw(st.booleans()) else ""
    oper = draw(words)
    flag = draw(st.sampled_from(["67111042", "0x04000882", "-1", "12a", "0xZZ"]))
    sep = draw(st.sampled_from([" ", " ", " ", "  ", "\t"]))
    tail = draw(st.sampled_from(["", "", " ", " junk"]))
    fields = f"oper='{oper}'{sep}flag={flag} thrd={draw(ints)} seq={draw(ints)} msgid={draw(ints)}"
    return f"{lead}{kind} [{func}]{resp} {fields}{tail}"


@st.composite
def stamp_lines(draw: st.DrawFn) -> str:
    """`***` lines: krs stamps of three shapes, ADR lines of two generations, and damaged ones."""
    when = draw(st.datetimes(min_value=datetime(2000, 1, 1), max_value=datetime(2099, 12, 31)))
    digits = draw(st.sampled_from([3, 6, 2, 9]))
    frac = f"{when.microsecond:06d}{draw(st.integers(0, 999)):03d}"[:digits]
    base = when.strftime("%Y-%m-%d %H:%M:%S")
    src = draw(st.sampled_from(["krsu.c", "krsr.c", "krs u.c", "x.h"]))
    line = draw(st.integers(0, 99999))
    zone = draw(st.sampled_from(["+00:00", "-07:00", "+05:30", "+0800", ""]))
    return draw(
        st.sampled_from(
            [
                f"*** {base}.{frac} {line} {src}",
                f"*** {base}.{frac} [{src}:{line}]",
                f"*** {base}.{frac}",
                f"*** {base.replace(' ', 'T')}.{frac}{zone}",
                f"*** {base.replace(' ', 'T')}.{frac}{zone} (CDB$ROOT(1))",
                f"*** {base}.{frac} {line}",
                f"*** SESSION ID:({line}.{digits}) {base}.{frac}",
                f"*** MODULE NAME:({src} (x)) {base.replace(' ', 'T')}.{frac}{zone}",
                f"*** ACTION NAME:() {base}.{frac}{zone}",
                f"*** CLIENT ID:(a) b) {base}.{frac}",
            ]
        )
    )


@st.composite
def wait_lines(draw: st.DrawFn) -> str:
    """WAIT lines of both `ela=` spellings, named parameters with spaces and '#'."""
    event = draw(st.sampled_from(["RFS write", "RFS random i/o", "SQL*Net message from client", "x'y"]))
    ela = draw(st.sampled_from([" ", "", "  "])) + str(draw(ints))
    params = draw(
        st.sampled_from(
            [
                "p1=0 p2=0 p3=0 obj#=-1",
                "driver id=1413697536 #bytes=1 p3=0 obj#=4294967295",
                "",
                "p1 =0",
                "file#=7 block#=1",
            ]
        )
    )
    params = f" {params}" if params else ""
    return f"WAIT #{draw(ints)}: nam='{event}' ela={ela}{params} tim={draw(ints)}"


def reference_families(texts: list[str], in_header: bool) -> tuple[list[str], bool]:
    """The classification rules, one line at a time: the specification of `classify`.

    A header region runs from a header start to the first blank or `***` line.
    """
    families = []
    for text in texts:
        blank = re.fullmatch(r"[ \t]*", text) is not None
        if text.startswith("***") or blank:
            in_header = False
        elif text.startswith("Trace file ") or (text.startswith("Oracle ") and " Release " in text):
            in_header = True
        if text.startswith("****"):
            family = "ignored:separator"
        elif text.startswith("***"):
            family = "stamps"
        elif text.startswith("WAIT #"):
            family = "wait"
        elif text.startswith(OTHER_10046_PREFIXES):
            family = "wait" if re.search(r".WAIT #[0-9]+: nam='", text) else "ignored:10046"
        elif "msgid=" in text:
            family = "transport"
        elif blank:
            family = "ignored:blank"
        elif re.search(r".WAIT #[0-9]+: nam='", text):
            family = "wait"
        elif re.match(r"[ \t.]*(?:Client (?:sending|received)|Server (?:received|finished)) ", text):
            family = "transport"
        elif text.startswith(LGWR_PREFIXES):
            family = "lgwr"
        elif in_header:
            family = "header"
        else:
            family = "ignored:other"
        families.append(family)
    return families, in_header
