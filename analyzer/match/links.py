"""Who talks to whom: the Data Guard configurations of an upload, and the link of every receiver's trace.

A *link* is one sending process name of one database (`sales` `NSS2`, all its instances and days)
with the database it ships to (`salesdr`). Messages are matched only within a link, so the keys
(thread, seq, msgid) of different configurations, of two SYNC destinations or of an ASYNC sender
beside the SYNC one never meet. Each receiver (RFS) trace is given its sender by the strongest
evidence there is, in this order (`assign`):

1. the client its session names (`MODULE NAME:(oracle@prim01 (NSS2))`: host and process);
2. the sending database's LOG_ARCHIVE_DEST_n naming it (`Destination`, from parameters or alert logs);
3. the match rate: the share of its writes whose candidate pair fits one clock offset (`MatchScore`,
   measured by `analyzer.match.by_link.link_score` once the files are read); one candidate must stand out;
4. names: its db_unique_name extends exactly one sending database's (`salesdr` after `sales`), unless a
   candidate database itself receives redo (a far sync or cascading standby: names do not tell hops apart);
5. the only candidate left. Otherwise the receiver is ambiguous and matched with nothing: never a guess.

A database never receives from itself. Files are grouped into configurations (`configurations`) from
their identities alone: databases joined by the links above, an ambiguous receiver joined to every
candidate (the grouping errs on the side of keeping files together). A link's transport (SYNC, Fast
Sync, ASYNC) is decided by `analyzer.match.transport`.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace

from analyzer.base.vocab import Decider, Duty, Transport
from analyzer.match.transport import Destination, dest_fits, transport_of
from analyzer.parse.identify import FileIdentity
from analyzer.reduce.placement import WaitPlacement

#: a sending process of a database: (db_unique_name, process name); either may be unknown
SenderKey = tuple[str | None, str | None]
#: the match rate decides when the best candidate has at least this many receiver writes to compare ...
MIN_SCORED_WRITES = 10
#: ... matches at least this share of them consistently ...
MIN_RATE = 0.5
#: ... and the next best at most this share of its rate
CLEAR_MARGIN = 0.5
#: how the evidence says that a session's client is no sender of the input (it then decides nothing)
NO_FIT = ", which fits no sender of the input"
#: what the decision of a receiver rests on, strongest first (the order of `assign`)
STRONG = (Decider.CLIENT_MODULE, Decider.DESTINATION)


@dataclass(frozen=True)
class MatchScore:
    """How a receiver's writes match one candidate sender's, on a sample of shared (thread, seq) keys."""

    #: receiver exchanges in the sample
    receiver_writes: int
    #: those with a candidate of the same key whose four times fit the sample's clock offset
    consistent: int

    @property
    def rate(self) -> float:
        """Share of the receiver's writes matched consistently."""
        return self.consistent / self.receiver_writes if self.receiver_writes else 0.0


@dataclass(frozen=True)
class Assignment:
    """The sender of one receiver trace, the evidence that decided it and the candidates it chose among."""

    receiver: str
    sender: SenderKey | None
    decided_by: Decider
    evidence: tuple[str, ...]
    #: the candidates left after the strong evidence (what the match rate chooses among)
    candidates: tuple[SenderKey, ...] = ()


@dataclass(frozen=True)
class Link:
    """One sending process name of one database and the database it ships to, with their files."""

    configuration: str
    sender_db: str | None
    sender: str | None
    receiver_db: str | None
    transport: Transport
    transport_evidence: str
    decided_by: Decider
    evidence: tuple[str, ...]
    sender_files: tuple[str, ...]
    receiver_files: tuple[str, ...]

    @property
    def name(self) -> str:
        """`sales NSS2 -> salesdr` (`?` for what is unknown)."""
        return f"{self.sender_db or '?'} {self.sender or '?'} -> {self.receiver_db or '?'}"


@dataclass(frozen=True)
class Database:
    """One database of a configuration: its part (primary, standby, far sync), hosts and instances."""

    name: str | None
    role: str
    hosts: tuple[str, ...]
    instances: tuple[str, ...]
    files: int


