"""The machine renderers write the same text into a byte stream (polars' sink) as into a `StringIO`.

Into `sys.stdout` or a UTF-8 text file the tables go as bytes to the stream under it, streamed by
polars' CSV sink with every JSON item a field; into a `StringIO`, as text slice by slice. Both
must equal the plain statement: `write_ndjson` items joined by `,\\n  `, and `write_csv` of
`iso_frame`; a frame with NaN or infinity goes through `json` on both paths.
"""

from __future__ import annotations

import csv
import io
import json
import math
from collections.abc import Callable
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any, TextIO

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from analyzer.api import Options, analyze
from analyzer.base.zones import TimeZones
from analyzer.report import machine
from analyzer.report.model import document, iso_frame
from analyzer.simulate.options import SimOptions
from analyzer.simulate.runner import simulate
from tests.conftest import PAPER

Render = Callable[[pl.DataFrame, TextIO], None]
SPECIAL_STRINGS = [
    'a"b',
    "back\\slash",
    "tab\t",
    "nl\n",
    "cr\r",
    "\x00\x01\x1f\x7f",
    "é中😀",
    "\u2028",
    "",
    "a,b",
    None,
]
SPECIAL_FLOATS = [0.0, -0.0, 1e-7, 1e16, 1e21, 1e22, 5e-324, 1.7976931348623157e308, 0.1 + 0.2, -1.5, None]


def reference_json(frame: pl.DataFrame) -> str:
    """The specification: polars' NDJSON items, one a line, in an array indented one level."""
    if not frame.height:
        return "[]"
    return "[\n  " + iso_frame(frame).write_ndjson()[:-1].replace("\n", ",\n  ") + "\n ]"


def write_json(frame: pl.DataFrame, out: TextIO) -> None:
    machine.write_json_array(frame, out)


def write_csv(frame: pl.DataFrame, out: TextIO) -> None:
    machine._write_rows(frame, out, as_json=False, header=True)


def rendered(render: Render, frame: pl.DataFrame, tmp_path: Path) -> tuple[str, str]:
    """What `render` writes into a StringIO, and into a UTF-8 text file between two text writes."""
    text = io.StringIO()
    render(frame, text)
    path = tmp_path / "out.txt"
    with path.open("w", encoding="utf-8") as f:
        assert machine._byte_stream(f) is f.buffer
        f.write("<")
        render(frame, f)
        f.write(">")
    return text.getvalue(), path.read_bytes().decode()  # no newline translation: a CSV field may hold "\r"


def special_frame(rows: int) -> pl.DataFrame:
    """Every column type the tables hold (and a few more), nulls and strings that need escaping."""
    cycle = range(rows)
    return pl.DataFrame(
        {
            "i": [None if n % 7 == 3 else n * 7919 - 2**40 for n in cycle],
            "f": [SPECIAL_FLOATS[n % len(SPECIAL_FLOATS)] for n in cycle],
            "s": [SPECIAL_STRINGS[n % len(SPECIAL_STRINGS)] for n in cycle],
            "b": [None if n % 5 == 0 else n % 2 == 0 for n in cycle],
            "utc": [
                datetime(1969, 12, 31, 23, 59, 59, tzinfo=UTC) + timedelta(microseconds=n * 999_999) for n in cycle
            ],
            "naive": [None if n % 4 == 0 else datetime(2024, 2, 29) + timedelta(seconds=n) for n in cycle],
            "ns": pl.Series([datetime(2024, 1, 1, 0, 0, 0, n) for n in cycle], dtype=pl.Datetime("ns", "UTC")),
            "day": [date(2024, 1, 1) + timedelta(days=n) for n in cycle],
            "cat": pl.Series([SPECIAL_STRINGS[n % 3] for n in cycle], dtype=pl.Categorical()),
        }
    )


@pytest.mark.parametrize("slice_rows", [1, 7, machine.SLICE_ROWS])
@pytest.mark.parametrize("rows", [0, 1, 2, 50])
def test_json_array_is_the_same_on_both_paths(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, rows: int, slice_rows: int
) -> None:
    monkeypatch.setattr(machine, "SLICE_ROWS", slice_rows)
    frame = special_frame(rows)
    text, file = rendered(write_json, frame, tmp_path)
    assert text == reference_json(frame)
    assert file == f"<{text}>"
    assert json.loads(text) == json.loads(json.dumps(iso_frame(frame).to_dicts(), default=str))


