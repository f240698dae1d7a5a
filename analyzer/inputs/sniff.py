"""What a stream's first bytes say: its compression or archive format, its text encoding, or
the binary format it is not a trace in.

Shared by the inputs (a file is classified before it is read) and the read stage (which decodes
what they hand it).
"""

from __future__ import annotations

import codecs
import re

#: text looked at to choose the line ends, and (when an input is classified) to tell text from binary data
SNIFF_BYTES = 64 * 1024
#: raw bytes looked at to choose the encoding (byte-order mark, zero bytes of UTF-16)
ENCODING_SAMPLE = 4096

_BOMS = (  # longest first: the UTF-32 LE mark starts with the UTF-16 LE one
    (codecs.BOM_UTF32_LE, "utf-32-le"),
    (codecs.BOM_UTF32_BE, "utf-32-be"),
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)
#: control bytes that text does not contain (NUL is counted apart; TAB LF VT FF CR ESC are text)
_CONTROL = bytes([*range(1, 9), *range(14, 27), *range(28, 32), 127])
#: first bytes of binary formats, and what to call them
_BINARY_MAGIC = (
    (b"%PDF-", "a PDF document"),
    (b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1", "an old Office document (OLE2)"),
    (b"\x7fELF", "an ELF executable"),
    (b"\x89PNG\r\n\x1a\n", "a PNG image"),
    (b"\xff\xd8\xff", "a JPEG image"),
    (b"GIF8", "a GIF image"),
    (b"SQLite format 3\x00", "an SQLite database"),
    (b"\xca\xfe\xba\xbe", "a Java class or Mach-O file"),
    (b"7z\xbc\xaf\x27\x1c", "a 7-Zip archive (not supported)"),
    (b"Rar!\x1a\x07", "a RAR archive (not supported)"),
)


def encoding_of(head: bytes) -> tuple[str, int]:
    """(encoding, length of its byte-order mark) for the first bytes of a stream.

    Without a byte-order mark, UTF-16 is recognised by its zero bytes (ASCII text in UTF-16 has
    one at every other position); anything else is read as UTF-8.
    """
    for bom, name in _BOMS:
        if head.startswith(bom):
            return name, len(bom)
    sample = head[: ENCODING_SAMPLE & ~1]
    if len(sample) >= 16:
        even, odd = sample[0::2], sample[1::2]
        zero_even, zero_odd = even.count(0) / len(even), odd.count(0) / len(odd)
        if zero_odd >= 0.9 and zero_even <= 0.1:
            return "utf-16-le", 0
        if zero_even >= 0.9 and zero_odd <= 0.1:
            return "utf-16-be", 0
    return "utf-8", 0


def not_text(head: bytes) -> str | None:
    """Why the first bytes of a stream are not a text trace, or None when they may be one.

    Empty data, any byte-order mark and BOM-less UTF-16 count as text. Known binary formats are
    named; otherwise data with more than 5% control bytes (NUL runs aside), or nothing but NUL
    bytes, is binary.
    """
    if not head or encoding_of(head) != ("utf-8", 0):
        return None
    for magic, what in _BINARY_MAGIC:
        if head.startswith(magic):
            return f"not a text trace: {what}"
    sample = head[:SNIFF_BYTES].replace(b"\x00", b"")
    if not sample:
        return f"not a text trace: only NUL bytes in the first {len(head[:SNIFF_BYTES]):,} bytes"
    control = len(sample) - len(sample.translate(None, _CONTROL))
    if control > 0.05 * len(sample):
        return f"not a text trace: binary data ({control / len(sample):.0%} control bytes in the first {len(sample):,})"
    return None


#: the first lines of the companion files dgtrace reads with their own flag, and that flag
_COMPANIONS = (
    (
        re.compile(rb"WORKLOAD REPOSITORY (?:PDB )?report for|<title>AWR Report for", re.IGNORECASE),
        "an AWR report",
        "--awr",
    ),
    (re.compile(rb"STATSPACK report for", re.IGNORECASE), "a Statspack report", "--awr"),
    (
        re.compile(rb"\[Requesting a test\]|OraTcpTest server started|oratcptest\.jar"),
        "oratcptest output",
        "--baseline",
    ),
)
#: how far into a file its companion heading is looked for (the reports open with it)
COMPANION_BYTES = 4096


def companion_of(head: bytes) -> str | None:
    """Why a file given as a trace is not one but a companion dgtrace reads with its own flag (an AWR or
    Statspack report: --awr; oratcptest output: --baseline), or None."""
    start = head[:COMPANION_BYTES]
    for shape, what, flag in _COMPANIONS:
        if shape.search(start):
            return f"not a trace: {what}; give it with {flag} (dgtrace analyze TRACES {flag} FILE)"
    return None


# --- compressions and archives ------------------------------------------------------------------

#: single-stream compressions: first bytes -> the suffix that names them
_COMPRESSION_MAGIC = (
    (b"\x1f\x8b", ".gz"),
    (b"BZh", ".bz2"),
    (b"\xfd7zXZ\x00", ".xz"),
    (b"\x28\xb5\x2f\xfd", ".zst"),
    (b"\x1f\x9d", ".Z"),  # Unix compress (LZW)
)
#: the signature of a zip local file header (each member's data follow one)
ZIP_LOCAL = b"PK\x03\x04"
_ZIP_END = b"PK\x05\x06"
#: first member names of zip-based documents (OOXML, OpenDocument / EPUB, Java archives)
_ZIP_DOCUMENTS = (b"[Content_Types].xml", b"mimetype", b"META-INF/")


def compression_of(head: bytes) -> str | None:
    """The compression suffix (`.gz .bz2 .xz .zst .Z`) the first bytes announce, else None."""
    for magic, suffix in _COMPRESSION_MAGIC:
        if head.startswith(magic) and (suffix != ".bz2" or head[3:4].isdigit()):
            return suffix
    return None


def archive_of(head: bytes) -> str | None:
    """ "zip" or "tar" when the first bytes are a zip local header (or an empty zip) or a valid
    tar header (ustar magic or a correct header checksum), else None."""
    if head.startswith((ZIP_LOCAL, _ZIP_END, b"PK\x07\x08PK\x03\x04")):
        return "zip"
    if len(head) >= 512 and (head[257:262] == b"ustar" or _tar_checksum_ok(head[:512])):
        return "tar"
    return None


def zip_document(head: bytes) -> bool:
    """The first bytes are a zip-based document or Java archive (its first member names it)."""
    return head.startswith(ZIP_LOCAL) and head[30:].startswith(_ZIP_DOCUMENTS)


def _tar_checksum_ok(block: bytes) -> bool:
    try:
        stored = int(block[148:156].replace(b"\x00", b" ").strip() or b"-1", 8)
    except ValueError:
        return False
    computed = sum(block[:148]) + 8 * 32 + sum(block[156:512])
    return stored == computed and block[0] != 0
