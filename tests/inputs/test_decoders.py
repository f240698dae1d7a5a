"""gzip and `.Z` decoded to the last byte that decodes, the damage raised after it."""

from __future__ import annotations

import gzip
import io
import shutil
import subprocess
import zlib
from pathlib import Path

import pytest

from analyzer.base.errors import CorruptInput
from analyzer.inputs import decoders
from analyzer.inputs.decoders import GzipReader, LzwReader

TEXT = b"".join(b"Server received SQLNET data [krsr_rfs_dowrite] oper='Write' msgid=%d\n" % i for i in range(60_000))


def _drain(reader: GzipReader | LzwReader, size: int = 10_000) -> tuple[bytes, CorruptInput | None]:
    """Everything a reader gives in reads of `size`, and the error that ended it."""
    parts = []
    try:
        while data := reader.read(size):
            parts.append(data)
    except CorruptInput as exc:
        return b"".join(parts), exc
    return b"".join(parts), None


def _oracle(data: bytes) -> bytes:
    """What zlib decodes of gzip data fed one byte at a time, up to an error."""
    inflater, parts = zlib.decompressobj(31), []
    for at in range(len(data)):
        try:
            parts.append(inflater.decompress(data[at : at + 1]))
        except zlib.error:
            break
    return b"".join(parts)


@pytest.mark.parametrize("fast", [True, False], ids=["isal", "zlib"])
def test_a_truncated_gzip_gives_every_byte_before_the_cut(fast: bool) -> None:
    packed = gzip.compress(TEXT)
    cut = packed[: len(packed) * 2 // 3]
    got, error = _drain(GzipReader(io.BytesIO(cut), "x.trc.gz", fast=fast))
    assert error is not None and "end-of-stream marker" in str(error)
    expected = _oracle(cut)
    assert len(expected) > len(TEXT) // 2
    assert got == expected or (fast and expected.startswith(got) and len(expected) - len(got) <= 1)


@pytest.mark.parametrize("fast", [True, False], ids=["isal", "zlib"])
def test_members_and_padding_are_read_and_trailing_garbage_is_named_after_the_content(fast: bool) -> None:
    half = len(TEXT) // 2
    two = gzip.compress(TEXT[:half]) + b"\x00" * 1024 + gzip.compress(TEXT[half:])
    assert _drain(GzipReader(io.BytesIO(two), "x", fast=fast)) == (TEXT, None)
    got, error = _drain(GzipReader(io.BytesIO(two + b"trailing garbage\n" * 50), "x", fast=fast))
    assert got == TEXT
    assert error is not None and str(error) == (
        "x: data that are not gzip follow the end of the compressed data: ignored (as gzip -d does)"
    )


def test_corrupt_gzip_data_give_what_decoded_before_the_damage() -> None:
    packed = bytearray(gzip.compress(TEXT))
    packed[len(packed) // 2 : len(packed) // 2 + 8] = b"\xff" * 8
    got, error = _drain(GzipReader(io.BytesIO(bytes(packed)), "x", fast=False))
    assert error is not None and "corrupt, truncated or unreadable data" in str(error)
    assert got == _oracle(bytes(packed)) and len(got) > len(TEXT) // 3


def test_the_stdlib_inflater_is_used_without_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(decoders, "isal_zlib", None)
    assert _drain(GzipReader(io.BytesIO(gzip.compress(TEXT)), "x"))[0] == TEXT


def _compressed(tmp_path: Path, data: bytes) -> bytes:
    """`data` compressed by the `compress` command where it is installed, else by ncompress."""
    if shutil.which("compress") is None:
        return bytes(decoders.ncompress.compress(data))
    path = tmp_path / "x.trc"
    path.write_bytes(data)
    subprocess.run(["compress", "-f", str(path)], check=True)
    return (tmp_path / "x.trc.Z").read_bytes()


def test_unix_compress_data_are_decoded_whole_or_to_their_cut(tmp_path: Path) -> None:
    packed = _compressed(tmp_path, TEXT)
    assert packed.startswith(b"\x1f\x9d")
    assert _drain(LzwReader(io.BytesIO(packed), "x.trc.Z")) == (TEXT, None)
    got, error = _drain(LzwReader(io.BytesIO(packed[: len(packed) // 2]), "x.trc.Z"))
    assert error is None and TEXT.startswith(got) and len(got) > len(TEXT) // 3  # LZW has no end marker


def test_an_lzw_reader_closed_early_stops_its_thread(tmp_path: Path) -> None:
    reader = LzwReader(io.BytesIO(_compressed(tmp_path, TEXT * 4)), "x.trc.Z")
    assert reader.read(100) == TEXT[:100]
    reader.close()
    assert not reader._thread.is_alive()


def test_without_the_lzw_extra_a_z_file_is_named_unreadable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from analyzer.inputs.sources import discover
    from tests.uploads import read

    path = tmp_path / "x.trc.Z"
    path.write_bytes(_compressed(tmp_path, TEXT))
    monkeypatch.setattr(decoders, "ncompress", None)
    (source,), skipped = discover([str(tmp_path)])
    assert not skipped
    with pytest.raises(CorruptInput, match=r"Unix compress \(\.Z\): not read \(install the `lzw` extra"):
        read(source)
