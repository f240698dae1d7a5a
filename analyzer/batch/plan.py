"""Units of work: one configuration's inputs for one day, and what makes a unit's rows stale.

A source belongs to the unit of every day its span touches (`SourceInfo.days`); a unit keeps the
writes sent on its day (UTC), so a write read by two units is kept by one. A unit's fingerprint
covers everything its rows depend on: the content of its sources, the inputs it lists as skipped,
its configuration and the analysis settings. A unit whose fingerprint is the one the manifest
recorded is not run again; any other is run again whole, and its earlier rows are replaced.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, replace
from datetime import UTC, date, datetime, timedelta
from pathlib import PurePath
from typing import Any

from analyzer.api import DEFAULT_THRESHOLD_MS, DEFAULT_WINDOW_S, Limits, Options, adr_location
from analyzer.base.vocab import FileKind
from analyzer.base.zones import TimeZones, Zone
from analyzer.batch.configs import Configuration, Grouping
from analyzer.batch.probe import SourceInfo, stat_key
from analyzer.batch.schemas import SCHEMA_VERSION

#: configuration of inputs whose database nothing tells
UNKNOWN = "unknown"
NO_STAMP = "no time stamp in the file: it cannot be placed in a day"
#: an alert log is not read into the day units: the copy archived each day holds every day since the
#: instance started, and grows, so it would join every unit of its span and run them all again each
#: night; `dgtrace analyze` reads alert logs (log switches, destinations)
ALERT_LOG = "alert log: dgtrace batch reads the traces only (dgtrace analyze reads alert logs)"


@dataclass(frozen=True)
class Settings:
    """The analysis settings of a dataset (all of them change rows: a change runs every unit again)."""

    threshold_ms: float = DEFAULT_THRESHOLD_MS
    window_s: float = DEFAULT_WINDOW_S
    tz_default_min: Zone | None = None
    tz_per_host: dict[str, Zone] = field(default_factory=dict)
    clock_offsets: dict[str, float] = field(default_factory=dict)
    max_total_bytes: int = Limits().max_total_bytes
    max_ratio: float = Limits().max_ratio
    max_depth: int = Limits().max_depth
    max_members: int = Limits().max_members

    @property
    def zones(self) -> TimeZones:
        return TimeZones(self.tz_default_min, dict(self.tz_per_host))

    @property
    def limits(self) -> Limits:
        return Limits(self.max_total_bytes, self.max_ratio, self.max_depth, self.max_members)

    def options(self, day: date) -> Options:
        """The analysis options of one unit: only the writes sent on its day."""
        start = datetime(day.year, day.month, day.day, tzinfo=UTC)
        return Options(
            threshold_ms=self.threshold_ms,
            zones=self.zones,
            window_s=self.window_s,
            clock_offsets=dict(self.clock_offsets),
            since=start,
            until=start + timedelta(days=1),
            limits=self.limits,
        )

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class SkippedInput:
    """An input that is not read, with the reason (a `.trm` map, an alert log, a damaged file)."""

    label: str
    reason: str
    #: content was lost (damaged, unreadable, a limit): the run exits with 1
    partial: bool
    #: the day it is listed under: that of the trace files beside it, else of its modification time
    day: str
    db: str | None = None

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class Unit:
    """One unit of work: picklable, so that any engine can run it anywhere the inputs are readable."""

    configuration: str
    primary_db: str | None
    standby_dbs: tuple[str, ...]
    day: str
    sources: tuple[SourceInfo, ...]
    skipped: tuple[SkippedInput, ...]
    settings: Settings
    #: db_unique_name of every source of the configuration (by label)
    dbs: dict[str, str | None] = field(compare=False)

    @property
    def key(self) -> str:
        return f"{self.configuration}/{self.day}"

    @property
    def name(self) -> str:
        """Its file name inside a partition (the configuration, made safe for any file system)."""
        return safe_name(self.configuration)

    def fingerprint(self, schema_version: int = SCHEMA_VERSION) -> str:
        """Digest of everything the unit's rows depend on (as a dataset of that version recorded it)."""
        document = {
            "schema_version": schema_version,
            "configuration": self.configuration,
            "primary_db": self.primary_db,
            "standby_dbs": list(self.standby_dbs),
            "day": self.day,
            "sources": sorted(s.sha256 for s in self.sources),
            "skipped": sorted([s.label, s.reason] for s in self.skipped),
            "settings": self.settings.to_json(),
        }
        return hashlib.sha256(json.dumps(document, sort_keys=True).encode()).hexdigest()


