"""Alert logs: every line accounted for, their entries in time, each database's redo transport destinations."""

from __future__ import annotations

import shutil
from pathlib import Path

import polars as pl
import pytest

from analyzer.api import Options, analyze
from analyzer.base.vocab import FileKind, Role, Transport
from analyzer.base.zones import TimeZones
from analyzer.findings import events, switching
from analyzer.match import alerts
from tests.conftest import ROOT

FIXTURES = ROOT / "tests" / "fixtures" / "alert"
DENVER = FIXTURES / "alert_denver2.log"  # 19.9 RAC primary, ISO time lines
AUSTIN = FIXTURES / "alert_austin1.log"  # 11.2 standby, ctime lines


def _one(path: Path, **options: object):  # type: ignore[no-untyped-def]
    return analyze([str(path)], Options(**options))  # type: ignore[arg-type]


def test_a_19c_alert_log_is_read_whole_with_its_release_update_and_zone() -> None:
    a = _one(DENVER)
    (f,) = a.files
    assert f.parsed.unparsed == 0
    assert f.parsed.lines == f.stats.lines == DENVER.read_text().count("\n")
    info = f.reduced.info
    assert (info.kind, info.role, info.instance, info.host) == (
        FileKind.ALERT_LOG,
        Role.OTHER,
        "denver2",
        "denver-db02.example.org",
    )
    assert info.version == "19.9.0.0.0"  # `Version 19.9.0.0.0.`, not the banner's 19.0.0.0.0
    assert f.reduced.zone == "ISO ADR lines of the file"
    assert f.reduced.first_at is not None and f.reduced.first_at.isoformat() == "2021-11-03T13:20:01.103344+00:00"
    assert f.parsed.ignored["alert"] > 40  # the startup block, NOTE lines, archiving: ignored by category


def test_an_11_2_alert_log_takes_its_zone_from_tz() -> None:
    a = _one(AUSTIN, zones=TimeZones(default_min=-360))
    (f,) = a.files
    assert f.parsed.unparsed == 0 and f.reduced.info.version == "11.2.0.4.0"
    assert f.reduced.first_at is not None and f.reduced.first_at.isoformat() == "2014-03-04T08:17:45+00:00"
    selected = alerts.entries(a.files).filter(pl.col("kind") == "rfs_selected")
    assert selected.select("thread", "seq", "log").rows() == [(1, 4413, 14), (1, 4414, 11)]
    assert selected["at"][0].isoformat() == "2014-03-04T08:18:03+00:00"


def test_entries_carry_their_database_and_time() -> None:
    found = alerts.entries(_one(DENVER).files)
    assert set(found["database"]) == {"denver"}
    switch = found.filter(pl.col("kind") == "log_switch").row(0, named=True)
    assert (switch["thread"], switch["seq"], switch["at"].isoformat()) == (2, 77301, "2021-11-03T13:22:08.417205+00:00")
    errors = found.filter(pl.col("kind") == "transport_error")
    assert errors["dest"].to_list() == [3, 3]


def test_destinations_per_database_with_their_history() -> None:
    a = analyze([str(DENVER), str(AUSTIN)], Options())
    d = a.destinations
    denver = d.filter((pl.col("database") == "denver") & (pl.col("dest") == 3))
    assert denver.select("source", "transport", "affirm", "state", "net_timeout_s").rows() == [
        ("startup", "SYNC", "AFFIRM", "ENABLE", 30),
        ("alter system", "ASYNC", "NOAFFIRM", "ENABLE", None),
    ]
    first = denver.row(0, named=True)
    assert (first["service"], first["target"], first["valid_for"]) == (
        "austin",
        "austin",
        "(ONLINE_LOGFILES,PRIMARY_ROLE)",
    )
    local = d.filter((pl.col("database") == "denver") & (pl.col("dest") == 1)).row(0, named=True)
    assert (local["location"], local["service"], local["transport"]) == ("USE_DB_RECOVERY_FILE_DEST", None, None)
    austin = d.filter(pl.col("database") == "austin").row(0, named=True)
    assert (austin["dest"], austin["state"], austin["transport"], austin["affirm"]) == (2, "DEFER", "ASYNC", None)


def test_a_state_set_by_alter_system_is_a_new_setting() -> None:
    frame = pl.DataFrame(
        {
            "kind": ["parameter", "parameter", "parameter_change"],
            "key": ["log_archive_dest_2", "log_archive_dest_state_2", "log_archive_dest_state_2"],
            "detail": ['"SERVICE=b SYNC"', '"ENABLE"', "defer"],
            "database": "a",
            "instance": "a1",
            "host": "h",
            "at": [None, None, None],
            "file": "alert_a1.log",
            "line": [3, 4, 9],
        },
        schema_overrides={"at": pl.Datetime("us", "UTC")},
    )
    rows = alerts.destinations(frame).select("state", "source", "line").rows()
    assert rows == [("ENABLE", "startup", 3), ("DEFER", "alter system", 9)]


BOSTON = '"SERVICE=Boston SYNC AFFIRM DB_UNIQUE_NAME=Boston"'
LOWER = "'service=x async valid_for=(standby_logfiles, standby_role)'"


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (BOSTON, {"service": "boston", "transport": "SYNC", "affirm": "AFFIRM", "target": "boston"}),
        (LOWER, {"service": "x", "transport": "ASYNC", "valid_for": "(STANDBY_LOGFILES,STANDBY_ROLE)"}),
        ('"LOCATION=/u01/Arch"', {"location": "/u01/Arch"}),
        ('"SERVICE=x NET_TIMEOUT=99999999999"', {"service": "x"}),
        ("", {}),
    ],
)
def test_attributes_of_a_destination(value: str, expected: dict[str, object]) -> None:
    found = alerts.attributes(value)
    assert {k: v for k, v in found.items() if k != "attributes"} == expected


