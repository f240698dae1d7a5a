"""The answer per configuration and per link, against the simulator's truth: a share of three configurations
(each with its own problem), a primary with two SYNC destinations and an ASYNC sender, a far sync chain, Fast Sync."""

from __future__ import annotations

import io
from pathlib import Path

import polars as pl
import pytest

from analyzer.api import Analysis, Options, analyze
from analyzer.findings.insights import MATERIAL_SHARE
from analyzer.report.comparisons import what_if_table
from analyzer.report.configurations import (
    advice,
    assessments,
    async_table,
    destination_summary_table,
    links_table,
    shown,
    verdicts,
)
from analyzer.report.context import Context, Table
from analyzer.report.html import render_html
from analyzer.report.markdown import render_markdown
from analyzer.report.model import document
from analyzer.report.sections import facts_table
from analyzer.report.text import render_text
from analyzer.simulate import ShareOptions, SimOptions, simulate, simulate_share

THRESHOLD = Options().threshold_ms
COMPONENTS = ("network", "rfs_io", "rfs_other")
LABELS = {"network": "network", "rfs_io": "standby I/O (RFS write)", "rfs_other": "other RFS time"}


def _truth(path: Path) -> pl.DataFrame:
    return pl.read_csv(path, schema_overrides={"sent_at": pl.String})


def _shares(truth: pl.DataFrame) -> dict[str, float]:
    """Each component's share of the slow writes' time (of all writes' when none is slow), from the truth."""
    slow = truth.filter(pl.col("total_ms") >= THRESHOLD)
    chosen = slow if slow.height else truth
    total = chosen["total_ms"].sum()
    return {c: chosen[f"{c}_ms"].sum() / total for c in COMPONENTS}


def _sentence(truth: pl.DataFrame) -> str:
    """The verdict sentence the truth calls for."""
    shares = _shares(truth)
    first, *rest = sorted(COMPONENTS, key=lambda c: -shares[c])
    slow = truth.filter(pl.col("total_ms") >= THRESHOLD).height
    scope = (
        f"slow-write time ({slow:,} write{'s' if slow != 1 else ''} >= {THRESHOLD:g} ms)"
        if slow
        else f"write time (no write reached {THRESHOLD:g} ms)"
    )
    return (
        f"{shares[first]:.0%} of {scope} was {LABELS[first]}; "
        + ", ".join(f"{LABELS[c]} {shares[c]:.0%}" for c in rest)
        + "."
    )


def _ms(value: float) -> str:
    return f"{value:,.3f}"  # 19c stamps: microseconds


def _rows(table: Table) -> list[dict[str, str]]:
    return [dict(zip(table.headers, row, strict=True)) for row in table.rows]


def _expected_link(truth: pl.DataFrame) -> dict[str, str]:
    """The cells of a commit-path link's row that the truth decides."""
    shares = _shares(truth)
    slow = truth.filter(pl.col("total_ms") >= THRESHOLD).height
    return {
        "writes": f"{truth.height:,}",
        "matched": f"{truth.height:,}",
        "slow": f"{slow:,}",
        "p50 ms": _ms(truth["total_ms"].quantile(0.5, "nearest")),  # type: ignore[arg-type]
        "p99 ms": _ms(truth["total_ms"].quantile(0.99, "nearest")),  # type: ignore[arg-type]
        "network %": f"{shares['network']:.0%}",
        "standby I/O %": f"{shares['rfs_io']:.0%}",
        "verdict": max(COMPONENTS, key=lambda c: shares[c]) if slow else "no slow write",
    }


def _report(render: object, a: Analysis) -> str:
    out = io.StringIO()
    render(a, out, 10)  # type: ignore[operator]
    return out.getvalue()


# ---------------------------------------------------------------------------- a share of three configurations
@pytest.fixture(scope="module")
def share(tmp_path_factory: pytest.TempPathFactory) -> tuple[Analysis, pl.DataFrame]:
    """sales (baseline), hr (standby I/O) and fin (network): the same threads, sequences and msgids."""
    out = tmp_path_factory.mktemp("share") / "share"
    result = simulate_share(out, ShareOptions(configs=3, days=1, writes=250, extras=False))
    return analyze([str(out)]), _truth(result.truth)


