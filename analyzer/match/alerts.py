"""What the alert logs of an upload say: their entries with host and database, and each database's
redo transport destinations (the `log_archive_dest_N` attributes, as listed at startup or set by
ALTER SYSTEM).

The attributes are those written in the parameter's value (`SERVICE=boston SYNC AFFIRM
VALID_FOR=(ONLINE_LOGFILES,PRIMARY_ROLE) DB_UNIQUE_NAME=boston`); a column is null when the value
does not say (Oracle's defaults, such as ASYNC without SYNC, are not filled in).
"""

from __future__ import annotations

import re
from collections.abc import Collection

import polars as pl

from analyzer.base.schemas import ALERT_ENTRIES, DESTINATIONS, empty
from analyzer.base.vocab import FileKind, Transport
from analyzer.match.transport import Destination
from analyzer.parse.identify import adr_location
from analyzer.reduce.results import FileResult

#: `log_archive_dest_2`, `log_archive_dest_state_2`
_DEST_PARAMETER = re.compile(r"^log_archive_dest_(state_)?(\d{1,9})$")
#: one attribute of a destination: `KEY=VALUE`, `KEY=(A, B)` or a bare word (`SYNC`)
_ATTRIBUTE = re.compile(r"([A-Za-z_]+)(?:\s*=\s*(\([^)]*\)|[^\s]+))?")
#: attribute -> column, for those with a value
_VALUED = {"SERVICE": "service", "LOCATION": "location", "DB_UNIQUE_NAME": "target", "VALID_FOR": "valid_for"}


def entries(files: list[FileResult]) -> pl.DataFrame:
    """The entries of every alert log (schema ALERT_ENTRIES): each with its file, host, instance and
    database (`db_unique_name` of the log's latest startup listing, else the ADR path's database)."""
    frames = []
    for f in files:
        info, alert = f.reduced.info, f.reduced.alert
        if info.kind is not FileKind.ALERT_LOG or not alert.height:
            continue
        frames.append(
            alert.with_columns(
                file=pl.lit(f.source.label),
                host=pl.lit(info.host, pl.String),
                instance=pl.lit(info.instance, pl.String),
                database=pl.lit(_database(f), pl.String),
            ).select(ALERT_ENTRIES.names())
        )
    return (
        pl.concat(frames).cast(ALERT_ENTRIES).sort("at", "file", "line", nulls_last=True)
        if frames
        else empty(ALERT_ENTRIES)
    )


def _database(f: FileResult) -> str | None:
    named = f.reduced.alert.filter((pl.col("kind") == "parameter") & (pl.col("key") == "db_unique_name"))
    if named.height:
        return _unquoted(named["detail"][-1]).lower() or None
    return adr_location(f.source.label)[0]


def _unquoted(value: str | None) -> str:
    text = (value or "").strip()
    return text[1:-1] if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"" else text


def attributes(value: str) -> dict[str, str | int | None]:
    """The columns of one `log_archive_dest_N` value (see DESTINATIONS)."""
    found: dict[str, str | int | None] = {"attributes": _unquoted(value)}
    for key, raw in _ATTRIBUTE.findall(_unquoted(value)):
        word = key.upper()
        if word in ("SYNC", "ASYNC") and not raw:
            found["transport"] = word
        elif word in ("AFFIRM", "NOAFFIRM") and not raw:
            found["affirm"] = word
        elif word == "NET_TIMEOUT" and raw.isdigit() and len(raw) < 10:
            found["net_timeout_s"] = int(raw)
        elif word in _VALUED and raw:  # names compare without case (lower); VALID_FOR in capitals; a path as written
            value = raw.replace(" ", "")
            found[_VALUED[word]] = (
                value.upper() if word == "VALID_FOR" else value if word == "LOCATION" else value.lower()
            )
    return found


