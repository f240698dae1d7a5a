"""`simulate-share`: several Data Guard configurations over several days in one housekeeping share."""

from __future__ import annotations

import json
import re
from collections import defaultdict
from datetime import datetime
from pathlib import Path

import pytest

from analyzer.base.errors import UsageError
from analyzer.simulate.share import ShareOptions, ShareResult, simulate_share
from tests.simulate.readers import MSG, WAIT, check_truth, processes, read_truth, text_lines

LAYOUT = re.compile(
    r"^(?P<host>[a-z0-9]+)/(?P<day>\d{4}-\d\d-\d\d)/diag/rdbms/(?P<db>[a-z0-9]+)/(?P<sid>[a-z0-9]+)/trace/(?P<name>[^/]+)$"
)


def share(tmp_path: Path, name: str = "share", **options: object) -> ShareResult:
    settings: dict[str, object] = {"configs": 3, "days": 2, "writes": 150, "log_switch_every": 40}
    settings.update(options)
    return simulate_share(tmp_path / name, ShareOptions(**settings))  # type: ignore[arg-type]


def test_layout_compression_and_manifest(tmp_path: Path) -> None:
    result = share(tmp_path)
    out = tmp_path / "share"
    on_disk = sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file())
    listed = sorted(p.relative_to(out).as_posix() for p in result.files)
    assert on_disk == sorted([*listed, "truth.csv", "share.json"])
    manifest = json.loads(result.manifest.read_text())
    assert [f["path"] for f in manifest["files"]] == [p.relative_to(out).as_posix() for p in result.files]
    days = manifest["days"]
    assert len(days) == 2 and days[0] < days[1]
    configs = {c["configuration"]: c for c in manifest["configurations"]}
    assert [(c["primary_db"], c["standby_db"]) for c in configs.values()] == [
        ("sales", "salesdr"),
        ("hr", "hrdr"),
        ("fin", "findr"),
    ]
    hosts_of: dict[int, set[str]] = defaultdict(set)
    for entry in manifest["files"]:
        m = LAYOUT.match(entry["path"])
        assert m, entry["path"]
        assert (entry["day"], entry["host"], entry["instance"]) == (m["day"], m["host"], m["sid"])
        config = configs[entry["configuration"]]
        assert m["db"] == config[f"{entry['side']}_db"]
        hosts_of[entry["configuration"]].add(m["host"])
        name = m["name"]
        compressed = name.endswith(".trc.gz")
        assert compressed == (m["day"] == days[0] and ".trc" in name)
        assert entry["compressed"] == compressed
        role = {"rfs": "rfs", "lgwr": "lgwr", "nss2": "sender", "ora": "foreground"}
        if name.startswith("alert_"):
            assert entry["role"] == "alert" and name == f"alert_{m['sid']}.log"
        elif name.endswith(".trm"):
            assert entry["role"] == "trace_map"
            assert (out / entry["path"]).with_suffix(".trc" + (".gz" if m["day"] == days[0] else "")).exists()
        else:
            assert entry["role"] == role[name.split("_")[1]]
    assert [len(h) for h in hosts_of.values()] == [3, 3, 3]
    assert len(set.union(*hosts_of.values())) == 9  # every configuration has hosts of its own
    # each day, every host has an alert log and one foreground trace; every .trc has its .trm
    for day in days:
        for hosts in hosts_of.values():
            for host in hosts:
                names = [Path(f["path"]).name for f in manifest["files"] if f["day"] == day and f["host"] == host]
                assert sum(n.startswith("alert_") for n in names) == 1
                assert sum("_ora_" in n and ".trc" in n for n in names) == 1
                assert sum(".trc" in n for n in names) == sum(n.endswith(".trm") for n in names)


def test_configurations_collide_on_keys_and_hours_and_truth_is_exact(tmp_path: Path) -> None:
    result = share(tmp_path, format_version="12.1")
    out = tmp_path / "share"
    rows = read_truth(result.truth)
    assert len(rows) == result.writes == 3 * 2 * 2 * 150
    assert rows and list(rows[0])[-3:] == ["sender", "evidence", "day"]
    keys: dict[tuple[str, str], set[tuple[str, str, str]]] = defaultdict(set)
    minutes: dict[tuple[str, str], set[str]] = defaultdict(set)
    for r in rows:
        keys[(r["primary_db"], r["day"])].add((r["thread"], r["seq"], r["msgid"]))
        minutes[(r["primary_db"], r["day"])].add(r["sent_at"][11:16])
        assert r["standby_db"] == r["primary_db"] + "dr"
    days = sorted({day for _, day in keys})
    for day in days:
        same = [keys[(db, day)] for db in ("sales", "hr", "fin")]
        assert same[0] == same[1] == same[2] and len(same[0]) == 300
        assert minutes[("sales", day)] == minutes[("hr", day)] == minutes[("fin", day)]
    assert minutes[("sales", days[0])] == minutes[("sales", days[1])]  # the same clock hours every day
    # the next day continues with later log sequences, and the configurations' delays differ
    first = {int(r["seq"]) for r in rows if r["day"] == days[0] and r["thread"] == "1"}
    second = {int(r["seq"]) for r in rows if r["day"] == days[1] and r["thread"] == "1"}
    assert min(second) > max(first)
    totals = {db: sorted(float(r["total_ms"]) for r in rows if r["primary_db"] == db) for db in ("sales", "hr")}
    assert totals["sales"] != totals["hr"]
    for day in days:
        assert check_truth(out, rows, day) == 900
    # each day is its own set of processes
    pids = {day: {p.stem for p in processes(out, day)} for day in days}
    assert not pids[days[0]] & pids[days[1]]