def test_one_verdict_line_per_configuration_worst_first(share: tuple[Analysis, pl.DataFrame]) -> None:
    a, truth = share
    c = Context.of(a)
    assert c.several
    per_db = {db: truth.filter(pl.col("primary_db") == db) for db in truth["primary_db"].unique().to_list()}
    slow = {db: t.filter(pl.col("total_ms") >= THRESHOLD).height for db, t in per_db.items()}
    expected = sorted(per_db, key=lambda db: (-slow[db], db))
    assert [name for name, _ in verdicts(c)] == expected
    words = {s.name: s.assessment.word.capitalize() for s in c.scopes}  # the assessment's word comes first
    assert dict(verdicts(c)) == {db: f"{words[db]}: {_sentence(t)}" for db, t in per_db.items()}
    # the problems differ: one configuration's network is not blended with another's standby I/O
    leaders = {db: max(COMPONENTS, key=lambda k: _shares(t)[k]) for db, t in per_db.items() if slow[db]}
    assert len(set(leaders.values())) > 1, leaders


#: the cause each recommendation answers (log switches answer none of the components)
CAUSE = {
    "network-stalls": "network",
    "network-bandwidth": "network",
    "standby-redo-logs": "rfs_io",
    "standby-io-outliers": "rfs_io",
    "fast-sync": "rfs_io",
    "standby-cpu": "rfs_other",
    "redo-log-size": None,
}


def test_recommendations_per_configuration_follow_its_own_shares(share: tuple[Analysis, pl.DataFrame]) -> None:
    a, truth = share
    c = Context.of(a)
    groups = {g.name: g for g in advice(c)}
    assessed = {s.name: s.assessment for s in c.scopes}
    assert set(groups) == set(truth["primary_db"].unique().to_list())
    for db, group in groups.items():
        own = truth.filter(pl.col("primary_db") == db)
        shares = _shares(own)
        slow = own.filter(pl.col("total_ms") >= THRESHOLD)
        largest = {k: slow.filter(pl.col("verdict") == k).height for k in COMPONENTS}
        material = {
            k
            for k in COMPONENTS
            if slow.height and (shares[k] >= MATERIAL_SHARE or largest[k] >= max(1, MATERIAL_SHARE * slow.height))
        }
        expected = set() if assessed[db].healthy else material
        causes = {CAUSE[r.id] for r in group.recommendations} - {None}
        assert causes == expected, db
        assert [r.saves_ms for r in group.recommendations] == sorted(
            (r.saves_ms for r in group.recommendations), reverse=True
        )
        assert bool(group.none) == (not group.recommendations)
        for r in group.recommendations:  # the evidence is this configuration's, not the pool's
            if r.id != "redo-log-size":
                assert f"over {slow.height} writes >= {THRESHOLD:g} ms" in r.evidence
    json_ids = {x["name"]: x["recommendations"] for x in document(a, 10)["summary"]["configurations"]}
    assert json_ids == {db: [r.id for r in g.recommendations] for db, g in groups.items()}


def test_the_links_table_has_a_row_per_link_with_the_truths_figures(share: tuple[Analysis, pl.DataFrame]) -> None:
    a, truth = share
    c = Context.of(a)
    assert shown(c)
    rows = {r["link"]: r for r in _rows(links_table(c))}
    pairs = truth.select("primary_db", "standby_db").unique().rows()
    assert set(rows) == {f"{p} -> {s}" for p, s in pairs}
    for p, s in pairs:
        row = rows[f"{p} -> {s}"]
        own = truth.filter(pl.col("primary_db") == p, pl.col("standby_db") == s)
        assert row["configuration"] == p and row["transport"] == "SYNC" and row["decided by"] == "client module"
        assert row["sender"] == own["sender"].unique().item()
        assert {k: row[k] for k in _expected_link(own)} == _expected_link(own), (p, s)


