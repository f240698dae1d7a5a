"""Matching link by link, in batches of log sequences: memory holds one batch, not every write.

Each link (`analyzer.match.links`: one sending process of a database and the database it ships to) is
matched on its own files only, so keys of different configurations or destinations never meet.
A write's messages share their (thread, seq), so batches of (thread, seq) keys match as the
whole would, provided every batch uses the same typical send->receive gap per host pair: with
several batches, the gaps are taken on a sample, the narrow columns of about GAP_SAMPLE_ROWS
exchanges of (thread, seq) keys spread evenly over all of them, not on a second read of every
write. A median of thousands of gaps stands for the whole (the window around it is a minute wide
by default); a host pair the sample misses, or holds fewer than SAMPLE_GAPS candidates of, takes
the gaps of each batch that holds it.
Each batch is matched (`analyzer.match.join`) and attributed (`analyzer.match.attribute`) as it comes, and
tagged with its link (databases, transport). Before that, `candidate_scores` measures how a
receiver's writes match each candidate sender's: the match rate that `analyzer.match.links` weighs.
"""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace

import polars as pl

from analyzer.base.schemas import CAT, DESTINATIONS, LINK_COLUMNS, UNMATCHED, WRITE_KEY, empty
from analyzer.base.spill import INDEX
from analyzer.base.vocab import Duty, Role
from analyzer.match import alerts, links
from analyzer.match.attribute import attribute, fast_sync_ms
from analyzer.match.join import gaps, match, typical_gaps
from analyzer.match.links import Link, MatchScore, SenderKey, Topology, sender_key, with_databases
from analyzer.match.segments import Segment, Side, join_segments, side
from analyzer.match.transport import Destination
from analyzer.reduce.results import FileResult, Options

#: exchanges (rows of one side) matched at once: a batch of (thread, seq) keys stops growing past this
BATCH_ROWS = 250_000
#: with several batches, the typical send->receive gaps are taken on about this many exchanges (both sides)
GAP_SAMPLE_ROWS = 50_000
#: a host pair with fewer candidates in the sample takes the gaps of each batch instead (a few gaps may
#: be msgid reuse minutes away, and a median of a handful would center the window on them)
SAMPLE_GAPS = 100


@dataclass(frozen=True)
class Batched:
    """The writes of every batch (parts, in batch order), what stayed unmatched, and the exchanges seen."""

    parts: list[pl.DataFrame]
    unmatched: pl.DataFrame
    primary_exchanges: int
    standby_exchanges: int


def _key_rows(primary: pl.DataFrame, standby: pl.DataFrame) -> pl.DataFrame:
    """Every (thread, seq) key of the two sides' indexes, in order, with its exchanges of both sides (`rows`)."""
    return pl.concat([primary, standby]).group_by(INDEX).agg(rows=pl.col("len").sum()).sort(INDEX, nulls_last=False)


def key_batches(primary: pl.DataFrame, standby: pl.DataFrame) -> list[pl.DataFrame]:
    """(thread, seq) keys in order, cut into batches of about BATCH_ROWS exchanges per side."""
    sizes = _key_rows(primary, standby)
    batches, start, total = [], 0, 0
    for n, rows in enumerate(sizes["rows"].to_list()):
        if total and total + rows > 2 * BATCH_ROWS:
            batches.append(sizes.slice(start, n - start).select(INDEX))
            start, total = n, 0
        total += rows
    if sizes.height:
        batches.append(sizes.slice(start).select(INDEX))
    return batches


