"""Line and cell shapes of AWR and Statspack reports (grammars/awr.lark) and their units.

Counts may carry K, M or G (1000s, as the reports say: "K is 1000"); 19c prints average waits with
their unit (`811.09us`, `1.03ms`, `60.00 s`); older reports print bare numbers in the column's unit.
Histogram headings are bucket bounds (`<1ms`, `<=1s`, `<1/8s`, `>=512`); a heading cut short or
without unit takes its unit from its neighbours.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from fractions import Fraction
from typing import Any

from lark import Token, Transformer

from analyzer.companions.awr_tables import Column
from analyzer.companions.textinput import line_parser, parse_with
from analyzer.parse.grammar import LineError

__all__ = ["AwrShapes", "Bucket", "Elapsed", "Record", "SnapLine", "Title", "Value", "buckets", "count", "millis"]
__all__ += ["parse_line", "plain"]


# ---------------------------------------------------------------------------- grammar records
@dataclass(frozen=True, slots=True)
class SnapLine:
    """`Begin Snap: 2668 04-Feb-23 19:00:39 ...` (`kind` begin or end)."""

    kind: str
    snap_id: int
    at: datetime


@dataclass(frozen=True, slots=True)
class Elapsed:
    """`Elapsed: 60.25 (mins)`."""

    minutes: float


@dataclass(frozen=True, slots=True)
class Title:
    """A section title line: `Foreground Wait Events  DB/Inst: PRODA/proda1  Snaps: 10-11`."""

    title: str
    db_name: str
    instance: str


@dataclass(frozen=True, slots=True)
class Value:
    """A table cell: the number without separators and its suffix (K, M, G or a time unit); N/A is None."""

    number: float | None
    suffix: str | None


@dataclass(frozen=True, slots=True)
class Bucket:
    """A histogram heading: `<1ms` is ("<", 1.0, "ms"); `<1/8s` is ("<", 0.125, "s"); `>=512` has no unit."""

    op: str
    number: float
    unit: str | None


Record = SnapLine | Elapsed | Title | Value | Bucket


class AwrShapes(Transformer[Token, Any]):
    """Inline transformer of grammars/awr.lark: one record per line or cell."""

    def start(self, c: list[Record]) -> Record:
        return c[0]

    def snap(self, c: list[Token]) -> SnapLine:
        kind = "begin" if str(c[0]).startswith("Begin") else "end"
        date, clock = str(c[2]), str(c[3])
        year = "%Y" if len(date.rsplit("-", 1)[1]) == 4 else "%y"
        seconds = ":%S" if clock.count(":") == 2 else ""
        try:
            at = datetime.strptime(f"{date} {clock}", f"%d-%b-{year} %H:%M{seconds}")
        except ValueError:
            raise ValueError(f"snapshot time '{date} {clock}' not understood") from None
        return SnapLine(kind, int(c[1]), at)

    def elapsed(self, c: list[Token]) -> Elapsed:
        return Elapsed(_number(c[0]))

    def title(self, c: list[Token]) -> Title:
        return Title(str(c[0]).strip(), str(c[1]), str(c[2]))

    def quantity(self, c: list[Token]) -> Value:
        if c[0].type == "NOT_AVAILABLE":
            return Value(None, None)
        return Value(_number(c[0]), str(c[1]) if len(c) > 1 else None)

    def bucket(self, c: list[Token]) -> Bucket:
        parts = [t for t in c if t.type != "PERCENT"]
        op, numbers = str(parts[0]), [t for t in parts[1:] if t.type == "NUMBER"]
        unit = next((str(t) for t in parts if t.type == "UNIT"), None)
        value = Fraction(str(_number(numbers[0])))
        if len(numbers) > 1:
            value /= Fraction(str(_number(numbers[1])))
        return Bucket(op, float(value), unit)


def _number(token: Token) -> float:
    text = str(token).replace(",", "")
    if text in ("", "."):
        raise ValueError(f"no digits in {str(token)!r}")
    return float(text)


def parse_line(text: str) -> Record:
    """Parse one report line or table cell with grammars/awr.lark.

    Raises:
        LineError: the grammar rejects it; the message says where and why.
    """
    result: Record = parse_with(line_parser("awr", AwrShapes), text)
    return result


# ---------------------------------------------------------------------------- cells
_SCALE = {None: 1.0, "K": 1e3, "M": 1e6, "G": 1e9}
#: a time unit -> (multiply, divide) to ms (dividing keeps 811.09us at 0.81109, not 0.8110900000000001)
_TIME_MS = {"ns": (1.0, 1e6), "us": (1.0, 1e3), "ms": (1.0, 1.0), "s": (1e3, 1.0)}


def _value(cell: str) -> Value:
    record = parse_line(cell)
    if not isinstance(record, Value):
        raise LineError(f"{cell!r} is not a number")
    return record


def count(cell: str) -> int | None:
    """`1,217,279` -> 1217279, `705.2K` -> 705200 (K is 1000, as the reports say); blank or N/A -> None."""
    if not cell:
        return None
    v = _value(cell)
    if v.number is None:
        return None
    if v.suffix not in _SCALE:
        raise LineError(f"{cell!r} is not a count")
    return round(v.number * _SCALE[v.suffix])


def plain(cell: str, blank: float | None = None) -> float | None:
    """A number that may carry K/M/G; `blank` for an empty cell."""
    if not cell:
        return blank
    v = _value(cell)
    if v.number is not None and v.suffix not in _SCALE:
        raise LineError(f"{cell!r}: unexpected unit")
    return None if v.number is None else v.number * _SCALE[v.suffix]


def millis(cell: str, default_unit: str = "ms") -> float | None:
    """An average wait in ms: `1.03ms`, `811.09us`, `60.00 s`, or a bare number in the column's unit."""
    if not cell:
        return None
    v = _value(cell)
    if v.number is None:
        return None
    unit = v.suffix if v.suffix in _TIME_MS else default_unit
    if v.suffix is not None and v.suffix not in _TIME_MS:
        raise LineError(f"{cell!r} is not a time")
    multiply, divide = _TIME_MS[unit]
    return v.number * multiply / divide


