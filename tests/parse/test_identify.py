"""What a trace file is, from its header, its name, its location and its messages."""

from __future__ import annotations

import io
from dataclasses import replace
from datetime import datetime

import polars as pl
import pytest

from analyzer.base.errors import CorruptInput
from analyzer.base.schemas import HEADER, empty
from analyzer.base.vocab import Duty, Role, Transport
from analyzer.inputs.sources import Source
from analyzer.parse.identify import (
    HEAD_BYTES,
    FileIdentity,
    adr_location,
    duty_of,
    identify_ends,
    identify_file,
    identity_from_head,
    read_identity,
    with_content,
)


def header(*rows: tuple[str, str, str]) -> pl.DataFrame:
    return pl.DataFrame([(n, *r) for n, r in enumerate(rows, 1)], schema=HEADER, orient="row")


def kinds(*names: str) -> pl.DataFrame:
    return pl.DataFrame({"kind": list(names)}, schema={"kind": pl.String})


ADR = "prim01/diag/rdbms/boston/boston1/trace/boston1_nss2_4401.trc"


def test_the_header_names_process_host_thread_and_version() -> None:
    h = header(
        ("banner", "banner", "Oracle Database 11g Enterprise Edition Release 11.2.0.4.0 - 64bit Production"),
        ("field", "Node name", "prim01.example.com"),
        ("field", "Instance name", "boston1"),
        ("field", "Redo thread mounted by this instance", "1"),
        ("process", "Oracle process number", "27|oracle@prim01.example.com (NSS2)"),
    )
    info = identify_file(ADR, "boston1_nss2_4401.trc", h, kinds("client_send", "client_recv"))
    assert (info.role, info.process, info.instance, info.host) == (
        Role.PRIMARY,
        "NSS2",
        "boston1",
        "prim01.example.com",
    )
    assert (info.thread, info.version, info.pid) == (1, "11.2.0.4.0", 27)
    assert "process from header image" in info.evidence and "host from header" in info.evidence


def test_without_a_header_the_name_and_the_adr_path_tell() -> None:
    info = identify_file(ADR, "boston1_nss2_4401.trc", empty(HEADER), kinds())
    assert (info.role, info.process, info.instance, info.host, info.pid) == (
        Role.PRIMARY,
        "NSS2",
        "boston1",
        "prim01",
        4401,
    )
    assert "process from file name" in info.evidence and "host from ADR path" in info.evidence


def test_a_trimmed_file_is_known_by_its_messages() -> None:
    info = identify_file("upload.zip!trimmed.trc", "trimmed.trc", empty(HEADER), kinds("server_recv", "server_done"))
    assert (info.role, info.process) == (Role.STANDBY, "RFS")
    assert "process from content" in info.evidence


def test_client_and_server_messages_in_one_file_are_contradictory() -> None:
    info = identify_file("x.trc", "x.trc", empty(HEADER), kinds("client_send", "server_recv"))
    assert info.role is Role.UNKNOWN
    assert "role unclear" in info.evidence


def test_a_foreground_trace_is_other() -> None:
    info = identify_file("u01/app/oracle/diag/x/cdb1_ora_9850.trc", "cdb1_ora_9850.trc", empty(HEADER), kinds())
    assert (info.role, info.process, info.host) == (Role.OTHER, None, "instance:cdb1")


def test_an_empty_thread_value_is_no_thread() -> None:
    h = header(("field", "Redo thread mounted by this instance", "0 <none>"))
    assert identify_file("x.trc", "x.trc", h, kinds()).thread is None


# --- identity from the path and the head alone ---

HEAD_19C = [
    "Trace file /u01/app/oracle/diag/rdbms/salesdr/salesdr1/trace/salesdr1_rfs_7026.trc",
    "Oracle Database 19c Enterprise Edition Release 19.0.0.0.0 - Production",
    "Version 19.22.0.0.0",
    "Node name:\tSTBY01.dbnet.example",
    "Instance name: salesdr1",
    "Redo thread mounted by this instance: 1",
    "Unix process pid: 7026, image: oracle@stby01.dbnet.example",
    "",
    "",
    "*** 2024-10-22T16:18:47.223722+00:00 (CDB$ROOT(1))",
    "*** SESSION ID:(919.21648) 2024-10-22T16:18:47.223729+00:00",
    "*** SERVICE NAME:(SYS$USERS) 2024-10-22T16:18:47.223743+00:00",
    "*** MODULE NAME:(oracle@prim02 (NSS2)) 2024-10-22T16:18:47.223750+00:00",
    " ",
    "... Server received SQLNET data [krsr_rfs_dsp] oper='Write' flag=67111042 thrd=2 seq=3221 msgid=109062",
]