def sample_keys(primary: pl.DataFrame, standby: pl.DataFrame) -> pl.DataFrame:
    """(thread, seq) keys spread evenly over all of them (every k-th, from the middle of the first k),
    as many as hold about GAP_SAMPLE_ROWS exchanges at the keys' mean size; at least one."""
    sizes = _key_rows(primary, standby)
    total = int(sizes["rows"].sum())
    if total <= GAP_SAMPLE_ROWS:
        return sizes.select(INDEX)
    wanted = max(1, sizes.height * GAP_SAMPLE_ROWS // total)
    step = sizes.height / wanted
    return sizes.select(INDEX).gather([int(step * (i + 0.5)) for i in range(wanted)])


def match_in_batches(
    primary: Side, standby: Side, hosts: dict[str, str], threshold_ms: float, window_s: float
) -> Batched:
    """Match and attribute the two sides batch by batch (see the module docstring)."""
    p_index, s_index = primary.index(), standby.index()
    batches = key_batches(p_index, s_index)

    def load(keys: pl.DataFrame, narrow: bool = False) -> tuple[pl.DataFrame, pl.DataFrame]:
        return primary.load(p_index, keys, narrow=narrow), standby.load(s_index, keys, narrow=narrow)

    typical = None
    # polars releases the GIL: batches are read back on a second thread while one is matched
    with ThreadPoolExecutor(max_workers=2) as pool:
        parts, unmatched, counts = [], [], (0, 0)
        ahead = pool.submit(load, batches[0]) if batches else None
        if len(batches) > 1:  # one batch takes the gaps of all its candidates (`match`)
            typical = typical_gaps(gaps(*load(sample_keys(p_index, s_index), narrow=True), hosts), SAMPLE_GAPS)
        for n in range(len(batches)):
            assert ahead is not None
            p_rows, s_rows = ahead.result()
            ahead = pool.submit(load, batches[n + 1]) if n + 1 < len(batches) else None
            matched = match(p_rows, s_rows, hosts, window_s, typical)
            del p_rows, s_rows
            counts = (counts[0] + matched.primary_exchanges, counts[1] + matched.standby_exchanges)
            unmatched.append(matched.unmatched)
            if matched.exchanges.height:
                parts.append(attribute(matched.exchanges, threshold_ms))
    return Batched(parts, pl.concat(unmatched) if unmatched else empty(UNMATCHED), *counts)


#: a receiver's match rate against a candidate is measured on about this many of its exchanges
SCORE_ROWS = 2000


@dataclass(frozen=True)
class Matching:
    """Every link matched: the commit-path writes (SYNC, Fast Sync) and the ASYNC shipments apart."""

    topology: Topology
    commit: Batched
    shipments: Batched
    #: messages of every link's files that can never pair (no stamp, no partner in the process)
    unpairable: pl.DataFrame
    #: per link (`Link.name`): the sender's and the receiver's exchanges
    counts: dict[str, tuple[int, int]]
    #: the redo transport destinations the alert logs set (schema DESTINATIONS, `analyzer.match.alerts`)
    destinations: pl.DataFrame = field(default_factory=lambda: empty(DESTINATIONS))


def _tagged(part: pl.DataFrame, link: Link) -> pl.DataFrame:
    """Writes of one link with its databases, transport and the Fast Sync what-if (which needs the transport)."""
    values = (link.sender_db, link.receiver_db, str(link.transport))
    tagged = part.with_columns(
        pl.lit(v, pl.String).cast(CAT).alias(c) for c, v in zip(LINK_COLUMNS, values, strict=True)
    )
    return tagged.with_columns(fastsync_ms=fast_sync_ms())


def _link_sides(files: Sequence[FileResult], link: Link, segments: dict[str, Segment]) -> tuple[Side, Side]:
    by_label = {f.source.label: f for f in files}
    senders = [by_label[label] for label in link.sender_files]
    receivers = [by_label[label] for label in link.receiver_files]
    return side(senders, Role.PRIMARY, segments), side(receivers, Role.STANDBY, segments)


def match_links(
    files: list[FileResult],
    topology: Topology,
    hosts: dict[str, str],
    threshold_ms: float,
    window_s: float,
    segments: dict[str, Segment],
) -> Matching:
    """Match and attribute every link of the topology on its own files, segments of a process
    joined (`join_segments`; see the module docstring)."""
    found: dict[bool, list[Batched]] = {True: [], False: []}
    unpairable, counts = [], {}
    for link in topology.links:
        primary, standby = _link_sides(files, link, segments)
        unpairable += [primary.unmatched, standby.unmatched]
        batched = match_in_batches(primary, standby, hosts, threshold_ms, window_s)
        counts[link.name] = (batched.primary_exchanges, batched.standby_exchanges)
        parts = [_tagged(part, link) for part in batched.parts]
        found[link.transport.commit_path].append(Batched(parts, batched.unmatched, *counts[link.name]))
    commit, shipments = (_joined(found[path]) for path in (True, False))
    return Matching(topology, commit, shipments, pl.concat(unpairable) if unpairable else empty(UNMATCHED), counts)


def _joined(batches: list[Batched]) -> Batched:
    return Batched(
        [part for b in batches for part in b.parts],
        pl.concat([b.unmatched for b in batches]) if batches else empty(UNMATCHED),
        sum(b.primary_exchanges for b in batches),
        sum(b.standby_exchanges for b in batches),
    )


def link_score(primary: Side, standby: Side) -> MatchScore:
    """How the standby side's writes match the primary side's, on their first shared (thread, seq)
    keys (about SCORE_ROWS standby exchanges): a standby write counts when a primary write of the
    same key fits the sample's clock offset as NTP reasons (|offset - median| within half its own
    round trip plus the median half round trip and the stamps' resolution). The writes of the true
    sender fit one offset; those of another configuration or destination that reuse the keys do not."""
    p_index, s_index = primary.index(), standby.index()
    sizes = s_index.group_by(INDEX).agg(pl.col("len").sum()).sort(INDEX)
    shared = sizes.join(p_index.select(INDEX).unique(), on=INDEX, how="semi", nulls_equal=True)
    if not shared.height:
        return MatchScore(min(int(sizes["len"].sum()), SCORE_ROWS), 0)
    keys = shared.filter(pl.col("len").cum_sum().shift(1, fill_value=0) < SCORE_ROWS).select(INDEX)
    p_rows, s_rows = primary.load(p_index, keys), standby.load(s_index, keys)
    return MatchScore(s_rows.height, _consistent(p_rows, s_rows))


def _consistent(p_rows: pl.DataFrame, s_rows: pl.DataFrame) -> int:
    """Standby exchanges with a primary exchange of the same key that fits the common clock offset."""

    def us(a: str, b: str) -> pl.Expr:
        return (pl.col(a) - pl.col(b)).dt.total_microseconds()

    p = p_rows.select(*WRITE_KEY, t1="a_at", t4="b_at", _rp=pl.max_horizontal("a_res_us", "b_res_us"))
    s = s_rows.select(*WRITE_KEY, t2="a_at", t3="b_at", _rs=pl.max_horizontal("a_res_us", "b_res_us"))
    pairs = p.join(s.with_row_index("_s"), on=WRITE_KEY, how="inner").with_columns(
        _o=(us("t2", "t1") + us("t3", "t4")) / 2,
        _h=(us("t4", "t1") - us("t3", "t2")) / 2,
        _res=pl.col("_rp") + pl.col("_rs"),
    )
    causal = pairs.filter(pl.col("_h") >= -pl.col("_res"))
    if not causal.height:
        return 0
    offset, half = causal["_o"].median(), causal["_h"].clip(lower_bound=0).median()
    fits = (pl.col("_o") - offset).abs() <= pl.col("_h").clip(lower_bound=0) + half + pl.col("_res")
    return int(causal.filter(fits)["_s"].n_unique())


def candidate_scores(
    files: list[FileResult], pairs: Sequence[tuple[str, SenderKey]], segments: dict[str, Segment]
) -> dict[tuple[str, SenderKey], MatchScore]:
    """The match rate of each (receiver label, candidate sender) pair (`analyzer.match.links.undecided`),
    segments of a process joined (`join_segments`)."""
    by_label = {f.source.label: f for f in files}
    identities = with_databases([f.identity for f in files])
    senders: dict[SenderKey, Side] = {}
    out = {}
    for receiver, key in pairs:
        if key not in senders:
            members = [by_label[i.label] for i in identities if i.duty is Duty.SENDER and sender_key(i) == key]
            senders[key] = side(members, Role.PRIMARY, segments)
        out[(receiver, key)] = link_score(senders[key], side([by_label[receiver]], Role.STANDBY, segments))
    return out


def link_topology(
    files: list[FileResult], destinations: Sequence[Destination] = (), segments: dict[str, Segment] | None = None
) -> Topology:
    """The configurations and links of the files: their identities decide, and where they leave a
    receiver several candidate senders, the match rate of each (`analyzer.match.links`; `segments`:
    `join_segments` of the files, when the caller has them)."""
    identities = [f.identity for f in files]
    pairs = links.undecided(links.assign(identities, destinations))
    scores = candidate_scores(files, pairs, join_segments(files) if segments is None else segments) if pairs else {}
    placements = {f.source.label: f.placement for f in files}
    return links.decide(identities, destinations, scores, placements)


def match_sides(files: list[FileResult], options: Options, topology: Topology | None = None) -> Matching:
    """Every link of the files (`link_topology` unless given) matched and attributed in batches, with
    the alert logs' destinations (read once: they decide the links where they name the standby)."""
    hosts = {f.source.label: f.reduced.info.host or f.source.label for f in files}
    segments = join_segments(files)
    destinations = alerts.destinations(alerts.entries(files))
    if topology is None:
        topology = link_topology(files, alerts.transport_destinations(destinations), segments)
    matching = match_links(files, topology, hosts, options.threshold_ms, options.window_s, segments)
    return replace(matching, destinations=destinations)