def destinations(alert: pl.DataFrame) -> pl.DataFrame:
    """Every setting of a redo transport destination in the alert logs (schema DESTINATIONS), in time
    order: the startup listing (`source` "startup") and ALTER SYSTEM (`source` "alter system"); the
    last row of a (database, instance, dest) is its setting at the end of the log. `state` is the
    `log_archive_dest_state_N` in force when the destination was set."""
    params = alert.filter(pl.col("kind").is_in(["parameter", "parameter_change"]))
    rows: list[dict[str, object]] = []
    states: dict[tuple[object, object, int], str] = {}
    for row in params.iter_rows(named=True):
        found = _DEST_PARAMETER.match(row["key"] or "")
        if not found:
            continue
        dest, where = int(found[2]), (row["database"], row["instance"], int(found[2]))
        if found[1]:  # a state: of the destination just listed at startup, else a new setting from now on
            states[where] = _unquoted(row["detail"]).upper()
            last = next((r for r in reversed(rows) if (r["database"], r["instance"], r["dest"]) == where), None)
            if last is not None and row["kind"] == "parameter":
                last["state"] = states[where]
            elif last is not None:
                change = {"set_at": row["at"], "source": "alter system", "file": row["file"], "line": row["line"]}
                rows.append({**last, "state": states[where], **change})
            continue
        rows.append(
            {
                "database": row["database"],
                "instance": row["instance"],
                "host": row["host"],
                "dest": dest,
                "state": states.get(where),
                **attributes(row["detail"] or ""),
                "set_at": row["at"],
                "source": "startup" if row["kind"] == "parameter" else "alter system",
                "file": row["file"],
                "line": row["line"],
            }
        )
    return pl.DataFrame(rows, schema=DESTINATIONS) if rows else empty(DESTINATIONS)


def transport_destinations(settings: pl.DataFrame) -> list[Destination]:
    """The remote destinations of the alert logs as the link decision takes them (`analyzer.match.transport`):
    per database and destination number its last setting, unless deferred; SYNC NOAFFIRM is Fast Sync."""
    remote = settings.filter(pl.col("target").is_not_null() & pl.col("service").is_not_null())  # no LOCATION=
    last = remote.group_by("database", "dest", maintain_order=True).last()
    out = []
    for row in last.filter(pl.col("state").fill_null("ENABLE") != "DEFER").iter_rows(named=True):
        transport = {"SYNC": Transport.SYNC, "ASYNC": Transport.ASYNC}.get(row["transport"] or "")
        if transport is Transport.SYNC and row["affirm"] == "NOAFFIRM":
            transport = Transport.FASTSYNC
        if row["database"]:
            out.append(
                Destination(row["database"], row["target"], row["dest"], transport, f"{row['file']}:{row['line']}")
            )
    return out


#: the protection modes Oracle reports, in the words of `Primary database is in ... mode`
PROTECTION_MODES = ("MAXIMUM PROTECTION", "MAXIMUM AVAILABILITY", "MAXIMUM PERFORMANCE")


def protection_mode(entries: pl.DataFrame, databases: Collection[str]) -> tuple[str | None, str | None]:
    """The latest protection mode an alert log of these databases reports (`Primary database is in
    MAXIMUM AVAILABILITY mode`, as RFS writes it on a standby), and where: (mode, `file:line`); (None,
    None) when none says."""
    said = entries.filter(
        (pl.col("kind") == "protection")
        & (pl.col("key") == "Primary")
        & pl.col("database").is_in(list(databases))
        & pl.col("detail").is_in(list(PROTECTION_MODES))
    )
    if not said.height:
        return None, None
    last = said.sort("at", nulls_last=False).row(-1, named=True)
    return str(last["detail"]), f"{last['file']}:{last['line']}"


def parameter_value(entries: pl.DataFrame, database: str | None, name: str) -> tuple[str | None, str | None]:
    """The last value an alert log of `database` gives the parameter `name` (startup listing or ALTER
    SYSTEM), unquoted, and where: (value, `file:line`); (None, None) when none does."""
    said = entries.filter(
        pl.col("kind").is_in(["parameter", "parameter_change"])
        & (pl.col("key") == name)
        & pl.col("database").eq_missing(pl.lit(database, pl.String))
    )
    if not said.height:
        return None, None
    last = said.sort("at", "line", nulls_last=False).row(-1, named=True)
    return _unquoted(last["detail"]), f"{last['file']}:{last['line']}"


def sync_latency(entries: pl.DataFrame, database: str | None) -> tuple[int | None, str | None]:
    """DATA_GUARD_SYNC_LATENCY (seconds) as the alert logs of the primary `database` set it, and where."""
    value, where = parameter_value(entries, database, "data_guard_sync_latency")
    return (int(value), where) if value is not None and value.isdigit() and len(value) < 6 else (None, None)