@pytest.mark.parametrize("slice_rows", [1, 7, machine.SLICE_ROWS])
@pytest.mark.parametrize("rows", [0, 1, 50])
def test_csv_is_the_same_on_both_paths(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, rows: int, slice_rows: int
) -> None:
    monkeypatch.setattr(machine, "SLICE_ROWS", slice_rows)
    frame = special_frame(rows).drop("cat")
    text, file = rendered(write_csv, frame, tmp_path)
    assert text == iso_frame(frame).write_csv()
    assert file == f"<{text}>"


def test_non_finite_floats_take_json_on_both_paths(tmp_path: Path) -> None:
    frame = pl.DataFrame({"x": [1.5, float("nan"), float("inf"), None], "at": [datetime(2024, 1, 1)] * 4})
    text, file = rendered(write_json, frame, tmp_path)
    assert file == f"<{text}>"
    got = json.loads(text)
    assert got[0]["x"] == 1.5 and math.isnan(got[1]["x"]) and got[2]["x"] == math.inf and got[3]["x"] is None
    assert text != reference_json(frame)  # polars alone would have written NaN and infinity as null


@settings(deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    floats=st.lists(st.floats(allow_nan=False, allow_infinity=False) | st.none(), min_size=1, max_size=30),
    text=st.text(),
)
def test_any_finite_floats_and_strings_are_written_as_write_ndjson_does(
    tmp_path: Path, floats: list[float | None], text: str
) -> None:
    frame = pl.DataFrame({"x": floats, "s": [text] * len(floats)}, schema={"x": pl.Float64, "s": pl.String})
    got, file = rendered(write_json, frame, tmp_path)
    assert got == reference_json(frame)
    assert file == f"<{got}>"


def test_only_a_utf8_text_stream_is_written_as_bytes(tmp_path: Path) -> None:
    assert machine._byte_stream(io.StringIO()) is None
    with (tmp_path / "latin.txt").open("w", encoding="latin-1") as f:
        assert machine._byte_stream(f) is None
    with (tmp_path / "utf8.txt").open("w", encoding="UTF8") as f:
        assert machine._byte_stream(f) is f.buffer
    wrapper = io.TextIOWrapper(io.BytesIO(), encoding="utf-8")
    assert machine._byte_stream(wrapper) is wrapper.buffer


