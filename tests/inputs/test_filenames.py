"""The one file-name filter of folder walks and archive listings: read, listed, probed, or skipped and why."""

from __future__ import annotations

import pytest

from analyzer.inputs.filenames import NOT_TRACE, archive_by_name, rule, trace_name, wanted

MAP = "trace map (.trm) file: ADR metadata, nothing to parse"


@pytest.mark.parametrize(
    ("name", "mode"),
    [
        ("cdb1_nss2_4401.trc", "trace"),
        ("trace/CDB1_RFS_8801.TRC", "trace"),
        ("cdb1_lgwr_1234.trc.gz", "trace"),
        ("cdb1_lgwr_1234.trc.zst.xz", "trace"),  # every compression suffix peeled off
        ("alert_cdb1.log", "trace"),
        ("diag/alert_cdb1.log.bz2", "trace"),
        ("upload.zip", "archive"),
        ("node1.tar", "archive"),
        ("node1.tgz", "archive"),
        ("node1.tbz2", "archive"),
        ("node1.tar.zst", "archive"),
        (r"C:\up\node1.ZIP", "archive"),
        ("README", "probe"),  # no extension: read only if its first bytes say archive
        (".hidden", "probe"),
        ("noext.gz", "probe"),
    ],
)
def test_names_that_are_read_or_listed(name: str, mode: str) -> None:
    assert rule(name) == (mode, "")
    assert wanted(name) is None


@pytest.mark.parametrize(
    ("name", "reason"),
    [
        ("cdb1_lgwr_1234.trm", MAP),
        ("cdb1_lgwr_1234.trm.gz", MAP),
        ("listener.log", NOT_TRACE),
        ("alert_.log", NOT_TRACE),  # no SID
        ("notes.txt", NOT_TRACE),
        ("x.trc.txt", NOT_TRACE),
    ],
)
def test_names_that_are_skipped_say_why(name: str, reason: str) -> None:
    assert rule(name) == (None, reason)
    assert wanted(name) == reason


@pytest.mark.parametrize(
    ("name", "kind"),
    [("sfx.zip", "zip"), ("a.tar.gz", "tar"), ("a.txz", "tar"), ("a.zip.gz", "zip"), ("a.trc", None), ("zip", None)],
)
def test_an_archive_by_its_name_alone(name: str, kind: str | None) -> None:
    assert archive_by_name(name) == kind


@pytest.mark.parametrize(
    ("label", "name"),
    [
        ("up.zip!n1.zip!a/b/cdb1_rfs_1.trc.gz", "cdb1_rfs_1.trc"),
        ("up.zip!t/x.trc [2]", "x.trc"),  # the mark that makes a member's label unique
        ("up.tar.gz!t/x.trc.bz2 [12]", "x.trc"),
        (r"C:\up\cdb1_lgwr_2.trc.zst", "cdb1_lgwr_2.trc"),
        ("/u01/diag/trace/alert_cdb1.log", "alert_cdb1.log"),
        ("odd.gz", "odd"),
        (".gz", ".gz"),  # a suffix alone is a name
    ],
)
def test_the_trace_name_of_a_label(label: str, name: str) -> None:
    assert trace_name(label) == name
