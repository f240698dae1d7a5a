"""The text of each remote write in the sender and RFS traces, and the readings truth.csv is computed from."""

from __future__ import annotations

from analyzer.simulate.formats import GENERATIONS, HostClock
from analyzer.simulate.model import EV_RANDOM, EV_WRITE, Write
from analyzer.simulate.records import NssText, RfsText

GEN = GENERATIONS["19c"]
T = 1_729_613_929_000_000  # 2024-10-22 16:18:49 UTC
#: sent at T, received 600 µs later, two waits, finished, acknowledged
SYNC = Write(
    10, 500, 64, False, 0, T, T + 600, T + 1500, T + 2100, ((EV_RANDOM, 200, T + 900), (EV_WRITE, 400, T + 1400)), 0, 0
)
#: a Fast Sync write, first of a new log: its standby redo log write ends after the finish
FASTSYNC = Write(10, 501, 64, True, 0, T + 3000, T + 3600, T + 3700, T + 4000, ((EV_WRITE, 400, T + 4300),), 0, 0)


def test_a_sender_prints_the_send_with_the_stamp_after_it_and_the_ack_with_the_stamp_before() -> None:
    out: list[str] = []
    sender = NssText(GEN, HostClock(0, 0, GEN), 1, out, T - 5_000_000)
    assert sender.record(SYNC) == (T, T + 2100)
    assert "".join(out).splitlines()[1:] == [
        "*** 2024-10-22T16:18:49.000009+00:00 (CDB$ROOT(1))",
        "Client sending SQLNET request data [kpurcs] oper='Write' flag=67111042 thrd=1 seq=10 msgid=500",
        "*** 2024-10-22 16:18:49.000000 [krsu.c:10652]",
        "*** 2024-10-22 16:18:49.002100 [krsu.c:10873]",
        "... Client received SQLNET call [kpurcs] response oper='Write' flag=67111042 thrd=1 seq=10 msgid=500",
    ]


def test_an_rfs_prints_its_waits_between_received_and_finished_on_its_own_clock() -> None:
    out: list[str] = []
    rfs = RfsText(GEN, HostClock(3000, 60, GEN), 1, out, T - 5_000_000, 10**9)  # 3 ms ahead, at +01:00
    assert rfs.record(SYNC) == (T + 3600, T + 4500, 600, 0)  # I/O waits: 200 + 400 µs
    lines = "".join(out).splitlines()
    received = lines.index(
        "... Server received SQLNET data [krsr_rfs_dsp] oper='Write' flag=67111042 thrd=1 seq=10 msgid=500"
    )
    assert lines[received + 1] == "*** 2024-10-22 17:18:49.003600 [krsr.c:1196]"
    assert lines[received + 2 : received + 4] == [
        f"WAIT #0: nam='RFS random i/o' ela= 200 p1=0 p2=0 p3=2147483647 obj#=-1 tim={T + 900 + 10**9}",
        f"WAIT #0: nam='RFS write' ela= 400 p1=0 p2=0 p3=0 obj#=-1 tim={T + 1400 + 10**9}",
    ]
    assert lines[received + 4].startswith("... Server finished processing SQLNET data")


def test_fast_sync_waits_come_after_the_finish_and_count_as_late_io() -> None:
    out: list[str] = []
    rfs = RfsText(GEN, HostClock(0, 0, GEN), 1, out, T - 5_000_000, 0)
    rfs.record(SYNC)
    out.clear()
    assert rfs.record(FASTSYNC) == (T + 3600, T + 3700, 0, 400)
    lines = "".join(out).splitlines()
    assert lines[1] == "krsr_srl_pick: Standby log LNO:13 chosen for T-1.S-10"  # the new log's standby log
    assert lines[-1] == f"WAIT #0: nam='RFS write' ela= 400 p1=0 p2=0 p3=0 obj#=-1 tim={T + 4300}"
    assert lines[-3].startswith("... Server finished processing SQLNET data") and rfs.last_end == T + 4300