ALERT_TIME = {
    "11.2": re.compile(r"^(Mon|Tue|Wed|Thu|Fri|Sat|Sun) [A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d \d{4}$"),
    "19c": re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}[+-]\d\d:\d\d$"),
}


@pytest.mark.parametrize("gen", ["11.2", "19c"])
def test_alert_logs_follow_the_log_switches_and_the_rfs(tmp_path: Path, gen: str) -> None:
    result = share(tmp_path, configs=2, days=1, format_version=gen)
    out = tmp_path / "share"
    rows = read_truth(result.truth)
    alerts = {p.parent.parts[-2]: text_lines(p) for p in result.files if p.name.startswith("alert_")}
    assert sorted(alerts) == ["hr1", "hr2", "hrdr1", "sales1", "sales2", "salesdr1"]
    for sid, lines in alerts.items():
        times = [line for line in lines if ALERT_TIME[gen].match(line)]
        assert times and lines[0] == times[0] and lines[1] == "Starting ORACLE instance (normal)"
        if gen == "19c":
            assert [datetime.fromisoformat(t) for t in times] == sorted(datetime.fromisoformat(t) for t in times)
        db = re.sub(r"\d+$", "", sid)
        assert f'  db_unique_name           = "{db}"' in lines
    for db in ("sales", "hr"):
        dest = f'  log_archive_dest_2       = "SERVICE={db}dr SYNC AFFIRM VALID_FOR=(ONLINE_LOGFILES,PRIMARY_ROLE) '
        assert any(line.startswith(dest) and line.endswith(f'DB_UNIQUE_NAME={db}dr"') for line in alerts[f"{db}1"])
        rfs_pid = {
            int(MSG.match(x)["thrd"]): int(p.stem.rsplit("_", 1)[1])  # type: ignore[index]
            for p in processes(out)
            if p.host == f"{db}dr01" and p.pname == "rfs"
            for x in p.lines()
            if MSG.match(x)
        }
        for thread in (1, 2):
            seqs = sorted({int(r["seq"]) for r in rows if r["primary_db"] == db and r["thread"] == str(thread)})
            switched = [
                (int(m[1]), lines[i + 1])
                for lines in [alerts[f"{db}{thread}"]]
                for i, line in enumerate(lines)
                if (m := re.match(rf"^Thread {thread} advanced to log sequence (\d+) \(LGWR switch\)", line))
            ]
            assert [s for s, _ in switched] == seqs[1:]
            for seq, member in switched:
                assert re.fullmatch(
                    rf"  Current log# \d+ seq# {seq} mem# 0: \+DATA/{db}/onlinelog/group_\d+\.\d+\.\d+", member, re.I
                )
            if gen == "19c":
                selected = (
                    rf"^rfs \(PID:{rfs_pid[thread]}\): Selected LNO:\d+ for T-{thread}\.S-(\d+) dbid \d+ branch \d+$"
                )
            else:
                selected = rf"^RFS\[\d+\]: Selected log \d+ for thread {thread} sequence (\d+) dbid \d+ branch \d+$"
            standby = [int(m[1]) for line in alerts[f"{db}dr1"] if (m := re.match(selected, line))]
            assert standby == seqs[1:]


def test_foreground_traces_have_10046_lines_and_no_transport_messages(tmp_path: Path) -> None:
    result = share(tmp_path, configs=1, days=2, format_version="23ai")
    foregrounds = [p for p in result.files if re.search(r"_ora_\d+\.trc(\.gz)?$", p.name)]
    assert len(foregrounds) == 2 * 3
    for path in foregrounds:
        lines = text_lines(path)
        assert re.match(r"^Unix process pid: \d+, NID: \d+, image: oracle@\S+$", next(x for x in lines if "pid:" in x))
        waits = [m for line in lines if (m := WAIT.match(line))]
        assert len(waits) >= 40 and all(m["sp"] == "" for m in waits)
        assert not any(MSG.match(line) or "SQLNET" in line for line in lines)
        commits = [m for m in waits if m["name"] == "log file sync"]
        assert bool(commits) == ("/salesdr01/" not in path.as_posix())
        assert any(line.startswith("PARSING IN CURSOR #") for line in lines)


def test_same_options_same_bytes_and_no_extras(tmp_path: Path) -> None:
    a = share(tmp_path, "a", configs=2, writes=60)
    b = share(tmp_path, "b", configs=2, writes=60)
    assert [p.relative_to(tmp_path / "a") for p in a.files] == [p.relative_to(tmp_path / "b") for p in b.files]
    for x, y in zip((*a.files, a.truth, a.manifest), (*b.files, b.truth, b.manifest), strict=True):
        assert x.read_bytes() == y.read_bytes(), x
    bare = share(tmp_path, "bare", configs=1, writes=60, extras=False, gzip_older=False)
    names = {p.name for p in bare.files}
    assert names and all(re.fullmatch(r"\w+_(nss2|lgwr|rfs)_\d+\.trc", n) for n in names)


@pytest.mark.parametrize("options", [{"configs": 0}, {"days": 0}, {"format_version": "9i"}, {"writes": 0}])
def test_bad_share_options(options: dict[str, object]) -> None:
    with pytest.raises(UsageError):
        ShareOptions(**options)  # type: ignore[arg-type]
