"""Which Data Guard configuration each trace source belongs to: the one pluggable step of the plan.

A `Grouping` takes the identity of every known source and returns the configurations. The batch
engine calls it once per run over all the sources it knows (this night's and earlier ones), so a
standby trace that arrives a night before its primary's joins the primary's configuration on the
night the primary's arrives. `by_identity` (the default) groups them as the analysis does
(`analyzer.api.configurations_of`); `by_adr_path` is a simpler grouping that needs no more than the
probe's own identity:

- a source's database is its db_unique_name as the analysis reads it (the header, the `Trace file`
  line, the ADR path `.../diag/rdbms/<db>/<sid>/trace/`); sources without one stand alone by host;
- a standby database joins the primary database on the host its RFS sessions name
  (`MODULE NAME:(oracle@host (NSS2))`), when exactly one primary database has traces from that host.

The analysis gives each write its `primary_db` and `standby_db` (its link); `db_columns` fills
what it leaves null from the database of the row's files, else the configuration's.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

import polars as pl

from analyzer.api import Assignment, FileIdentity, assign_senders, configurations_of, with_databases
from analyzer.base.vocab import Decider, Duty, Role
from analyzer.batch.probe import SourceInfo


@dataclass(frozen=True)
class Configuration:
    """One Data Guard configuration: its sources and its databases."""

    #: stable name: its databases, sorted, joined by `+` (what a unit and its files are named after)
    key: str
    #: where rows seen on the standby side only are filed (None when no primary trace names it)
    primary_db: str | None
    #: the standby databases (a row seen on the primary side only takes the only one, if one)
    standby_dbs: tuple[str, ...]
    #: labels of its sources
    labels: tuple[str, ...]
    #: db_unique_name of each source (by label), None when unknown
    dbs: dict[str, str | None]


Grouping = Callable[[Sequence[SourceInfo]], list[Configuration]]


def by_identity(sources: Sequence[SourceInfo]) -> list[Configuration]:
    """Configurations as the analysis groups files (`analyzer.api.configurations_of`: ADR path, header,
    the sender each RFS session names, ambiguity reported), from the identity each probe kept; named
    after their databases so that a unit keeps its name from run to run."""
    identities = with_databases([_identity(info) for info in sources])
    dbs = {i.label: i.db for i in identities}
    out = []
    for c in configurations_of(identities, assignments=_not_yet_sent(identities)):
        roles = {d.name: d.role for d in c.databases if d.name}
        primaries = [db for db, role in roles.items() if role == "primary"]
        names = sorted(roles)
        out.append(
            Configuration(
                key="+".join(names) or f"file:{min(c.files)}",
                primary_db=primaries[0] if len(primaries) == 1 else None,
                standby_dbs=tuple(sorted(db for db, role in roles.items() if role == "standby")),
                labels=tuple(sorted(c.files)),
                dbs={label: dbs.get(label) for label in c.files},
            )
        )
    return sorted(out, key=lambda c: c.key)


def _not_yet_sent(identities: list[FileIdentity]) -> list[Assignment]:
    """The analysis's assignment of each receiver to its sender, except that a receiver whose RFS
    session names a host no known sender trace comes from stays alone: its sender's traces are not
    there yet (they may arrive a night later), and joining it to every configuration that could
    fit would mix their colliding msgid ranges for that night."""
    senders = {i.host for i in identities if i.duty in (Duty.SENDER, Duty.LOG_WRITER) and i.host}
    named = {i.label: i.client_host for i in identities}
    strong = (Decider.CLIENT_MODULE, Decider.DESTINATION)
    out = []
    for a in assign_senders(identities):
        host = named.get(a.receiver)
        if host and host not in senders and a.decided_by not in strong:
            a = replace(a, sender=None, candidates=())
        out.append(a)
    return out


def _identity(info: SourceInfo) -> FileIdentity:
    if info.identity is None:  # recorded before identities were kept: what the path tells
        duty = {"primary": Duty.SENDER, "standby": Duty.RECEIVER}.get(info.role, Duty.OTHER)
        return FileIdentity(info.label, duty, info.db, info.instance, info.host, info.process)
    return FileIdentity(**{**info.identity, "duty": Duty(info.identity["duty"])})


def _node(info: SourceInfo) -> str:
    if info.db:
        return info.db
    return f"host:{info.host}" if info.host else f"file:{info.label}"


def by_adr_path(sources: Sequence[SourceInfo]) -> list[Configuration]:
    """Configurations from ADR paths and the hosts RFS sessions name (see the module docstring)."""
    parent: dict[str, str] = {}

    def find(node: str) -> str:
        parent.setdefault(node, node)
        while parent[node] != node:
            parent[node] = parent[parent[node]]
            node = parent[node]
        return node

    primary_dbs_on: dict[str, set[str]] = {}
    for info in sources:
        find(_node(info))
        if info.role == Role.PRIMARY and info.db and info.host:  # host names compared in lower case
            primary_dbs_on.setdefault(info.host.lower(), set()).add(info.db)
    for info in sources:
        candidates = primary_dbs_on.get((info.peer_host or "").lower(), set())
        if len(candidates) == 1:
            a, b = find(_node(info)), find(next(iter(candidates)))
            if a != b:
                parent[max(a, b)] = min(a, b)
    members: dict[str, list[SourceInfo]] = {}
    for info in sources:
        members.setdefault(find(_node(info)), []).append(info)
    return [_configuration(group) for _, group in sorted(members.items())]


def _configuration(group: list[SourceInfo]) -> Configuration:
    nodes = sorted({_node(i) for i in group})
    sending = {i.db for i in group if i.db and i.role == Role.PRIMARY}
    receiving = {i.db for i in group if i.db and i.role == Role.STANDBY}
    # a far sync instance both receives and sends: the configuration's primary only sends
    only_sending = sorted(sending - receiving)
    primary = only_sending[0] if len(only_sending) == 1 else (sorted(sending)[0] if len(sending) == 1 else None)
    return Configuration(
        key="+".join(nodes),
        primary_db=primary,
        standby_dbs=tuple(sorted(receiving - {primary} if primary else receiving)),
        labels=tuple(sorted(i.label for i in group)),
        dbs={i.label: i.db for i in group},
    )


def db_columns(
    frame: pl.DataFrame, dbs: dict[str, str | None], primary_db: str | None, standby_dbs: Sequence[str], **files: str
) -> pl.DataFrame:
    """`primary_db` and `standby_db` on every row: those the analysis gave (its links), else the
    database of the file named in the columns `files` gives for `primary` and `standby` (either may
    be absent), else the configuration's database (the only standby one, if only one)."""
    only_standby = standby_dbs[0] if len(standby_dbs) == 1 else None
    mapping = pl.DataFrame(
        {"_file": list(dbs), "_db": list(dbs.values())}, schema={"_file": pl.String, "_db": pl.String}
    )
    out = frame
    for side, fallback in (("primary", primary_db), ("standby", only_standby)):
        column = files.get(side)
        value = pl.lit(fallback, pl.String)
        if column is not None:
            looked = out.select(pl.col(column).cast(pl.String).alias("_file")).join(
                mapping, on="_file", how="left", maintain_order="left"
            )
            value = pl.coalesce(pl.lit(looked["_db"]), value)
        if f"{side}_db" in frame.columns:
            value = pl.coalesce(pl.col(f"{side}_db").cast(pl.String), value)
        out = out.with_columns(value.alias(f"{side}_db"))
    return out
