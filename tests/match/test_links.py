"""Who sends to whom, decided on small hand-built identities and evidence (no trace is read)."""

from __future__ import annotations

from analyzer.base.vocab import Decider, Duty, Transport
from analyzer.match.links import (
    MatchScore,
    assign,
    configurations,
    decide,
    undecided,
    with_databases,
)
from analyzer.match.transport import Destination
from analyzer.parse.identify import FileIdentity
from analyzer.reduce.placement import WaitPlacement


def sender(db: str | None, host: str, process: str = "NSS2", day: str = "d1") -> FileIdentity:
    sid = f"{db}{host[-1]}"
    label = f"{host}/{day}/diag/rdbms/{db}/{sid}/trace/{sid}_{process.lower()}_{len(host)}.trc"
    return FileIdentity(label, Duty.SENDER, db, sid, host, process)


def receiver(
    db: str | None, host: str, client: tuple[str, str] | None = None, n: int = 1, day: str = "d1"
) -> FileIdentity:
    label = f"{host}/{day}/diag/rdbms/{db}/{db}1/trace/{db}1_rfs_{n}.trc"
    client_host, client_process = client or (None, None)
    return FileIdentity(label, Duty.RECEIVER, db, f"{db}1", host, "RFS", n, client_host, client_process)


def lgwr(db: str, host: str) -> FileIdentity:
    return FileIdentity(
        f"{host}/diag/rdbms/{db}/{db}1/trace/{db}1_lgwr_1.trc", Duty.LOG_WRITER, db, f"{db}1", host, "LGWR"
    )


def by_receiver(identities: list[FileIdentity], **kwargs: object) -> dict[str, tuple[object, Decider]]:
    return {a.receiver: (a.sender, a.decided_by) for a in assign(identities, **kwargs)}  # type: ignore[arg-type]


# --- the order of evidence ---


def test_the_client_module_decides_between_configurations_that_reuse_every_name_but_the_host() -> None:
    ids = [
        sender("sales", "salesdb01"),
        sender("hr", "hrdb01"),
        receiver("salesdr", "salesdr01", ("salesdb01", "NSS2")),
        receiver("hrdr", "hrdr01", ("hrdb01", "NSS2")),
    ]
    got = by_receiver(ids)
    assert got[ids[2].label] == (("sales", "NSS2"), Decider.CLIENT_MODULE)
    assert got[ids[3].label] == (("hr", "NSS2"), Decider.CLIENT_MODULE)


def test_the_client_module_tells_two_destinations_of_one_primary_apart() -> None:
    ids = [
        sender("sales", "prim01", "NSS2"),
        sender("sales", "prim01", "NSS3"),
        receiver("salesdr", "stby01", ("prim01", "NSS2")),
        receiver("salesbc", "salesbc01", ("prim01", "NSS3")),
    ]
    got = by_receiver(ids)
    assert got[ids[2].label][0] == ("sales", "NSS2") and got[ids[3].label][0] == ("sales", "NSS3")


def test_a_client_whose_trace_is_missing_still_keeps_the_receiver_apart() -> None:
    """The ASYNC sender's trace was not uploaded: its receiver is not offered to the SYNC sender."""
    ids = [
        sender("sales", "prim01", "NSS2"),
        lgwr("sales", "prim01"),
        receiver("salesar", "salesar01", ("prim01", "TT02")),
    ]
    (a,) = assign(ids)
    assert (a.sender, a.decided_by) == (("sales", "TT02"), Decider.CLIENT_MODULE)
    assert "not among the inputs" in a.evidence[0]
    links = {link.name: link for link in decide(ids).links}
    assert links["sales TT02 -> salesar"].transport is Transport.ASYNC
    assert links["sales TT02 -> salesar"].sender_files == ()
    assert links["sales NSS2 -> ?"].receiver_files == ()