@dataclass(frozen=True)
class Configuration:
    """Databases that ship redo to each other, and every file of theirs (labels)."""

    name: str
    databases: tuple[Database, ...]
    files: tuple[str, ...]
    links: tuple[Link, ...] = ()


@dataclass(frozen=True)
class Topology:
    """The configurations of an upload with their links, and how each receiver trace was assigned."""

    configurations: tuple[Configuration, ...]
    assignments: tuple[Assignment, ...]

    @property
    def links(self) -> list[Link]:
        """Every link of every configuration."""
        return [link for c in self.configurations for link in c.links]

    def configuration_of(self) -> dict[str, str]:
        """Configuration name by file label."""
        return {label: c.name for c in self.configurations for label in c.files}

    def notes(self) -> list[str]:
        """What a reader must know about the links, in words (none for one plain SYNC destination)."""
        out: list[str] = []
        if len(self.configurations) > 1:
            names = ", ".join(c.name for c in self.configurations)
            out.append(
                f"{len(self.configurations)} Data Guard configurations ({names}): writes are matched within each"
            )
        for link in self.links:
            if link.transport is Transport.FASTSYNC:
                out.append(
                    f"{link.name} is Fast Sync (SYNC NOAFFIRM): {link.transport_evidence}; its standby I/O is not"
                    " in the commit path (a write that reaches the RFS while it still writes waits, as network time)"
                )
            elif link.transport is Transport.ASYNC and (link.sender_files or link.receiver_files):
                out.append(
                    f"{link.name} is ASYNC ({link.transport_evidence}): reported apart (`async`), never in the"
                    " commit-path figures"
                )
        for a in self.assignments:
            if a.decided_by is Decider.AMBIGUOUS:
                out.append(
                    f"{a.receiver}: no sender can be told apart ({'; '.join(a.evidence)}): its writes are not matched"
                )
            elif a.decided_by is Decider.NAMES:
                out.append(f"{a.receiver}: sender decided by names only ({'; '.join(a.evidence)})")
        return out


# ---------------------------------------------------------------------------- receivers and their senders
def with_databases(identities: Sequence[FileIdentity]) -> list[FileIdentity]:
    """The identities, those without a database given the one of another file of the same instance
    (and host, when known): a trimmed file in a flat upload still has its instance in its name."""
    known: dict[tuple[str, str | None], set[str]] = defaultdict(set)
    for i in identities:
        if i.db and i.instance:
            known[(i.instance.lower(), i.host)].add(i.db)
            known[(i.instance.lower(), None)].add(i.db)
    out = []
    for i in identities:
        found = known.get((i.instance.lower(), i.host), set()) if i.instance and not i.db else set()
        if len(found) == 1:
            (db,) = found
            i = replace(
                i, db=db, evidence=f"{i.evidence}; db_unique_name {db} from another file of instance {i.instance}"
            )
        out.append(i)
    return out


def sender_key(identity: FileIdentity) -> SenderKey:
    """The sending process a sender's file belongs to."""
    return identity.db, identity.process


def _key_name(key: SenderKey) -> str:
    return f"{key[0] or '?'} {key[1] or '?'}"


def _senders(identities: Iterable[FileIdentity]) -> dict[SenderKey, list[FileIdentity]]:
    out: dict[SenderKey, list[FileIdentity]] = defaultdict(list)
    for i in identities:
        if i.duty is Duty.SENDER:
            out[sender_key(i)].append(i)
    return dict(out)


def _by_client(
    r: FileIdentity,
    cands: list[SenderKey],
    senders: Mapping[SenderKey, list[FileIdentity]],
    db_of_host: Mapping[str, set[str]],
) -> tuple[list[SenderKey], str | None]:
    """The candidates the receiver's session module names (host and process); a sender whose own
    trace is missing when the host is known (or no candidate has that process); else no narrowing."""
    if not r.client_host or not r.client_process:
        return cands, None
    said = f"its session names its client oracle@{r.client_host} ({r.client_process})"
    on_host = [k for k in cands if any(f.host == r.client_host for f in senders.get(k, ()))]
    named = [k for k in on_host if k[1] == r.client_process]
    if named:
        return named, said
    dbs = sorted(db_of_host.get(r.client_host, set()) - {r.db or ""})
    if r.client_host in db_of_host and len(dbs) == 1:
        return [(dbs[0], r.client_process)], f"{said}, whose trace is not among the inputs"
    if r.client_host not in db_of_host and not any(k[1] == r.client_process for k in cands):
        return [(None, r.client_process)], f"{said}, whose host has no trace among the inputs"
    return cands, f"{said}{NO_FIT}"


