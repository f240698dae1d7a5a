"""Machine-readable renderers: one JSON document, or the writes table as CSV.

Both write large tables in slices straight from polars: the writes table has one row per
remote write (millions on a big upload); as Python dicts through `json.dump` it cost ~60 us a
row (15 s for 250k writes), through polars' writer ~4 us. Slicing bounds the text held at once.

Each JSON item is polars' `struct.json_encode` of the row (the object `write_ndjson` writes) and
the array is that column written as an unquoted CSV whose line terminator is the item separator.
Slices are encoded on two threads (polars releases the GIL: the ISO datetimes and the JSON items
are most of the cost) and written in order as the next ones encode, a few slices held at once.
Into `sys.stdout` or a UTF-8 text file, polars' CSV writer writes the bytes to the stream under it
(no Python string, no `replace`, no encoding by `TextIOWrapper`): ~5x faster than `write_ndjson` +
`replace` + text write. A `StringIO` gets text, slice by slice.
"""

from __future__ import annotations

import codecs
import os
from collections import deque
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, BinaryIO, TextIO

import polars as pl

from analyzer.findings import events, insights
from analyzer.match.analysis import Analysis
from analyzer.report import jsontext
from analyzer.report.fmt import printable
from analyzer.report.model import (
    CSV_DECIMALS,
    FORMULA,
    async_links,
    coverage,
    files,
    iso_exprs,
    iso_frame,
    summary,
)

#: rows rendered per slice (about 20 MB of JSON for the writes table): bounds what polars holds
#: at once, which for one CSV of the whole table grows to most of the output
SLICE_ROWS = 25_000
#: threads encoding slices at once (two cores), and the slices encoded or being encoded at most
#: (WINDOW x 20 MB): one is written while the next one encodes, the text of the table never held whole
ENCODERS = 2
WINDOW = 2
#: what follows each item of a JSON array but the last
ITEM_END = ",\n  "


def render_json(a: Analysis, out: TextIO, top: int) -> None:
    """Write the whole analysis as one JSON document: the content of `model.document`.

    The small parts as `json.dumps` with indent 1 writes them (`jsontext`); the tables of one row per write or per
    minute are arrays with one compact item per line, written by polars.
    """
    document: dict[str, object] = {
        "summary": summary(a, top),
        "writes": a.writes,
        "unmatched": a.unmatched,
        "files": files(a),
        "coverage": coverage(a),
        "timeline": insights.per_minute(a.writes),
        "async": async_links(a),
        "events": events.around_writes(a),
    }
    out.write("{")
    for n, (key, value) in enumerate(document.items()):
        out.write(f'{"," if n else ""}\n "{key}": ')
        if isinstance(value, pl.DataFrame):
            write_json_array(value, out)
        else:  # `json.dumps(value, indent=1, default=str)` nested one level, its bytes, the C encoder's speed
            out.write(jsontext.dumps(value, level=1))
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
        out.write(jsontext.dumps(iso_frame(frame).to_dicts(), level=1))
    else:  # every item but the last ends with ITEM_END; the last one closes the array
        out.write("[\n  ")
        _write_rows(frame.slice(0, frame.height - 1), out, as_json=True)
        out.write(_rows(frame.slice(frame.height - 1), as_json=True).collect().item() + "\n ]")


def _rows(frame: pl.DataFrame, *, as_json: bool) -> pl.LazyFrame:
    """The frame with ISO datetimes; `as_json`: one column, each row as the object `write_ndjson` writes;
    else as CSV cells (`csv_exprs`)."""
    iso = frame.lazy().with_columns(iso_exprs(frame.schema))
    return (
        iso.select(pl.struct(pl.all()).struct.json_encode()) if as_json else iso.with_columns(csv_exprs(frame.schema))
    )


