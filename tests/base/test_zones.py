"""Time zones: --tz values (offsets and IANA names), host names as people type them, a zone the
files of a set agree on."""

from __future__ import annotations

import csv
import json
from datetime import UTC, datetime
from pathlib import Path

import polars as pl
import pytest
from hypothesis import given
from hypothesis import strategies as st

from analyzer.base.errors import UsageError
from analyzer.base.zones import (
    ASSUMED_UTC,
    TimeZones,
    assumed_zones,
    local_to_utc,
    parse_zone,
    parse_zones,
    same_host,
    to_utc,
    unmatched_hosts,
    utc_columns,
    value_to_utc,
    zone_lines,
)
from analyzer.simulate.options import SimOptions
from analyzer.simulate.runner import simulate
from tests.conftest import invoke


def test_parse_zones_per_host() -> None:
    zones = parse_zones(["-07:00", "stby01=+01:00", "prim01=Europe/Paris"])
    assert zones.default_min == -420
    assert zones.per_host == {"stby01": 60, "prim01": "Europe/Paris"}


@pytest.mark.parametrize(
    ("specs", "message"),
    [
        (["=-07:00"], "the host before '=' is empty"),
        (["-07:00", "-08:00"], "--tz given twice for all files (-07:00 and -08:00)"),
        (["stby01=+01:00", "stby01.dbnet.example=+02:00"], "--tz given twice for host stby01.dbnet.example"),
        (["stby01=Mars/Olympus"], "bad time zone 'Mars/Olympus'"),
        (["Paris"], "bad time zone 'Paris'"),
    ],
)
def test_parse_zones_rejects(specs: list[str], message: str) -> None:
    with pytest.raises(UsageError) as err:
        parse_zones(specs)
    assert message in str(err.value)


def test_the_same_zone_twice_is_not_an_error() -> None:
    assert parse_zones(["-07:00", "-0700"]).default_min == -420


def test_iana_names_and_offsets() -> None:
    assert parse_zone("Europe/Paris") == "Europe/Paris"
    assert parse_zone("America/Los_Angeles") == "America/Los_Angeles"
    assert parse_zone("-07:00") == -420


@pytest.mark.parametrize(
    ("given", "host", "same"),
    [
        ("stby01", "stby01.dbnet.example", True),
        ("STBY01", "stby01.dbnet.example", True),
        ("stby01.dbnet.example", "stby01", True),
        ("stby01.dbnet.example", "stby01.dbnet.example", True),
        ("stby01.a.example", "stby01.b.example", False),
        ("stby0", "stby01.dbnet.example", False),
        ("stby01", None, False),
        ("", "stby01", False),
    ],
)
def test_host_names_as_people_type_them(given: str, host: str | None, same: bool) -> None:
    assert same_host(given, host) is same


def test_zone_for_a_host_by_its_short_name() -> None:
    zones = TimeZones(default_min=60, per_host={"prim01": -420})
    assert zones.for_host("prim01.dbnet.example") == (-420, "--tz prim01=-07:00")
    assert zones.for_host("prim02.dbnet.example") == (60, "--tz +01:00")
    assert TimeZones().for_host("x") == (0, ASSUMED_UTC)
    assert unmatched_hosts(["prim01", "nosuchhost"], ["prim01.dbnet.example", None]) == ["nosuchhost"]


def test_iana_zone_takes_the_offset_of_each_date() -> None:
    """Paris: +01:00 in winter, +02:00 in summer; the skipped hour of spring read before the change,
    the repeated hour of autumn read as its first pass."""
    local = [
        datetime(2024, 1, 15, 12, 0),
        datetime(2024, 7, 15, 12, 0),
        datetime(2024, 3, 31, 2, 30),  # does not exist in Paris
        datetime(2024, 10, 27, 2, 30),  # exists twice in Paris
    ]
    frame = pl.DataFrame({"t": local}, schema={"t": pl.Datetime("us")})
    utc = frame.select(local_to_utc(pl.col("t"), "Europe/Paris"))["t"].to_list()
    assert utc == [
        datetime(2024, 1, 15, 11, 0, tzinfo=UTC),
        datetime(2024, 7, 15, 10, 0, tzinfo=UTC),
        datetime(2024, 3, 31, 1, 30, tzinfo=UTC),
        datetime(2024, 10, 27, 0, 30, tzinfo=UTC),
    ]


