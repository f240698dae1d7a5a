"""Alert logs of a simulated set: each instance's startup, then the entries its threads caused, in time order."""

from __future__ import annotations

import re
from datetime import datetime

import pytest

from analyzer.simulate.alert import database_ids
from tests.simulate.sets import run, truth_of

TIME = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}[+-]\d\d:\d\d$")


@pytest.fixture(scope="module")
def alert_logs(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, list[str]], list[dict[str, str]]]:
    result = run(tmp_path_factory.mktemp("alert"), writes=60, threads=1, extras=True, log_switch_every=20, seed=5)
    logs = {p.name: p.read_text().splitlines() for p in result.extras if p.name.startswith("alert_")}
    return logs, truth_of(result)


def test_each_instance_starts_with_its_startup_and_parameters(
    alert_logs: tuple[dict[str, list[str]], list[dict[str, str]]],
) -> None:
    logs, _ = alert_logs
    assert sorted(logs) == ["alert_sales1.log", "alert_salesdr1.log"]
    for name, lines in logs.items():
        assert TIME.match(lines[0]) and lines[1] == "Starting ORACLE instance (normal)", name
    assert '  log_archive_dest_2       = "SERVICE=salesdr SYNC AFFIRM' in "\n".join(logs["alert_sales1.log"])
    assert '  db_unique_name           = "salesdr"' in logs["alert_salesdr1.log"]


def test_the_log_switches_are_those_of_the_writes_and_the_standby_selects_a_log_for_each(
    alert_logs: tuple[dict[str, list[str]], list[dict[str, str]]],
) -> None:
    logs, truth = alert_logs
    seqs = sorted({int(r["seq"]) for r in truth})
    switched = [
        int(m[1])
        for line in logs["alert_sales1.log"]
        if (m := re.match(r"Thread 1 advanced to log sequence (\d+) ", line))
    ]
    assert switched == seqs[1:]  # the first log was current before the set starts
    dbid, branch = database_ids(5, "sales")
    selected = [line for line in logs["alert_salesdr1.log"] if " Selected LNO:" in line]
    assert [int(re.findall(r"S-(\d+)", line)[0]) for line in selected] == seqs[1:]
    assert all(line.endswith(f" dbid {dbid} branch {branch}") for line in selected)


def test_entries_are_in_time_order(alert_logs: tuple[dict[str, list[str]], list[dict[str, str]]]) -> None:
    logs, _ = alert_logs
    for name, lines in logs.items():
        times = [datetime.fromisoformat(line) for line in lines if TIME.match(line)]
        assert times == sorted(times) and len(times) >= 3, name


def test_database_ids_are_the_same_for_the_same_seed_and_database() -> None:
    assert database_ids(5, "sales") == database_ids(5, "sales") != database_ids(6, "sales")
    dbid, branch = database_ids(5, "hr")
    assert 10**9 <= dbid < 4 * 10**9 and 8 * 10**8 <= branch < 12 * 10**8


def test_the_protection_mode_the_standby_reports(tmp_path: pytest.TempPathFactory) -> None:
    result = run(tmp_path, writes=20, threads=1, extras=True, protection="protection")  # type: ignore[arg-type]
    standby = next(p for p in result.extras if p.name == "alert_salesdr1.log").read_text()
    assert "Primary database is in MAXIMUM PROTECTION mode" in standby
    assert "MAXIMUM AVAILABILITY" not in standby