def test_document_into_a_file_is_the_document_into_text(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(machine, "SLICE_ROWS", 5)
    a = analyze([str(PAPER)], Options())
    for render in (machine.render_json, machine.render_csv):
        text = io.StringIO()
        render(a, text, 10)
        path = tmp_path / "doc.txt"
        with path.open("w", encoding="utf-8") as f:
            render(a, f, 10)
        assert path.read_bytes().decode() == text.getvalue()


@pytest.fixture(scope="module")
def simulated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("sim")
    simulate(out / "set", SimOptions(scenario="mixed", format_version="11.2", writes=3000, noise=0.05, seed=3))
    return out / "set"


def _reference_json(paths: list[str], options: Options) -> tuple[dict[str, Any], str]:
    a = analyze(paths, options)
    out = io.StringIO()
    machine.render_json(a, out, 10)
    return json.loads(json.dumps(document(a, 10), default=str)), out.getvalue()


@pytest.mark.slow
@pytest.mark.parametrize("slice_rows", [7, machine.SLICE_ROWS])
def test_json_has_the_content_of_the_model_document(
    simulated: Path, monkeypatch: pytest.MonkeyPatch, slice_rows: int
) -> None:
    monkeypatch.setattr(machine, "SLICE_ROWS", slice_rows)
    for paths, options in (
        ([str(PAPER)], Options(zones=TimeZones(default_min=-420))),
        ([str(simulated)], Options()),
        ([str(p) for p in sorted(simulated.rglob("*nss*.trc"))], Options()),  # one-sided writes
    ):
        expected, text = _reference_json(paths, options)
        assert json.loads(text) == expected


def test_json_array_keeps_non_finite_floats() -> None:
    """polars would write NaN as null: such a frame goes through `json`, which writes NaN and Infinity."""
    frame = pl.DataFrame({"x": [1.5, float("nan"), float("inf")], "at": [datetime(2024, 1, 1)] * 3})
    out = io.StringIO()
    machine.write_json_array(frame, out)
    got = json.loads(out.getvalue())
    assert [row["at"] for row in got] == ["2024-01-01T00:00:00.000000Z"] * 3
    assert got[0]["x"] == 1.5 and math.isnan(got[1]["x"]) and got[2]["x"] == math.inf


def test_csv_in_slices_is_the_whole_table(simulated: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    a = analyze([str(simulated)])
    whole = iso_frame(a.writes).with_columns(machine.csv_exprs(a.writes.schema)).write_csv()
    monkeypatch.setattr(machine, "SLICE_ROWS", 97)
    out = io.StringIO()
    machine.render_csv(a, out, 10)
    assert out.getvalue() == whole


def test_csv_cells_as_people_paste_them() -> None:
    """Milliseconds rounded to three decimals (no float noise, no -0), text that a spreadsheet would run
    as a formula quoted, numbers (negative ones too) left as numbers."""
    frame = pl.DataFrame(
        {
            "total_ms": [1.4234999999999998, 0.07900000000000018, -0.0001, -2.5],
            "count": [-1, 2, 3, 4],
            "file": ['=HYPERLINK("http://x")', "+1", "-cmd", "@SUM(A1)"],
            "host": ["\tprim", "\rstby", "ok", "a=b"],
            "ratio": [0.1 + 0.2, 1.0, 2.0, 3.0],
        },
        schema_overrides={"host": pl.Categorical},
    )
    out = io.StringIO()
    machine.write_csv(frame, out)
    rows = list(csv.reader(io.StringIO(out.getvalue())))
    assert rows[0] == ["total_ms", "count", "file", "host", "ratio"]
    assert [r[0] for r in rows[1:]] == ["1.423", "0.079", "0.0", "-2.5"]
    assert [r[1] for r in rows[1:]] == ["-1", "2", "3", "4"]
    assert [r[2] for r in rows[1:]] == ['\'=HYPERLINK("http://x")', "'+1", "'-cmd", "'@SUM(A1)"]
    assert [r[3] for r in rows[1:]] == ["'\tprim", "'\rstby", "ok", "a=b"]
    assert rows[1][4] == "0.30000000000000004"  # not a duration in ms: written as it is


def test_every_csv_table_of_a_simulated_set_has_no_float_noise(simulated: Path) -> None:
    from analyzer.report.formats import CSV_TABLES

    a = analyze([str(simulated)])
    for table, render in CSV_TABLES.items():
        out = io.StringIO()
        render(a, out, 10)
        reader = csv.DictReader(io.StringIO(out.getvalue()))
        for row in reader:
            for name, value in row.items():
                if name.endswith("_ms") and value:
                    assert len(value.split(".")[-1]) <= 3, (table, name, value)


def test_slices_encoded_on_two_threads_give_the_bytes_of_one_slice(
    simulated: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The writes table of a simulated set in 40 slices, encoded ENCODERS at a time and written in
    order, into a file and into text: the same bytes as the whole table encoded as one slice."""
    a = analyze([str(simulated)])
    assert a.writes.height >= 3000
    outputs: dict[int, list[bytes]] = {}
    for slice_rows in (a.writes.height, 97):
        monkeypatch.setattr(machine, "SLICE_ROWS", slice_rows)
        found = []
        for render in (machine.render_json, machine.render_csv):
            path = tmp_path / "out.txt"
            with path.open("w", encoding="utf-8") as f:
                render(a, f, 10)
            text = io.StringIO()
            render(a, text, 10)
            assert text.getvalue().encode() == path.read_bytes()
            found.append(path.read_bytes())
        outputs[slice_rows] = found
    assert outputs[97] == outputs[a.writes.height]


def test_slices_wait_encoded_in_a_window_of_a_few(monkeypatch: pytest.MonkeyPatch) -> None:
    """However many slices, at most WINDOW are encoded and not yet written: the text of the whole
    table is never held at once."""
    monkeypatch.setattr(machine, "SLICE_ROWS", 3)
    frame = special_frame(300)  # 100 slices
    started, written, most = [0], [0], [0]
    encoded = machine._encoded

    def counted(piece: pl.DataFrame, as_json: bool) -> pl.DataFrame:
        started[0] += 1
        return encoded(piece, as_json)

    class Counted(io.StringIO):
        def write(self, text: str) -> int:
            most[0] = max(most[0], started[0] - written[0])
            written[0] += 1
            return super().write(text)

    monkeypatch.setattr(machine, "_encoded", counted)
    out = Counted()
    machine.write_csv(frame, out)
    assert written[0] == 100
    assert 1 <= most[0] <= machine.WINDOW
    assert out.getvalue() == iso_frame(frame).write_csv()
