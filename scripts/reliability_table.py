"""Reliability table: hostile inputs beside a good simulated trace set, run through an installed dgtrace.

    python scripts/reliability_table.py [--dgtrace PATH] [--timeout 120] [--work DIR] [CASE ...]

Each case builds its hostile input, then runs `dgtrace analyze GOOD HOSTILE --format json` (or
the variant the case needs) in a subprocess with a private TMPDIR and prints one row: the exit
code ("timeout" when it had to be killed), wall seconds, the child's peak RSS, the good set's
matched writes kept (the good set alone gives 2,000) and the files left in the TMPDIR (lark's
parser cache `.lark_cache_*.tmp`, which versions before the private cache folder kept there, is not
counted, so that they can be compared).

Only the standard library is used, so that the script runs against any dgtrace (e.g. an older
one in another virtual environment: `--dgtrace /path/to/venv/bin/dgtrace`). The builders are
also used by tests/test_reliability.py, with smaller sizes and the same shapes.
"""

from __future__ import annotations

import argparse
import gzip
import importlib.util
import io
import json
import os
import random
import resource
import shutil
import signal
import struct
import subprocess
import sys
import tarfile
import tempfile
import time
import warnings
import zipfile
import zlib
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

MiB = 1024 * 1024
#: a zip local file header, and a central directory entry
_LOCAL = struct.Struct("<4sHHHHHIIIHH")
_CENTRAL = struct.Struct("<4sHHHHHHIIIHHHHHII")

# --- building hostile inputs ------------------------------------------------------------------


def raw_zip(entries: Sequence[tuple[str, int, int, int, bytes]]) -> bytes:
    """A zip from (name, method, crc32, size, data as stored): members stored or deflated by the
    caller, so that one compressed leaf can be used many times without compressing it again."""
    out, central = bytearray(), bytearray()
    for name, method, crc, size, data in entries:
        encoded = name.encode()
        offset = len(out)
        out += struct.pack(
            "<4sHHHHHIIIHH", b"PK\x03\x04", 20, 0, method, 0, 0x21, crc, len(data), size, len(encoded), 0
        )
        out += encoded + data
        central += struct.pack(
            "<4sHHHHHHIIIHHHHHII",
            b"PK\x01\x02",
            20,
            20,
            0,
            method,
            0,
            0x21,
            crc,
            len(data),
            size,
            len(encoded),
            0,
            0,
            0,
            0,
            0o100644 << 16,
            offset,
        )
        central += encoded
    end = struct.pack("<4sHHHHIIH", b"PK\x05\x06", 0, 0, len(entries), len(entries), len(central), len(out), 0)
    return bytes(out + central + end)


def deflated(chunks: Iterator[bytes]) -> tuple[int, int, bytes]:
    """(crc32, size, raw deflate data) of the concatenated chunks."""
    compressor = zlib.compressobj(9, zlib.DEFLATED, -zlib.MAX_WBITS)
    crc, size, parts = 0, 0, []
    for chunk in chunks:
        crc, size = zlib.crc32(chunk, crc), size + len(chunk)
        parts.append(compressor.compress(chunk))
    parts.append(compressor.flush())
    return crc, size, b"".join(parts)