def test_a_database_never_receives_from_itself() -> None:
    """A far sync both receives (from the primary) and sends (to the terminal standby)."""
    ids = [sender("sales", "prim01"), sender("salesfs", "salesfs01", "TT02"), receiver("salesfs", "salesfs01")]
    ((_, got),) = by_receiver(ids).items()
    assert got == (("sales", "NSS2"), Decider.ONLY_CANDIDATE)


def test_a_destination_parameter_decides_what_the_session_does_not_say() -> None:
    ids = [sender("sales", "prim01", "NSS2"), sender("sales", "prim01", "NSS3"), receiver("salesbc", "bc01")]
    dests = [
        Destination("sales", "salesdr", 2, Transport.SYNC, "alert_sales1.log:12"),
        Destination("sales", "salesbc", 3, Transport.SYNC, "alert_sales1.log:13"),
    ]
    (a,) = assign(ids, dests)
    assert (a.sender, a.decided_by) == (("sales", "NSS3"), Decider.DESTINATION)
    assert "LOG_ARCHIVE_DEST_3" in a.evidence[0] and "alert_sales1.log:13" in a.evidence[0]


def test_a_clear_match_rate_decides_and_says_the_rates() -> None:
    ids = [sender("sales", "prim01", "NSS2"), sender("sales", "prim01", "NSS3"), receiver("salesdr", "stby01")]
    r = ids[2].label
    scores = {(r, ("sales", "NSS2")): MatchScore(500, 497), (r, ("sales", "NSS3")): MatchScore(500, 40)}
    (a,) = assign(ids, scores=scores)
    assert (a.sender, a.decided_by) == (("sales", "NSS2"), Decider.MATCH_RATE)
    assert "sales NSS2 99% of 500" in a.evidence[0] and "sales NSS3 8% of 500" in a.evidence[0]


def test_close_match_rates_are_ambiguous_and_nothing_is_guessed() -> None:
    ids = [sender("sales", "prim01", "NSS2"), sender("sales", "prim01", "NSS3"), receiver("salesdr", "stby01")]
    r = ids[2].label
    scores = {(r, ("sales", "NSS2")): MatchScore(500, 450), (r, ("sales", "NSS3")): MatchScore(500, 300)}
    (a,) = assign(ids, scores=scores)
    assert (a.sender, a.decided_by) == (None, Decider.AMBIGUOUS)
    assert "match rates do not decide" in a.evidence[0] and "candidates: sales NSS2, sales NSS3" in a.evidence[-1]
    topology = decide(ids, scores=scores)
    alone = [link for link in topology.links if link.receiver_files == (r,)]
    assert len(alone) == 1 and alone[0].sender is None and alone[0].sender_files == ()
    assert any("no sender can be told apart" in note for note in topology.notes())


def test_too_few_writes_to_compare_do_not_decide() -> None:
    ids = [sender("sales", "prim01", "NSS2"), sender("sales", "prim01", "NSS3"), receiver("salesdr", "stby01")]
    r = ids[2].label
    scores = {(r, ("sales", "NSS2")): MatchScore(4, 4), (r, ("sales", "NSS3")): MatchScore(4, 0)}
    assert assign(ids, scores=scores)[0].decided_by is Decider.AMBIGUOUS


def test_names_decide_between_databases_when_nothing_stronger_is_there() -> None:
    ids = [sender("sales", "salesdb01"), sender("hr", "hrdb01"), receiver("salesdr", "salesdr01")]
    (a,) = assign(ids)
    assert (a.sender, a.decided_by) == (("sales", "NSS2"), Decider.NAMES)
    assert a.evidence == ("its name salesdr extends sales",)
    assert undecided([a]) == [(a.receiver, ("sales", "NSS2")), (a.receiver, ("hr", "NSS2"))], (
        "the match rate may overrule"
    )
    assert any("names only" in note for note in decide(ids).notes())


def test_the_longest_name_wins_and_a_tie_is_ambiguous() -> None:
    ids = [sender("db1", "h01"), sender("db10", "h02"), receiver("db10dr", "h03")]
    assert assign(ids)[0].sender == ("db10", "NSS2")
    twins = [sender("sales", "h01"), sender("sales", "h02", "NSS3"), receiver("salesdr", "h03")]
    assert assign(twins)[0].decided_by is Decider.AMBIGUOUS, "one database, two processes: names cannot choose"