def safe_name(text: str) -> str:
    """`text` with every character but letters, digits, `.`, `_`, `-`, `+` spelled `%XX`."""
    return re.sub(r"[^A-Za-z0-9._+-]", lambda m: "".join(f"%{b:02X}" for b in m[0].encode()), text) or "_"


def plan_units(
    sources: Sequence[SourceInfo], skipped: Sequence[SkippedInput], grouping: Grouping, settings: Settings
) -> tuple[dict[str, Unit], list[SkippedInput]]:
    """Every unit of the known inputs, by key; and the sources that cannot be placed in a day.

    A unit is a configuration and a day on which the stamps of at least one of its traces fall; an
    input skipped is listed in the unit of its configuration and day when there is one (every skipped
    input is in the run summary), so that files that are not traces make no unit."""
    alert = {s.label for s in sources if FileKind.of(PurePath(s.label).name) is FileKind.ALERT_LOG}
    placed = [s for s in sources if s.days() and s.label not in alert]
    unplaced = [
        _unplaced(s, ALERT_LOG if s.label in alert else NO_STAMP) for s in sources if s.label in alert or not s.days()
    ]
    configs = grouping(placed)
    by_db = {db: c for c in configs for db in c.dbs.values() if db}
    by_label = {label: c for c in configs for label in c.labels}
    home = _home_days(placed)
    units: dict[tuple[str, str], tuple[Configuration, list[SourceInfo], list[SkippedInput]]] = {}
    for info in placed:
        config = by_label[info.label]
        for touched in info.days():
            units.setdefault((config.key, touched.isoformat()), (config, [], []))[1].append(info)
    fallback = Configuration(UNKNOWN, None, (), (), {})
    for item in [*skipped, *unplaced]:
        config = by_db.get(item.db or "", fallback)
        listed_on = home.get(str(PurePath(item.label).parent), item.day)
        units.setdefault((config.key, listed_on), (config, [], []))[2].append(item)
    core = {(by_label[s.label].key, d.isoformat()) for s in placed for d in s.core_days()}
    planned = {}
    for (key, day), (config, members, listed) in sorted(units.items()):
        if (key, day) not in core:  # no trace's stamps fall on this day: no unit (skipped inputs are in the summary)
            continue
        unit = Unit(
            configuration=key,
            primary_db=config.primary_db,
            standby_dbs=config.standby_dbs,
            day=day,
            sources=tuple(sorted(members, key=lambda s: s.label)),
            skipped=tuple(sorted(listed, key=lambda s: s.label)),
            settings=settings,
            dbs={s.label: s.db for s in members},
        )
        planned[unit.key] = unit
    return planned, unplaced


def _home_days(sources: Sequence[SourceInfo]) -> dict[str, str]:
    """The most common first day of the trace files of each directory."""
    counts: dict[str, Counter[str]] = {}
    for info in sources:
        day = info.home_day()
        if day is not None:
            counts.setdefault(str(PurePath(info.label).parent), Counter())[day.isoformat()] += 1
    return {directory: c.most_common(1)[0][0] for directory, c in counts.items()}


def _today() -> str:
    return datetime.now(UTC).date().isoformat()


def _unplaced(info: SourceInfo, reason: str) -> SkippedInput:
    key = stat_key(info.path)
    return replace(skipped_input(info.label, reason, False, key[1] if key else None), db=info.db)


def skipped_input(label: str, reason: str, partial: bool, mtime_ns: int | None) -> SkippedInput:
    """A skipped input, with its database from its path and its modification day."""
    day = datetime.fromtimestamp(mtime_ns / 1e9, UTC).date().isoformat() if mtime_ns else _today()
    return SkippedInput(label, reason, partial, day, adr_location(label)[0])