def _by_destination(
    r: FileIdentity, cands: list[SenderKey], destinations: Sequence[Destination]
) -> tuple[list[SenderKey], str | None]:
    """The candidates whose database has a destination naming the receiver's database."""
    found = [d for d in destinations if d.target_db == r.db]
    if not r.db or not found:
        return cands, None
    fit = [k for k in cands if any(d.db == k[0] and dest_fits(d, k[1]) for d in found)]
    if not fit:
        return cands, None
    said = "; ".join(
        f"{d.db} LOG_ARCHIVE_DEST_{d.number or '?'} names DB_UNIQUE_NAME={d.target_db} ({d.source})" for d in found
    )
    return fit, said


def _by_score(
    r: FileIdentity, cands: list[SenderKey], scores: Mapping[tuple[str, SenderKey], MatchScore]
) -> tuple[list[SenderKey], str | None]:
    """The candidate whose writes match the receiver's consistently when the others' do not."""
    scored = [(k, scores[(r.label, k)]) for k in cands if (r.label, k) in scores]
    if len(scored) < len(cands) or len(cands) < 2:
        return cands, None
    scored.sort(key=lambda ks: -ks[1].rate)
    (best, top), (_, second) = scored[0], scored[1]
    rates = ", ".join(f"{_key_name(k)} {s.rate:.0%} of {s.receiver_writes}" for k, s in scored)
    if top.receiver_writes >= MIN_SCORED_WRITES and top.rate >= MIN_RATE and second.rate <= CLEAR_MARGIN * top.rate:
        return [best], f"match rates (writes that fit one clock offset): {rates}"
    return cands, f"match rates do not decide: {rates}"


def _by_names(
    r: FileIdentity, cands: list[SenderKey], receiving: set[str | None]
) -> tuple[list[SenderKey], str | None]:
    """The candidates whose database name the receiver's extends the most (`salesdr` after `sales`)."""
    if not r.db or len({k[0] for k in cands}) < 2:
        return cands, None
    if any(k[0] in receiving for k in cands):
        return cands, None  # a far sync or cascading standby among them: names do not tell hops apart
    fit = [k for k in cands if k[0] and r.db.startswith(k[0]) and r.db != k[0]]
    if not fit:
        return cands, None
    longest = max(len(k[0] or "") for k in fit)
    fit = [k for k in fit if len(k[0] or "") == longest]
    return fit, f"its name {r.db} extends {fit[0][0]}"


@dataclass(frozen=True)
class _Input:
    """What every receiver's decision consults."""

    senders: Mapping[SenderKey, list[FileIdentity]]
    #: the databases whose files come from a host
    db_of_host: Mapping[str, set[str]]
    #: databases that receive redo (a far sync or cascading standby also sends)
    receiving: set[str | None]
    destinations: Sequence[Destination]
    scores: Mapping[tuple[str, SenderKey], MatchScore]


def _assign_one(r: FileIdentity, given: _Input) -> Assignment:
    """The sender of one receiver: strong evidence first, then match rates and names, then the only one left."""
    cands = [k for k in given.senders if k[0] is None or k[0] != r.db]  # a database never receives from itself
    evidence: list[str] = []
    cands, said = _by_client(r, cands, given.senders, given.db_of_host)
    evidence += [said] if said else []
    decided = Decider.CLIENT_MODULE if said and not said.endswith(NO_FIT) and len(cands) == 1 else None
    if len(cands) > 1:
        cands, said = _by_destination(r, cands, given.destinations)
        evidence += [said] if said else []
        decided = Decider.DESTINATION if said and len(cands) == 1 else None
    open_set = tuple(cands)
    if decided is None and len(cands) > 1:
        cands, said = _by_score(r, cands, given.scores)
        evidence += [said] if said else []
        decided = Decider.MATCH_RATE if len(cands) == 1 else None
    if decided is None and len(cands) > 1:
        cands, said = _by_names(r, cands, given.receiving)
        evidence += [said] if said else []
        decided = Decider.NAMES if len(cands) == 1 else None
    if not cands:
        return Assignment(r.label, None, Decider.NONE, ("no sender trace in the input",), open_set)
    if len(cands) > 1:
        names = ", ".join(_key_name(k) for k in cands)
        return Assignment(r.label, None, Decider.AMBIGUOUS, (*evidence, f"candidates: {names}"), open_set)
    if decided is None:
        decided = Decider.ONLY_CANDIDATE
        evidence.append(f"the only sender that fits: {_key_name(cands[0])}")
    return Assignment(r.label, cands[0], decided, tuple(evidence), open_set)