@given(
    st.datetimes(min_value=datetime(1971, 1, 1), max_value=datetime(2099, 12, 31)),
    st.one_of(st.integers(-16 * 60, 16 * 60), st.sampled_from(["Europe/Paris", "America/Denver", "UTC"])),
)
def test_one_value_converts_as_a_column_does(local: datetime, zone: int | str) -> None:
    """`value_to_utc` (a fixed offset in Python) gives what `local_to_utc` gives a column, its type too."""
    column = pl.DataFrame({"t": [local]}, schema={"t": pl.Datetime("us")}).select(local_to_utc(pl.col("t"), zone))
    one = value_to_utc(local, zone)
    assert (one, repr(one.tzinfo)) == (column["t"][0], repr(column["t"][0].tzinfo))


def test_an_offset_per_row_converts_each_row_as_its_own_constant_would() -> None:
    """Rows of several files converted at once, each with its file's offset as a column, are what each
    file's constant gives; the type is the same."""
    local = [datetime(2024, 1, 1, 10), datetime(2024, 6, 1, 23, 59, 59, 999999), datetime(1999, 12, 31, 0, 0, 0, 1)]
    minutes = [120, -420, 0]
    frame = pl.DataFrame({"t": local, "m": minutes}, schema={"t": pl.Datetime("us"), "m": pl.Int64})
    per_row = frame.select(local_to_utc(pl.col("t"), pl.col("m")))["t"]
    alone = [frame.slice(n, 1).select(local_to_utc(pl.col("t"), m))["t"][0] for n, m in enumerate(minutes)]
    assert per_row.to_list() == alone and per_row.dtype == pl.Datetime("us", "UTC")
    assert per_row[1] == datetime(2024, 6, 2, 6, 59, 59, 999999, tzinfo=UTC)


def test_files_without_a_zone_take_the_one_the_others_agree_on() -> None:
    got = assumed_zones(
        [
            ("prim01.example", None),
            ("stby01.example", frozenset([60])),
            ("stby01.example", frozenset([60])),
            ("prim02", None),
        ]
    )
    assert got == [
        (60, "assumed +01:00 as the other files (no zone in the file)"),
        None,
        None,
        (60, "assumed +01:00 as the other files (no zone in the file)"),
    ]
    # the files of the same host first; zones that disagree decide nothing
    mixed = assumed_zones([("a", None), ("a", frozenset([120])), ("b", frozenset([60])), ("c", None)])
    assert mixed == [(120, "assumed +02:00 as the other files of a (no zone in the file)"), None, None, None]


def _truth(path: Path) -> dict[str, str]:
    with (path / "truth.csv").open() as f:
        return {row["msgid"]: row["sent_at"] for row in csv.DictReader(f)}


def test_a_121_set_whose_standby_zone_comes_from_tim(tmp_path: Path) -> None:
    """12.1 RAC: the standby's zone is inferred from epoch tim (+01:00), the primaries' stamps carry
    none: they are read in the same zone, and the clock offset is the true skew (+37.5 s), not an
    hour off; the timeline is that of the truth."""
    simulate(
        tmp_path / "set",
        SimOptions(format_version="12.1", writes=200, primary_tz="+01:00", standby_tz="+01:00", standby_skew_s=37.5),
    )
    doc = json.loads(invoke(["analyze", str(tmp_path / "set"), "--format", "json"]).stdout)
    assert {round(c["offset_ms"]) for c in doc["summary"]["clock"]} == {37_500}
    assert all(c["warning"] is None or "time zone" not in c["warning"] for c in doc["summary"]["clock"])
    truth = _truth(tmp_path / "set")
    assert all(truth[str(w["msgid"])] == w["sent_at"] for w in doc["writes"])
    files = [f for f in doc["files"] if f["role"] in ("primary", "standby")]
    assert {f["utc_offset"] for f in files} == {"+01:00"}
    primary = {f["time_zone"] for f in files if f["role"] == "primary"}
    assert primary == {"assumed +01:00 as the other files (no zone in the file)"}
    assert any("assumed +01:00 as the other files" in n for n in doc["summary"]["notes"])