def test_alert_logs_are_found_in_directories(tmp_path: Path) -> None:
    trace = tmp_path / "denver-db02" / "diag" / "rdbms" / "denver" / "denver2" / "trace"
    trace.mkdir(parents=True)
    shutil.copy(DENVER, trace / "alert_denver2.log")
    (trace / "notes.log").write_text("not read\n")
    a = analyze([str(tmp_path)], Options())
    assert [f.source.name for f in a.files] == ["alert_denver2.log"]
    assert [s.label.rsplit("/", 1)[-1] for s in a.skipped] == ["notes.log"]


def test_switches_and_srl_selections_join_the_log_switch_correlation() -> None:
    a = _one(DENVER)
    sw = switching.switch_analysis(a)
    rows = sw.switches.select("thread", "to_seq", "source", "srl_selected_at").rows()
    assert [(t, s, src) for t, s, src, _ in rows] == [(2, 77301, "alert log"), (2, 77302, "alert log")]
    assert rows[0][3] is not None and rows[1][3] is None
    timeline = events.around_writes(a)
    assert timeline["event"].to_list() == [
        "startup",
        "log_switch",
        "srl_selected",
        "parameter_change",
        "transport_error",
        "transport_error",
        "log_switch",
    ]


def test_destinations_go_to_the_link_decision() -> None:
    """The last setting of each remote destination (not LOCATION=), unless deferred (austin's)."""
    a = analyze([str(DENVER), str(AUSTIN)], Options())
    found = alerts.transport_destinations(a.destinations)
    assert [(d.db, d.target_db, d.number, d.transport) for d in found] == [("denver", "austin", 3, Transport.ASYNC)]
    assert found[0].source.endswith("alert_denver2.log:98")  # the ALTER SYSTEM, not the startup listing


def test_fast_sync_from_noaffirm() -> None:
    settings = alerts.destinations(
        pl.DataFrame(
            {
                "kind": ["parameter"],
                "key": ["log_archive_dest_2"],
                "detail": ['"SERVICE=b SYNC NOAFFIRM DB_UNIQUE_NAME=b"'],
                "database": "a",
                "instance": "a1",
                "host": "h",
                "at": [None],
                "file": "alert_a1.log",
                "line": [3],
            },
            schema_overrides={"at": pl.Datetime("us", "UTC")},
        )
    )
    (found,) = alerts.transport_destinations(settings)
    assert (found.target_db, found.transport) == ("b", Transport.FASTSYNC)


SALEM = FIXTURES / "alert_salem1.log"  # 19c standby: its RFS lines begin with a blank
BOSTON = FIXTURES / "adrci" / "alert_boston1.log"  # adrci `show alert` layout of an 11.2 primary


def test_19c_rfs_lines_that_begin_with_a_blank_are_read() -> None:
    a = _one(SALEM)
    (f,) = a.files
    assert f.parsed.unparsed == 0
    found = alerts.entries(a.files)
    kinds = found["kind"].to_list()
    assert kinds == ["rfs_attach", "protection", "rfs_selected", "rfs_selected"]
    assert set(found["pid"]) == {68185} and set(found["process"]) == {"RFS"}
    mode = found.filter(pl.col("kind") == "protection").row(0, named=True)
    assert (mode["key"], mode["detail"]) == ("Primary", "MAXIMUM AVAILABILITY")
    assert found.filter(pl.col("kind") == "rfs_selected").select("log", "thread", "seq").rows() == [
        (12, 1, 4412),
        (13, 1, 4413),
    ]


def test_adrci_stamps_give_time_and_zone_and_errors_their_class() -> None:
    a = _one(BOSTON)
    (f,) = a.files
    assert f.parsed.unparsed == 0
    assert f.reduced.zone == "ISO ADR lines of the file"
    assert f.reduced.first_at is not None and f.reduced.first_at.isoformat() == "2011-03-25T11:36:51.012000+00:00"
    found = alerts.entries(a.files)
    assert found.select("kind", "key").rows() == [
        ("log_switch", None),
        ("srl_selected", None),
        ("operator_action", "ORA-16037"),
        ("archiving_error", "ORA-16014"),
    ]
    assert "transport_error" not in events.around_writes(a)["event"].to_list()


LYON = FIXTURES / "lyon" / "alert_lyon1.log"  # 19c primary with two SYNC destinations


def test_data_guard_sync_latency_and_net_timeout_as_the_alert_log_sets_them() -> None:
    a = _one(LYON)
    (f,) = a.files
    assert f.parsed.unparsed == 0
    found = alerts.entries(a.files)
    latency, where = alerts.sync_latency(found, "lyon")
    assert latency == 2 and where is not None and where.endswith("alert_lyon1.log:16")  # the ALTER SYSTEM wins
    assert alerts.sync_latency(found, "nice") == (None, None)
    dests = a.destinations.select("dest", "target", "transport", "affirm", "net_timeout_s").rows()
    assert dests == [(2, "nice", "SYNC", "AFFIRM", 15), (3, "pau", "SYNC", "AFFIRM", 20)]
    assert alerts.protection_mode(found, ["lyon"]) == (None, None)  # a primary's alert log does not say it
