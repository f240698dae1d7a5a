"""Redaction for sharing a report: names and paths replaced by pseudonyms, numbers kept.

`redact(analysis)` returns the same analysis with every host name (`host-1`), database name
(`db-1`), instance name (`inst-1`) and file path (rebuilt from those: `host-1/inst-1_nss2_4401.trc`)
replaced, the same pseudonym for the same name in every table, sentence and format, because the
renderers only ever see the redacted analysis. Free text taken from the traces (unparsed lines,
which may hold SQL, and the text quoted in their reasons) is removed. Pseudonyms are numbered in the
sorted order of what they stand for, so one input always gives the same pseudonyms. The mapping is
printed only when asked (`--redact-map FILE`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field, fields, is_dataclass, replace
from typing import Any, TextIO

import polars as pl

from analyzer.base.zones import TimeZones, same_host, short_host
from analyzer.inputs.sources import Skipped
from analyzer.match.analysis import Analysis
from analyzer.parse.identify import FileInfo
from analyzer.reduce.results import FileResult, Options

#: what an unparsed line's text becomes
REMOVED = "[removed by --redact]"
#: `diag/rdbms/<database>/<instance>/trace` in an ADR path
_ADR = re.compile(r"(?:^|[/\\!])diag[/\\]rdbms[/\\](?P<db>[^/\\!]+)[/\\](?P<inst>[^/\\!]+)[/\\]", re.IGNORECASE)
#: `<instance>_<process>_<pid>.trc`
_TRACE_NAME = re.compile(r"^(?P<sid>.+?)_(?P<proc>[a-z][a-z0-9]*)_(?P<pid>\d+)(?P<ext>\.tr[cm])$", re.IGNORECASE)
#: text a reason quotes from its line
_QUOTED = re.compile(r"'[^']*'|\"[^\"]*\"")


@dataclass
class Pseudonyms:
    """What each pseudonym stands for, by kind; and the text replacement they make."""

    hosts: dict[str, str] = field(default_factory=dict)
    databases: dict[str, str] = field(default_factory=dict)
    instances: dict[str, str] = field(default_factory=dict)
    files: dict[str, str] = field(default_factory=dict)
    others: dict[str, str] = field(default_factory=dict)
    _pattern: re.Pattern[str] | None = None
    _names: dict[str, str] = field(default_factory=dict)

    def name(self, kind: dict[str, str], prefix: str, original: str) -> str:
        """The pseudonym of `original` in `kind` (given in order of first request)."""
        if original not in kind:
            kind[original] = f"{prefix}-{len(kind) + 1}"
        return kind[original]

    def seal(self) -> None:
        """Build the text replacement from every name known (longest first, any case, whole words)."""
        names: dict[str, str] = {}
        for kind in (self.databases, self.instances, self.hosts):
            for original, pseudonym in kind.items():
                names[original.lower()] = pseudonym
        for original, pseudonym in self.hosts.items():  # `prim01` also stands for `prim01.dbnet.example`
            names.setdefault(short_host(original), pseudonym)
        for original, pseudonym in self.files.items():
            names[original.lower()] = pseudonym
        self._names = names
        words = sorted(names, key=len, reverse=True)
        self._pattern = (
            re.compile("(?<![A-Za-z0-9])(" + "|".join(map(re.escape, words)) + ")(?![A-Za-z0-9])", re.IGNORECASE)
            if words
            else None
        )

    def text(self, value: str | None) -> str | None:
        """A string from the traces with every known name replaced."""
        if value is None or self._pattern is None:
            return value
        return self._pattern.sub(lambda m: self._names[m.group(0).lower()], value)

    def host(self, value: str | None) -> str | None:
        """A host name (a known one, or one typed on the command line that names none)."""
        if value is None:
            return None
        known = next((p for h, p in self.hosts.items() if same_host(value, h)), None)
        return known or self.name(self.others, "unknown-host", value)

    def as_dict(self) -> dict[str, dict[str, str]]:
        """{kind: {pseudonym: original}} (what `--redact-map` writes)."""
        kinds = {"hosts": self.hosts, "databases": self.databases, "instances": self.instances}
        out = {k: {p: o for o, p in v.items()} for k, v in kinds.items()}
        out["files"] = {p: o for o, p in self.files.items()}
        out["host names given on the command line that name no host"] = {p: o for o, p in self.others.items()}
        return out


def _collect(a: Analysis) -> Pseudonyms:
    """Every host, database and instance name of the analysis, numbered in sorted order."""
    hosts, databases, instances = set(), set(), set()
    for f in a.files:
        info = f.reduced.info
        if info.host:
            hosts.add(info.host.removeprefix("instance:"))
        if info.instance:
            instances.add(info.instance)
        found = _ADR.search(f.source.label)
        if found:
            databases.add(found["db"])
            instances.add(found["inst"])
    for f in a.files:  # what the path and head say (lower case, short host names)
        ident = f.identity
        hosts |= {h for h in (ident.host, ident.client_host) if h}
        databases |= {ident.db} if ident.db else set()
        instances |= {ident.instance} if ident.instance else set()
    for config in a.topology.configurations:
        for db in config.databases:
            databases |= {db.name} if db.name else set()
            hosts |= set(db.hosts)
            instances |= set(db.instances)
    for report in a.awr_reports:  # the names an AWR or Statspack report prints in its head
        hosts |= {report.host} if report.host else set()
        databases |= {report.db_name} if report.db_name else set()
        instances |= {report.instance} if report.instance else set()
    frames = (a.writes, a.clock, a.shipments, a.shipment_clock)
    for frame, columns in ((frame, ("primary_host", "standby_host")) for frame in frames):
        for column in columns:
            hosts |= {h for h in frame[column].cast(pl.String).unique().to_list() if h}
    for column, kind in (("database", databases), ("instance", instances), ("host", hosts)):  # the alert logs'
        kind |= {v for v in a.destinations[column].unique().to_list() if v}
    names = Pseudonyms()
    hosts = _fullest(hosts - {f.source.label for f in a.files})  # a file without a host stands for it
    for value in sorted(hosts, key=str.lower):
        names.name(names.hosts, "host", value)
    databases = {d.lower() for d in databases}
    for value in sorted(databases, key=str.lower):
        names.name(names.databases, "db", value)
    for value in sorted({i for i in instances if i.lower() not in databases}, key=str.lower):
        names.name(names.instances, "inst", value)
    names.seal()
    return names


def _fullest(hosts: set[str]) -> set[str]:
    """One name per host: the full name when both it and its short name are known (`prim01`,
    `PRIM01` and `prim01.dbnet.example` are one host, one pseudonym)."""
    out: dict[str, str] = {}
    for host in sorted(hosts, key=lambda h: (-len(h), h)):
        out.setdefault(short_host(host), host)
    return set(out.values())


def _deep(value: Any, text: Callable[[str], str | None]) -> Any:
    """A value with every string in it through `text`: strings, tuples, lists, dicts, frames and
    (frozen) dataclasses, rebuilt only where something changed; anything else as it is."""
    if isinstance(value, str):
        new = text(value)
        return value if new is None or new == value else new
    if isinstance(value, pl.DataFrame):
        return _frame(value, text)
    if isinstance(value, tuple | list):
        items = [_deep(v, text) for v in value]
        return value if all(x is y for x, y in zip(items, value, strict=True)) else type(value)(items)
    if isinstance(value, dict):
        return {_deep(k, text): _deep(v, text) for k, v in value.items()}
    if is_dataclass(value) and not isinstance(value, type):
        changed = {}
        for f in fields(value):
            if f.init:
                old = getattr(value, f.name)
                new = _deep(old, text)
                if new is not old:
                    changed[f.name] = new
        return replace(value, **changed) if changed else value
    return value


def _labels(a: Analysis, names: Pseudonyms) -> dict[str, str]:
    """A pseudonymous path for every input label: `host-1/inst-1_nss2_4401.trc`, else `file-3.trc`."""
    out: dict[str, str] = {}
    used: set[str] = set()
    neutral = 0
    inputs = [(f.source.label, f.reduced.info.host) for f in a.files] + [(s.label, None) for s in a.skipped]
    inputs += [(label, None) for label in {*a.options.baselines, *a.options.awr}]  # --baseline, --awr files
    for label, host in sorted(inputs, key=lambda item: item[0]):
        base = re.split(r"[/\\!]", label)[-1]
        found = _TRACE_NAME.match(base)
        if found:
            name = f"{names.text(found['sid'])}_{found['proc'].lower()}_{found['pid']}{found['ext'].lower()}"
        else:
            suffix = re.search(r"(\.[A-Za-z0-9]{1,4})+$", base)
            neutral += 1
            name = f"file-{neutral}{suffix.group(0).lower() if suffix else ''}"
        path = f"{names.host(host.removeprefix('instance:'))}/{name}" if host else name
        unique, n = path, 1
        while unique in used:
            n += 1
            unique = f"{path}~{n}"
        used.add(unique)
        out[label] = unique
    return out


def _frame(frame: pl.DataFrame, value: Callable[[str], str | None]) -> pl.DataFrame:
    """Every string and categorical column of a frame through `value` (per distinct value)."""
    changed = []
    for name, dtype in frame.schema.items():
        if dtype not in (pl.String, pl.Categorical):
            continue
        column = frame[name].cast(pl.String)
        olds = column.drop_nulls().unique().to_list()
        news = [value(old) for old in olds]
        if olds != news:
            mapped = column.replace_strict(olds, news, default=None, return_dtype=pl.String)
            changed.append(mapped.cast(dtype).alias(name))
    return frame.with_columns(changed) if changed else frame


def _reason(names: Pseudonyms, reason: str | None) -> str | None:
    """A reason without the text it quotes from its line."""
    return None if reason is None else names.text(_QUOTED.sub("'...'", reason))


def _file(f: FileResult, names: Pseudonyms, label: str, value: Callable[[str], str | None]) -> FileResult:
    info = f.reduced.info
    host = info.host.removeprefix("instance:") if info.host else None
    new_info: FileInfo = replace(
        info,
        label=label,
        host=names.host(host),
        instance=names.text(info.instance),
        evidence=names.text(info.evidence) or "",
    )
    tables = dict(f.parsed.tables)
    unparsed = tables["unparsed"]
    reasons = _frame(unparsed.select("reason"), lambda r: _reason(names, r))["reason"]
    tables["unparsed"] = unparsed.with_columns(reasons, text=pl.lit(REMOVED, pl.String))
    for name in ("header", "markers"):
        tables[name] = _frame(tables[name], value)
    r = f.reduced
    reduced = replace(
        r,
        info=new_info,
        exchanges=replace(r.exchanges, label=label),
        pending=_frame(r.pending, value),
        unmatched=_frame(r.unmatched, value),
        lgwr=_frame(r.lgwr, value),
        zone=names.text(r.zone) or "",
        tim=replace(r.tim, warning=names.text(r.tim.warning)),
    )
    stats = replace(f.stats, error=names.text(f.stats.error))
    return replace(
        f, source=replace(f.source, label=label), reduced=reduced, parsed=replace(f.parsed, tables=tables), stats=stats
    )


def _options(options: Options, names: Pseudonyms, labels: dict[str, str]) -> Options:
    zones = TimeZones(options.zones.default_min, {names.host(h) or h: z for h, z in options.zones.per_host.items()})
    offsets = {names.host(h) or h: ms for h, ms in options.clock_offsets.items()}
    baselines, awr = (tuple(labels.get(p, p) for p in paths) for paths in (options.baselines, options.awr))
    return replace(options, zones=zones, clock_offsets=offsets, baselines=baselines, awr=awr)


def _companions(a: Analysis, value: Callable[[str], str | None]) -> dict[str, Any]:
    """The oratcptest runs and AWR reports with pseudonyms, and without the text of their lines
    (a pasted command line names hosts the traces do not)."""
    runs = tuple(replace(_deep(r, value), lines=r.lines.with_columns(text=pl.lit(REMOVED))) for r in a.baselines)
    return {"baselines": runs, "awr_reports": tuple(_deep(report, value) for report in a.awr_reports)}


def redact(a: Analysis) -> tuple[Analysis, Pseudonyms]:
    """The analysis with pseudonyms for every name and path, and what they stand for."""
    names = _collect(a)
    labels = _labels(a, names)
    names.files.update(labels)
    names.seal()

    def value(text: str) -> str | None:
        return labels.get(text) or names.hosts.get(text) or names.text(text)

    files = [_file(f, names, labels[f.source.label], value) for f in a.files]
    skipped = [
        Skipped(labels.get(s.label, names.text(s.label) or ""), names.text(s.reason) or "", s.partial)
        for s in a.skipped
    ]
    files = [replace(f, identity=_deep(f.identity, value)) for f in files]
    # every table of the analysis, whatever it holds (a table added later is redacted too)
    tables: dict[str, Any] = {
        t.name: _frame(table, value) for t in fields(a) if isinstance(table := getattr(a, t.name), pl.DataFrame)
    }
    redacted = replace(
        a,
        options=_options(a.options, names, labels),
        files=files,
        topology=_deep(a.topology, value),
        link_counts=_deep(a.link_counts, value),
        skipped=skipped,
        **tables,
        **_companions(a, value),
    )
    return redacted, names


def write_map(names: Pseudonyms, out: TextIO) -> None:
    """The pseudonyms and what they stand for, as JSON."""
    json.dump(names.as_dict(), out, indent=1, sort_keys=True)
    out.write("\n")
