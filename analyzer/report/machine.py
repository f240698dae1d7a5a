"""Machine-readable renderers: one JSON document, or the writes table as CSV.

Both write large tables in slices straight from polars: the writes table has one row per
remote write (millions on a big upload); as Python dicts through `json.dump` it cost ~60 us a
row (15 s for 250k writes), through polars' writer ~4 us. Slicing bounds the text held at once.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import TextIO

import polars as pl

from analyzer import insights
from analyzer.api import Analysis
from analyzer.report.model import coverage, files, iso_frame, summary

#: rows rendered per slice (about 10 MB of JSON for the writes table)
SLICE_ROWS = 20_000


def render_json(a: Analysis, out: TextIO, top: int) -> None:
    """Write the whole analysis as one JSON document: the content of `model.document`.

    The small parts go through `json` with indent 1; the tables of one row per write or per
    minute are arrays with one compact item per line, written by polars.
    """
    document: dict[str, object] = {
        "summary": summary(a, top),
        "writes": a.writes,
        "unmatched": a.unmatched,
        "files": files(a),
        "coverage": coverage(a),
        "timeline": insights.per_minute(a.writes),
    }
    out.write("{")
    for n, (key, value) in enumerate(document.items()):
        out.write(f'{"," if n else ""}\n "{key}": ')
        if isinstance(value, pl.DataFrame):
            write_json_array(value, out)
        else:  # JSON strings hold no raw newline, so indenting every line nests the value one level
            out.write(json.dumps(value, indent=1, default=str).replace("\n", "\n "))
    out.write("\n}\n")


def write_json_array(frame: pl.DataFrame, out: TextIO) -> None:
    """A frame as a JSON array of row objects (datetimes in ISO-8601 UTC), one row per line.

    Items equal what `json.dump` makes of `iso_frame(frame).to_dicts()`, except that polars
    writes NaN and infinity as null: a frame holding them (never the case for durations,
    which are differences of stamps) goes through `json` instead.
    """
    if not frame.height:
        out.write("[]")
    elif not _all_finite(frame):
        out.write(json.dumps(iso_frame(frame).to_dicts(), indent=1, default=str).replace("\n", "\n "))
    else:
        for offset, piece in _slices(frame):
            rows = iso_frame(piece).write_ndjson()[:-1].replace("\n", ",\n  ")
            out.write((",\n  " if offset else "[\n  ") + rows)
        out.write("\n ]")


def _all_finite(frame: pl.DataFrame) -> bool:
    """No NaN or infinity in the float columns."""
    floats = [name for name, dtype in frame.schema.items() if dtype.is_float()]
    return not floats or bool(frame.select(pl.all_horizontal(pl.col(floats).is_finite().fill_null(True)).all()).item())


def _slices(frame: pl.DataFrame) -> Iterator[tuple[int, pl.DataFrame]]:
    """(offset, rows) in slices of SLICE_ROWS; an empty frame gives one empty slice."""
    for offset in range(0, max(frame.height, 1), SLICE_ROWS):
        yield offset, frame.slice(offset, SLICE_ROWS)


def render_csv(a: Analysis, out: TextIO, top: int) -> None:
    """Write the writes table (same column names as the JSON `writes` items)."""
    del top  # the CSV is always the full table
    for offset, piece in _slices(iso_frame(a.writes)):
        out.write(piece.write_csv(include_header=not offset))
