"""Trace file headers and session blocks of the simulated processes, per Oracle generation."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from analyzer.simulate.formats import GENERATIONS as LAYOUTS
from analyzer.simulate.formats import HostClock
from analyzer.simulate.headers import Process, header
from tests.simulate.sets import GENERATIONS, files_of, run

RFS = Process(
    "stby01", "salesdr", "salesdr1", "rfs", "", 8801, 41, 1, "2.3", "SYS$USERS", "oracle@prim01 (NSS2)", segment=2
)


HEADER_SHAPES = {
    "11.2": [
        r"^Oracle Database 11g Enterprise Edition Release 11\.2\.0\.4\.0 - 64bit Production$",
        r"^ORACLE_HOME = /\S+$",
    ],
    "12.1": [
        r"^Oracle Database 12c Enterprise Edition Release 12\.1\.0\.2\.0 - 64bit Production$",
        r"^ORACLE_HOME = /\S+$",
        r"^\*\*\* CLIENT DRIVER:\(\) \d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3}$",
    ],
    "19c": [
        r"^Oracle Database 19c Enterprise Edition Release 19\.0\.0\.0\.0 - Production$",
        r"^Version 19\.\d+\.\d+\.\d+\.\d+$",
        r"^Build label:    RDBMS_19\S+$",
        r"^ORACLE_HOME:    /\S+$",
        r"^\*\*\* CONTAINER ID:\(1\) \d{4}-\d\d-\d\dT[\d:.]{15}[+-]\d\d:\d\d$",
    ],
    "23ai": [
        r"^Oracle Database 23ai Enterprise Edition Release 23\.0\.0\.0\.0 - Production$",
        r"^Version 23\.\d+\.\d+\.\d+\.\d+$",
        r"^CLID:\tP$",
        r"^Unix process pid: \d+, NID: \d+, image: oracle@\S+( \(\w+\))?$",
    ],
}


COMMON_HEADER = [
    r"^Trace file /u01/app/oracle/diag/rdbms/\w+/\w+/trace/\w+\.trc$",
    r"^System name:\tLinux$",
    r"^Node name:\t(prim|stby)\d\d\.\S+$",
    r"^Instance name: \w+$",
    r"^Redo thread mounted by this instance: \d$",
    r"^Oracle process number: \d+$",
    r"^\*\*\* SESSION ID:\(\d+\.\d+\) \d{4}-",
    r"^\*\*\* SERVICE NAME:\(SYS\$(BACKGROUND|USERS)\) \d{4}-",
]


@pytest.mark.parametrize("gen", GENERATIONS)
def test_headers_per_generation(tmp_path: Path, gen: str) -> None:
    result = run(tmp_path, format_version=gen, writes=5)
    images = {"nss2": r"\(NSS2\)$", "lgwr": r"\(LGWR\)$", "rfs": r"image: oracle@stby01\.\S+$"}
    for path in result.files:
        head = path.read_text()[:3000]
        for shape in [*COMMON_HEADER, *HEADER_SHAPES[gen]]:
            assert re.search(shape, head, re.M), (gen, path.name, shape)
        pname = path.name.split("_")[1]
        assert re.search(r"^Unix process pid: .*" + images[pname], head, re.M), path.name
        assert ("Build label:" in head) == (gen in ("19c", "23ai"))
        assert ("NID:" in head) == (gen == "23ai")
    (rfs_1, rfs_2) = files_of(result, "rfs")
    assert "Redo thread mounted by this instance: 1\n" in rfs_2.read_text()[:3000]
    assert "thrd=2 " in rfs_2.read_text() and "thrd=1 " not in rfs_2.read_text()
    if gen == "23ai":
        assert re.search(r"^\*\*\* CLIENT IP:\(10\.\d+\.\d+\.\d+\) ", rfs_1.read_text(), re.M)


def test_a_process_s_names_and_paths() -> None:
    assert (RFS.fqdn, RFS.stem, RFS.file_name) == (
        "stby01.dbnet.example",
        "salesdr1_rfs_8801",
        "salesdr1_rfs_8801_2.trc",
    )
    assert str(RFS.trace_dir) == "stby01/diag/rdbms/salesdr/salesdr1/trace"
    assert RFS.oracle_path == "/u01/app/oracle/diag/rdbms/salesdr/salesdr1/trace/salesdr1_rfs_8801_2.trc"
    assert str(Process(**{**RFS.__dict__, "day": "2024-10-22"}).trace_dir).startswith("stby01/2024-10-22/diag/")


def test_the_session_block_follows_the_file_header_with_the_generation_s_keys() -> None:
    t = 1_729_600_000_000_000
    old = header(LAYOUTS["12.1"], RFS, HostClock(0, 0, LAYOUTS["12.1"]), t).splitlines()
    assert old[0] == f"Trace file {RFS.oracle_path}" and "Node name:\tstby01.dbnet.example" in old
    keys = [m[1] for line in old if (m := re.match(r"\*\*\* ([A-Z ]+):\(", line))]
    assert keys == ["SESSION ID", "CLIENT ID", "SERVICE NAME", "MODULE NAME", "CLIENT DRIVER", "ACTION NAME"]
    new = header(LAYOUTS["23ai"], RFS, HostClock(0, 120, LAYOUTS["23ai"]), t)
    assert "*** MODULE NAME:(oracle@prim01 (NSS2)) 2024-10-22T14:26:40.000028+02:00\n" in new
    assert "Unix process pid: 8801, NID: " in new and new.endswith(" \n")
