"""Per-generation text layout: host clocks, ADR wall-clock lines, krs stamps, WAIT line shapes, process names."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from pathlib import Path

import pytest

from analyzer.simulate.formats import GENERATIONS as LAYOUTS
from analyzer.simulate.formats import (
    HostClock,
    async_sender_name,
    broadcast_warning,
    segment_file_name,
    standby_log_number,
    sync_sender_name,
)
from tests.simulate.readers import ADR_ISO, ADR_OLD, KRS, WAIT, local_us
from tests.simulate.sets import GENERATIONS, files_of, run

#: 2024-10-22 16:18:49.081732 UTC, in µs
T = int(datetime(2024, 10, 22, 16, 18, 49, tzinfo=UTC).timestamp()) * 1_000_000 + 81_732


@pytest.mark.parametrize("gen", GENERATIONS)
def test_stamp_and_adr_shapes_per_generation(tmp_path: Path, gen: str) -> None:
    result = run(tmp_path, format_version=gen, writes=600, threads=1, primary_tz="-07:00")
    krs_digits = 3 if gen == "11.2" else 6
    adr_shape = ADR_ISO if gen in ("19c", "23ai") else ADR_OLD
    for path in files_of(result, "nss2") + files_of(result, "rfs"):
        stamps, adr = [], 0
        for line in path.read_text().splitlines():
            if m := KRS.match(line):
                stamps.append(local_us(m["ts"], 0))
                assert len(m["frac"]) == krs_digits, line
                assert m["tail"].startswith(" [") == (gen in ("19c", "23ai")), line
            elif line.startswith("*** ") and not re.match(r"\*\*\* [A-Z ]+:\(", line):
                assert adr_shape.match(line), line
                adr += 1
        assert len(stamps) >= 2 * result.writes
        seconds = (max(stamps) - min(stamps)) / 1e6
        assert 0.8 * seconds <= adr <= 1.5 * seconds + 2, (path.name, seconds, adr)


@pytest.mark.parametrize("gen", GENERATIONS)
def test_wait_lines_ela_spacing_obj_and_tim(tmp_path: Path, gen: str) -> None:
    result = run(tmp_path, format_version=gen, writes=200, standby_skew_s=3.0, threads=1)
    (rfs,) = files_of(result, "rfs")
    text = rfs.read_text()
    waits = [WAIT.match(line) for line in text.splitlines() if line.startswith("WAIT #0: ")]
    assert waits and all(waits)
    assert {m["sp"] for m in waits if m} == ({""} if gen == "23ai" else {" "})
    assert ("obj#=4294967295 " in text) == (gen == "23ai")
    assert ("obj#=-1 " in text) == (gen != "23ai")
    names = {m["name"] for m in waits if m}
    assert {"RFS write", "SQL*Net message from client"} <= names
    # tim is epoch µs of the standby clock (skew included) up to 12.1, a host counter after
    stamp = next(m["ts"] for line in text.splitlines() if (m := KRS.match(line)))
    standby_epoch = local_us(stamp, 0)
    tim = max(int(m["tim"]) for m in waits if m)
    if gen in ("11.2", "12.1"):
        assert abs(tim - standby_epoch) < 5_000_000
    else:
        assert tim < 10**13 and abs(tim - standby_epoch) > 10**14


def test_a_host_clock_prints_true_time_through_its_skew_zone_and_resolution() -> None:
    old, new = HostClock(-1_500_000, -420, LAYOUTS["11.2"]), HostClock(2_000, 330, LAYOUTS["19c"])
    assert old.printed(T) == T - 1_500_000 - 732  # milliseconds: the microseconds cut
    assert old.krs(old.printed(T)) == "2024-10-22 09:18:47.581"
    assert old.wall(T) == "2024-10-22 09:18:47.581" and old.adr(T) == "\n*** 2024-10-22 09:18:47.581\n"
    assert new.krs(new.printed(T)) == "2024-10-22 21:48:49.083732"
    assert new.wall(T) == "2024-10-22T21:48:49.083732+05:30"
    assert new.adr(T) == "\n*** 2024-10-22T21:48:49.083732+05:30 (CDB$ROOT(1))\n"
    assert old.ctime(T) == "Tue Oct 22 09:18:47 2024"


def test_the_generations_differ_where_the_releases_do() -> None:
    assert list(LAYOUTS) == list(GENERATIONS)
    assert [LAYOUTS[g].krs_suffix("krsu.c", 5837) for g in ("11.2", "19c")] == [" 5837 krsu.c", " [krsu.c:5837]"]
    assert (
        LAYOUTS["12.1"].wait_template("RFS write", "p1=0") == "WAIT #0: nam='RFS write' ela= %d p1=0 obj#=-1 tim=%d\n"
    )
    assert LAYOUTS["23ai"].idle_template().startswith("WAIT #0: nam='SQL*Net message from client' ela=%d ")
    assert len(LAYOUTS["19c"].rfs_wait_templates()) == 4


def test_names_of_senders_segments_and_standby_logs() -> None:
    assert (sync_sender_name(2), sync_sender_name(2, lns=True)) == ("NSS2", "LNS1")
    assert (async_sender_name(LAYOUTS["12.1"], 3), async_sender_name(LAYOUTS["19c"], 3)) == ("NSA3", "TT02")
    assert [segment_file_name("x_rfs_1", n) for n in (0, 1, 2)] == ["x_rfs_1.trc", "x_rfs_1_1.trc", "x_rfs_1_2.trc"]
    assert [standby_log_number(2, seq) for seq in (8, 9, 10, 11, 12)] == [
        15,
        16,
        17,
        18,
        15,
    ]  # four per thread, in turn
    assert broadcast_warning(LAYOUTS["11.2"], 120, 0xABC) == "Warning: log write broadcast wait time 120ms\n"
    assert broadcast_warning(LAYOUTS["19c"], 120, 0xABC).endswith("120ms (SCN 0xabc)\n")