def test_an_rfs_head_names_its_database_host_and_client() -> None:
    i = identity_from_head("upload.zip!salesdr1_rfs_7026.trc", "salesdr1_rfs_7026.trc", HEAD_19C)
    assert (i.duty, i.db, i.instance, i.host, i.process, i.pid) == (
        Duty.RECEIVER,
        "salesdr",
        "salesdr1",
        "stby01",
        "RFS",
        7026,
    )
    assert (i.client_host, i.client_process) == ("prim02", "NSS2")
    assert "db_unique_name from the Trace file path" in i.evidence and "MODULE NAME" in i.evidence


def test_the_23_26_header_names_the_database_itself() -> None:
    head = [
        "Trace file /opt/oracle/diag/rdbms/cdb1_site/CDB1/trace/CDB1_tt02_2156.trc",
        "Oracle AI Database 26ai Enterprise Edition Release 23.26.0.0.0 - Production",
        "Instance name: CDB1",
        "Database unique name: CDB1_SITE ",
        "Database role: PRIMARY",
        "Unix process pid: 2156, image: oracle@db01 (TT02)",
    ]
    i = identity_from_head("other/place/CDB1_tt02_2156.trc", "CDB1_tt02_2156.trc", head)
    assert (i.db, i.database_role, i.process, i.duty, i.process_transport) == (
        "cdb1_site",
        "PRIMARY",
        "TT02",
        Duty.SENDER,
        Transport.ASYNC,
    )
    assert i.evidence.startswith("db_unique_name from header")


def test_without_a_head_the_location_tells_the_database_and_day_directories_are_skipped() -> None:
    i = identity_from_head(
        "share/salesdb01/2024-10-22/diag/rdbms/sales/sales1/trace/sales1_nss2_9.trc", "sales1_nss2_9.trc", []
    )
    assert (i.db, i.host, i.process, i.duty, i.process_transport) == (
        "sales",
        "salesdb01",
        "NSS2",
        Duty.SENDER,
        Transport.SYNC,
    )
    assert identity_from_head("x.trc", "x.trc", []).db is None
    assert duty_of("LGWR") is Duty.LOG_WRITER and duty_of("LNS1") is Duty.SENDER and duty_of(None) is Duty.OTHER


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("/arch/findb01/2024-10-22/diag/rdbms/fin/fin1/trace/fin1_nss2_1.trc", ("fin", "findb01")),
        ("/arch/findb01/20241022/diag/rdbms/fin/fin1/trace/fin1_nss2_1.trc", ("fin", "findb01")),
        ("/u01/app/oracle/diag/rdbms/findr/findr1/trace/findr1_rfs_2.trc", ("findr", None)),
        ("upload.zip!node1/diag/rdbms/sales/sales1/trace/x.trc", ("sales", "node1")),
        ("C:\\app\\oracle\\diag\\rdbms\\SALES\\sales1\\trace\\x.trc", ("sales", None)),
        ("2024-10-22/diag/rdbms/hr/hr1/trace/hr1_nss2_1.trc", ("hr", None)),
        ("diag/rdbms/hr/hr1/incident/incdir_1/hr1_ora_1_i1.trc", (None, None)),
        ("loose.trc", (None, None)),
    ],
)
def test_the_adr_location_names_the_database_and_the_host_above_diag(
    path: str, expected: tuple[str | None, str | None]
) -> None:
    """One reading of the ADR layout for the analysis and the batch probe: dated folders skipped, an
    Oracle base is no host, the database in lower case."""
    assert adr_location(path) == expected


