"""The limits of one discovery: the run's budget (`Session`), each input's tree (`Tree`), the time spent (`timed`)."""

from __future__ import annotations

import gc
import os
import re
import tempfile
import time
from pathlib import Path

import pytest

from analyzer.base.errors import ExitCode, UsageError
from analyzer.inputs.limits import GiB, InputStopped, KiB, Limits, MiB, Session, Tree, size_text, timed
from analyzer.inputs.sources import discover
from tests.conftest import zip_bytes
from tests.uploads import read, write


def test_limits_must_be_positive() -> None:
    with pytest.raises(UsageError, match="max_depth must be positive"):
        Limits(max_depth=0)


@pytest.mark.parametrize("field", ["max_total_bytes", "max_ratio", "max_seconds_per_input", "spool_memory_bytes"])
def test_every_numeric_limit_refuses_zero_and_negative_values(field: str) -> None:
    for value in (0, -1):
        with pytest.raises(UsageError, match=rf"^limit {field} must be positive, got {value}$") as error:
            Limits(**{field: value})
        assert error.value.exit_code == ExitCode.USAGE


@pytest.mark.parametrize(
    ("count", "text"),
    [(512, "512 bytes"), (KiB, "1 KiB"), (1536 * KiB, "1.5 MiB"), (64 * GiB, "64 GiB"), (0, "0 bytes")],
)
def test_sizes_are_written_in_binary_units(count: int, text: str) -> None:
    assert size_text(count) == text


def test_the_run_s_byte_budget_and_member_count_are_shared_by_every_input() -> None:
    session = Session(Limits(max_total_bytes=100, max_members=2))
    session.spend(60, "a.trc")
    assert session.remaining() == 40
    with pytest.raises(InputStopped, match=r"^b.trc: decompressed bytes of the whole input over the limit \(100 bytes"):
        session.spend(41, "b.trc")
    assert session.remaining() == 0
    session.count_member("u.zip")
    session.count_member("u.zip")
    with pytest.raises(InputStopped, match=r"^u.zip: archive members of the whole input over the limit \(2, --max"):
        session.count_member("u.zip")


def test_a_tree_stops_at_its_ratio_and_then_refuses_everything_with_the_same_reason() -> None:
    session = Session(Limits(max_ratio=10, ratio_grace_bytes=100))
    tree = Tree(session, "up.zip", stored=50)
    assert tree.remaining_bytes() == 500  # 10 x its 50 bytes on disk
    tree.charge(400, "up.zip!a.trc")
    assert tree.remaining_bytes() == 100
    with pytest.raises(InputStopped) as first:
        tree.charge(101, "up.zip!b.trc")
    assert str(first.value) == (
        "up.zip!b.trc: 501 bytes decompressed from the 50 bytes of up.zip, over 10 times its size (--max-ratio):"
        " a decompression bomb, not read further"
    )
    with pytest.raises(InputStopped) as again:
        tree.check()
    assert again.value is first.value


def test_a_small_input_may_produce_the_grace_bytes_and_a_pipe_only_the_run_s_budget() -> None:
    session = Session(Limits(max_ratio=10, ratio_grace_bytes=1000, max_total_bytes=5000))
    assert Tree(session, "tiny.trc.gz", stored=3).remaining_bytes() == 1000
    assert Tree(session, "/dev/stdin", stored=None).remaining_bytes() == 5000


def test_time_is_charged_once_for_nested_operations_and_stops_the_input(monkeypatch: pytest.MonkeyPatch) -> None:
    session = Session(Limits(max_seconds_per_input=0.05))
    tree = Tree(session, "slow.tar.gz", stored=10)
    charged: list[str] = []
    spend = tree.spend_time
    monkeypatch.setattr(tree, "spend_time", lambda s, label, quiet=False: (charged.append(label), spend(s, label)))
    with timed(tree, "slow.tar.gz"), timed(tree, "slow.tar.gz!a.trc"):  # the inner one is not counted again
        time.sleep(0.01)
    assert charged == ["slow.tar.gz"] and tree.seconds >= 0.01
    stop = r"^slow.tar.gz!b.trc: time spent on slow.tar.gz over the limit \(0.05 s, --max-seconds-per-input\)"
    with pytest.raises(InputStopped, match=stop), timed(tree, "slow.tar.gz!b.trc"):
        time.sleep(0.05)
    assert tree.remaining_seconds() < 0 and tree.stopped is not None