def test_an_assumed_zone_contradicted_by_the_clock_is_said(tmp_path: Path) -> None:
    """The primaries really run at UTC-05:00: the zone assumed for them (+01:00, the standby's) makes
    the clock offset six hours: the report says the assumption is contradicted."""
    simulate(tmp_path / "set", SimOptions(format_version="12.1", writes=200, primary_tz="-05:00", standby_tz="+01:00"))
    doc = json.loads(invoke(["analyze", str(tmp_path / "set"), "--format", "json"]).stdout)
    notes = " ".join(doc["summary"]["notes"])
    assert "is contradicted by the clock offset" in notes and "give --tz prim01=ZONE" in notes
    fixes = ["--tz", "prim01=-05:00", "--tz", "prim02=-05:00"]
    fixed = json.loads(invoke(["analyze", str(tmp_path / "set"), "--format", "json", *fixes]).stdout)
    assert "contradicted" not in " ".join(fixed["summary"]["notes"])
    assert {round(c["offset_ms"]) for c in fixed["summary"]["clock"]} == {0}


def test_iana_tz_on_the_command_line(tmp_path: Path) -> None:
    """An 11.2 set (November: Paris is at +01:00) read with --tz Europe/Paris gives the truth's times."""
    simulate(tmp_path / "set", SimOptions(format_version="11.2", writes=50, primary_tz="+01:00", standby_tz="+01:00"))
    doc = json.loads(invoke(["analyze", str(tmp_path / "set"), "--format", "json", "--tz", "Europe/Paris"]).stdout)
    truth = _truth(tmp_path / "set")
    assert [truth[str(w["msgid"])][:23] for w in doc["writes"]] == [w["sent_at"][:23] for w in doc["writes"]]
    assert {f["time_zone"] for f in doc["files"] if f["role"] == "primary"} == {"--tz Europe/Paris"}
    assert {f["utc_offset"] for f in doc["files"] if f["role"] == "primary"} == {"+01:00"}


def test_host_options_by_short_name_and_those_that_name_nothing(tmp_path: Path) -> None:
    simulate(tmp_path / "set", SimOptions(format_version="19c", writes=50))
    base = ["analyze", str(tmp_path / "set"), "--format", "json"]
    doc = json.loads(invoke([*base, "--clock-offset", "stby01=0.5"]).stdout)
    assert {(c["offset_ms"], c["source"]) for c in doc["summary"]["clock"]} == {(0.5, "--clock-offset")}
    doc = json.loads(invoke([*base, "--clock-offset", "foo=0.5", "--tz", "nosuchhost=-07:00"]).stdout)
    notes = doc["summary"]["notes"]
    assert any(n.startswith("--clock-offset foo=0.5 named no standby host") for n in notes)
    assert any(n.startswith("--tz nosuchhost=-07:00 named no host of the traces") for n in notes)
    assert {c["source"] for c in doc["summary"]["clock"]} == {"estimated"}
    doc = json.loads(invoke([*base, "--clock-offset", "prim01=3", "--tz", "stby01=+01:00"]).stdout)
    notes = " ".join(doc["summary"]["notes"])
    assert "prim01.dbnet.example is a primary host" in notes
    assert "--tz stby01=... was not used: the files of that host carry their own zone" in notes


@pytest.mark.parametrize("fallback", [120, "Europe/Paris"])
def test_an_empty_table_gets_the_utc_columns_a_filled_one_gets(fallback: int | str) -> None:
    rows = pl.DataFrame({"line": [5], "local": [datetime(2024, 3, 1, 12)], "stamp_line": [None]}).cast(
        {"stamp_line": pl.Int64}
    )
    adr = pl.DataFrame({"line": [1], "utc_offset_min": [60]}, schema={"line": pl.Int64, "utc_offset_min": pl.Int32})
    for zones in (zone_lines(adr), zone_lines(adr.clear())):
        filled = utc_columns(rows, {"at": ("local", "line")}, zones, fallback)
        assert utc_columns(rows.clear(), {"at": ("local", "line")}, zones, fallback).schema == filled.schema
    assert to_utc(rows.clear(), adr, fallback).schema == to_utc(rows, adr, fallback).schema
    assert to_utc(rows, adr, fallback)["at"].to_list() == [datetime(2024, 3, 1, 11, tzinfo=UTC)]
    assert zone_lines(adr.clear()).schema == zone_lines(adr).schema
