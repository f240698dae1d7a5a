"""Probe: content digest, identity and time span of a source, from its two ends."""

from __future__ import annotations

import gzip
import hashlib
from datetime import date
from pathlib import Path

import pytest

from analyzer.base.zones import TimeZones
from analyzer.batch.probe import ProbeError, SourceInfo, identify_all, probe, read_ends
from analyzer.inputs.sources import discover


def _probe(path: Path, zones: TimeZones | None = None) -> SourceInfo:
    sources, _ = discover([str(path)], dedupe=False)
    assert len(sources) == 1
    return probe(sources[0], zones or TimeZones())


def test_rfs_and_sender_identity(one_day: Path) -> None:
    rfs = next(one_day.rglob("salesdr1_rfs_*.trc"))
    info = _probe(rfs)
    assert info.sha256 == hashlib.sha256(rfs.read_bytes()).hexdigest()
    assert info.bytes == rfs.stat().st_size
    assert (info.role, info.process, info.db) == ("standby", "RFS", "salesdr")
    assert info.host == "salesdr01"
    assert info.peer_host is not None and info.peer_host.startswith("salesdb0")  # the NSS host, not the RFS host
    assert info.zone_known
    assert info.first_at is not None and info.last_at is not None and info.first_at < info.last_at
    day = date.fromisoformat(rfs.relative_to(one_day).parts[1])
    assert info.home_day() == day and info.core_days() == {day}
    nss = _probe(next(one_day.rglob("sales1_nss*.trc")))
    assert (nss.role, nss.db, nss.host, nss.peer_host) == ("primary", "sales", "salesdb01", None)


def test_gzip_digest_is_the_content(one_day: Path, tmp_path: Path) -> None:
    plain = next(one_day.rglob("*_rfs_*.trc"))
    packed = tmp_path / "diag" / "rdbms" / "salesdr" / "salesdr1" / "trace" / (plain.name + ".gz")
    packed.parent.mkdir(parents=True)
    packed.write_bytes(gzip.compress(plain.read_bytes()))
    a, b = _probe(plain), _probe(packed)
    assert a.sha256 == b.sha256 and a.first_at == b.first_at and a.last_at == b.last_at


def test_a_day_span_grows_by_the_margin(one_day: Path) -> None:
    info = _probe(next(one_day.rglob("*_rfs_*.trc")))
    span = {"first_at": "2024-10-22T00:20:00+00:00", "last_at": "2024-10-22T14:00:00+00:00"}
    near_midnight = SourceInfo(**{**info.to_json(), **span})
    assert near_midnight.days() == [date(2024, 10, 21), date(2024, 10, 22)]
    assert near_midnight.core_days() == {date(2024, 10, 22)}  # the day before has none of its stamps
    no_zone = SourceInfo(**{**info.to_json(), **span, "zone_known": False})
    assert no_zone.days() == [date(2024, 10, 21), date(2024, 10, 22), date(2024, 10, 23)]  # any zone on Earth
    assert no_zone.core_days() == set(no_zone.days())


def test_damaged_gzip_is_a_probe_error(one_day: Path, tmp_path: Path) -> None:
    plain = next(one_day.rglob("*_rfs_*.trc"))
    broken = tmp_path / "x_rfs_1.trc.gz"
    broken.write_bytes(gzip.compress(plain.read_bytes())[:-200])
    with pytest.raises(ProbeError):
        _probe(broken)


def test_an_alert_log_is_timed_by_its_time_lines(one_day: Path) -> None:
    """An alert log's stamps are its time lines, read as the analysis reads them (alert grammar)."""
    alert = next(one_day.rglob("alert_*.log"))
    info = _probe(alert)
    assert (info.role, info.process) == ("other", None)
    assert info.first_at is not None and info.last_at is not None and info.first_at < info.last_at
    assert info.zone_known
    day = date.fromisoformat(alert.relative_to(one_day).parts[1])
    assert day in info.days()


def test_identifying_together_is_identifying_each_alone(one_day: Path) -> None:
    """The ends of many sources parsed at once (`identify_all`) identify each as alone (`probe`)."""
    paths = sorted(p for pattern in ("*.trc", "alert_*.log") for p in one_day.rglob(pattern))
    sources = [s for p in paths for s in discover([str(p)], dedupe=False)[0]]
    assert len(sources) == len(paths) > 10
    together = identify_all([(s, read_ends(s)) for s in sources], TimeZones())
    assert together == [probe(s, TimeZones()) for s in sources]
    assert {i.role for i in together} >= {"primary", "standby", "other"}
