"""One unit of work: a configuration's sources of one day -> its rows, against the simulator's truth."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import polars as pl

from analyzer.base.zones import TimeZones
from analyzer.batch.configs import by_adr_path
from analyzer.batch.inputs import scan
from analyzer.batch.plan import Settings, Unit, plan_units
from analyzer.batch.schemas import FILE_SCHEMAS, PARTITION_SCHEMA
from analyzer.batch.unit import GONE, run_unit
from analyzer.inputs.limits import Limits
from tests.batch.helpers import KEY, copy_share, truth


def _units(share: Path) -> dict[str, Unit]:
    found = scan([str(share)], {}, TimeZones(), Limits())
    units, _ = plan_units(found.sources(), found.skipped(), by_adr_path, Settings())
    return units


def test_unit_rows_are_the_truth_of_its_configuration_and_day(one_day: Path) -> None:
    units = _units(one_day)
    expected = truth(one_day)
    day = expected["day"][0]
    unit = units[f"hr+hrdr/{day}"]
    out = run_unit(unit)
    assert out.key == unit.key and out.fingerprint == unit.fingerprint() and not out.damaged
    for name, frame in out.tables.items():
        assert frame.schema == pl.Schema({**FILE_SCHEMAS[name], **PARTITION_SCHEMA}), name
    writes = out.tables["writes"]
    mine = expected.filter(pl.col("primary_db") == "hr")
    assert sorted(writes.select(KEY).rows()) == sorted(mine.select(KEY).rows())
    assert set(writes["standby_db"]) == {"hrdr"} and set(writes["day"]) == {day}
    assert out.tables["unmatched"].is_empty()
    files = out.tables["files"]
    read = files.filter(pl.col("status") == "read")
    assert sorted(read["file"]) == sorted(s.label for s in unit.sources)
    assert read["sha256"].null_count() == 0 and (read["lines"] > 0).all()
    assert set(files.filter(pl.col("status") == "skipped")["reason"]) >= {
        "trace map (.trm) file: ADR metadata, nothing to parse"
    }
    (daily,) = out.tables["daily"].to_dicts()
    assert (daily["writes"], daily["matched"], daily["primary_db"]) == (mine.height, mine.height, "hr")
    assert daily["slow_writes"] == int(mine["total_ms"].ge(100).sum())
    clock = out.tables["clock"]
    assert clock.height == 2 and set(clock["primary_db"]) == {"hr"}  # one per primary host


def test_a_gone_source_is_listed_not_read(one_day: Path, tmp_path: Path) -> None:
    share = copy_share(one_day, tmp_path / "share")
    units = _units(share)
    day = truth(share)["day"][0]
    unit = units[f"sales+salesdr/{day}"]
    lost = next(s for s in unit.sources if s.role == "standby")
    Path(lost.path).unlink()
    out = run_unit(unit)
    files = out.tables["files"]
    assert files.filter(pl.col("file") == lost.label)["status"].to_list() == ["gone"]
    assert files.filter(pl.col("file") == lost.label)["reason"].to_list() == [GONE]
    writes = out.tables["writes"]
    assert writes.height > 0 and not writes["matched"].all()  # the other standby thread still matched


def test_rows_without_time_belong_to_the_first_day_of_their_file(one_day: Path) -> None:
    from analyzer.batch.unit import _own

    frame = pl.DataFrame(
        {"at": [None, None], "file": ["a", "b"]}, schema={"at": pl.Datetime("us", "UTC"), "file": pl.String}
    )
    homes = {"a": date(2024, 10, 22), "b": date(2024, 10, 23)}
    assert _own(frame, "at", "file", homes, date(2024, 10, 22))["file"].to_list() == ["a"]