def csv_exprs(schema: pl.Schema) -> list[pl.Expr]:
    """CSV cells as people paste them: milliseconds rounded to CSV_DECIMALS (no float noise, no -0),
    and text that a spreadsheet would run as a formula (`=`, `+`, `-`, `@`, tab, CR first) quoted
    with a leading `'`; numbers stay numbers (a negative one too)."""
    rounded = [
        pl.col(name).round(CSV_DECIMALS) for name, dtype in schema.items() if dtype.is_float() and name.endswith("_ms")
    ]
    out = [pl.when(r == 0).then(0.0).otherwise(r).alias(r.meta.output_name()) for r in rounded]
    for name, dtype in schema.items():
        if dtype in (pl.String, pl.Categorical):
            text = pl.col(name).cast(pl.String)
            out.append(pl.when(text.str.contains(FORMULA)).then(pl.lit("'") + text).otherwise(text).alias(name))
    return out


def _write_rows(frame: pl.DataFrame, out: TextIO, *, as_json: bool, header: bool = False) -> None:
    """`_rows(frame)` as CSV; `as_json`: each JSON item as is (never quoted) followed by ITEM_END.

    Slices are encoded (ISO datetimes, JSON items, CSV cells) on a pool of ENCODERS threads, polars
    releasing the GIL, and written in order as the next ones encode, at most WINDOW of them held at
    once: into a byte stream by polars' CSV writer, into text (a `StringIO`) as text.
    """
    options: dict[str, Any] = {"quote_style": "never", "line_terminator": ITEM_END} if as_json else {}
    terminal = _is_terminal(out)  # control characters (ANSI escapes) of trace text written as `\xNN` there
    binary = None if terminal else _byte_stream(out)
    if binary is not None:
        out.flush()  # what `out` holds goes first

    def put(offset: int, rows: pl.DataFrame) -> None:
        first = header and not offset
        if binary is not None:
            rows.write_csv(binary, include_header=first, **options)
        else:
            text = rows.write_csv(include_header=first, **options)
            out.write(printable(text) if terminal else text)

    with ThreadPoolExecutor(max_workers=ENCODERS) as pool:
        pending: deque[tuple[int, Future[pl.DataFrame]]] = deque()
        for offset, piece in _slices(frame):
            pending.append((offset, pool.submit(_encoded, piece, as_json)))
            if len(pending) >= WINDOW:
                put(pending[0][0], pending.popleft()[1].result())
        while pending:
            put(pending[0][0], pending.popleft()[1].result())


def _encoded(piece: pl.DataFrame, as_json: bool) -> pl.DataFrame:
    return _rows(piece, as_json=as_json).collect()


def _byte_stream(out: TextIO) -> BinaryIO | None:
    """The byte stream under `out` when writing UTF-8 bytes to it equals writing text to `out`.

    That holds for `sys.stdout` and files opened in text mode as UTF-8 (newlines untranslated,
    the default on POSIX); a `StringIO` has no byte stream.
    """
    binary: BinaryIO | None = getattr(out, "buffer", None)
    encoding: str | None = getattr(out, "encoding", None)
    if binary is None or encoding is None or os.linesep != "\n":
        return None
    return binary if codecs.lookup(encoding).name == "utf-8" else None


def _is_terminal(out: TextIO) -> bool:
    try:
        return out.isatty()
    except (AttributeError, ValueError):  # closed, or no such method
        return False


def _all_finite(frame: pl.DataFrame) -> bool:
    """No NaN or infinity in the float columns."""
    floats = [name for name, dtype in frame.schema.items() if dtype.is_float()]
    return not floats or bool(frame.select(pl.all_horizontal(pl.col(floats).is_finite().fill_null(True)).all()).item())


def _slices(frame: pl.DataFrame) -> Iterator[tuple[int, pl.DataFrame]]:
    """(offset, rows) in slices of SLICE_ROWS; an empty frame gives one empty slice."""
    for offset in range(0, max(frame.height, 1), SLICE_ROWS):
        yield offset, frame.slice(offset, SLICE_ROWS)


def write_csv(frame: pl.DataFrame, out: TextIO) -> None:
    """A table as CSV: ISO datetimes, rounded milliseconds, guarded text (`csv_exprs`), in slices."""
    _write_rows(frame, out, as_json=False, header=True)


def render_csv(a: Analysis, out: TextIO, top: int) -> None:
    """Write the writes table (same column names as the JSON `writes` items)."""
    del top  # the CSV is always the full table
    write_csv(a.writes, out)
