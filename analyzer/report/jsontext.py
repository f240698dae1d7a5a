"""JSON with one item per line, as `json.dumps(value, indent=1, default=str)` writes it, byte for byte,
at a fraction of the cost.

Python's encoder is written in C only for compact output: with `indent` it runs in Python, a
generator per container, ~10 us per value (the summary of a big upload holds hundreds of thousands
of values: every LGWR warning, every recommendation metric). Here the containers that hold no
other container (a warning, a metric's row, a list of numbers) go through the C encoder in one
call each, with the item separator carrying the newline and the indentation of their level; only
the few containers above them are walked in Python.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from functools import cache
from json.encoder import encode_basestring_ascii

_CONTAINERS = (list, tuple, dict)


def dumps(value: object, level: int = 0) -> str:
    """`json.dumps(value, indent=1, default=str)`, every line but the first indented `level` more spaces."""
    out: list[str] = []
    _emit(value, level, out)
    return "".join(out)


@cache
def _flat_encoder(level: int) -> Callable[[object], str]:
    """The C encoder whose item separator ends a line and indents the next to `level`."""
    return json.JSONEncoder(separators=(",\n" + " " * level, ": "), default=str).encode


def _emit(value: object, level: int, out: list[str]) -> None:
    children: Iterable[object]
    if isinstance(value, dict):
        children = value.values()
    elif isinstance(value, list | tuple):
        children = value
    else:  # a scalar (or what `default=str` makes of any other object)
        out.append(_flat_encoder(0)(value))
        return
    if not value:
        out.append("{}" if isinstance(value, dict) else "[]")
        return
    inner = "\n" + " " * (level + 1)
    close = "\n" + " " * level
    if not any(isinstance(child, _CONTAINERS) for child in children):
        compact = _flat_encoder(level + 1)(value)  # "[a,\n  b]": open and close on their own lines
        out.append(compact[0] + inner + compact[1:-1] + close + compact[-1])
        return
    if isinstance(value, dict):
        out.append("{")
        for n, (key, child) in enumerate(value.items()):
            out.append(("," if n else "") + inner + encode_basestring_ascii(_key(key)) + ": ")
            _emit(child, level + 1, out)
        out.append(close + "}")
    else:
        out.append("[")
        for n, child in enumerate(value):
            out.append(("," if n else "") + inner)
            _emit(child, level + 1, out)
        out.append(close + "]")


def _key(key: object) -> str:
    """A dict key as `json` writes it: strings as they are, numbers, booleans and null spelled as JSON."""
    if isinstance(key, str):
        return key
    if key is True or key is False or key is None or isinstance(key, int | float):
        return _flat_encoder(0)(key)
    raise TypeError(f"keys must be str, int, float, bool or None, not {type(key).__name__}")
