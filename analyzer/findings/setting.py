"""What the uploads say about how a configuration is set up: its Oracle versions, its protection mode,
DATA_GUARD_SYNC_LATENCY, and per redo transport destination (LOG_ARCHIVE_DEST_n) its target, SYNC or
ASYNC, AFFIRM or NOAFFIRM and NET_TIMEOUT; None ("not seen") where they do not say.

What the recommendations may offer follows from it: Fast Sync (SYNC NOAFFIRM) needs Oracle Database 12c
or later (the MAA paper, "Oracle Database 12c" and "Data Guard Fast Sync") and Maximum Availability (the
Data Guard Broker reference, LogXptMode: FASTSYNC "is only available in maximum availability protection
mode"; in Maximum Protection the standby must write the redo to its standby redo log before it
acknowledges it).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import polars as pl

from analyzer.match.alerts import protection_mode, sync_latency
from analyzer.match.analysis import Analysis
from analyzer.match.links import Configuration, Link

#: a SYNC or ASYNC sender's number is the destination it serves (NSS2: LOG_ARCHIVE_DEST_2)
_SENDER_DEST = re.compile(r"^NS[SA](\d+)$")


@dataclass(frozen=True)
class DestinationRow:
    """One redo transport destination of a database: its last setting in the alert logs (None: not seen)."""

    database: str | None
    dest: int | None
    target: str | None
    transport: str | None
    affirm: str | None
    net_timeout_s: int | None
    state: str | None
    #: where it was read (`file:line`), or where the link was seen when no alert log sets it
    source: str


@dataclass(frozen=True)
class FastSyncOption:
    """Whether Fast Sync can be offered: True, False, or None (the uploads do not say: offered with its
    conditions), and why in words."""

    available: bool | None
    why: str


@dataclass(frozen=True)
class Setting:
    """One configuration's setup as its files and alert logs tell it."""

    versions: tuple[str, ...] = ()
    protection: str | None = None
    protection_source: str | None = None
    sync_latency_s: int | None = None
    sync_latency_source: str | None = None
    destinations: tuple[DestinationRow, ...] = ()

    def document(self) -> dict[str, Any]:
        """The JSON `setting`: what the uploads say of the setup, and whether Fast Sync can be offered."""
        option = self.fast_sync()
        return {
            "versions": list(self.versions),
            "protection_mode": self.protection,
            "protection_source": self.protection_source,
            "sync_latency_s": self.sync_latency_s,
            "sync_latency_source": self.sync_latency_source,
            "fast_sync": {"available": option.available, "why": option.why},
        }

    @property
    def old_versions(self) -> tuple[str, ...]:
        """The versions before 12c (no Fast Sync)."""
        return tuple(v for v in self.versions if (_major(v) or 12) < 12)

    def fast_sync(self) -> FastSyncOption:
        """Whether this configuration can use Fast Sync (SYNC NOAFFIRM), and why (not)."""
        if self.protection == "MAXIMUM PROTECTION":
            return FastSyncOption(
                False,
                f"the alert logs say the primary runs in Maximum Protection ({self.protection_source}): Fast Sync"
                " (SYNC NOAFFIRM, LogXptMode FASTSYNC) is available only in Maximum Availability; in Maximum"
                " Protection the standby acknowledges only redo written to its standby redo log, so standby I/O"
                " stays in every commit",
            )
        if self.old_versions:
            return FastSyncOption(
                False,
                f"these traces come from Oracle {', '.join(self.old_versions)}: Fast Sync (SYNC NOAFFIRM) needs"
                " Oracle Database 12c or later on the primary and the standby",
            )
        if self.protection == "MAXIMUM PERFORMANCE":
            return FastSyncOption(
                False,
                f"the alert logs say the primary runs in Maximum Performance ({self.protection_source}): Fast Sync"
                " (LogXptMode FASTSYNC) is available only in Maximum Availability, which it would have to be"
                " raised to first",
            )
        known = self.protection == "MAXIMUM AVAILABILITY" and self.versions
        if known:
            return FastSyncOption(True, f"Maximum Availability ({self.protection_source}), Oracle 12c or later")
        unknown = [
            *(["the protection mode (Fast Sync needs Maximum Availability)"] if self.protection is None else []),
            *(["the Oracle version (Fast Sync needs 12c or later)"] if not self.versions else []),
        ]
        return FastSyncOption(None, "the uploads do not show " + " nor ".join(unknown))


def _major(version: str) -> int | None:
    head = version.split(".", 1)[0]
    return int(head) if head.isdigit() else None


def setting(a: Analysis, c: Configuration, entries: pl.DataFrame) -> Setting:
    """The setup of configuration `c` from its files' headers and the alert logs (`entries`:
    `analyzer.match.alerts.entries` of the analysis's files)."""
    own = set(c.files)
    versions = tuple(
        sorted({f.reduced.info.version for f in a.files if f.source.label in own and f.reduced.info.version})
    )
    names = [d.name for d in c.databases if d.name]
    mode, mode_source = protection_mode(entries, names)
    primary = next((link.sender_db for link in c.links if link.transport.commit_path), None)
    latency, latency_source = sync_latency(entries, primary)
    return Setting(versions, mode, mode_source, latency, latency_source, destination_rows(a.destinations, c))


def destination_rows(settings: pl.DataFrame, c: Configuration) -> tuple[DestinationRow, ...]:
    """Per remote destination of the configuration's databases its last setting in the alert logs, then a
    row for each link whose destination no alert log sets (its attributes not seen)."""
    names = [d.name for d in c.databases if d.name]
    remote = settings.filter(
        pl.col("database").is_in(names) & (pl.col("service").is_not_null() | pl.col("target").is_not_null())
    )
    last = remote.group_by("database", "dest", maintain_order=True).last().sort("database", "dest")
    rows = [
        DestinationRow(
            r["database"],
            r["dest"],
            r["target"],
            r["transport"],
            r["affirm"],
            r["net_timeout_s"],
            r["state"],
            f"{r['file']}:{r['line']}",
        )
        for r in last.iter_rows(named=True)
    ]
    set_up = {(r.database, r.target) for r in rows}
    for link in c.links:
        if (link.sender_db, link.receiver_db) not in set_up:
            rows.append(_unseen(link))
    return tuple(rows)


def _unseen(link: Link) -> DestinationRow:
    """A link no alert log sets up: its destination number from its sender's name (NSS2: 2), the rest not seen."""
    found = _SENDER_DEST.match(link.sender or "")
    where = f"the {link.sender or 'sender'} traces (no alert log sets it)"
    return DestinationRow(
        link.sender_db, int(found[1]) if found else None, link.receiver_db, None, None, None, None, where
    )