def test_names_do_not_choose_between_the_hops_of_a_far_sync_chain() -> None:
    """`salesdr` extends `sales`, but it may well receive from the far sync `salesfs`."""
    ids = [
        sender("sales", "prim01"),
        sender("salesfs", "salesfs01", "TT02"),
        receiver("salesfs", "salesfs01"),
        receiver("salesdr", "stby01", n=2),
    ]
    got = by_receiver(ids)
    assert got[ids[3].label] == (None, Decider.AMBIGUOUS)
    r = ids[3].label
    scores = {(r, ("sales", "NSS2")): MatchScore(300, 3), (r, ("salesfs", "TT02")): MatchScore(300, 300)}
    assert by_receiver(ids, scores=scores)[r] == (("salesfs", "TT02"), Decider.MATCH_RATE)


def test_the_only_sender_of_an_upload_is_its_receivers_sender() -> None:
    """The MAA paper's set: boston sends, chicago receives; no session module, no common name."""
    ids = [sender("boston", "prim01"), sender("boston", "prim02"), receiver("chicago", "stby01")]
    (a,) = assign(ids)
    assert (a.sender, a.decided_by) == (("boston", "NSS2"), Decider.ONLY_CANDIDATE)
    assert decide(ids).notes() == [], "one plain SYNC destination needs no note"


def test_no_sender_at_all() -> None:
    (a,) = assign([receiver("salesdr", "stby01")])
    assert (a.sender, a.decided_by) == (None, Decider.NONE)


def test_files_without_any_database_name_stay_one_configuration() -> None:
    """Bare file names (no ADR path, no header): one sender, one receiver, as before links existed."""
    ids = [
        FileIdentity("p.trc", Duty.SENDER, process="NSS"),
        FileIdentity("s.trc", Duty.RECEIVER, process="RFS"),
    ]
    topology = decide(ids)
    (link,) = topology.links
    assert (link.sender_files, link.receiver_files, link.decided_by) == (("p.trc",), ("s.trc",), Decider.ONLY_CANDIDATE)
    assert (link.sender_db, link.receiver_db, link.name) == (None, None, "? NSS -> ?")
    assert [c.name for c in topology.configurations] == ["unknown"]


def test_files_without_an_identity_make_no_configuration() -> None:
    """An empty file and another program's trace at the top of an upload (no database, no transport
    process) join no configuration: no phantom "unknown" beside the real one."""
    ids = [
        sender("sales", "db01"),
        receiver("salesdr", "dr01", ("db01", "NSS2")),
        FileIdentity("upload/empty.trc", Duty.OTHER),
        FileIdentity("upload/java_gc.trc", Duty.OTHER, process="JAVA"),
    ]
    topology = decide(ids)
    assert [(c.name, len(c.files)) for c in topology.configurations] == [("sales", 2)]
    assert topology.notes() == []
    assert "upload/empty.trc" not in topology.configuration_of()


# --- configurations from identities alone ---


def test_configurations_of_a_share_from_identities_alone() -> None:
    """Three configurations over two days; each day's processes are new, the configuration is the same."""
    ids = []
    for day in ("d1", "d2"):
        for db in ("sales", "hr", "fin"):
            ids += [sender(db, f"{db}db01", day=day), lgwr(db, f"{db}db01")]
            ids.append(receiver(f"{db}dr", f"{db}dr01", (f"{db}db01", "NSS2"), n=len(ids), day=day))
    found = configurations(ids)
    assert [c.name for c in found] == ["fin", "hr", "sales"]
    sales = found[2]
    assert {d.name: d.role for d in sales.databases} == {"sales": "primary", "salesdr": "standby"}
    assert len(sales.files) == 6 and all("sales" in label for label in sales.files)
    links = decide(ids).links
    assert [(link.name, len(link.sender_files), len(link.receiver_files)) for link in links] == [
        ("fin NSS2 -> findr", 2, 2),
        ("hr NSS2 -> hrdr", 2, 2),
        ("sales NSS2 -> salesdr", 2, 2),
    ]


