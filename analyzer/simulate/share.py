"""An archive share of several Data Guard configurations over several days, as housekeeping leaves it.

`OUTDIR/<host>/<YYYY-MM-DD>/diag/rdbms/<db_unique_name>/<instance>/trace/<file>`: every configuration
has its own names and hosts, but the same threads, log sequences and msgid ranges at the same clock
hours as the others, so that only the configuration tells their writes apart. Each day is a new set of
processes. Days before the last are gzipped when asked.
"""

from __future__ import annotations

import gzip
import json
import shutil
from dataclasses import asdict, dataclass, replace
from datetime import timedelta
from pathlib import Path
from random import Random

from analyzer.base.errors import UsageError
from analyzer.simulate.alert import write_alert_logs
from analyzer.simulate.extras import write_extras
from analyzer.simulate.formats import GENERATIONS
from analyzer.simulate.options import FORMAT_VERSIONS, SimOptions
from analyzer.simulate.runner import check_room, expected_bytes, prepare, resolve_profile, run_jobs, set_jobs
from analyzer.simulate.topology import Names
from analyzer.simulate.truth import SHARE_COLUMNS, TruthPart, join_parts
from analyzer.simulate.writer import SetPlan, ThreadJob, ThreadOutcome

#: db_unique_names of the configurations (primary, standby), in order; more get `db<k>` / `db<k>dr`
CONFIGURATIONS = (
    ("sales", "salesdr"),
    ("hr", "hrdr"),
    ("fin", "findr"),
    ("crm", "crmdr"),
    ("erp", "erpdr"),
    ("ops", "opsdr"),
)
#: scenario of configuration k (in turn), so that their delays differ while their keys collide
SCENARIO_TURN = ("baseline", "standby-io", "network", "mixed")
#: hour (UTC) at which every configuration writes, every day
WRITE_HOUR = 14


@dataclass(frozen=True)
class ShareOptions:
    """Everything that shapes one share; equal options give equal bytes."""

    configs: int = 3
    days: int = 2
    #: remote writes per primary thread, per configuration and day
    writes: int = 300
    format_version: str = "19c"
    seed: int = 1
    #: gzip the `.trc` files of every day but the last (`.trc.gz`)
    gzip_older: bool = True
    #: alert logs, `.trm` files and one foreground trace per host and day
    extras: bool = True
    threads: int = 2
    log_switch_every: int = 100
    noise: float = 0.05

    def __post_init__(self) -> None:
        """Reject values the share cannot honour."""
        if self.format_version not in FORMAT_VERSIONS:
            raise UsageError(f"--format-version {self.format_version!r} is not one of: {', '.join(FORMAT_VERSIONS)}")
        for name, value, top in (
            ("--configs", self.configs, 99),
            ("--days", self.days, 366),
            ("--writes", self.writes, 10**7),
            ("--threads", self.threads, 8),
            ("--log-switch-every", self.log_switch_every, 10**7),
        ):
            if not 1 <= value <= top:
                raise UsageError(f"{name} must be between 1 and {top}, not {value}")
        if not 0.0 <= self.noise <= 1.0:
            raise UsageError(f"--noise must be a probability between 0 and 1, not {self.noise}")


@dataclass(frozen=True)
class ShareResult:
    """What `simulate_share` wrote."""

    #: every file of the share (trace files, alert logs, .trm, ...), in the order written
    files: tuple[Path, ...]
    #: truth.csv: one row per remote write, with its configuration and day
    truth: Path
    #: share.json: the options and every file with its configuration, role and day
    manifest: Path
    writes: int
    #: size of the trace files before compression
    trace_bytes: int


def configuration_names(k: int) -> Names:
    """Names of configuration `k` (0-based): its own db_unique_names and hosts."""
    primary, standby = CONFIGURATIONS[k] if k < len(CONFIGURATIONS) else (f"db{k + 1}", f"db{k + 1}dr")
    return Names(primary, standby, f"{primary}db{{n:02d}}", f"{standby}01", f"10.{20 + k}.30")


def simulate_share(outdir: Path, options: ShareOptions) -> ShareResult:
    """Write the share under `outdir`, which must be new or empty (and the free space must hold it)."""
    per_set = options.writes * options.threads
    check_room(outdir, per_set * options.configs * options.days * expected_bytes(SimOptions(writes=1), 1))
    prepare(outdir)
    gen = GENERATIONS[options.format_version]
    rng = Random(f"{options.seed}:share")
    midnight = int(gen.start.replace(hour=0).timestamp()) * 1_000_000
    hour = (WRITE_HOUR * 3600 + rng.randrange(45 * 60)) * 1_000_000
    seqs = [rng.randrange(900, 4000) for _ in range(options.threads)]
    days = [(gen.start + timedelta(days=d)).strftime("%Y-%m-%d") for d in range(options.days)]
    sets: list[tuple[int, str, SetPlan, list[ThreadJob]]] = []
    for d, day in enumerate(days):
        day_start = midnight + d * 86_400_000_000
        first_msgid = Random(f"{options.seed}:share:msgid:{d}").randrange(10_000, 200_000)
        for k in range(options.configs):
            plan = _plan(options, k, day_start + hour, first_msgid, midnight + hour)
            key = f"{options.seed}:share:{k}:{d}"
            jobs = [
                replace(
                    job,
                    first_seq=seqs[job.thread - 1],
                    keys_seed=f"{options.seed}:share:keys:{d}:{job.thread}",
                    instance_start=day_start + 300_000_000,
                )
                for job in set_jobs(plan, outdir, day, f"c{k}d{d}t", key)
            ]
            sets.append((k, day, plan, jobs))
        last_seq = (options.writes - 1) // options.log_switch_every
        seqs = [
            s + last_seq + Random(f"{options.seed}:share:night:{d}:{i}").randrange(20, 200) for i, s in enumerate(seqs)
        ]
    outcomes = run_jobs([job for *_, jobs in sets for job in jobs])
    return _finish(outdir, options, sets, outcomes, days)


