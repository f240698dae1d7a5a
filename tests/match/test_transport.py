"""A link's transport: destination attributes, the sender's name, and where the RFS writes its I/O waits."""

from __future__ import annotations

from analyzer.base.vocab import Transport
from analyzer.match.transport import Destination, dest_fits, transport_of
from analyzer.reduce.placement import WaitPlacement


def test_the_sender_name_tells_async_from_sync() -> None:
    for name in ("NSA3", "TT02", "TT00"):
        assert transport_of(name, None, WaitPlacement())[0] is Transport.ASYNC, name
    for name in ("NSS2", "LNS1", "LGWR"):
        assert transport_of(name, None, WaitPlacement(inside=5))[0] is Transport.SYNC, name


def test_io_waits_after_server_finished_are_fast_sync() -> None:
    transport, why = transport_of("NSS2", None, WaitPlacement(inside=1, after_finish=99))
    assert transport is Transport.FASTSYNC
    assert why.startswith("sender NSS2 ships SYNC; 99 of 100 RFS I/O waits come after `Server finished`")
    assert transport_of("NSS2", None, WaitPlacement(inside=20, after_finish=80))[0] is Transport.SYNC


def test_without_rfs_waits_affirm_cannot_be_told() -> None:
    transport, why = transport_of("NSS2", None, WaitPlacement())
    assert transport is Transport.SYNC and "no RFS I/O wait to tell AFFIRM from NOAFFIRM" in why


def test_a_destination_outranks_the_name() -> None:
    dest = Destination("sales", "salesdr", 2, Transport.FASTSYNC, "alert_sales1.log:40")
    transport, why = transport_of("NSS2", dest, WaitPlacement(inside=10))
    assert transport is Transport.FASTSYNC and why == "LOG_ARCHIVE_DEST_2 of sales (alert_sales1.log:40): FASTSYNC"


def test_numbered_senders_serve_their_destination_only() -> None:
    dest = Destination("sales", "salesbc", 3)
    assert dest_fits(dest, "NSS3") and dest_fits(dest, "NSA3") and dest_fits(dest, "TT02")
    assert not dest_fits(dest, "NSS2") and not dest_fits(dest, "LNS2")
    assert dest_fits(Destination("sales", "salesbc"), "NSS2"), "a destination of unknown number fits any"