def assign(
    identities: Sequence[FileIdentity],
    destinations: Sequence[Destination] = (),
    scores: Mapping[tuple[str, SenderKey], MatchScore] | None = None,
) -> list[Assignment]:
    """The sender of every receiver trace (see the module docstring for the order of evidence).

    `scores` are match rates by (receiver label, candidate); without them (before the files are
    read) names and the only candidate left decide what the strong evidence leaves open.
    """
    identities = with_databases(identities)
    db_of_host: dict[str, set[str]] = defaultdict(set)
    for i in identities:
        if i.host and i.db and i.duty is not Duty.RECEIVER:
            db_of_host[i.host].add(i.db)
    receiving: set[str | None] = {i.db for i in identities if i.duty is Duty.RECEIVER and i.db}
    given = _Input(_senders(identities), db_of_host, receiving, destinations, scores or {})
    return [_assign_one(r, given) for r in identities if r.duty is Duty.RECEIVER]


def undecided(assignments: Iterable[Assignment]) -> list[tuple[str, SenderKey]]:
    """(receiver, candidate) pairs whose match rate may decide: several candidates were left by the strong evidence."""
    return [
        (a.receiver, k)
        for a in assignments
        if a.decided_by not in STRONG and len(a.candidates) > 1
        for k in a.candidates
    ]


# ---------------------------------------------------------------------------- configurations
class _Groups:
    """Union-find over node names."""

    def __init__(self) -> None:
        self.parent: dict[str, str] = {}

    def find(self, node: str) -> str:
        self.parent.setdefault(node, node)
        while self.parent[node] != node:
            self.parent[node] = self.parent[self.parent[node]]
            node = self.parent[node]
        return node

    def join(self, a: str, b: str) -> None:
        self.parent[self.find(a)] = self.find(b)


def _node(db: str | None, fallback: str) -> str:
    return f"db:{db}" if db else fallback


def _file_node(i: FileIdentity) -> str:
    if i.duty is Duty.SENDER:
        return _node(i.db, f"sender:{i.process}")
    return _node(i.db, f"file:{i.label}" if i.duty is Duty.RECEIVER else "unknown")


def _roles(members: list[FileIdentity]) -> dict[str | None, str]:
    sends = {i.db for i in members if i.duty in (Duty.SENDER, Duty.LOG_WRITER)}
    receives = {i.db for i in members if i.duty is Duty.RECEIVER}
    said = {i.db: i.database_role for i in members if i.database_role}
    out: dict[str | None, str] = {}
    for db in {i.db for i in members}:
        if db in sends and db in receives:
            role = "far sync" if "FAR SYNC" in (said.get(db) or "FAR SYNC") else "cascading standby"
        else:
            role = "primary" if db in sends else "standby" if db in receives else "other"
        out[db] = role
    return out


