"""Who talks to whom, end to end: archive shares, ASYNC senders, far sync, two SYNC destinations, Fast Sync.

Every set is simulated with its truth (`transport, primary_db, standby_db, sender, ...` per write)
and analysed; each write must be matched exactly once, within its own link, and equal the truth
to the digit (19c and 12.1 print microsecond stamps: the truth's three decimals are exact).
"""

from __future__ import annotations

import gzip
import io
import shutil
from pathlib import Path

import polars as pl
import pytest

from analyzer.api import Analysis, analyze
from analyzer.report.machine import render_csv
from analyzer.report.model import document
from analyzer.simulate import ShareOptions, SimOptions, simulate, simulate_share

MEASURES = ("total_ms", "network_ms", "rfs_ms", "rfs_io_ms", "rfs_other_ms")
KEYS = ("primary_db", "standby_db", "thread", "seq", "msgid")


def truth_of(path: Path) -> pl.DataFrame:
    return pl.read_csv(path, schema_overrides={"sent_at": pl.String})


def assert_exact(writes: pl.DataFrame, truth: pl.DataFrame) -> None:
    """Every write once, every truth row once, the same numbers to the digit, each in its own link."""
    got = writes.select(
        *[pl.col(k).cast(pl.String) if k.endswith("_db") else pl.col(k) for k in KEYS],
        *[pl.col(m).round(3) for m in MEASURES],
        pl.col("verdict").cast(pl.String),
        pl.col("transport").cast(pl.String),
        pl.col("matched"),
        sent_at=pl.col("sent_at").dt.strftime("%Y-%m-%dT%H:%M:%S%.6fZ"),
        primary_host=pl.col("primary_host").cast(pl.String).str.split(".").list.first(),
        standby_host=pl.col("standby_host").cast(pl.String).str.split(".").list.first(),
    )
    assert got.height == truth.height, (got.height, truth.height)
    assert got.select(KEYS).n_unique() == got.height, "a write was matched twice"
    assert got["matched"].all()
    both = truth.join(got, on=list(KEYS), how="inner", suffix="_got")
    assert both.height == truth.height, "some writes were matched in another link, or not at all"
    for name in (*MEASURES, "verdict", "transport", "sent_at", "primary_host", "standby_host"):
        off = both.filter(pl.col(name) != pl.col(f"{name}_got"))
        assert off.height == 0, f"{name}: {off.select(*KEYS, name, f'{name}_got').head(3).rows()}"


def unique_lines(a: Analysis) -> None:
    for side in ("primary", "standby"):
        lines = a.writes.select(f"{side}_file", f"{side}_line")
        assert lines.n_unique() == lines.height, f"a {side} message is in two writes"


@pytest.mark.slow
def test_a_share_of_colliding_configurations_is_matched_within_each(tmp_path: Path) -> None:
    """3 configurations x 2 days, the same threads, log sequences and msgids at the same hours."""
    share = simulate_share(tmp_path / "share", ShareOptions(configs=3, days=2, writes=2000))
    truth = truth_of(share.truth)
    a = analyze([str(tmp_path / "share")])
    assert (a.writes.height, a.primary_exchanges, a.standby_exchanges, a.unmatched.height) == (24000, 24000, 24000, 0)
    unique_lines(a)
    assert_exact(a.writes, truth.drop("day"))
    assert a.shipments.height == 0

    doc = document(a, 10)
    configs = {c["name"]: c for c in doc["summary"]["configurations"]}
    assert sorted(configs) == ["fin", "hr", "sales"]
    for name, c in configs.items():
        assert (c["primary_writes"], c["matched_writes"], c["match_rate"]) == (8000, 8000, 1.0)
        assert {d["db_unique_name"]: d["role"] for d in c["databases"]} == {name: "primary", f"{name}dr": "standby"}
        (link,) = c["links"]
        assert (link["transport"], link["decided_by"]) == ("SYNC", "client module")
        assert len(link["sender_files"]) == 4 and len(link["receiver_files"]) == 4, "two days, two instances"
        assert all(f"/{name}/" in f or f"/{name}dr/" in f for f in link["sender_files"] + link["receiver_files"])
    per_config = pl.DataFrame(doc["writes"]).group_by("primary_db", "standby_db").len().sort("primary_db")
    assert per_config.rows() == [("fin", "findr", 8000), ("hr", "hrdr", 8000), ("sales", "salesdr", 8000)]
    traces = [f for f in doc["files"] if f.get("role") in ("primary", "standby")]
    assert all(f["configuration"] == f["db_unique_name"].removesuffix("dr") for f in traces)
    assert any("3 Data Guard configurations" in note for note in doc["summary"]["notes"])

    out = io.StringIO()
    render_csv(a, out, 10)
    assert ",primary_db,standby_db,transport," in out.getvalue().split("\n", 1)[0]


