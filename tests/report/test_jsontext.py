"""`jsontext.dumps` writes the bytes of `json.dumps(value, indent=1, default=str)` (nested `level` deeper)."""

from __future__ import annotations

import enum
import json
from datetime import UTC, datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st

from analyzer.report import jsontext


class Colour(enum.StrEnum):
    RED = 'r"ed\u00e9'


class Rank(enum.IntEnum):
    FIRST = 1


SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**80), max_value=2**80),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(),  # any code point: quotes, control characters, U+2028, surrogates' neighbours
    st.sampled_from([Colour.RED, Rank.FIRST, datetime(2024, 12, 9, 6, 30, tzinfo=UTC), b"bytes"]),
)
KEYS = st.one_of(st.text(), st.integers(), st.floats(), st.booleans(), st.none(), st.just(Rank.FIRST))
VALUES = st.recursive(
    SCALARS,
    lambda inner: (
        st.lists(inner, max_size=4) | st.lists(inner, max_size=3).map(tuple) | st.dictionaries(KEYS, inner, max_size=4)
    ),
    max_leaves=30,
)


@given(VALUES, st.integers(min_value=0, max_value=3))
def test_same_bytes_as_the_standard_encoder(value: object, level: int) -> None:
    expected = json.dumps(value, indent=1, default=str).replace("\n", "\n" + " " * level)
    assert jsontext.dumps(value, level) == expected


def test_a_summary_shaped_document() -> None:
    warning = {"file": "a.trc", "line": 7, "at": datetime(2024, 1, 1, tzinfo=UTC), "ms": 1.25, "verdict": None}
    document = {
        "schema_version": 3,
        "lgwr_warnings": [warning, dict(warning, line=8)],
        "empty": {},
        "nothing": [],
        "clock": [{"pair": ["p", "s"], "offset_ms": -0.5}],
    }
    text = jsontext.dumps(document, 1)
    assert text == json.dumps(document, indent=1, default=str).replace("\n", "\n ")
    assert json.loads(text)["lgwr_warnings"][1]["line"] == 8


def test_keys_json_cannot_spell_are_refused_as_by_json() -> None:
    with pytest.raises(TypeError):
        json.dumps({(1, 2): [1]}, indent=1)
    with pytest.raises(TypeError, match="keys must be"):
        jsontext.dumps({(1, 2): [[1]]})