# ---------------------------------------------------------------------------- histogram headings
def buckets(columns: tuple[Column, ...]) -> list[tuple[int, str, float | None, float | None]]:
    """(column, label, lower_ms, upper_ms) of each bucket heading, units resolved along the row."""
    found: list[tuple[int, str, Bucket]] = []
    for i, column in enumerate(columns):
        label = column.last.replace(" ", "")
        try:
            record = parse_line(label) if label[:1] in "<>%" else None
        except LineError:
            continue
        if isinstance(record, Bucket):
            found.append((i, label.lstrip("%"), record))
    units = [b.unit for _, _, b in found]
    minutes = any(u in ("s", "h", "hr", "min") for u in units)
    scale = {"ns": 1e-6, "us": 1e-3, "u": 1e-3, "ms": 1.0, "s": 1e3, "h": 3.6e6, "hr": 3.6e6, "min": 6e4}
    scale["m"] = 6e4 if minutes else 1.0
    out: list[tuple[int, str, float | None, float | None]] = []
    previous: float | None = None
    unit: str | None = None
    for k, (i, label, b) in enumerate(found):
        unit = b.unit if b.unit in scale else unit
        if unit is None:  # a first heading without unit ("<512" before "<1ms"): the largest unit below the next
            following = next((x.number * scale[x.unit] for _, _, x in found[k + 1 :] if x.unit in scale), None)
            fits = [u for u in ("s", "ms", "us") if following is None or b.number * scale[u] < following]
            unit = fits[0] if fits else "ms"
        bound = b.number * scale[unit]
        if b.op.startswith("<"):
            out.append((i, label, previous if previous is not None else 0.0, bound))
            previous = bound
        else:
            out.append((i, label, bound, None))
    return out
