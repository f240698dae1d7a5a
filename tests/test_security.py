"""The threat model of docs/security.md, attacked as another local user would (`nobody`, via setpriv):
dgtrace runs as root on files and in folders that other users control."""

from __future__ import annotations

import json
import os
import pty
import re
import shutil
import stat
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from analyzer.simulate.options import SimOptions
from analyzer.simulate.runner import simulate
from tests.attackers import arena, dgtrace, need_nobody, run_as_nobody
from tests.conftest import PAPER, ROOT, invoke

UNSAFE = 8

#: as nobody: swap every temporary `.part` file dgtrace makes in FOLDER for a link to TARGET until STOP exists;
#: prints how many it saw and how many it swapped
SWAPPER = r"""
import os, sys, time
folder, target, stop = sys.argv[1:4]
seen, swapped, deadline = set(), 0, time.monotonic() + 120
print("ready", flush=True)
while not os.path.exists(stop) and time.monotonic() < deadline:
    for name in os.listdir(folder):
        if name.endswith(".part"):
            seen.add(name)
            try:
                os.unlink(os.path.join(folder, name))
                os.symlink(target, os.path.join(folder, name))
                swapped += 1
            except OSError:
                pass
print(len(seen), swapped)
"""


@pytest.fixture(scope="module")
def slow_set(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """6,000 writes: their HTML report takes a second or two to write, time for a race."""
    folder = tmp_path_factory.mktemp("race") / "set"
    simulate(folder, SimOptions(writes=3000, seed=2))
    return folder


@pytest.fixture
def place() -> Iterator[Path]:
    need_nobody()
    with arena() as folder:
        yield folder


def _secret(folder: Path) -> Path:
    """A root-only file the attacker wants changed."""
    secret = folder / "secret"
    secret.write_text("root only\n")
    secret.chmod(0o600)
    return secret


def _one_line(stderr: str, *words: str) -> None:
    assert stderr.count("\n") == 1 and stderr.startswith("dgtrace: error: refusing"), stderr
    assert all(w in stderr for w in words), stderr


# --- case 2: -o into a folder another user can write ---------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("folder_kind", ["owned by nobody", "mode 0777 without sticky bit"])
def test_a_report_into_a_folder_another_user_controls_is_refused(place: Path, slow_set: Path, folder_kind: str) -> None:
    """The attacker swaps each `.part` for a link to a root-only file and planted the target 04777 (the
    mode dgtrace used to copy onto the link's target): dgtrace refuses before it writes anything."""
    uid, gid = need_nobody()
    secret = _secret(place)
    shared = place / "shared"
    shared.mkdir()
    if folder_kind == "owned by nobody":
        os.chown(shared, uid, gid)
    else:
        shared.chmod(0o777)
    planted = shared / "report.html"
    planted.write_text("planted")
    os.chown(planted, uid, gid)
    planted.chmod(0o4777)
    stop = place / "stop"
    attacker = run_as_nobody(SWAPPER, str(shared), str(secret), str(stop))
    try:
        assert attacker.stdout is not None and attacker.stdout.readline() == "ready\n"
        done = dgtrace(["analyze", str(slow_set), "--format", "html", "-o", str(planted)])
    finally:
        stop.touch()
        out, _ = attacker.communicate(timeout=60)
    assert done.returncode == UNSAFE
    _one_line(done.stderr, str(shared))
    assert secret.read_text() == "root only\n" and stat.S_IMODE(secret.stat().st_mode) == 0o600
    assert planted.read_text() == "planted" and sorted(shared.iterdir()) == [planted]
    assert out.split() == ["0", "0"]  # nothing was ever there to swap


@pytest.mark.slow
def test_in_a_sticky_folder_the_attacker_races_and_loses(place: Path, slow_set: Path) -> None:
    """/tmp-like (1777): allowed. The attacker sees the `.part` file while the report renders, but the
    sticky bit keeps it from removing it, and dgtrace works on its descriptor: the report is written,
    the root-only file keeps its content and mode."""
    secret = _secret(place)
    shared = place / "tmp"
    shared.mkdir()
    shared.chmod(0o1777)
    target = shared / "report.html"
    stop = place / "stop"
    attacker = run_as_nobody(SWAPPER, str(shared), str(secret), str(stop))
    try:
        assert attacker.stdout is not None and attacker.stdout.readline() == "ready\n"
        done = dgtrace(["analyze", str(slow_set), "--format", "html", "-o", str(target)])
    finally:
        stop.touch()
        out, _ = attacker.communicate(timeout=60)
    assert done.returncode == 0, done.stderr
    seen, swapped = map(int, out.split())
    assert seen >= 1 and swapped == 0  # the race was run, and lost
    info = target.lstat()
    assert stat.S_ISREG(info.st_mode) and info.st_uid == 0 and target.read_text().startswith("<!DOCTYPE html>")
    assert stat.S_IMODE(info.st_mode) == 0o644  # the umask's (022), never a planted mode
    assert secret.read_text() == "root only\n" and stat.S_IMODE(secret.stat().st_mode) == 0o600
    assert sorted(shared.iterdir()) == [target]


# --- case 3: -o NAME planted as a link to a device or a FIFO ------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("planted", ["link to a FIFO", "link to a device", "FIFO"])
def test_a_planted_link_or_fifo_is_not_written_to(place: Path, planted: str) -> None:
    """In a sticky folder anyone can add names to (as /tmp), nobody plants the report's name: a link to its
    own FIFO (it would read the report), a link to a device, or a FIFO. dgtrace refuses, exit 8, and
    hands nothing over; a name nobody did not plant is written as usual."""
    uid, gid = need_nobody()
    shared = place / "tmp"
    shared.mkdir()
    shared.chmod(0o1777)
    mine = place / "nobody"
    mine.mkdir()
    os.chown(mine, uid, gid)
    fifo = mine / "fifo"
    name = shared / "report.txt"
    plant = {
        "link to a FIFO": f"import os; os.mkfifo({str(fifo)!r}, 0o666); os.symlink({str(fifo)!r}, {str(name)!r})",
        "link to a device": f"import os; os.symlink('/dev/full', {str(name)!r})",
        "FIFO": f"import os; os.mkfifo({str(name)!r}, 0o666)",
    }[planted]
    planter = run_as_nobody(plant)
    _, why = planter.communicate(timeout=60)
    assert planter.returncode == 0, why
    assert name.lstat().st_uid == uid
    start = time.monotonic()
    done = dgtrace(["analyze", str(PAPER), "--tz", "-07:00", "-o", str(name)], timeout_s=60)
    assert done.returncode == UNSAFE and time.monotonic() - start < 30  # refused, never blocked on the FIFO
    _one_line(done.stderr, str(name), "nobody")
    assert name.lstat().st_uid == uid  # left as it was
    if fifo.exists():
        reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
        try:
            assert os.read(reader, 100) == b""  # nothing was handed to the other user
        finally:
            os.close(reader)
    ok = dgtrace(["analyze", str(PAPER), "--tz", "-07:00", "-o", str(shared / "mine.txt")], timeout_s=60)
    assert ok.returncode == 0 and (shared / "mine.txt").read_text().startswith("dgtrace")


# --- case 4: batch --out DIR prepared by another user ------------------------------------------------------


def _victims(place: Path) -> tuple[Path, Path, Path]:
    """Root's files the attacker wants deleted or truncated: a folder with a file, a file, a file beside it."""
    folder = place / "victim"
    folder.mkdir()
    (folder / "precious.parquet").write_text("precious")
    single = place / "victim.txt"
    single.write_text("keep me")
    beside = place / "x" / "y"
    beside.parent.mkdir()
    beside.write_text("keep me too")
    return folder, single, beside


def _intact(folder: Path, single: Path, beside: Path) -> None:
    assert (folder / "precious.parquet").read_text() == "precious"
    assert single.read_text() == "keep me" and beside.read_text() == "keep me too"


PREPARE = r"""
import json, os, sys
ds, victim, single = sys.argv[1:4]
os.makedirs(os.path.join(ds, "_dgtrace", "units"))
os.symlink(victim, os.path.join(ds, "writes"))
os.symlink(victim, os.path.join(ds, "_dgtrace", "tmp"))
os.symlink(single, os.path.join(ds, "_dgtrace", "lock"))
record = {"key": "k", "fingerprint": "f", "outputs": [single, "../x/y"], "rows": {}, "inputs": [], "written_at": ""}
with open(os.path.join(ds, "_dgtrace", "units", "k.json"), "w") as out:
    json.dump(record, out)
"""


@pytest.mark.slow
def test_a_dataset_folder_another_user_prepared_is_refused(place: Path, one_day: Path) -> None:
    """nobody made DIR with `writes/` and `_dgtrace/tmp` linked to root's folder, `_dgtrace/lock` linked to a
    root file and a unit record naming a file outside: refused (exit 8, one line), nothing deleted or truncated."""
    uid, gid = need_nobody()
    victims = _victims(place)
    home = place / "nobody"
    home.mkdir()
    os.chown(home, uid, gid)
    dataset = home / "ds"
    planter = run_as_nobody(PREPARE, str(dataset), str(victims[0]), str(victims[1]))
    _, why = planter.communicate(timeout=60)
    assert planter.returncode == 0, why
    done = dgtrace(["batch", str(one_day), "--out", str(dataset), "--workers", "1"])
    assert done.returncode == UNSAFE and done.stdout == ""
    _one_line(done.stderr, str(dataset), "nobody")
    _intact(*victims)


@pytest.mark.slow
@pytest.mark.parametrize("planted", ["writes", "_dgtrace/tmp", "_dgtrace/lock"])
def test_a_link_inside_a_dataset_is_never_followed(place: Path, one_day: Path, planted: str) -> None:
    """The dataset is root's but holds a link another user made (when it still could): the sweep does not
    descend into a linked `writes/`, `tmp/` is not emptied through a link, the lock is not truncated."""
    uid, gid = need_nobody()
    victims = _victims(place)
    dataset = place / "ds"
    first = dgtrace(["batch", str(one_day), "--out", str(dataset), "--workers", "1"])
    assert first.returncode == 0, first.stderr
    link = dataset / planted
    if link.is_dir():
        shutil.rmtree(link)
    else:
        link.unlink()
    link.symlink_to(victims[1] if planted.endswith("lock") else victims[0])
    os.chown(link, uid, gid, follow_symlinks=False)
    done = dgtrace(["batch", str(one_day), "--out", str(dataset), "--workers", "1"])
    assert done.returncode == UNSAFE
    _one_line(done.stderr, str(link), "link")
    _intact(*victims)


@pytest.mark.slow
def test_paths_of_a_unit_record_are_confined_to_the_dataset(place: Path, one_day: Path) -> None:
    """A unit record naming `/abs/file` and `../x/y`: not one dgtrace wrote, so it is dropped and its files
    left alone; the run goes on and writes its rows."""
    victims = _victims(place)
    dataset = place / "ds"
    (dataset / "_dgtrace" / "units").mkdir(parents=True)
    outside = {"key": "k", "fingerprint": "f", "outputs": [str(victims[1]), "../x/y"], "rows": {}}
    record = outside | {"inputs": [], "written_at": ""}
    (dataset / "_dgtrace" / "units" / "k.json").write_text(json.dumps(record))
    done = dgtrace(["batch", str(one_day), "--out", str(dataset), "--workers", "1", "--format", "json"])
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert summary["writes"]["added"] == summary["writes"]["total"] > 0
    assert not (dataset / "_dgtrace" / "units" / "k.json").exists()
    _intact(*victims)


# --- case 1: the local Dask cluster ----------------------------------------------------------------------

#: as nobody: connect to each address as a Dask client or peer would, without the run's credentials (plain
#: TCP, TLS without a certificate, TLS with a certificate of its own), and try to run `os.getuid` there
DASK_ATTACK = r"""
import asyncio, os, sys
from distributed import Client, Security
from distributed.comm import connect

def ways():
    yield "tcp", {}
    yield "tls", {}
    yield "tls", {"ssl_context": Security.temporary().get_connection_args("client")["ssl_context"]}

async def talk(address):
    for scheme, args in ways():
        target = scheme + "://" + address.split("://", 1)[1]
        try:
            comm = await asyncio.wait_for(connect(target, timeout=3, **args), 5)
            await comm.write({"op": "identity", "reply": True})
            print("ANSWERED", target, str(await asyncio.wait_for(comm.read(), 3))[:80], flush=True)
        except Exception as err:
            print("refused", target, type(err).__name__, flush=True)

scheduler = sys.argv[1]
for scheme in ("tcp", "tls"):
    try:
        with Client(scheme + "://" + scheduler.split("://", 1)[1], timeout="3s") as client:
            print("RAN", client.submit(os.getuid).result(timeout=10), flush=True)
    except Exception as err:
        print("refused client", scheme, type(err).__name__, flush=True)
for address in sys.argv[1:]:
    asyncio.run(talk(address))
"""


@pytest.mark.slow
def test_the_local_dask_cluster_lets_no_other_user_in(one_day: Path, tmp_path: Path) -> None:
    """While `batch --engine dask` runs, nobody tries the scheduler, the workers and their nannies, on
    loopback, without the run's credentials: every attempt fails; the batch still writes all its rows."""
    distributed = pytest.importorskip("distributed")
    pytest.importorskip("cryptography")
    need_nobody()
    from analyzer.batch.engine import EngineName, EngineSpec
    from analyzer.batch.run import run_batch
    from tests.batch.helpers import check_against_truth, truth

    seen: list[str] = []

    def attack(label: str, done: int, total: int) -> None:
        if seen or not label.startswith("unit "):  # once, as the first unit is done (the cluster is up)
            return
        client = distributed.default_client()
        info = client.scheduler_info()
        addresses = [client.scheduler.address, *info["workers"], *(w["nanny"] for w in info["workers"].values())]
        attacker = run_as_nobody(DASK_ATTACK, *addresses, modules=["distributed", "cryptography"])
        out, why = attacker.communicate(timeout=300)
        assert attacker.returncode == 0, why
        seen.extend([*addresses, *out.splitlines()])

    summary = run_batch([str(one_day)], tmp_path / "ds", engine=EngineSpec(EngineName.DASK, workers=2), progress=attack)
    addresses, lines = seen[:5], seen[5:]
    assert len(lines) == 2 + 3 * len(addresses) and all(line.startswith("refused") for line in lines), lines
    assert all(a.startswith("tls://127.0.0.1:") for a in addresses), addresses  # loopback, TLS
    assert not summary.failed
    check_against_truth(tmp_path / "ds", truth(one_day))


# --- case 5: the parsers' tables ---------------------------------------------------------------------

#: as nobody: in SHARED (the cache folder's parent, which it can write) swap `dgtrace` for a folder of its own
#: holding, under every name dgtrace could read, a pickle that creates MARKER when loaded, until STOP exists
CACHE_SWAPPER = r"""
import json, os, pickle, sys, time
shared, marker, stop, *names = sys.argv[1:]
class Payload:
    def __reduce__(self):
        return (os.system, ("touch " + marker,))
evil = pickle.dumps(Payload())
swaps, n, deadline = 0, 0, time.monotonic() + 120
while not os.path.exists(stop) and time.monotonic() < deadline:
    n += 1
    mine = os.path.join(shared, f"evil-{n}")
    os.mkdir(mine, 0o755)
    for name in names:
        for suffix in ("", ".json"):
            with open(os.path.join(mine, name + suffix), "wb") as out:
                out.write(evil)
    try:
        os.rename(os.path.join(shared, "dgtrace"), os.path.join(shared, f"old-{n}"))
    except OSError:
        pass
    try:
        os.rename(mine, os.path.join(shared, "dgtrace"))
        swaps += 1
    except OSError:
        pass
print(swaps)
"""


@pytest.mark.slow
def test_the_parsers_tables_never_run_code_another_user_planted(place: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The cache folder's parent is nobody's: it keeps swapping the cache folder for one of pickles while
    dgtrace builds and loads its parsers, round after round. No pickle is ever loaded (the tables are JSON,
    and a folder that is not this user's private one is not read): the marker never appears, and every
    parser parses as one built from its grammar."""
    from analyzer.parse import grammar as g
    from analyzer.parse import tables

    uid, gid = need_nobody()
    shared = place / "cache"
    shared.mkdir()
    os.chown(shared, uid, gid)
    marker, stop = place / "pwned", place / "stop"
    monkeypatch.setenv("XDG_CACHE_HOME", str(shared))
    names = [tables._name(f.value, g.grammar_path(f).read_text(encoding="utf-8")) for f in g.Family]
    names += [n.removesuffix(".json") for n in names]  # the pickles' names of earlier versions too
    attacker = run_as_nobody(CACHE_SWAPPER, str(shared), str(marker), str(stop), *names)
    line = "Client sending SQLNET request data [kpurcs] oper='Write' flag=67111042 thrd=1 seq=1584 msgid=117450"
    try:
        for _ in range(12):
            g.parser.cache_clear()
            for family in g.Family:
                g.parser(family)
            assert g.parse_line(g.Family.TRANSPORT, line) == g.Message(
                g.MessageKind.CLIENT_SEND, "kpurcs", "Write", "67111042", 1, 1584, 117450
            )
    finally:
        g.parser.cache_clear()
        stop.touch()
        out, _ = attacker.communicate(timeout=60)
    assert int(out) >= 1  # the folder was swapped while dgtrace ran
    time.sleep(0.5)  # a payload's `touch` would have finished by now
    assert not marker.exists()


# --- case 6: control bytes from the traces; the redaction map ------------------------------------------------


@pytest.fixture
def escaping(tmp_path: Path) -> Path:
    """The paper's traces with an ANSI escape (red) and an OSC title sequence in every host and instance name."""
    copy = tmp_path / "set"
    shutil.copytree(PAPER, copy)
    for trace in copy.rglob("*.trc"):
        text = trace.read_text(encoding="utf-8")
        text = re.sub(r"(?m)^(Node name:\t.*)$", "\\1\x1b[31mX", text)
        text = re.sub(r"(?m)^(Instance name: .*)$", "\\1\x1b]0;owned\x07", text)
        trace.write_text(text, encoding="utf-8")
    return copy


def _on_a_terminal(args: list[str]) -> bytes:
    """What `dgtrace ARGS` writes to a terminal (a pseudo-terminal as its stdout)."""
    main, tty = pty.openpty()
    try:
        proc = subprocess.Popen(
            [sys.executable, "-m", "analyzer", "--quiet", *args], cwd=ROOT, stdout=tty, stderr=subprocess.PIPE
        )
        os.close(tty)
        chunks = []
        while True:
            try:
                chunk = os.read(main, 65536)
            except OSError:  # EIO: the other end is closed
                break
            if not chunk:
                break
            chunks.append(chunk)
        assert proc.wait(timeout=120) == 0, proc.stderr.read() if proc.stderr else ""
        if proc.stderr:
            proc.stderr.close()
        return b"".join(chunks)
    finally:
        os.close(main)


@pytest.mark.slow
@pytest.mark.parametrize("args", [["--format", "csv"], ["--format", "csv", "--table", "events"], []])
def test_no_control_sequence_from_a_trace_reaches_the_terminal(escaping: Path, args: list[str]) -> None:
    shown = _on_a_terminal(["analyze", str(escaping), "--tz", "-07:00", *args])
    assert b"prim01" in shown and b"\\x1b[31mX" in shown
    assert b"\x1b[31mX" not in shown and b"\x1b]0;owned" not in shown and b"\x07" not in shown
    if args:  # CSV has no colours of its own: no escape at all (the text report colours its own words)
        assert b"\x1b" not in shown


def test_markdown_and_files_keep_no_control_sequence_where_people_read_them(escaping: Path, tmp_path: Path) -> None:
    """Markdown (read in terminals and editors) shows them as `\\x1b`; CSV into a file keeps the data as it is."""
    markdown = invoke(["analyze", str(escaping), "--tz", "-07:00", "--format", "markdown"]).stdout
    assert "\x1b" not in markdown and "\x07" not in markdown and "prim01\\x1b" in markdown
    target = tmp_path / "w.csv"
    invoke(["analyze", str(escaping), "--tz", "-07:00", "--format", "csv", "-o", str(target)])
    assert "\x1b[31mX" in target.read_text(encoding="utf-8")


def test_the_redaction_map_is_private(tmp_path: Path) -> None:
    """Created 0600 whatever the umask, and made 0600 when it replaces a map others could read."""
    mapping = tmp_path / "map.json"
    for earlier in (None, 0o644):
        if earlier is not None:
            mapping.chmod(earlier)
        invoke(["analyze", str(PAPER), "--tz", "-07:00", "--redact", "--redact-map", str(mapping), "-o", os.devnull])
        assert stat.S_IMODE(mapping.stat().st_mode) == 0o600
        assert "prim01" in json.loads(mapping.read_text()).values() or "prim01" in mapping.read_text()