def test_the_what_ifs_are_per_configuration(share: tuple[Analysis, pl.DataFrame]) -> None:
    a, truth = share
    rows = what_if_table(Context.of(a)).rows
    measured = {r[0].removesuffix(": as measured"): r for r in rows if r[0].endswith(": as measured")}
    for db, row in measured.items():
        own = truth.filter(pl.col("primary_db") == db)
        assert row[1:3] == (f"{own.height:,}", f"{own.filter(pl.col('total_ms') >= THRESHOLD).height:,}")
    slow_dbs = {
        db
        for db in truth["primary_db"].unique()
        if truth.filter(pl.col("primary_db") == db)["total_ms"].max() >= THRESHOLD
    }  # type: ignore[operator]
    assert set(measured) == slow_dbs


def test_every_human_report_holds_the_verdict_lines_and_the_links(share: tuple[Analysis, pl.DataFrame]) -> None:
    a, _ = share
    c = Context.of(a)
    lines = [f"{name}: {sentence}" for name, sentence in verdicts(c)]
    text, markdown = _report(render_text, a), _report(render_markdown, a)
    html = _report(render_html, a)
    assert "Configurations and links" in text and "## Configurations and links" in markdown
    assert "<h2>Configurations and links</h2>" in html
    for line in lines:
        assert f"**{line}**" in markdown
        assert line.replace(">", "&gt;") in html
        assert line in " ".join(text.split())
    head = text[: text.index("Recommendations")]
    assert [line for line in lines if line in " ".join(head.split())] == lines  # the answer comes first
    for name, _ in verdicts(c):
        assert f"### {name}" in markdown and f"<h3>{name}</h3>" in html


# ---------------------------------------------------------------------------- one primary, several links
@pytest.fixture(scope="module")
def two_sync(tmp_path_factory: pytest.TempPathFactory) -> tuple[Analysis, pl.DataFrame]:
    out = tmp_path_factory.mktemp("two") / "set"
    result = simulate(out, SimOptions(topology="two-sync", async_sender=True, scenario="mixed", writes=300, seed=3))
    return analyze([str(out)]), _truth(result.truth)


def test_two_sync_destinations_each_get_a_row_and_the_async_sender_its_own_table(
    two_sync: tuple[Analysis, pl.DataFrame],
) -> None:
    a, truth = two_sync
    c = Context.of(a)
    assert not c.several and len(verdicts(c)) == 1 and verdicts(c)[0][0] == ""
    sync = truth.filter(pl.col("transport") == "SYNC")
    rows = {r["link"]: r for r in _rows(links_table(c))}
    assert set(rows) == {f"{p} -> {s}" for p, s in sync.select("primary_db", "standby_db").unique().rows()}
    assert len(rows) == 2
    for link, row in rows.items():
        p, s = link.split(" -> ")
        own = sync.filter(pl.col("primary_db") == p, pl.col("standby_db") == s)
        assert row["sender"] == own["sender"].unique().item()
        assert {k: row[k] for k in _expected_link(own)} == _expected_link(own), link
    # the commit-path figures hold the SYNC writes only
    assert c.counts.matched_writes == sync.height
    (shipped,) = _rows(async_table(c))
    ships = truth.filter(pl.col("transport") == "ASYNC")
    assert shipped["link"] == f"{ships['primary_db'][0]} -> {ships['standby_db'][0]}"
    assert shipped["sender"] == ships["sender"].unique().item()
    assert shipped["shipments sent"] == shipped["received"] == shipped["matched"] == f"{ships.height:,}"
    logs = ships.group_by("thread").agg(first=pl.col("seq").min(), last=pl.col("seq").max(), n=pl.col("seq").n_unique())
    for thread, first, last, n in logs.sort("thread").rows():
        span = f"{first}" if first == last else f"{first}-{last}"
        assert f"thread {thread}: {span} ({n} log{'s' if n != 1 else ''})" in shipped["log sequences"].split("\n")
    assert shipped["round trip p50 ms"] == _ms(ships["total_ms"].quantile(0.5, "nearest"))  # type: ignore[arg-type]
    assert shipped["round trip p99 ms"] == _ms(ships["total_ms"].quantile(0.99, "nearest"))  # type: ignore[arg-type]
    assert shipped["RFS p50 ms"] == _ms(ships["rfs_ms"].quantile(0.5, "nearest"))  # type: ignore[arg-type]
    text = _report(render_text, a)
    assert text.index("Configurations and links") < text.index("ASYNC links (not in the commit path)")


