"""Every frame that crosses a stage declared once as a `pl.Schema`; the empty frames built from them."""

from __future__ import annotations

import ast
from datetime import UTC, datetime

import polars as pl

from analyzer.base import schemas
from analyzer.base.schemas import (
    ATTRIBUTED,
    LINK_COLUMNS,
    LINKED,
    ONE_WAY_COLUMNS,
    PARSE_TABLES,
    WHAT_IF_COLUMNS,
    WRITES,
    empty,
    frame,
    narrowed,
    per_row,
    schema,
)
from tests.conftest import ROOT

#: the names of analyzer.base.schemas that are not frame schemas: column types and groups of column names
NOT_FRAMES = {
    "US",
    "UTC",
    "CAT",
    "LINK_COLUMNS",
    "ONE_WAY_COLUMNS",
    "WHAT_IF_COLUMNS",
    "NARROW_INTS",
    "TOTAL_AND_COMPONENTS",
    "WRITE_KEY",
    # not a column at all: the engine lazy queries of the reading stage are collected on
    "LAZY_ENGINE",
}


def _used_across_stages() -> set[str]:
    """The upper-case names other analyzer modules import from analyzer.base.schemas."""
    names = set()
    for path in (ROOT / "analyzer").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module == "analyzer.base.schemas":
                names |= {alias.name for alias in node.names if alias.name.isupper()}
    return names


def _declared() -> dict[str, object]:
    return {name: value for name, value in vars(schemas).items() if name.isupper() and not name.startswith("_")}


def test_every_frame_schema_used_across_stages_is_a_polars_schema_and_empty_gives_it() -> None:
    used = _used_across_stages()
    assert {"WRITES", "EXCHANGES", "PENDING", "LINKED", "ATTRIBUTED"} <= used
    frames = {name for name in used if name not in NOT_FRAMES and name != "PARSE_TABLES"}
    for name in sorted(frames):
        declared = getattr(schemas, name)
        assert isinstance(declared, pl.Schema), name
        built = empty(declared)
        assert (built.height, built.schema) == (0, declared), name


def test_every_upper_case_name_of_the_module_is_a_schema_or_a_known_column_group() -> None:
    declared = _declared()
    assert {name for name, value in declared.items() if not isinstance(value, pl.Schema)} == NOT_FRAMES | {
        "PARSE_TABLES"
    }
    for name in ("LINK_COLUMNS", "ONE_WAY_COLUMNS", "WHAT_IF_COLUMNS", "NARROW_INTS"):
        assert set(declared[name]) <= set(WRITES), name  # type: ignore[call-overload]


def test_the_parse_tables_are_schemas_with_a_line_number() -> None:
    assert set(PARSE_TABLES) >= {"messages", "krs", "adr", "waits", "lgwr", "header", "markers", "alert", "unparsed"}
    for name, table in PARSE_TABLES.items():
        assert isinstance(table, pl.Schema) and table.get("line") == pl.Int64, name
        assert empty(table).schema == table


def test_the_writes_table_as_each_stage_leaves_it_is_writes_less_what_later_stages_add() -> None:
    assert list(LINKED) == [name for name in WRITES if name not in ONE_WAY_COLUMNS]
    later = {*ONE_WAY_COLUMNS, *LINK_COLUMNS, *WHAT_IF_COLUMNS}
    assert list(ATTRIBUTED) == [name for name in WRITES if name not in later]
    assert all(ATTRIBUTED[name] == WRITES[name] for name in ATTRIBUTED)


def test_empty_frames_are_new_frames_each_time() -> None:
    first = empty(WRITES)
    first.insert_column(0, pl.Series("extra", [], pl.Int8))
    assert empty(WRITES).schema == WRITES


def test_frame_builds_rows_with_the_schema_and_nulls_for_missing_keys() -> None:
    columns = schema(at=schemas.UTC, file=schemas.CAT, n=pl.Int64)
    at = datetime(2024, 1, 1, tzinfo=UTC)
    built = frame([{"at": at, "file": "a.trc", "n": 1}, {"file": "b.trc"}], columns)
    assert built.schema == columns
    assert built.rows() == [(at, "a.trc", 1), (None, "b.trc", None)]
    assert frame([], columns).schema == columns


def test_narrowed_holds_the_columns_that_fit_as_int32_and_keeps_every_value() -> None:
    wide = pl.DataFrame(
        {
            "thread": [1, 2, 3],
            "seq": [2**31 - 1, 1584, -(2**31)],  # the Int32 extremes still fit
            "msgid": [117450, 2**31, 7],  # one beyond: the column stays Int64
            "primary_line": [None, None, None],
            "rfs_io_waits": [1, 2, 3],  # summed downstream: never narrowed
        },
        schema={
            "thread": pl.Int64,
            "seq": pl.Int64,
            "msgid": pl.Int64,
            "primary_line": pl.Int64,
            "rfs_io_waits": pl.Int64,
        },
    )
    narrow = narrowed(wide)
    assert dict(narrow.schema) == {
        "thread": pl.Int32,
        "seq": pl.Int32,
        "msgid": pl.Int64,
        "primary_line": pl.Int32,
        "rfs_io_waits": pl.Int64,
    }
    assert narrow.cast(pl.Int64).equals(wide)
    assert narrowed(empty(LINKED)).schema["msgid"] == pl.Int32  # no value that does not fit


def test_collect_rows_runs_the_query_on_rows_and_gives_its_schema_without() -> None:
    rows = pl.DataFrame({"line": [3, 1, 2], "local": [datetime(2024, 1, 1, 0, 0, s) for s in (3, 1, 2)]})
    adr = pl.DataFrame({"stamp_line": [0, 2], "tag": ["a", "b"]})

    def query(frame: pl.DataFrame) -> pl.LazyFrame:
        joined = frame.lazy().sort("line").join_asof(adr.lazy(), left_on="line", right_on="stamp_line")
        return joined.with_columns(at=pl.col("local").dt.replace_time_zone("UTC"))

    ran = schemas.collect_rows(query(rows), rows.height)
    assert ran.equals(query(rows).collect()) and ran["tag"].to_list() == ["a", "b", "b"]
    none = schemas.collect_rows(query(rows.clear()), 0)
    assert none.height == 0 and none.schema == query(rows.clear()).collect().schema


def test_per_row_repeats_each_part_s_values_and_none_for_a_part_without_rows() -> None:
    values = pl.DataFrame({"file": [0, 1, 2, 3], "name": ["a", "b", "c", "d"]})
    beside = per_row(values, [2, 0, 1, 3])
    assert beside.rows() == [(0, "a"), (0, "a"), (2, "c"), (3, "d"), (3, "d"), (3, "d")]
    assert beside.schema == values.schema
    assert per_row(values, [0, 0, 0, 0]).height == 0
