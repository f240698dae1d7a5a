"""Line records of oratcptest output (grammars/oratcptest.lark) and the units it prints.

oratcptest's "Mbyte" is 1024x1024 bytes (its client prints `(1 Mbyte = 1024x1024 bytes)`); its
kbyte is taken as the square root of that (1024), and rates in `Mbytes/s` are of the same Mbyte.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime, time
from typing import Any

from lark import Token, Transformer

from analyzer.companions.textinput import line_parser, parse_with

__all__ = [
    "MIB",
    "Clocked",
    "Interval",
    "Marker",
    "OratcptestShapes",
    "Quantity",
    "Record",
    "ServerDone",
    "Setting",
    "UnitNote",
]
__all__ += ["millis", "parse_line", "rate_bytes_s", "seconds", "size_bytes"]

MIB = 1 << 20


# ---------------------------------------------------------------------------- line records
@dataclass(frozen=True, slots=True)
class Quantity:
    """A number with its unit as printed, and the `(disk-write N ms)` part when there is one."""

    number: float
    unit: str | None
    disk_write: float | None = None
    disk_write_unit: str | None = None


@dataclass(frozen=True, slots=True)
class Marker:
    """A line whose shape is all it says: `request`, `columns`, `server_started`, `server_request`."""

    kind: str
    latency: bool = False


@dataclass(frozen=True, slots=True)
class Setting:
    """`Key = value`: a requested setting, an average, or a server-side setting."""

    key: str
    text: str | None
    quantity: Quantity | None


@dataclass(frozen=True, slots=True)
class UnitNote:
    """`(1 Mbyte = 1024x1024 bytes)`: what the client means by its size unit."""

    count: float
    unit: str
    bytes: int


@dataclass(frozen=True, slots=True)
class Clocked:
    """`(HH:MM:SS) The server is ready.` (`ready`) or `(HH:MM:SS) Test finished.` (`finished`)."""

    kind: str
    at: time


@dataclass(frozen=True, slots=True)
class Interval:
    """`(HH:MM:SS)  7.544 Mbytes/s  1.037 ms  (disk-write 0.564 ms)`: one statistics interval."""

    at: time
    throughput: Quantity
    latency: Quantity | None


@dataclass(frozen=True, slots=True)
class ServerDone:
    """`The test terminated. ...` (server side)."""

    detail: str | None


Record = Quantity | Marker | Setting | UnitNote | Clocked | Interval | ServerDone


class OratcptestShapes(Transformer[Token, Any]):
    """Inline transformer of grammars/oratcptest.lark: one record per line."""

    def start(self, c: list[Record]) -> Record:
        return c[0]

    def request(self, _: list[Token]) -> Marker:
        return Marker("request")

    def server_started(self, _: list[Token]) -> Marker:
        return Marker("server_started")

    def server_request(self, _: list[Token]) -> Marker:
        return Marker("server_request")

    def columns(self, c: list[Token]) -> Marker:
        return Marker("columns", latency=len(c) > 0)

    def server_done(self, c: list[Token]) -> ServerDone:
        return ServerDone(str(c[0]) if c else None)

    def setting(self, c: list[Any]) -> Setting:
        value = c[1]
        if isinstance(value, Quantity):
            return Setting(str(c[0]).strip(), None, value)
        return Setting(str(c[0]).strip(), str(value), None)

    def word(self, c: list[Token]) -> str:
        return str(c[0]).strip()

    def default(self, c: list[Token]) -> str:
        return str(c[0])

    def quantity(self, c: list[Any]) -> Quantity:
        unit = next((str(t) for t in c[1:] if isinstance(t, Token)), None)
        disk = next((d for d in c[1:] if isinstance(d, tuple)), (None, None))
        return Quantity(float(c[0]), unit, disk[0], disk[1])

    def disk_write(self, c: list[Token]) -> tuple[float, str]:
        return float(c[0]), str(c[1])

    def unit_note(self, c: list[Token]) -> UnitNote:
        count, unit, product = float(c[0]), str(c[1]), str(c[2])
        if count <= 0:
            raise ValueError("unit note with a zero count")
        return UnitNote(count, unit, round(math.prod(int(f) for f in product.split("x")) / count))

    def ready(self, c: list[Token]) -> Clocked:
        return Clocked("ready", _clock(c[0]))

    def finished(self, c: list[Token]) -> Clocked:
        return Clocked("finished", _clock(c[0]))

    def interval(self, c: list[Any]) -> Interval:
        return Interval(_clock(c[0]), c[1], c[2] if len(c) > 2 else None)


def _clock(token: Token) -> time:
    return datetime.strptime(str(token)[1:-1], "%H:%M:%S").time()


def parse_line(text: str) -> Record:
    """Parse one line of oratcptest output.

    Raises:
        LineError: the grammar rejects the line; the message says where and why.
    """
    result: Record = parse_with(line_parser("oratcptest", OratcptestShapes), text)
    return result


# ---------------------------------------------------------------------------- units
_SIZE_POWER = {"byte": 0, "bytes": 0, "kbyte": 1, "kbytes": 1, "kb": 1, "mbyte": 2, "mbytes": 2, "mb": 2}
_SIZE_POWER |= {"gbyte": 3, "gbytes": 3, "gb": 3}
_MS = {"us": 0.001, "ms": 1.0, "s": 1000.0, "sec": 1000.0, "second": 1000.0, "seconds": 1000.0}
_SECONDS = {"s": 1.0, "sec": 1.0, "second": 1.0, "seconds": 1.0, "min": 60.0, "minute": 60.0, "minutes": 60.0}
_SECONDS |= {"h": 3600.0, "hour": 3600.0, "hours": 3600.0, "ms": 0.001}


def _base(mbyte: int) -> int:
    return math.isqrt(mbyte) if math.isqrt(mbyte) ** 2 == mbyte else 1024


def size_bytes(q: Quantity, mbyte: int = MIB) -> int:
    """`8 kbytes` -> 8192 (with the client's Mbyte; its kbyte is the square root of it)."""
    if q.unit is None:
        raise ValueError(f"{q.number:g} without its unit (line cut short?)")
    power = _SIZE_POWER.get(q.unit.lower())
    if power is None:
        raise ValueError(f"unknown size unit {q.unit!r}")
    return round(q.number * float(_base(mbyte) ** power))


def rate_bytes_s(q: Quantity, mbyte: int = MIB) -> float:
    """`7.544 Mbytes/s` -> bytes per second."""
    if q.unit is None:
        raise ValueError(f"{q.number:g} without its unit (line cut short?)")
    unit = q.unit.lower()
    if not unit.endswith("/s") or unit[:-2] not in _SIZE_POWER:
        raise ValueError(f"unknown throughput unit {q.unit!r}")
    return q.number * float(_base(mbyte) ** _SIZE_POWER[unit[:-2]])


def millis(number: float, unit: str | None) -> float:
    """A latency in ms."""
    factor = _MS.get((unit or "").lower())
    if factor is None:
        raise ValueError(f"unknown latency unit {unit!r}")
    return number * factor


def seconds(q: Quantity) -> float:
    """`2 minutes` -> 120.0."""
    factor = _SECONDS.get((q.unit or "").lower())
    if factor is None:
        raise ValueError(f"unknown duration unit {q.unit!r}")
    return q.number * factor
