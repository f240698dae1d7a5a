"""The analysis per configuration and per link: each one's writes, figures and verdict; a lone configuration's
scope is the whole analysis."""

from __future__ import annotations

from pathlib import Path

import polars as pl

from analyzer.api import Analysis, analyze
from analyzer.base.vocab import Decider, Transport
from analyzer.match.links import Link
from analyzer.report.context import Context
from analyzer.report.scopes import link_figures, link_mask, link_writes
from analyzer.simulate import ShareOptions, simulate_share


def _link(sender_db: str | None, receiver_db: str | None) -> Link:
    return Link("c", sender_db, "NSS2", receiver_db, Transport.SYNC, "", Decider.ONLY_CANDIDATE, (), (), ())


def test_the_writes_of_a_link_are_told_by_their_databases() -> None:
    writes = pl.DataFrame(
        {"primary_db": ["sales", "hr", "sales", None], "standby_db": ["salesdr", "hrdr", "salesbc", None]},
        schema={"primary_db": pl.Categorical(), "standby_db": pl.Categorical()},
    )
    assert link_mask(writes, [_link("sales", "salesdr")]).to_list() == [True, False, False, False]
    assert link_mask(writes, [_link("sales", "salesdr"), _link("hr", "hrdr")]).to_list() == [True, True, False, False]
    assert link_mask(writes, [_link(None, None)]).to_list() == [False, False, False, True]  # unnamed: unnamed
    both = [_link("sales", "salesdr"), _link("hr", "hrdr"), _link("sales", "salesbc"), _link(None, None)]
    assert link_writes(writes, both) is writes  # all of them: the frame itself


def test_a_lone_configuration_is_the_whole_analysis(paper: Analysis) -> None:
    [scope] = Context.of(paper).scopes
    assert scope.name == "boston" and scope.writes is paper.writes
    [figures] = scope.links
    assert figures.link.name == "boston NSS2 -> chicago"
    assert (figures.writes, figures.matched, figures.slow, figures.slow_matched) == (66, 66, 2, 2)
    assert figures.stat("total", "max") == 163.0 and figures.stat("nothing", "max") is None
    assert figures.verdict == "rfs_io"  # 54% of the slow writes' time was standby I/O
    again = link_figures(paper.writes, figures.link)
    assert again.components.equals(figures.components) and again.shares == figures.shares


def test_each_configuration_of_a_share_has_its_own_writes_and_verdict(tmp_path: Path) -> None:
    simulate_share(tmp_path / "share", ShareOptions(configs=2, days=1, writes=60, extras=False))
    a = analyze([str(tmp_path / "share")])
    scopes = Context.of(a).scopes
    assert sorted(s.name for s in scopes) == ["hr", "sales"]
    assert sum(s.writes.height for s in scopes) == a.writes.height
    for scope in scopes:
        assert scope.writes["primary_db"].cast(pl.String).unique().to_list() == [scope.name]
        assert scope.verdict.endswith(".") and [f.writes for f in scope.links] == [scope.writes.height]