def test_the_ends_of_a_file_tell_what_its_head_tells_and_its_span() -> None:
    """`identify_ends`: identity as from the head alone, the role from the messages, the first and last
    stamps as written and the zone of the first ISO line; an alert log's stamps are its time lines."""
    tail = [
        "*** 2024-10-22T18:02:00.500000+00:00",
        "... Server finished processing SQLNET data [krsr_rfs_dsp] oper='Write' flag=1 thrd=2 seq=3221 msgid=9",
    ]
    alert = [
        "2024-10-22T16:00:00.000000+02:00",
        "Starting ORACLE instance (normal)",
        "2024-10-22T17:00:00.000000+02:00",
    ]
    rfs, log = identify_ends(
        [
            ("upload.zip!salesdr1_rfs_7026.trc", "salesdr1_rfs_7026.trc", HEAD_19C, tail),
            ("stby01/diag/rdbms/salesdr/salesdr1/trace/alert_salesdr1.log", "alert_salesdr1.log", alert, []),
        ]
    )
    assert rfs.identity == identity_from_head("upload.zip!salesdr1_rfs_7026.trc", "salesdr1_rfs_7026.trc", HEAD_19C)
    assert (rfs.info.role, rfs.info.host, rfs.utc_offset_min) == (Role.STANDBY, "STBY01.dbnet.example", 0)
    assert (rfs.first_local, rfs.last_local) == (
        datetime(2024, 10, 22, 16, 18, 47, 223722),
        datetime(2024, 10, 22, 18, 2, 0, 500000),
    )
    assert (log.identity.db, log.info.instance, log.utc_offset_min) == ("salesdr", "salesdr1", 120)
    assert (log.first_local, log.last_local) == (datetime(2024, 10, 22, 16), datetime(2024, 10, 22, 17))


def test_a_foreground_session_module_is_no_client() -> None:
    head = [*HEAD_19C[:12], "*** MODULE NAME:(JDBC Thin Client) 2024-10-22T16:18:47.223750+00:00"]
    i = identity_from_head(
        "stby01/diag/rdbms/salesdr/salesdr1/trace/salesdr1_rfs_7026.trc", "salesdr1_rfs_7026.trc", head
    )
    assert i.client_host is None and i.client_process is None


class _Counting(io.BytesIO):
    """A stream that counts what is read from it."""

    taken = 0

    def read(self, size: int | None = -1) -> bytes:
        data = super().read(size)
        _Counting.taken += len(data)
        return data


def test_read_identity_reads_only_the_head() -> None:
    body = "\n".join(HEAD_19C + ["WAIT #0: nam='RFS write' ela= 500 p1=0 p2=0 p3=0 obj#=-1 tim=1"] * 200_000) + "\n"
    data = body.encode()
    _Counting.taken = 0
    i = read_identity(Source("stby01/x/salesdr1_rfs_7026.trc", lambda: _Counting(data)))
    assert (i.db, i.client_host) == ("salesdr", "prim02")
    assert _Counting.taken <= 2 * HEAD_BYTES < len(data) // 50


def test_an_unreadable_head_leaves_what_the_path_tells() -> None:
    def broken() -> io.BytesIO:
        raise CorruptInput("upload.zip!stby01/diag/rdbms/salesdr/salesdr1/trace/r.trc: bad CRC")

    i = read_identity(Source("upload.zip!stby01/diag/rdbms/salesdr/salesdr1/trace/salesdr1_rfs_1.trc", broken))
    assert (i.db, i.host, i.duty) == ("salesdr", "stby01", Duty.RECEIVER)
    assert "head unreadable" in i.evidence and "bad CRC" in i.evidence


def test_messages_outrank_the_name() -> None:
    """A trimmed file (no header, no name) with client messages is a sender; LGWR shipping redo too."""
    bare = FileIdentity("upload.zip!trimmed.trc", Duty.OTHER)
    info = identify_file("t.trc", "t.trc", empty(HEADER), kinds("client_send", "client_recv"))
    assert with_content(bare, info, messages=4).duty is Duty.SENDER
    lgwr = FileIdentity("x/lgwr.trc", Duty.LOG_WRITER, process="LGWR")
    assert with_content(lgwr, replace(info, process="LGWR"), messages=4).duty is Duty.SENDER
    assert with_content(lgwr, replace(info, process="LGWR"), messages=0).duty is Duty.LOG_WRITER
    both = identify_file("t.trc", "t.trc", empty(HEADER), kinds("client_send", "server_recv"))
    assert with_content(FileIdentity("r.trc", Duty.RECEIVER), both, messages=4).duty is Duty.OTHER
