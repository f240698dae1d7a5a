"""Configurations from ADR paths and the hosts RFS sessions name; per-row database columns."""

from __future__ import annotations

from pathlib import Path

import polars as pl

from analyzer.batch.configs import by_adr_path, by_identity, db_columns
from analyzer.batch.probe import SourceInfo


def source(label: str, role: str, db: str | None, host: str | None, peer: str | None = None) -> SourceInfo:
    return SourceInfo(
        label=label,
        path=label,
        sha256=label,
        bytes=1,
        role=role,
        process="RFS" if role == "standby" else "NSS2",
        instance=None,
        host=host,
        db=db,
        peer_host=peer,
        first_at="2024-10-22T14:00:00+00:00",
        last_at="2024-10-22T15:00:00+00:00",
        zone_known=True,
    )


def test_standby_joins_the_primary_its_rfs_names() -> None:
    sources = [
        source("p1", "primary", "sales", "salesdb01"),
        source("p2", "primary", "sales", "salesdb02"),
        source("s1", "standby", "salesdr", "salesdr01", peer="salesdb01"),
        source("s2", "standby", "salesdr", "salesdr01", peer="salesdb02"),
        source("h1", "primary", "hr", "hrdb01"),
        source("h2", "standby", "hrdr", "hrdr01", peer="hrdb01"),
        source("fg", "other", "hr", "hrdb01"),
    ]
    configs = {c.key: c for c in by_adr_path(sources)}
    assert set(configs) == {"sales+salesdr", "hr+hrdr"}
    assert configs["sales+salesdr"].primary_db == "sales"
    assert configs["sales+salesdr"].standby_dbs == ("salesdr",)
    assert configs["hr+hrdr"].labels == ("fg", "h1", "h2")


def test_a_standby_alone_until_its_primary_is_known() -> None:
    alone = by_adr_path([source("s1", "standby", "findr", "findr01", peer="findb01")])
    assert [(c.key, c.primary_db, c.standby_dbs) for c in alone] == [("findr", None, ("findr",))]
    joined = by_adr_path(
        [source("s1", "standby", "findr", "findr01", peer="findb01"), source("p1", "primary", "fin", "findb01")]
    )
    assert [(c.key, c.primary_db) for c in joined] == [("fin+findr", "fin")]


def test_a_host_with_two_primaries_links_nothing() -> None:
    sources = [
        source("a", "primary", "sales", "shared01"),
        source("b", "primary", "hr", "shared01"),
        source("s", "standby", "salesdr", "dr01", peer="shared01"),
    ]
    assert sorted(c.key for c in by_adr_path(sources)) == ["hr", "sales", "salesdr"]


def test_far_sync_primary_is_the_one_that_only_sends() -> None:
    sources = [
        source("p", "primary", "sales", "salesdb01"),
        source("fs_rfs", "standby", "salesfs", "salesfs01", peer="salesdb01"),
        source("fs_tt", "primary", "salesfs", "salesfs01"),
        source("dr", "standby", "salesdr", "salesdr01", peer="salesfs01"),
    ]
    (config,) = by_adr_path(sources)
    assert (config.key, config.primary_db, config.standby_dbs) == (
        "sales+salesdr+salesfs",
        "sales",
        ("salesdr", "salesfs"),
    )


def test_unknown_database_stands_alone_by_host() -> None:
    configs = by_adr_path([source("x.trc", "primary", None, "box1"), source("y.trc", "standby", None, None)])
    assert sorted(c.key for c in configs) == ["file:y.trc", "host:box1"]


def test_db_columns_from_each_side_file() -> None:
    frame = pl.DataFrame({"p": ["a", None, "a"], "s": ["b", "b", None]})
    out = db_columns(frame, {"a": "sales", "b": "salesdr"}, "sales", ["salesdr"], primary="p", standby="s")
    assert out["primary_db"].to_list() == ["sales", "sales", "sales"]
    assert out["standby_db"].to_list() == ["salesdr", "salesdr", "salesdr"]
    two = db_columns(frame, {"a": "sales", "b": "salesdr"}, None, ["salesdr", "salesbc"], primary="p", standby="s")
    assert two["primary_db"].to_list() == ["sales", None, "sales"]
    assert two["standby_db"].to_list() == ["salesdr", "salesdr", None]


def _probed(share: Path) -> list[SourceInfo]:
    from analyzer.base.zones import TimeZones
    from analyzer.batch.inputs import scan
    from analyzer.inputs.limits import Limits

    return scan([str(share)], {}, TimeZones(), Limits()).sources()


def test_the_analysis_grouping_from_the_probes_identities(one_day: Path) -> None:
    configs = {c.key: c for c in by_identity(_probed(one_day))}
    assert set(configs) == {"hr+hrdr", "sales+salesdr"}  # colliding msgid ranges, kept apart
    sales = configs["sales+salesdr"]
    assert (sales.primary_db, sales.standby_dbs) == ("sales", ("salesdr",))
    assert all(db in ("sales", "salesdr") for db in sales.dbs.values())
    assert by_identity(_probed(one_day)) == by_identity(_probed(one_day))  # the same names every run


def test_both_groupings_agree_on_a_share(one_day: Path) -> None:
    sources = _probed(one_day)
    simple = {(c.key, c.primary_db, c.standby_dbs, c.labels) for c in by_adr_path(sources)}
    assert {(c.key, c.primary_db, c.standby_dbs, c.labels) for c in by_identity(sources)} == simple


def test_identity_of_an_older_manifest_entry() -> None:
    old = source("/x/diag/rdbms/fin/fin1/trace/fin1_nss2_1.trc", "primary", "fin", "findb01")
    (config,) = by_identity([old])
    assert (config.key, config.primary_db) == ("fin", "fin")


def test_a_standby_whose_sender_is_not_there_yet_stays_alone(one_day: Path, tmp_path: Path) -> None:
    import shutil

    share = tmp_path / "share"
    shutil.copytree(one_day, share)
    for host in share.glob("salesdb0*"):  # the sales primary's traces arrive a night later
        shutil.rmtree(host)
    configs = {c.key: c for c in by_identity(_probed(share))}
    assert set(configs) == {"hr+hrdr", "salesdr"}  # not joined to hr, whose msgid range it shares
    assert (configs["salesdr"].primary_db, configs["salesdr"].standby_dbs) == (None, ("salesdr",))