@pytest.mark.slow
@pytest.mark.parametrize(("generation", "sender"), [("12.1", "NSA3"), ("19c", "TT02")])
def test_an_async_sender_is_reported_apart_and_the_sync_figures_do_not_move(
    tmp_path: Path, generation: str, sender: str
) -> None:
    options = SimOptions(format_version=generation, scenario="mixed", writes=500, seed=3)
    plain = simulate(tmp_path / "plain", options)
    both = simulate(tmp_path / "async", SimOptions(**{**options.__dict__, "async_sender": True}))
    truth = truth_of(both.truth)
    a, b = analyze([str(tmp_path / "plain")]), analyze([str(tmp_path / "async")])

    assert_exact(b.writes, truth.filter(pl.col("transport") == "SYNC"))
    assert_exact(b.shipments, truth.filter(pl.col("transport") == "ASYNC"))
    assert set(truth.filter(pl.col("transport") == "ASYNC")["sender"]) == {sender}
    labels = ("primary_file", "standby_file")
    assert b.writes.drop(labels).equals(a.writes.drop(labels)), "the ASYNC sender moved the SYNC writes"
    assert (b.primary_exchanges, b.standby_exchanges, b.unmatched.height) == (
        a.primary_exchanges,
        a.standby_exchanges,
        a.unmatched.height,
    )
    assert truth_of(plain.truth).height == b.writes.height
    summary_a, summary_b = document(a, 10)["summary"], document(b, 10)["summary"]
    for key in ("primary_writes", "matched_writes", "match_rate", "components", "verdicts", "recommendations"):
        assert summary_a[key] == summary_b[key], key

    (ship,) = document(b, 10)["async"]
    assert (ship["sender"], ship["receiver_db"], ship["transport"]) == (sender, "salesar", "ASYNC")
    assert ship["primary_writes"] == ship["matched_writes"] == truth.filter(pl.col("transport") == "ASYNC").height
    assert ship["redo_bytes"] is None and ship["log_sequences"]
    assert {t["component"] for t in ship["timings"]} >= {"total", "rfs"}
    assert any(f"{sender} -> salesar is ASYNC" in note for note in summary_b["notes"])


@pytest.mark.slow
def test_a_far_sync_chain_is_matched_hop_by_hop(tmp_path: Path) -> None:
    result = simulate(tmp_path / "set", SimOptions(topology="far-sync", writes=500, scenario="network", seed=5))
    truth = truth_of(result.truth)
    a = analyze([str(tmp_path / "set")])
    unique_lines(a)
    sync = truth.filter(pl.col("transport") == "SYNC")
    assert set(sync["standby_db"]) == {"salesfs"}
    assert_exact(a.writes, sync)
    assert_exact(a.shipments, truth.filter(pl.col("transport") == "ASYNC"))
    (config,) = document(a, 10)["summary"]["configurations"]
    assert {d["db_unique_name"]: d["role"] for d in config["databases"]} == {
        "sales": "primary",
        "salesfs": "far sync",
        "salesdr": "standby",
    }
    assert [(k["name"], k["transport"]) for k in config["links"]] == [
        ("sales NSS2 -> salesfs", "SYNC"),
        ("salesfs TT02 -> salesdr", "ASYNC"),
    ]


def _without_client_modules(src: Path, dst: Path, *, alert_logs: bool = False) -> None:
    """The set as it would look if RFS sessions named no client (no `MODULE NAME` line), and without
    its alert logs (their destinations would decide) unless `alert_logs`."""
    shutil.copytree(src, dst)
    if not alert_logs:
        for path in dst.rglob("alert_*.log*"):
            path.unlink()
    for path in dst.rglob("*rfs*.trc*"):
        opener = gzip.open if path.suffix == ".gz" else open
        with opener(path, "rt") as f:
            kept = [line for line in f if "MODULE NAME" not in line]
        with opener(path, "wt") as f:
            f.writelines(kept)