def test_an_ambiguous_receiver_keeps_every_candidate_in_its_configuration() -> None:
    ids = [sender("sales", "prim01"), sender("hr", "hrdb01"), receiver("dr", "stby01")]
    (one,) = configurations(ids)
    assert {d.name for d in one.databases} == {"sales", "hr", "dr"}
    assert one.name == "hr+sales"


def test_a_far_sync_chain_is_one_configuration_with_a_sync_and_an_async_link() -> None:
    ids = [
        sender("sales", "prim01"),
        sender("salesfs", "salesfs01", "TT02"),
        receiver("salesfs", "salesfs01", ("prim01", "NSS2")),
        receiver("salesdr", "stby01", ("salesfs01", "TT02"), n=2),
    ]
    (config,) = decide(ids).configurations
    assert {d.name: d.role for d in config.databases} == {
        "sales": "primary",
        "salesfs": "far sync",
        "salesdr": "standby",
    }
    assert [(link.name, link.transport) for link in config.links] == [
        ("sales NSS2 -> salesfs", Transport.SYNC),
        ("salesfs TT02 -> salesdr", Transport.ASYNC),
    ]


# --- the transport of a link ---


def test_every_sender_file_is_in_exactly_one_link_and_transports_follow_the_evidence() -> None:
    ids = [
        sender("sales", "prim01", "NSS2"),
        sender("sales", "prim01", "NSA3"),
        receiver("salesdr", "stby01", ("prim01", "NSS2")),
        receiver("salesar", "salesar01", ("prim01", "NSA3"), n=2),
    ]
    fast = {ids[2].label: WaitPlacement(inside=0, after_finish=120)}
    links = {link.name: link for link in decide(ids, placements=fast).links}
    assert sorted(f for link in links.values() for f in link.sender_files) == sorted(i.label for i in ids[:2])
    assert links["sales NSS2 -> salesdr"].transport is Transport.FASTSYNC
    assert "120 of 120 RFS I/O waits come after `Server finished`" in links["sales NSS2 -> salesdr"].transport_evidence
    assert links["sales NSA3 -> salesar"].transport is Transport.ASYNC


def test_a_file_without_a_database_takes_its_instances() -> None:
    """A trimmed sender trace in a flat upload: no path, no header, but `sales1` in its name."""
    bare = FileIdentity("upload.zip!sales1_nss2_77.trc", Duty.SENDER, None, "sales1", None, "NSS2")
    ids = [bare, lgwr("sales", "prim01"), sender("hr", "hrdb01"), receiver("salesdr", "stby01")]
    assert with_databases(ids)[0].db == "sales"
    assert "from another file of instance sales1" in with_databases(ids)[0].evidence
    assert assign(ids)[0].sender == ("sales", "NSS2"), "then the names decide"
    twins = [
        bare,
        lgwr("sales", "prim01"),
        FileIdentity("x/lgwr.trc", Duty.LOG_WRITER, "other", "sales1", "h9", "LGWR"),
    ]
    assert with_databases(twins)[0].db is None, "two databases have an instance sales1: none is taken"


def test_a_client_module_that_fits_no_sender_decides_nothing() -> None:
    """Its host runs two databases of the input, none with that process: the module says so, and
    the only sender left decides, not the module."""
    ids = [
        sender("sales", "prim01"),
        lgwr("sales", "prim09"),
        FileIdentity("prim09/diag/rdbms/hr/hr1/trace/hr1_lgwr_1.trc", Duty.LOG_WRITER, "hr", "hr1", "prim09", "LGWR"),
        receiver("salesdr", "stby01", ("prim09", "NSS2")),
    ]
    (a,) = assign(ids)
    assert (a.sender, a.decided_by) == (("sales", "NSS2"), Decider.ONLY_CANDIDATE)
    assert a.evidence[0].endswith("which fits no sender of the input")