def configurations(
    identities: Sequence[FileIdentity],
    destinations: Sequence[Destination] = (),
    assignments: Sequence[Assignment] | None = None,
) -> list[Configuration]:
    """Files grouped into Data Guard configurations from their identities alone (path, header, session).

    Databases joined by a receiver's sender are one configuration; an ambiguous receiver joins
    every candidate. A file without an identity (neither a database nor a transport process: an
    empty file, another program's trace) is in none. Callable before the files are read whole
    (`analyzer.parse.identify.read_identity`).
    """
    identities = [i for i in with_databases(identities) if i.db or i.duty is not Duty.OTHER]
    if assignments is None:
        assignments = assign(identities, destinations)
    by_label = {i.label: i for i in identities}
    groups = _Groups()
    for i in identities:
        groups.find(_file_node(i))
    for a in assignments:
        receiver = _file_node(by_label[a.receiver])
        for key in (a.sender,) if a.sender else a.candidates if a.decided_by is Decider.AMBIGUOUS else ():
            groups.join(receiver, _node(key[0], f"sender:{key[1]}"))
    members: dict[str, list[FileIdentity]] = defaultdict(list)
    for i in identities:
        members[groups.find(_file_node(i))].append(i)
    out = []
    for group in members.values():
        roles = _roles(group)
        primaries = sorted(db for db, role in roles.items() if db and role == "primary")
        name = "+".join(primaries) or "+".join(sorted(db for db in roles if db)) or "unknown"
        databases = tuple(
            Database(
                db,
                roles[db],
                tuple(sorted({i.host for i in group if i.db == db and i.host})),
                tuple(sorted({i.instance for i in group if i.db == db and i.instance})),
                sum(1 for i in group if i.db == db),
            )
            for db in sorted(roles, key=lambda d: (d is None, d or ""))
        )
        out.append(Configuration(name, databases, tuple(i.label for i in group)))
    out.sort(key=lambda c: c.name)
    seen: dict[str, int] = {}
    for n, c in enumerate(out):  # names are unique: `unknown`, `unknown (2)`
        seen[c.name] = seen.get(c.name, 0) + 1
        if seen[c.name] > 1:
            out[n] = Configuration(f"{c.name} ({seen[c.name]})", c.databases, c.files)
    return out


# ---------------------------------------------------------------------------- links
def decide(
    identities: Sequence[FileIdentity],
    destinations: Sequence[Destination] = (),
    scores: Mapping[tuple[str, SenderKey], MatchScore] | None = None,
    placements: Mapping[str, WaitPlacement] | None = None,
) -> Topology:
    """The configurations with their links: every receiver assigned, every sender's files in one link."""
    identities = with_databases(identities)
    assignments = assign(identities, destinations, scores)
    groups = configurations(identities, destinations, assignments)
    config_of = {label: c.name for c in groups for label in c.files}
    senders = _senders(identities)
    by_label = {i.label: i for i in identities}
    receivers: dict[SenderKey | str, list[Assignment]] = defaultdict(list)
    for a in assignments:
        receivers[a.sender if a.sender else f"{a.decided_by}:{by_label[a.receiver].db}"].append(a)
    links: dict[str, list[Link]] = defaultdict(list)
    for key in {*senders, *receivers}:
        got = receivers.get(key, [])
        files = [i.label for i in senders.get(key, [])] if isinstance(key, tuple) else []
        receiver_db = "+".join(sorted({db for a in got if (db := by_label[a.receiver].db)})) or None
        sender_db, sender = key if isinstance(key, tuple) else (None, None)
        dest = next(
            (d for d in destinations if d.db == sender_db and d.target_db == receiver_db and dest_fits(d, sender)),
            None,
        )
        placement = sum(((placements or {}).get(a.receiver, WaitPlacement()) for a in got), WaitPlacement())
        transport, why = transport_of(sender, dest, placement)
        weakest = max((list(Decider).index(a.decided_by) for a in got), default=list(Decider).index(Decider.NONE))
        decided_by = list(Decider)[weakest]  # a link is as sure as its least sure receiver
        evidence = tuple(dict.fromkeys(e for a in got for e in a.evidence)) or ("no receiver trace in the input",)
        config = config_of[(files or [a.receiver for a in got])[0]]
        link = Link(
            config,
            sender_db,
            sender,
            receiver_db,
            transport,
            why,
            decided_by,
            evidence,
            tuple(sorted(files)),
            tuple(sorted(a.receiver for a in got)),
        )
        links[config].append(link)
    order = {Transport.SYNC: 0, Transport.FASTSYNC: 0, Transport.ASYNC: 1}
    return Topology(
        tuple(
            Configuration(
                c.name, c.databases, c.files, tuple(sorted(links[c.name], key=lambda k: (order[k.transport], k.name)))
            )
            for c in groups
        ),
        tuple(assignments),
    )
