"""What a trace file is, from its header, its name, its location and its messages."""

from __future__ import annotations

import polars as pl

from analyzer.identify import identify_file
from analyzer.schemas import HEADER, empty
from analyzer.vocab import Role


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