def _plan(options: ShareOptions, k: int, start: int, first_msgid: int, first_start: int) -> SetPlan:
    """The set of configuration `k` on the day whose writes start at `start`."""
    sim = SimOptions(
        scenario=SCENARIO_TURN[k % len(SCENARIO_TURN)],
        format_version=options.format_version,
        writes=options.writes,
        threads=options.threads,
        log_switch_every=options.log_switch_every,
        noise=options.noise,
        seed=options.seed,
        extras=options.extras,
    )
    gen = GENERATIONS[options.format_version]
    rng = Random(f"{options.seed}:share:config:{k}")
    # a standby's tim counter keeps counting from day to day; the SCN keeps rising
    tim_shift = 0 if gen.epoch_tim else rng.randrange(10**11, 9 * 10**12) - first_start
    scn_base = rng.randrange(10**9, 10**12)
    return SetPlan(
        sim,
        gen,
        resolve_profile(sim),
        start,
        0,
        tim_shift,
        first_msgid,
        configuration_names(k),
        scn_base,
        first_start,
        share=True,
    )


def _finish(
    outdir: Path,
    options: ShareOptions,
    sets: list[tuple[int, str, SetPlan, list[ThreadJob]]],
    outcomes: list[ThreadOutcome],
    days: list[str],
) -> ShareResult:
    files: list[Path] = []
    parts: list[TruthPart] = []
    done = iter(outcomes)
    for _, day, plan, jobs in sets:
        mine = [next(done) for _ in jobs]
        traces = [p for out in mine for p in out.files]
        files += traces
        for job, out in zip(jobs, mine, strict=True):
            parts += [
                TruthPart(job.truth_part(i), out.dropped[i], evidence=True, tail=f",{day}")
                for i in range(len(job.layout.links))
            ]
        if options.extras:
            startup = jobs[0].instance_start or plan.start
            files += write_alert_logs(outdir, plan, jobs, startup)
            files += write_extras(outdir, plan, jobs, traces)
    truth = outdir / "truth.csv"
    join_parts(truth, SHARE_COLUMNS, parts)
    writes = sum(sum(out.rows) for out in outcomes)
    trace_bytes = sum(out.trace_bytes for out in outcomes)
    if options.gzip_older:
        files = [_gzip(f) if f.suffix == ".trc" and _day_of(outdir, f) != days[-1] else f for f in files]
    manifest = outdir / "share.json"
    _write_manifest(manifest, outdir, options, sets, files, writes)
    return ShareResult(tuple(files), truth, manifest, writes, trace_bytes)


def _day_of(outdir: Path, path: Path) -> str:
    return path.relative_to(outdir).parts[1]


def _gzip(path: Path) -> Path:
    """Replace `path` by `path.gz` (no timestamp in the gzip header, so the bytes are reproducible)."""
    target = path.with_name(path.name + ".gz")
    with path.open("rb") as source, target.open("wb") as raw, gzip.GzipFile(path.name, "wb", 6, raw, mtime=0) as packed:
        shutil.copyfileobj(source, packed, 1 << 20)
    path.unlink()
    return target


#: role of a trace file by its process name
_ROLES = {"lgwr": "lgwr", "rfs": "rfs", "ora": "foreground"}


def file_entry(outdir: Path, path: Path, configs: dict[str, tuple[int, str]]) -> dict[str, object]:
    """share.json's entry for one file: configuration, role (sender, lgwr, rfs, alert, foreground, trace_map), day."""
    host, day, _, _, db, sid, _, name = path.relative_to(outdir).parts
    k, side = configs[db]
    if name.startswith("alert_"):
        role, process = "alert", ""
    else:
        process = name.split("_")[1]
        role = "trace_map" if name.endswith(".trm") else _ROLES.get(process, "sender")
    return {
        "path": path.relative_to(outdir).as_posix(),
        "configuration": k + 1,
        "role": role,
        "side": side,
        "day": day,
        "host": host,
        "db_unique_name": db,
        "instance": sid,
        "process": process,
        "compressed": name.endswith(".gz"),
    }


def _write_manifest(
    manifest: Path,
    outdir: Path,
    options: ShareOptions,
    sets: list[tuple[int, str, SetPlan, list[ThreadJob]]],
    files: list[Path],
    writes: int,
) -> None:
    configs: dict[str, tuple[int, str]] = {}
    described = []
    for k, day, plan, _ in sets:
        if day != sets[0][1]:
            break
        names = plan.names
        configs[names.primary_db] = (k, "primary")
        configs[names.standby_db] = (k, "standby")
        described.append(
            {
                "configuration": k + 1,
                "primary_db": names.primary_db,
                "standby_db": names.standby_db,
                "primary_hosts": [names.host(names.primary_db, n) for n in range(1, options.threads + 1)],
                "standby_host": names.host(names.standby_db, 1),
                "scenario": plan.options.scenario,
            }
        )
    document = {
        "options": asdict(options),
        "configurations": described,
        "days": sorted({day for _, day, _, _ in sets}),
        "truth": "truth.csv",
        "truth_columns": SHARE_COLUMNS.split(","),
        "writes": writes,
        "files": [file_entry(outdir, f, configs) for f in files],
    }
    manifest.write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")