@pytest.mark.slow
def test_two_sync_destinations_are_matched_each_with_its_own_standby(tmp_path: Path) -> None:
    """NSS2 -> salesdr and NSS3 -> salesbc overlap on (thread, seq, msgid); with the sessions' client
    modules, and without them (then the match rate decides)."""
    result = simulate(tmp_path / "set", SimOptions(topology="two-sync", writes=500, scenario="standby-io", seed=6))
    truth = truth_of(result.truth)
    assert set(truth["standby_db"]) == {"salesdr", "salesbc"}
    _without_client_modules(tmp_path / "set", tmp_path / "bare")
    for path, decider in (("set", "client module"), ("bare", "match rate")):
        a = analyze([str(tmp_path / path)])
        unique_lines(a)
        assert_exact(a.writes, truth)
        (config,) = document(a, 10)["summary"]["configurations"]
        assert [(k["name"], k["decided_by"], k["match_rate"]) for k in config["links"]] == [
            ("sales NSS2 -> salesdr", decider, 1.0),
            ("sales NSS3 -> salesbc", decider, 1.0),
        ]


@pytest.mark.slow
def test_a_share_without_client_modules_is_told_apart_by_match_rates(tmp_path: Path) -> None:
    simulate_share(tmp_path / "share", ShareOptions(configs=3, days=2, writes=300))
    _without_client_modules(tmp_path / "share", tmp_path / "bare")
    a = analyze([str(tmp_path / "bare")])
    assert_exact(a.writes, truth_of(tmp_path / "share" / "truth.csv").drop("day"))
    assert {k.decided_by for k in a.topology.links} == {"match rate"}


@pytest.mark.slow
def test_a_share_without_client_modules_is_told_apart_by_its_alert_logs(tmp_path: Path) -> None:
    """The primaries' alert logs list LOG_ARCHIVE_DEST_n with its DB_UNIQUE_NAME: that decides each link."""
    simulate_share(tmp_path / "share", ShareOptions(configs=3, days=2, writes=300))
    _without_client_modules(tmp_path / "share", tmp_path / "bare", alert_logs=True)
    a = analyze([str(tmp_path / "bare")])
    assert_exact(a.writes, truth_of(tmp_path / "share" / "truth.csv").drop("day"))
    assert {k.decided_by for k in a.topology.links} == {"destination parameter"}
    assert set(a.destinations["transport"].drop_nulls()) <= {"SYNC", "ASYNC"} and a.destinations.height


@pytest.mark.slow
def test_fast_sync_is_detected_and_standby_io_never_blamed(tmp_path: Path) -> None:
    """Standby I/O spikes on a Fast Sync link: the RFS writes after its ack, so commits never wait for it."""
    options = SimOptions(transport="fastsync", scenario="standby-io", writes=800, seed=7)
    result = simulate(tmp_path / "set", options)
    truth = truth_of(result.truth)
    a = analyze([str(tmp_path / "set")])
    assert_exact(a.writes, truth)
    assert (a.writes["transport"].cast(pl.String) == "FASTSYNC").all()
    assert (a.writes["rfs_io_ms"] == 0).all() and not (a.writes["verdict"].cast(pl.String) == "rfs_io").any()
    summary = document(a, 10)["summary"]
    (link,) = summary["configurations"][0]["links"]
    assert link["transport"] == "FASTSYNC" and "come after `Server finished`" in link["transport_evidence"]
    ids = [r["id"] for r in summary["recommendations"]]
    assert "fast-sync" not in ids and "standby-redo-logs" not in ids, ids
    assert summary["slow_time_shares"].get("rfs_io", 0.0) == 0.0
    assert any("Fast Sync (SYNC NOAFFIRM)" in note for note in summary["notes"])

    affirm = simulate(tmp_path / "affirm", SimOptions(**{**options.__dict__, "transport": "sync"}))
    b = analyze([str(affirm.truth.parent)])
    (link,) = document(b, 10)["summary"]["configurations"][0]["links"]
    assert link["transport"] == "SYNC"
    assert "fast-sync" in [r["id"] for r in document(b, 10)["summary"]["recommendations"]], "SYNC AFFIRM: offered"
