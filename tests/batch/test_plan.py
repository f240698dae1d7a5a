"""Units of work: one configuration's sources per day; what makes a unit stale."""

from __future__ import annotations

from dataclasses import replace

from analyzer.batch.configs import by_adr_path
from analyzer.batch.plan import ALERT_LOG, NO_STAMP, Settings, SkippedInput, plan_units, safe_name
from tests.batch.test_configs import source


def _pair(day: str, first: str = "14:00:00", last: str = "15:00:00", tag: str = "") -> list:
    span = {"first_at": f"{day}T{first}+00:00", "last_at": f"{day}T{last}+00:00"}
    return [
        replace(source(f"/a/salesdb01/{day}/p{tag}", "primary", "sales", "salesdb01"), **span, sha256=f"p{day}{tag}"),
        replace(
            source(f"/a/salesdr01/{day}/s{tag}", "standby", "salesdr", "salesdr01", peer="salesdb01"),
            **span,
            sha256=f"s{day}{tag}",
        ),
    ]


def test_one_unit_per_configuration_and_day() -> None:
    sources = _pair("2024-10-22") + _pair("2024-10-23")
    units, unplaced = plan_units(sources, [], by_adr_path, Settings())
    assert sorted(units) == ["sales+salesdr/2024-10-22", "sales+salesdr/2024-10-23"]
    assert not unplaced
    unit = units["sales+salesdr/2024-10-22"]
    assert [s.sha256 for s in unit.sources] == ["p2024-10-22", "s2024-10-22"]
    assert (unit.primary_db, unit.standby_dbs, unit.name) == ("sales", ("salesdr",), "sales+salesdr")


def test_a_file_across_midnight_is_read_by_both_days() -> None:
    sources = _pair("2024-10-22", "23:30:00", "23:59:00")
    sources[1] = replace(sources[1], last_at="2024-10-23T00:10:00+00:00")
    units, _ = plan_units(sources, [], by_adr_path, Settings())
    assert len(units["sales+salesdr/2024-10-22"].sources) == 2
    assert [s.label for s in units["sales+salesdr/2024-10-23"].sources] == [sources[0].label, sources[1].label]


def test_only_the_margin_on_a_day_makes_no_unit() -> None:
    units, _ = plan_units(_pair("2024-10-22", "00:10:00", "02:00:00"), [], by_adr_path, Settings())
    assert sorted(units) == ["sales+salesdr/2024-10-22"]


def test_fingerprint_follows_content_grouping_and_settings() -> None:
    base, _ = plan_units(_pair("2024-10-22"), [], by_adr_path, Settings())
    unit = base["sales+salesdr/2024-10-22"]
    same, _ = plan_units(_pair("2024-10-22"), [], by_adr_path, Settings())
    assert same[unit.key].fingerprint() == unit.fingerprint()
    grown = _pair("2024-10-22")
    grown[0] = replace(grown[0], sha256="other content")
    changed, _ = plan_units(grown, [], by_adr_path, Settings())
    assert changed[unit.key].fingerprint() != unit.fingerprint()
    other, _ = plan_units(_pair("2024-10-22"), [], by_adr_path, Settings(threshold_ms=50))
    assert other[unit.key].fingerprint() != unit.fingerprint()
    moved = [replace(s, label=s.label + ".gz", path=s.path + ".gz") for s in _pair("2024-10-22")]
    renamed, _ = plan_units(moved, [], by_adr_path, Settings())
    assert renamed[unit.key].fingerprint() == unit.fingerprint()  # the same content under another name


def test_skipped_inputs_are_listed_with_the_day_of_their_neighbours() -> None:
    sources = _pair("2024-10-22")
    trm = SkippedInput("/a/salesdb01/2024-10-22/p.trm", "trace map", False, "2026-01-01", "sales")
    stray = SkippedInput("/a/readme.txt", "not a trace", False, "2026-01-01", None)
    late = SkippedInput("/a/salesdb01/2024-10-25/q.trm", "trace map", False, "2024-10-25", "sales")
    units, _ = plan_units(sources, [trm, stray, late], by_adr_path, Settings())
    assert units["sales+salesdr/2024-10-22"].skipped == (trm,)
    # files that are not traces make no unit: not one of their own, nor one of a day without traces
    assert set(units) == {"sales+salesdr/2024-10-22"}
    assert all(u.sources for u in units.values())


def test_a_source_without_stamps_is_skipped() -> None:
    bare = replace(source("/x/diag/rdbms/sales/s1/trace/a.trc", "other", "sales", None), first_at=None, last_at=None)
    units, unplaced = plan_units([*_pair("2024-10-22"), bare], [], by_adr_path, Settings())
    assert [(s.label, s.reason) for s in unplaced] == [(bare.label, NO_STAMP)]
    assert all(bare.label not in {s.label for s in u.sources} for u in units.values())


def test_an_alert_log_is_listed_not_read() -> None:
    """An alert log, with stamps, is listed as skipped with its reason, in the day of its folder's traces."""
    pair = _pair("2024-10-22")
    alert = source("/a/salesdb01/2024-10-22/diag/rdbms/sales/sales1/trace/alert_sales1.log", "other", "sales", None)
    assert alert.days()
    units, unplaced = plan_units([*pair, alert], [], by_adr_path, Settings())
    assert [(s.label, s.reason) for s in unplaced] == [(alert.label, ALERT_LOG)]
    assert all(alert.label not in {s.label for s in u.sources} for u in units.values())


def test_safe_name() -> None:
    assert safe_name("sales+salesdr") == "sales+salesdr"
    assert safe_name("host:a/b c") == "host%3Aa%2Fb%20c"