def test_an_error_inside_a_timed_operation_is_not_hidden_by_the_time_limit() -> None:
    tree = Tree(Session(Limits(max_seconds_per_input=0.01)), "x.zip", stored=10)
    with pytest.raises(ValueError, match="the decoder's own error"), timed(tree, "x.zip"):
        time.sleep(0.02)
        raise ValueError("the decoder's own error")
    assert tree.seconds >= 0.02 and tree.stopped is None


def test_the_ratio_limit_holds_for_the_whole_tree_of_an_input(tmp_path: Path) -> None:
    """A zip of zips of members each under the ratio limit, but far over it all together (the
    shape of 42.zip): stopped for the whole input, whatever the ratio of each member."""
    leaf = b"a trace line\n" * (MiB // 13)
    inner = zip_bytes({f"l{i}.trc": leaf for i in range(16)})
    middle = zip_bytes({f"m{i}.zip": inner for i in range(16)})
    upload = write(tmp_path / "bomb.zip", zip_bytes({f"o{i}.zip": middle for i in range(16)}))
    good = write(tmp_path / "good.trc", b"good\n")
    sources, skipped = discover([str(upload), str(good)], limits=Limits(max_ratio=200))
    assert sources[-1].label == str(good)
    stop = [s for s in skipped if s.label == str(upload)]
    assert len(stop) == 1 and stop[0].partial and "over 200 times its size (--max-ratio)" in stop[0].reason


def test_a_nested_archive_larger_than_the_memory_spool_moves_to_an_anonymous_temp_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    spool_dir = tmp_path / "tmp"
    spool_dir.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(spool_dir))
    data = os.urandom(100_000).hex().encode()
    upload = write(tmp_path / "u.zip", zip_bytes({"n.zip": zip_bytes({"a.trc": data})}))
    sources, _ = discover([str(upload)], limits=Limits(spool_memory_bytes=1024))
    assert read(sources[0]) == data
    assert list(spool_dir.iterdir()) == []  # the spool file never has a name


def test_the_spool_is_created_once_and_closed_with_the_session() -> None:
    session = Session(Limits(spool_memory_bytes=16))
    spool = session.spool_file()
    assert session.spool_file() is spool
    spool.write(b"x" * 32)  # over its memory size: now an anonymous file
    assert not spool.closed
    del session
    gc.collect()
    assert spool.closed


def test_the_spool_is_closed_when_no_source_is_left(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    made: list[tempfile.SpooledTemporaryFile[bytes]] = []

    class Recorded(tempfile.SpooledTemporaryFile):  # type: ignore[type-arg]
        def __init__(self, max_size: int) -> None:
            super().__init__(max_size=max_size)
            made.append(self)

    monkeypatch.setattr(tempfile, "SpooledTemporaryFile", Recorded)
    upload = write(tmp_path / "u.zip", zip_bytes({"n.zip": zip_bytes({"a.trc": b"a\n"})}))
    sources, _ = discover([str(upload)])
    assert read(sources[0]) == b"a\n"
    assert len(made) == 1 and not made[0].closed
    del sources
    gc.collect()
    assert made[0].closed


def test_the_reasons_name_the_option_that_raises_each_limit() -> None:
    session = Session(Limits(max_total_bytes=1, max_members=1, max_seconds_per_input=1e-9))
    messages = []
    for action in (
        lambda: session.spend(2, "x"),
        lambda: (session.count_member("x"), session.count_member("x")),
        lambda: Tree(session, "x", 1).spend_time(1.0, "x"),
    ):
        with pytest.raises(InputStopped) as error:
            action()
        messages.append(str(error.value))
    assert [re.findall(r"--[a-z-]+", m) for m in messages] == [
        ["--max-total-bytes"],
        ["--max-members"],
        ["--max-seconds-per-input"],
    ]
