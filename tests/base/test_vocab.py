"""The shared words: message kinds and their groups, roles, file kinds, components, transports."""

from __future__ import annotations

import polars as pl
import pytest

from analyzer.base.vocab import (
    BACKWARD_KINDS,
    CLIENT_KINDS,
    COMPONENTS,
    FORWARD_KINDS,
    MEASURES,
    OPENING,
    OPENING_KINDS,
    SERVER_KINDS,
    SIDES,
    TOTAL_AND_COMPONENTS,
    Component,
    FileKind,
    MessageKind,
    Role,
    Transport,
    ms_column,
)


def test_a_kind_is_the_plain_string_tables_and_json_carry() -> None:
    assert MessageKind.CLIENT_SEND == "client_send" and f"{MessageKind.SERVER_DONE}" == "server_done"
    assert MessageKind("server_recv") is MessageKind.SERVER_RECV


def test_each_host_opens_an_exchange_with_one_kind_and_closes_it_with_another() -> None:
    assert OPENING == {
        MessageKind.CLIENT_SEND: MessageKind.CLIENT_RECV,
        MessageKind.SERVER_RECV: MessageKind.SERVER_DONE,
    }
    for opening, closing in OPENING.items():
        assert opening.opens and not closing.opens and opening.on_client == closing.on_client


def test_the_groups_of_kinds_split_the_four_kinds_and_are_plain_strings() -> None:
    assert OPENING_KINDS == ("client_send", "server_recv")
    assert (CLIENT_KINDS, SERVER_KINDS) == (("client_send", "client_recv"), ("server_recv", "server_done"))
    assert set(FORWARD_KINDS) | set(BACKWARD_KINDS) == set(MessageKind) and BACKWARD_KINDS == ("client_recv",)
    for group in (OPENING_KINDS, CLIENT_KINDS, SERVER_KINDS, FORWARD_KINDS, BACKWARD_KINDS):
        assert all(type(kind) is str for kind in group)


def test_the_groups_filter_string_and_categorical_columns_alike() -> None:
    kinds = pl.Series("kind", [str(k) for k in MessageKind])
    for column in (kinds, kinds.cast(pl.Categorical)):
        assert column.filter(column.is_in(SERVER_KINDS)).cast(pl.String).to_list() == ["server_recv", "server_done"]


@pytest.mark.parametrize(
    ("name", "kind"),
    [
        ("alert_cdb1.log", FileKind.ALERT_LOG),
        ("ALERT_CDB1.LOG", FileKind.ALERT_LOG),
        ("alert_.log", FileKind.TRACE),
        ("cdb1_nss2_4401.trc", FileKind.TRACE),
        ("alert_cdb1.log.1", FileKind.TRACE),
    ],
)
def test_a_file_kind_by_its_name(name: str, kind: FileKind) -> None:
    assert FileKind.of(name) is kind


def test_the_components_their_columns_labels_and_report_order() -> None:
    assert COMPONENTS == (Component.NETWORK, Component.RFS_IO, Component.RFS_OTHER)
    assert [c.column for c in COMPONENTS] == ["network_ms", "rfs_io_ms", "rfs_other_ms"]
    assert [c.label for c in COMPONENTS] == ["network", "standby I/O (RFS write)", "other RFS time"]
    assert ("total", *COMPONENTS, "rfs") == MEASURES and MEASURES[:4] == TOTAL_AND_COMPONENTS
    assert [ms_column(m) for m in MEASURES] == ["total_ms", "network_ms", "rfs_io_ms", "rfs_other_ms", "rfs_ms"]


def test_only_sync_and_fast_sync_are_in_the_commit_path() -> None:
    assert [t for t in Transport if t.commit_path] == [Transport.SYNC, Transport.FASTSYNC]
    assert SIDES == (Role.PRIMARY, Role.STANDBY)
