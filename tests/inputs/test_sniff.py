"""What a stream's first bytes say: compression, archive, text encoding, or the binary format it is."""

from __future__ import annotations

import bz2
import codecs
import gzip
import io
import lzma
import tarfile
import zipfile
from pathlib import Path

import pytest
import zstandard

from analyzer.inputs import sniff
from analyzer.inputs.sniff import SNIFF_BYTES, archive_of, compression_of, encoding_of, not_text, zip_document
from tests.conftest import zip_bytes

TEXT = "Client sending SQLNET request data [kpurcs] oper='Write' flag=1 thrd=1 seq=2 msgid=3\n" * 4


def _tar(fmt: int) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=fmt) as archive:
        info = tarfile.TarInfo("a.trc")
        info.size = 2
        archive.addfile(info, io.BytesIO(b"a\n"))
    return buffer.getvalue()


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (codecs.BOM_UTF8 + TEXT.encode(), ("utf-8", 3)),
        (codecs.BOM_UTF16_LE + TEXT.encode("utf-16-le"), ("utf-16-le", 2)),
        (codecs.BOM_UTF16_BE + TEXT.encode("utf-16-be"), ("utf-16-be", 2)),
        (codecs.BOM_UTF32_LE + TEXT.encode("utf-32-le"), ("utf-32-le", 4)),  # not taken for UTF-16 LE
        (codecs.BOM_UTF32_BE + TEXT.encode("utf-32-be"), ("utf-32-be", 4)),
        (TEXT.encode("utf-16-le"), ("utf-16-le", 0)),  # by its zero bytes
        (TEXT.encode("utf-16-be"), ("utf-16-be", 0)),
        (TEXT.encode(), ("utf-8", 0)),
        ("café\n".encode("latin-1"), ("utf-8", 0)),  # read as UTF-8, bad bytes replaced later
        ("a\x00".encode("utf-16-le"), ("utf-8", 0)),  # too short to tell
    ],
)
def test_the_encoding_comes_from_the_byte_order_mark_or_the_zero_bytes(data: bytes, expected: tuple[str, int]) -> None:
    assert encoding_of(data) == expected


@pytest.mark.parametrize(
    ("data", "why"),
    [
        (b"%PDF-1.7\n", "not a text trace: a PDF document"),
        (b"\x7fELF\x02\x01\x01", "not a text trace: an ELF executable"),
        (b"\x89PNG\r\n\x1a\n....", "not a text trace: a PNG image"),
        (b"SQLite format 3\x00....", "not a text trace: an SQLite database"),
        (b"Rar!\x1a\x07\x01\x00", "not a text trace: a RAR archive (not supported)"),
        (b"\x00" * 5000, "not a text trace: only NUL bytes in the first 5,000 bytes"),
        # NULs aside: 25 of every 31 bytes are control bytes (TAB, LF, VT, FF, CR and ESC are text)
        (bytes(range(32)) * 10, "not a text trace: binary data (81% control bytes in the first 310)"),
    ],
)
def test_binary_data_is_named_or_measured(data: bytes, why: str) -> None:
    assert not_text(data) == why


@pytest.mark.parametrize(
    "data",
    [
        b"",
        TEXT.encode(),
        TEXT.encode("utf-16-le"),  # zero bytes, but UTF-16
        codecs.BOM_UTF8 + b"\x01\x02\x03" * 10,  # a byte-order mark says text
        b"line\x00\x00\x00 with a NUL run\n" * 20,  # NUL runs aside, no control bytes
        b"\x1b[1mbold\x1b[0m\ttab\x0cform feed\r\n" * 20,  # ESC TAB FF CR are text
    ],
)
def test_text_is_not_refused(data: bytes) -> None:
    assert not_text(data) is None


def test_only_the_first_sniff_bytes_are_looked_at() -> None:
    assert not_text(TEXT.encode() * (SNIFF_BYTES // len(TEXT)) + bytes(range(32)) * 1000) is None


@pytest.mark.parametrize(
    ("data", "suffix"),
    [
        (gzip.compress(b"x", mtime=0), ".gz"),  # a fixed mtime: the same test id in every process
        (bz2.compress(b"x"), ".bz2"),
        (lzma.compress(b"x"), ".xz"),
        (zstandard.ZstdCompressor().compress(b"x"), ".zst"),
        (b"BZh is how this line starts\n", None),  # BZh and a block size digit, or text
        (TEXT.encode(), None),
        (b"", None),
    ],
)
def test_compressions_by_their_magic_bytes(data: bytes, suffix: str | None) -> None:
    assert compression_of(data) == suffix


def test_archives_by_their_first_bytes() -> None:
    assert archive_of(zip_bytes({"a.trc": b"a\n"})) == "zip"
    assert archive_of(zip_bytes({})) == "zip"  # an empty zip is its end record alone
    assert archive_of(_tar(tarfile.USTAR_FORMAT)) == "tar"
    assert archive_of(_tar(tarfile.GNU_FORMAT)) == "tar"
    old = bytearray(_tar(tarfile.USTAR_FORMAT))
    old[257:265] = bytes(8)  # a pre-POSIX header: no magic, told by its checksum
    old[148:156] = b" " * 8
    old[148:156] = b"%06o\x00 " % sum(old[:512])
    assert archive_of(bytes(old)) == "tar"
    old[0:1] = b"b"  # the checksum no longer matches
    assert archive_of(bytes(old)) is None
    assert archive_of(TEXT.encode() * 10) is None
    assert archive_of(_tar(tarfile.USTAR_FORMAT)[:511]) is None  # shorter than a header


def test_zip_based_documents_are_told_from_zips_of_traces() -> None:
    docx = zip_bytes({"[Content_Types].xml": b"<Types/>", "word/document.xml": b"<w/>"})
    odt = zip_bytes({"mimetype": b"application/vnd.oasis.opendocument.text"}, zipfile.ZIP_STORED)
    jar = zip_bytes({"META-INF/MANIFEST.MF": b"Manifest-Version: 1.0\n"})
    assert zip_document(docx) and zip_document(odt) and zip_document(jar)
    assert not zip_document(zip_bytes({"trace/[Content_Types].xml": b"", "a.trc": b"a\n"}))
    assert not zip_document(TEXT.encode())


FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"


@pytest.mark.parametrize(
    ("name", "flag", "what"),
    [
        ("awr/awr-12.2-primary-load.txt", "--awr", "an AWR report"),
        ("awr/awr-19c-async-primary.html", "--awr", "an AWR report"),
        ("awr/statspack-11.2-standby.txt", "--awr", "a Statspack report"),
        ("oratcptest/sync-latency-test.txt", "--baseline", "oratcptest output"),
        ("oratcptest/server-only.txt", "--baseline", "oratcptest output"),
    ],
)
def test_a_companion_given_as_a_trace_is_named_with_its_flag(name: str, flag: str, what: str) -> None:
    reason = sniff.companion_of((FIXTURES / name).read_bytes()[:65536])
    assert reason == f"not a trace: {what}; give it with {flag} (dgtrace analyze TRACES {flag} FILE)"


def test_a_trace_is_no_companion() -> None:
    for trace in (FIXTURES.parent.parent / "samples" / "paper-2014").rglob("*.trc"):
        assert sniff.companion_of(trace.read_bytes()[:65536]) is None, trace