def repeated(block: bytes, size: int) -> Iterator[bytes]:
    """`size` bytes made of `block` over and over, in pieces of about 1 MiB."""
    piece = block * max(1, MiB // len(block))
    left = size
    while left > 0:
        yield piece[:left]
        left -= len(piece)


def nesting_bomb(
    path: Path, *, levels: int = 4, width: int = 16, leaf_bytes: int = 256 * MiB, leaf: bytes = b"\x00"
) -> Path:
    """A 42.zip-shaped bomb: `levels` nested layers of `width` zips each, the last holding `width`
    leaves of `leaf_bytes` bytes (`leaf` repeated: zeros, or a line of text) named like RFS traces
    (width**levels leaves in all)."""
    crc, size, data = deflated(repeated(leaf, leaf_bytes))
    inner = raw_zip([(f"db_rfs_{i}.trc", 8, crc, size, data) for i in range(width)])
    for level in range(levels - 1):
        crc, size, data = deflated(iter([inner]))
        inner = raw_zip([(f"level{level}_{i}.zip", 8, crc, size, data) for i in range(width)])
    path.write_bytes(inner)
    return path


def text_bomb_member(size: int, ratio: float = 900.0) -> tuple[int, int, bytes]:
    """(crc, size, deflate data) of `size` bytes of mostly empty lines, compressed about
    `ratio`:1 (under the default --max-ratio of 1000, so no per-member limit stops it)."""
    rng = random.Random(7)
    block = bytearray(b"\n" * MiB)
    for _ in range(int(MiB / ratio / 1.6)):  # random letters break the runs just enough
        block[rng.randrange(MiB)] = rng.randrange(97, 123)
    return deflated(repeated(bytes(block), size))


def newline_members_zip(path: Path, *, members: int, size: int) -> Path:
    """A zip of `members` traces, each `size` bytes of mostly empty lines (ratio under 1000:1)."""
    crc, length, data = text_bomb_member(size)
    path.write_bytes(raw_zip([(f"db_rfs_{i}.trc", 8, crc, length, data) for i in range(members)]))
    return path


def overlapping_zip(path: Path, *, size: int = 1024 * MiB, entries: int = 64) -> Path:
    """An "overlapping" zip bomb (Fifield's quoted-overlap construction): every member's deflate
    stream starts with stored blocks that quote the local headers of the members after it, then
    goes on into one shared kernel of `size` bytes of mostly empty lines. Each member has its own
    name and header and a ratio under 1000:1; together they inflate to `entries` times the kernel.
    (CRCs are left at 0: a reader notices only at each member's end.)"""
    _, length, kernel = text_bomb_member(size)
    names = [f"k{i:04}.trc".encode() for i in range(entries)]
    header = _LOCAL.size + len(names[0])
    quote = struct.pack("<BHH", 0, header, header ^ 0xFFFF)  # a stored, not-last deflate block of one header
    body, directory = bytearray(), bytearray()
    for i, name in enumerate(names):
        later = entries - 1 - i
        compressed = later * (len(quote) + header) + len(kernel)
        produced = later * header + length
        offset = len(body)
        body += _LOCAL.pack(b"PK\x03\x04", 20, 0, 8, 0, 0x21, 0, compressed, produced, len(name), 0) + name
        if later:
            body += quote
        directory += _CENTRAL.pack(
            b"PK\x01\x02", 20, 20, 0, 8, 0, 0x21, 0, compressed, produced, len(name), 0, 0, 0, 0, 0o100644 << 16, offset
        )
        directory += name
    body += kernel
    end = struct.pack("<4sHHHHIIH", b"PK\x05\x06", 0, 0, entries, entries, len(directory), len(body), 0)
    path.write_bytes(bytes(body + directory + end))
    return path


def many_members_zip(path: Path, *, members: int, distinct: bool = False) -> Path:
    """A zip of `members` small traces: the same few lines each (many copies of one file, as a
    collection gathered twice holds), or each with a line of its own (`distinct`)."""
    stamp = b"*** 2024-10-22T16:18:49.%06d+00:00 (CDB$ROOT(1))\nline %d of a small trace\n"
    member = b"".join(stamp % (i, i) for i in range(5))
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for i in range(members):
            body = member + (b"member %d\n" % i if distinct else b"")
            archive.writestr(f"copies/n{i // 1000}/db_nss2_{i}.trc", body)
    return path


def traces(good: Path) -> list[Path]:
    """The trace files of a simulated set, in name order."""
    return sorted(good.rglob("*.trc"))


def copy_set(good: Path, target: Path, change: Callable[[Path, bytes], bytes] = lambda _, data: data) -> Path:
    """A copy of the good set's traces, each passed through `change(path, bytes)`."""
    for trace in traces(good):
        out = target / trace.relative_to(good)
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_bytes(change(trace, trace.read_bytes()))
    return target


def standby_only(change: Callable[[bytes], bytes]) -> Callable[[Path, bytes], bytes]:
    """`change` applied to the standby's RFS traces only."""
    return lambda path, data: change(data) if "_rfs_" in path.name else data


def nul_run(data: bytes) -> bytes:
    """64 KiB of NUL bytes in the middle of a file (a zero-filled block after a crash), after a newline."""
    middle = data.index(b"\n", len(data) // 2) + 1
    return data[:middle] + bytes(64 * 1024) + data[middle:]


def same_name_zip(good: Path, path: Path) -> Path:
    """The good set in a zip where the two RFS traces share one name (zip allows it)."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive, warnings.catch_warnings():
        warnings.filterwarnings("ignore", "Duplicate name", UserWarning)
        for trace in traces(good):
            name = "stby/trace/db_rfs.trc" if "_rfs_" in trace.name else str(trace.relative_to(good))
            archive.writestr(name, trace.read_bytes())
    path.write_bytes(buffer.getvalue())
    return path


def truncated(path: Path, fraction: float) -> Path:
    """Cut a file to `fraction` of its size (an upload that broke off)."""
    data = path.read_bytes()
    path.write_bytes(data[: int(len(data) * fraction)])
    return path


def set_zip(good: Path, path: Path) -> Path:
    """The good set as a zip, RFS traces last (so that a cut falls in them, as in a real upload)."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for trace in sorted(traces(good), key=lambda p: "_rfs_" in p.name):
            archive.write(trace, str(trace.relative_to(good)))
    return path


def set_tgz(good: Path, path: Path) -> Path:
    """The good set as a .tar.gz, RFS traces last."""
    with tarfile.open(path, "w:gz") as archive:
        for trace in sorted(traces(good), key=lambda p: "_rfs_" in p.name):
            archive.add(trace, str(trace.relative_to(good)))
    return path


def symlink_loops(root: Path) -> Path:
    """A folder whose links lead back into it, to its parent and to the file system root."""
    if (root / "a").exists():
        return root
    (root / "a" / "b").mkdir(parents=True)
    (root / "a" / "b" / "up").symlink_to("../..")
    (root / "a" / "self").symlink_to(".")
    (root / "a" / "root").symlink_to("/")
    (root / "a" / "b" / "x.trc").write_text("not much\n")
    return root


def binaries(folder: Path) -> Path:
    """Files named .trc that are not text traces: a word-processor document, a PDF, random bytes."""
    folder.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(folder / "report.trc", "w") as document:
        document.writestr("[Content_Types].xml", "<Types/>")
        document.writestr("word/document.xml", "<w:document/>")
    (folder / "scan.trc").write_bytes(b"%PDF-1.7\n" + random.Random(1).randbytes(200_000))
    (folder / "random.trc").write_bytes(random.Random(2).randbytes(1_000_000))
    return folder


def _zip_bytes(good: Path, under: str = "", method: int = zipfile.ZIP_DEFLATED) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", method) as archive:
        for trace in sorted(traces(good), key=lambda p: "_rfs_" in p.name):
            if str(trace.relative_to(good)).startswith(under):
                archive.write(trace, str(trace.relative_to(good)))
    return buffer.getvalue()


def tfa_stored(good: Path, path: Path, fraction: float) -> Path:
    """A TFA-like upload as the `zip` command makes it (per-node zips and the standby's tarball stored in
    the outer zip, not compressed again), cut at `fraction` of its size."""
    buffer, tarball = io.BytesIO(), io.BytesIO()
    with tarfile.open(fileobj=tarball, mode="w:gz") as archive:
        for trace in traces(good / "stby01"):
            archive.add(trace, str(trace.relative_to(good)))
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_STORED) as outer:
        outer.writestr("node_all/prim01.tfa.zip", _zip_bytes(good, "prim01"))
        outer.writestr("node_all/stby01.tfa.tar.gz", tarball.getvalue())
        outer.writestr("node_all/prim02.tfa.zip", _zip_bytes(good, "prim02"))
    data = buffer.getvalue()
    path.write_bytes(data[: int(len(data) * fraction)])
    return path


def wrong_size_zip(good: Path, path: Path) -> Path:
    """The set as a zip whose first RFS trace's central directory entry claims 5,000 bytes more than it
    holds (over its neighbour's local header)."""
    data = bytearray(_zip_bytes(good))
    entry = data.find(b"PK\x01\x02")
    while b"_rfs_" not in data[entry + 46 : entry + 46 + struct.unpack_from("<H", data, entry + 28)[0]]:
        entry = data.find(b"PK\x01\x02", entry + 4)
    struct.pack_into("<I", data, entry + 20, struct.unpack_from("<I", data, entry + 20)[0] + 5000)
    path.write_bytes(bytes(data))
    return path


def gz_garbage(good: Path, target: Path) -> Path:
    """The set with every RFS trace gzipped and followed by data that are not gzip."""
    return copy_set(good, target, lambda p, d: gzip.compress(d) + b"garbage\n" * 64 if "_rfs_" in p.name else d)


def tar_hard_links(good: Path, path: Path) -> Path:
    """The set as a tar whose RFS traces are kept under names not read (`.keep`) and hard-linked to their names."""
    with tarfile.open(path, "w") as archive:
        for trace in traces(good):
            name = str(trace.relative_to(good))
            if "_rfs_" not in name:
                archive.add(trace, name)
                continue
            archive.add(trace, f"saved/{trace.name}.keep")
            link = tarfile.TarInfo(name)
            link.type, link.linkname = tarfile.LNKTYPE, f"saved/{trace.name}.keep"
            archive.addfile(link)
    return path


def unix_compressed(good: Path, target: Path) -> Path:
    """The set with its RFS traces compressed by the `compress` command (`.trc.Z`)."""
    copy_set(good, target)
    subprocess.run(["compress", "-f", *(str(p) for p in traces(target) if "_rfs_" in p.name)], check=True)
    return target


def sends_twice(good: Path, target: Path) -> Path:
    """The set with every send block of the NSS traces (the whole exchange: send, stamps, ack) logged twice."""

    def twice(path: Path, data: bytes) -> bytes:
        if "_nss" not in path.name:
            return data
        lines, out, at = data.split(b"\n"), [], 0
        while at < len(lines):
            closing = lines[at + 3] if at + 3 < len(lines) else b""
            if lines[at].startswith(b"Client sending") and closing.startswith(b"... Client received"):
                out += lines[at : at + 4] * 2
                at += 4
            else:
                out.append(lines[at])
                at += 1
        return b"\n".join(out)

    return copy_set(good, target, twice)


def two_forms(good: Path, target: Path) -> Path:
    """The set with every NSS and RFS trace cut to a third beside a complete gzipped copy (`x.trc.gz`)."""
    copy_set(good, target)
    for trace in traces(target):
        if "_nss" in trace.name or "_rfs_" in trace.name:
            data = trace.read_bytes()
            trace.with_suffix(".trc.gz").write_bytes(gzip.compress(data))
            trace.write_bytes(data[: len(data) // 3])
    return target


def empty_and_foreign(folder: Path) -> Path:
    """An empty `.trc` and another program's trace named `.trc`."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "empty.trc").write_bytes(b"")
    (folder / "java_gc.trc").write_bytes(b"[GC (Allocation Failure) 1024K->512K(2048K), 0.0012 secs]\n" * 20)
    return folder


# --- running dgtrace --------------------------------------------------------------------------


@dataclass(frozen=True)
class Result:
    """One run: exit code (None: killed at the timeout), wall seconds, peak RSS of the child (MB),
    matched writes in its JSON (None: no JSON), files left in its TMPDIR, stderr."""

    code: int | None
    seconds: float
    peak_mb: float
    matched: int | None
    leftovers: list[str]
    stderr: str
    stdout: str = field(repr=False, default="")


#: what `import polars` puts before the allocator setting it finds in the environment (none: this alone),
#: and what it adds with POLARS_THP=1
POLARS_ALLOCATOR = "dirty_decay_ms:500,muzzy_decay_ms:1000"
POLARS_THP = ",thp:always,metadata_thp:always"


def command_environ(**extra: str) -> dict[str, str]:
    """This process's environment for a dgtrace command, with `extra`: without the allocator setting that
    importing polars here wrote into it. A child inheriting polars' setting would keep it, not take
    dgtrace's own (`analyzer/__main__.py` leaves a setting it finds), and keep freed memory longer than
    dgtrace run from a shell; a setting this process was given is passed on as it was given."""
    env = dict(os.environ)
    given = env.pop("_RJEM_MALLOC_CONF", None)
    for ours in (POLARS_ALLOCATOR + POLARS_THP, POLARS_ALLOCATOR):
        if given is not None and given.startswith(ours):
            given = given.removeprefix(ours).removeprefix(",") or None
            break
    if given is not None:
        env["_RJEM_MALLOC_CONF"] = given
    return env | extra


#: A launcher between the caller and the command: it forks the command from a small process and
#: writes the command's peak RSS (KiB) to the file named first. Linux carries a process's high-water
#: mark of resident memory through fork and exec into the child's `ru_maxrss`, so a command forked
#: from a large process (a test runner holding hundreds of MB) would report the parent's size. The
#: caller signals the command itself (its pid is written beside), so that the launcher lives on to
#: collect it (a SIGKILL of both would leave an orphaned zombie); the launcher exits as the command did.
LAUNCHER = """
import os, resource, signal, sys
for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
    signal.signal(sig, lambda *_: None)  # caught, not ignored: the command starts with its defaults
pid = os.fork()
if pid == 0:
    os.execvp(sys.argv[2], sys.argv[2:])
with open(sys.argv[1] + ".pid", "w") as out:
    out.write(str(pid))
while True:
    try:
        _, status, usage = os.wait4(pid, 0)
        break
    except InterruptedError:
        continue
with open(sys.argv[1], "w") as out:
    out.write(str(usage.ru_maxrss))
code = os.waitstatus_to_exitcode(status)
if code < 0:  # die of the same signal (SIGKILL has no handler to reset)
    if -code != signal.SIGKILL:
        signal.signal(-code, signal.SIG_DFL)
    os.kill(os.getpid(), -code)
sys.exit(code)
"""


def run(
    cmd: Sequence[str],
    *,
    tmpdir: Path,
    timeout: float,
    signal_when: Callable[[float], bool] | None = None,
    signum: int = signal.SIGTERM,
    file_size_limit: int | None = None,
) -> Result:
    """Run `cmd` with TMPDIR=tmpdir, killing it (and what it started) after `timeout` seconds.

    `signal_when(elapsed)` is asked while it runs; the first time it says yes, `signum` is sent.
    `file_size_limit` sets RLIMIT_FSIZE in the child (a write past it fails with EFBIG, as on a full disk).
    """
    tmpdir.mkdir(parents=True, exist_ok=True)
    before = set(_tree(tmpdir))
    env = command_environ(TMPDIR=str(tmpdir))

    def limit() -> None:
        if file_size_limit is not None:
            resource.setrlimit(resource.RLIMIT_FSIZE, (file_size_limit, file_size_limit))

    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err, tempfile.TemporaryDirectory() as box:
        start, rss_file = time.monotonic(), Path(box) / "peak-kib"
        launched = [sys.executable, "-S", "-c", LAUNCHER, str(rss_file), *cmd]
        proc = subprocess.Popen(launched, stdout=out, stderr=err, env=env, start_new_session=True, preexec_fn=limit)
        sent, code = False, None
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            elapsed = time.monotonic() - start
            if pid:
                code = os.waitstatus_to_exitcode(status)
                break
            if signal_when is not None and not sent and signal_when(elapsed):
                _signal_command(proc.pid, Path(f"{rss_file}.pid"), signum)
                sent = True
            if elapsed > timeout:
                os.killpg(proc.pid, signal.SIGKILL)
                _, status, usage = os.wait4(proc.pid, 0)
                break
            time.sleep(0.02)
        proc.returncode = code if code is not None else -9
        seconds = time.monotonic() - start
        peak_kib = int(rss_file.read_text()) if rss_file.exists() else usage.ru_maxrss
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read().decode(errors="replace"), err.read().decode(errors="replace")
    try:
        matched: int | None = int(json.loads(stdout)["summary"]["matched_writes"])
    except (ValueError, KeyError, TypeError):
        matched = None
    left = sorted(set(_tree(tmpdir)) - before)
    return Result(code, seconds, peak_kib / 1024, matched, left, stderr, stdout)


def _signal_command(launcher: int, pid_file: Path, signum: int) -> None:
    """Send `signum` to the command the launcher started (to its whole group until it is known)."""
    try:
        os.kill(int(pid_file.read_text()), signum)
    except (OSError, ValueError):
        os.killpg(launcher, signum)


def _tree(root: Path) -> Iterator[str]:
    """Every path under `root`, except lark's parser cache of older versions (`.lark_cache_*.tmp`)."""
    for directory, folders, files in os.walk(root):
        for name in folders + files:
            if not name.startswith(".lark_cache_"):
                yield os.path.relpath(os.path.join(directory, name), root)


def spill_pieces(tmpdir: Path) -> Callable[[float], bool]:
    """A signal condition: a spill file exists in `tmpdir` (the run is well under way)."""
    return lambda _: any(name.endswith((".arrow", ".arrows")) for name in _tree(tmpdir))


# --- the cases --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Case:
    """One row: what is given to `dgtrace analyze` (besides --format json), and how it is run."""

    name: str
    what: str
    #: (work folder, good set) -> the paths and options after `analyze`
    args: Callable[[Path, Path], list[str]]
    #: the good set is not given beside (the input is the good set, damaged)
    alone: bool = False
    #: send this signal once spill files exist, or after `signal_after` seconds
    signum: int | None = None
    signal_after: float | None = None
    #: a temporary folder that is full (a small tmpfs when mounting is allowed, else RLIMIT_FSIZE)
    full_tmp: bool = False
    #: a second plain run of the good set afterwards, in the same TMPDIR (does it sweep leftovers?)
    then_again: bool = False


def _fifo(work: Path, name: str) -> Path:
    path = work / name
    path.parent.mkdir(parents=True, exist_ok=True)
    if not path.exists():
        os.mkfifo(path)
    return path


def _case(work: Path, name: str) -> Path:
    path = work / name
    path.mkdir(parents=True, exist_ok=True)
    return path


CASES = [
    Case("dev-zero", "/dev/zero named", lambda w, g: ["/dev/zero"]),
    Case("dev-urandom", "/dev/urandom named", lambda w, g: ["/dev/urandom"]),
    Case(
        "dev-zero-limit",
        "/dev/zero with --max-total-bytes 256MiB (and --read-special where it exists)",
        lambda w, g: ["/dev/zero", "--max-total-bytes", "256MiB", *(["--read-special"] if _new(w) else [])],
    ),
    Case("fifo-in-folder", "a FIFO without writer in a folder", lambda w, g: [str(_fifo(w, "fifo-dir/p.trc").parent)]),
    Case("fifo-named", "a FIFO without writer named", lambda w, g: [str(_fifo(w, "fifo-named"))]),
    Case(
        "nesting-bomb",
        "42.zip shape: 4 levels x 16, 256 MiB leaves of zeros",
        lambda w, g: [str(nesting_bomb(w / "42.zip"))],
    ),
    Case(
        "members-2000-distinct",
        "zip of 2,000 small distinct trace members",
        lambda w, g: [str(many_members_zip(w / "d2000.zip", members=2_000, distinct=True))],
    ),
    Case(
        "members-8000-distinct",
        "zip of 8,000 small distinct trace members",
        lambda w, g: [str(many_members_zip(w / "d8000.zip", members=8_000, distinct=True))],
    ),
    Case(
        "members-20000-copies",
        "zip of 20,000 copies of one small trace",
        lambda w, g: [str(many_members_zip(w / "c20000.zip", members=20_000))],
    ),
    Case(
        "members-100000-copies",
        "zip of 100,000 copies of one small trace",
        lambda w, g: [str(many_members_zip(w / "c100000.zip", members=100_000))],
    ),
    Case(
        "glob-loops",
        "glob ** through symlink loops",
        lambda w, g: [str(symlink_loops(_case(w, "loops")) / "**" / "*.trc")],
    ),
    Case("glob-root", "glob /**/*.trc-nothing (the whole file system)", lambda w, g: ["/**/*.trc-dgtrace-nothing"]),
    Case("newlines-100MiB", "100 MiB of bare newlines in one file", lambda w, g: [str(_newlines(w))]),
    Case(
        "newline-member",
        "zip member of 128 MiB mostly newlines at 900:1",
        lambda w, g: [str(newline_members_zip(w / "nl1.zip", members=1, size=128 * MiB))],
    ),
    Case(
        "newline-members-2",
        "two such members",
        lambda w, g: [str(newline_members_zip(w / "nl2.zip", members=2, size=128 * MiB))],
    ),
    Case("full-tmp", "temporary folder full", lambda w, g: [], full_tmp=True),
    Case(
        "sigterm",
        "SIGTERM while spilling (500 MB set)",
        lambda w, g: [str(_big(w))],
        alone=True,
        signum=signal.SIGTERM,
    ),
    Case(
        "sigint",
        "SIGINT while spilling (500 MB set)",
        lambda w, g: [str(_big(w))],
        alone=True,
        signum=signal.SIGINT,
    ),
    Case(
        "sigkill+rerun",
        "SIGKILL while spilling, then a plain run in the same TMPDIR",
        lambda w, g: [str(_big(w))],
        alone=True,
        signum=signal.SIGKILL,
        then_again=True,
    ),
    Case(
        "cr-only",
        "RFS traces with classic Mac line ends (CR)",
        lambda w, g: [str(copy_set(g, w / "cr", standby_only(lambda d: d.replace(b"\n", b"\r"))))],
        alone=True,
    ),
    Case(
        "utf16",
        "RFS traces in UTF-16 with BOM",
        lambda w, g: [str(copy_set(g, w / "utf16", standby_only(lambda d: d.decode().encode("utf-16"))))],
        alone=True,
    ),
    Case(
        "nul-run",
        "64 KiB of NUL bytes in the middle of each RFS trace",
        lambda w, g: [str(copy_set(g, w / "nul", standby_only(nul_run)))],
        alone=True,
    ),
    Case(
        "overlapping-zip",
        "64 members over one shared 1 GiB kernel (3.3 MB file)",
        lambda w, g: [str(overlapping_zip(w / "overlap.zip"))],
    ),
    Case(
        "same-names",
        "zip of the set, both RFS traces under one name",
        lambda w, g: [str(same_name_zip(g, w / "same.zip"))],
        alone=True,
    ),
    Case(
        "truncated-zip",
        "zip of the set cut at 80%",
        lambda w, g: [str(truncated(set_zip(g, w / "cut.zip"), 0.8))],
        alone=True,
    ),
    Case(
        "truncated-tgz",
        "tar.gz of the set cut at 80%",
        lambda w, g: [str(truncated(set_tgz(g, w / "cut.tgz"), 0.8))],
        alone=True,
    ),
    Case("binary-trc", "a .docx, a PDF and random bytes named .trc", lambda w, g: [str(binaries(w / "bin"))]),
    Case(
        "tfa-stored-cut",
        "zip of stored per-node zips and the standby tarball, cut at 55%",
        lambda w, g: [str(tfa_stored(g, w / "tfa.zip", 0.55))],
        alone=True,
    ),
    Case(
        "wrong-entry-size",
        "zip of the set, one central entry 5,000 bytes too big",
        lambda w, g: [str(wrong_size_zip(g, w / "wrong.zip"))],
        alone=True,
    ),
    Case(
        "truncated-zip-60",
        "zip of the set cut at 60%",
        lambda w, g: [str(truncated(set_zip(g, w / "cut60.zip"), 0.6))],
        alone=True,
    ),
    Case(
        "truncated-tgz-95",
        "tar.gz of the set cut at 95%",
        lambda w, g: [str(truncated(set_tgz(g, w / "cut95.tgz"), 0.95))],
        alone=True,
    ),
    Case(
        "gz-trailing-garbage",
        "RFS traces gzipped, garbage after the gzip data",
        lambda w, g: [str(gz_garbage(g, w / "garbage"))],
        alone=True,
    ),
    Case(
        "tar-hard-links",
        "tar of the set, RFS traces hard links to members named .keep",
        lambda w, g: [str(tar_hard_links(g, w / "links.tar"))],
        alone=True,
    ),
    Case(
        "trc-Z",
        "RFS traces compressed by Unix compress (.trc.Z)",
        lambda w, g: [str(unix_compressed(g, w / "z"))],
        alone=True,
    ),
    Case(
        "sends-twice",
        "every NSS send block (send, stamps, ack) logged twice",
        lambda w, g: [str(sends_twice(g, w / "twice"))],
        alone=True,
    ),
    Case(
        "two-forms",
        "NSS and RFS traces cut to a third beside complete x.trc.gz",
        lambda w, g: [str(two_forms(g, w / "forms"))],
        alone=True,
    ),
    Case(
        "empty-foreign-trc",
        "an empty .trc and another program's .trc beside the set",
        lambda w, g: [str(empty_and_foreign(w / "odd"))],
    ),
    Case(
        "members-20000-distinct",
        "zip of 20,000 small distinct trace members",
        lambda w, g: [str(many_members_zip(w / "d20000.zip", members=20_000, distinct=True))],
    ),
    Case(
        "newline-member-limit",
        "zip member of 1 GiB mostly newlines, --max-seconds-per-input 20",
        lambda w, g: [
            str(newline_members_zip(w / "nl1g.zip", members=1, size=1024 * MiB)),
            "--max-seconds-per-input",
            "20",
        ],
    ),
]

#: set by main(): whether the dgtrace under test knows --read-special
_NEW_OPTIONS: list[bool] = [False]


def _new(_: Path) -> bool:
    return _NEW_OPTIONS[0]


def _newlines(work: Path) -> Path:
    path = work / "newlines.trc"
    if not path.exists():
        with path.open("wb") as out:
            for chunk in repeated(b"\n", 100 * MiB):
                out.write(chunk)
    return path


def _big(work: Path) -> Path:
    """A 500 MB simulated set, built once by this checkout's simulator where it can be imported (the
    same set whichever dgtrace is under test), else by the dgtrace under test."""
    path = work / "big"
    if not path.exists():
        here = importlib.util.find_spec("analyzer") is not None
        simulator = [sys.executable, "-m", "analyzer"] if here else [_DGTRACE[0]]
        subprocess.run([*simulator, "simulate", str(path), "--size", "500MB"], check=True, capture_output=True)
    return path


_DGTRACE = ["dgtrace"]


@contextmanager
def full_temporary_folder(work: Path) -> Iterator[tuple[Path, int | None]]:
    """A temporary folder with 16 KiB free: a 1 MiB tmpfs filled up (when mounting is allowed),
    else a plain folder and an RLIMIT_FSIZE of 16 KiB for the child. Yields (folder, limit)."""
    folder = work / "full-tmp"
    folder.mkdir(parents=True, exist_ok=True)
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(folder)], capture_output=True)
    if mounted.returncode != 0:
        yield folder, 16 * 1024
        return
    try:
        (folder / "filler").write_bytes(bytes(1024 * 1024 - 16 * 1024))
        yield folder, None
    finally:
        subprocess.run(["umount", str(folder)], check=False)


def run_case(case: Case, dgtrace: str, work: Path, good: Path, timeout: float) -> tuple[Result, Result | None]:
    """Build a case's input and run it; the second result is the rerun of `then_again`."""
    args = case.args(work, good)
    cmd = [dgtrace, "analyze", *([] if case.alone else [str(good)]), *args, "--format", "json"]
    tmpdir = work / "tmp" / case.name
    if case.full_tmp:
        with full_temporary_folder(work) as (folder, limit):
            return run(cmd, tmpdir=folder, timeout=timeout, file_size_limit=limit), None
    when = None
    if case.signum is not None:
        pieces = spill_pieces(tmpdir)
        when = (lambda elapsed: pieces(elapsed) or elapsed > 5.0) if case.signal_after is None else None
    first = run(cmd, tmpdir=tmpdir, timeout=timeout, signal_when=when, signum=case.signum or signal.SIGTERM)
    if not case.then_again:
        return first, None
    again = run([dgtrace, "analyze", str(good), "--format", "json"], tmpdir=tmpdir, timeout=timeout)
    return first, again


def _row(case: Case, result: Result, good_matched: int | None, again: Result | None) -> str:
    code = "timeout" if result.code is None else str(result.code)
    kept = "-" if result.matched is None else f"{result.matched:,}"
    if result.matched is not None and good_matched is not None:
        kept += f" / {good_matched:,}"
    left = str(len(result.leftovers))
    if again is not None:
        left += f" (after a rerun: {len(again.leftovers)})"
    message = " ".join(result.stderr.strip().splitlines()[-1:])[:90]
    return (
        f"| {case.name} | {case.what} | {code} | {result.seconds:.1f} | {result.peak_mb:,.0f} | {kept} | {left} |"
        f" {message} |"
    )


def main(argv: Sequence[str] | None = None) -> None:
    """Build the cases, run them, print the table (Markdown)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("cases", nargs="*", help="only these cases (default: all)")
    parser.add_argument("--dgtrace", default=shutil.which("dgtrace") or "dgtrace", help="the dgtrace to run")
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds before a run is killed")
    parser.add_argument("--work", type=Path, help="keep the inputs in this folder (default: a temporary one)")
    options = parser.parse_args(argv)
    dgtrace = str(Path(options.dgtrace).absolute()) if os.sep in options.dgtrace else options.dgtrace
    _DGTRACE[0] = dgtrace
    helptext = subprocess.run(
        [dgtrace, "analyze", "--help"], capture_output=True, text=True, env={**os.environ, "COLUMNS": "200"}
    )
    _NEW_OPTIONS[0] = "--read-special" in helptext.stdout
    chosen = [case for case in CASES if not options.cases or case.name in options.cases]
    with tempfile.TemporaryDirectory(prefix="reliability-") as scratch:
        work = options.work or Path(scratch)
        work.mkdir(parents=True, exist_ok=True)
        good = work / "good"
        if not good.exists():
            subprocess.run([dgtrace, "simulate", str(good), "--writes", "1000"], check=True, capture_output=True)
        alone = run([dgtrace, "analyze", str(good), "--format", "json"], tmpdir=work / "tmp" / "good", timeout=120)
        print(
            f"dgtrace: {dgtrace}; good set alone: exit {alone.code}, {alone.seconds:.1f} s, "
            f"{alone.peak_mb:.0f} MB, {alone.matched} matched writes"
        )
        print()
        print("| case | input beside the good set | exit | s | peak RSS MB | matched kept | left in TMPDIR | stderr |")
        print("|---|---|---|---|---|---|---|---|")
        for case in chosen:
            result, again = run_case(case, dgtrace, work, good, options.timeout)
            expected = None if case.signum is not None else alone.matched
            print(_row(case, result, expected, again), flush=True)


if __name__ == "__main__":
    main()