def test_every_report_gives_the_assessment_and_the_commit_path_first(two_sync: tuple[Analysis, pl.DataFrame]) -> None:
    """Two SYNC destinations: the verdict, the assessment and the destinations come before the advice,
    with how the commit path pairs the destinations' writes; the figures count each redo write once."""
    a, truth = two_sync
    c = Context.of(a)
    (name, judged, path) = assessments(c)[0]
    assert name == "" and path.startswith("The commit waits for every SYNC destination (")
    redo_writes = truth.filter(pl.col("transport") == "SYNC").height // 2
    assert judged.writes == redo_writes and c.scopes[0].commit.paired == redo_writes
    table = destination_summary_table(c)
    assert [r[2:5] for r in table.rows] == [
        ("LOG_ARCHIVE_DEST_2", "salesdr", "not seen"),  # no alert log in this set: the links, not seen
        ("LOG_ARCHIVE_DEST_3", "salesbc", "not seen"),
        ("not seen", "salesar", "not seen"),  # an ASYNC TT02 names no destination
    ]
    facts = dict(facts_table(c).rows)
    slow = int(c.scopes[0].writes["slow"].sum())
    assert facts["Commit path"] == (
        f"{redo_writes:,} redo writes to 2 SYNC destinations, each once as its slowest; {slow:,} with total >= 100 ms"
    )
    assert c.switches is c.scopes[0].switches  # the log switches of the commit path, not of the pooled writes
    assert c.switches.slow_near + c.switches.slow_elsewhere == slow
    for render in (render_text, render_markdown, render_html):
        out = _report(render, a)
        first = out.index("Assessment")
        assert first < out.index("Redo transport destinations") < out.index("Recommendations"), render
        assert "The commit waits for every SYNC destination" in out and "not seen" in out


@pytest.mark.parametrize(
    ("options", "transports"),
    [
        (SimOptions(topology="far-sync", scenario="standby-io", writes=150, seed=4), {"SYNC"}),
        (SimOptions(topology="two-sync", transport="fastsync", scenario="network", writes=150, seed=6), {"FASTSYNC"}),
    ],
)
def test_far_sync_and_fast_sync_links(tmp_path: Path, options: SimOptions, transports: set[str]) -> None:
    result = simulate(tmp_path / "set", options)
    truth = _truth(result.truth)
    c = Context.of(analyze([str(tmp_path / "set")]))
    rows = _rows(links_table(c))
    commit = truth.filter(pl.col("transport") != "ASYNC")
    assert {r["transport"] for r in rows} == transports == set(commit["transport"].unique().to_list())
    for row in rows:
        p, s = row["link"].split(" -> ")
        own = commit.filter(pl.col("primary_db") == p, pl.col("standby_db") == s)
        assert {k: row[k] for k in _expected_link(own)} == _expected_link(own), row["link"]
    shipped = {r["link"] for r in _rows(async_table(c))}
    ships = truth.filter(pl.col("transport") == "ASYNC").select("primary_db", "standby_db").unique().rows()
    assert shipped == {f"{p} -> {s}" for p, s in ships}


def test_one_link_alone_shows_no_links_table(tmp_path: Path) -> None:
    simulate(tmp_path / "set", SimOptions(writes=50, threads=1))
    c = Context.of(analyze([str(tmp_path / "set")]))
    assert not shown(c) and not c.shipping
    assert "Configurations and links" not in _report(render_text, c.analysis)
