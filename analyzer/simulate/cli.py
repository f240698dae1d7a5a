"""The `dgtrace simulate` command: options in, a trace set and a one-line summary out."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from analyzer.base.units import parse_size
from analyzer.simulate.options import DEFAULT_WRITES, SimOptions
from analyzer.simulate.runner import simulate
from analyzer.simulate.share import ShareOptions, simulate_share

_FROM_SCENARIO = "(default: the scenario's value)"


def simulate_command(
    outdir: Annotated[Path, typer.Argument(help="Directory to create (must be new or empty).")],
    scenario: Annotated[
        str,
        typer.Option(help="baseline, standby-io, network (stalls), bandwidth (congestion), log-switch or mixed."),
    ] = "baseline",
    format_version: Annotated[
        str, typer.Option("--format-version", help="Oracle trace layout: 11.2, 12.1, 19c or 23ai.")
    ] = "19c",
    writes: Annotated[
        int | None,
        typer.Option(help=f"Remote writes per primary thread (default {DEFAULT_WRITES})."),
    ] = None,
    size: Annotated[
        str | None,
        typer.Option(help="Approximate total size of the trace files, e.g. 500MB (replaces --writes)."),
    ] = None,
    threads: Annotated[int, typer.Option(help="Primary RAC threads (instances).")] = 2,
    rtt_ms: Annotated[
        float | None, typer.Option("--rtt-ms", help=f"Network round trip in ms {_FROM_SCENARIO}.")
    ] = None,
    net_spike_rate: Annotated[
        float | None,
        typer.Option(help=f"Probability of a network delay spike per write {_FROM_SCENARIO}."),
    ] = None,
    io_spike_rate: Annotated[
        float | None,
        typer.Option(help=f"Probability of a slow standby redo log write {_FROM_SCENARIO}."),
    ] = None,
    log_switch_every: Annotated[int | None, typer.Option(help=f"Writes per log sequence {_FROM_SCENARIO}.")] = None,
    standby_skew_s: Annotated[
        float, typer.Option("--standby-skew-s", help="Standby clock minus true time, seconds.")
    ] = 0.0,
    primary_tz: Annotated[str, typer.Option(help="UTC offset of the primary hosts, +HH:MM.")] = "+00:00",
    standby_tz: Annotated[str, typer.Option(help="UTC offset of the standby host, +HH:MM.")] = "+00:00",
    noise: Annotated[
        float,
        typer.Option(help="Probability that a write carries a noise item (blank or other lines)."),
    ] = 0.05,
    seed: Annotated[int, typer.Option(help="Random seed; the same seed gives the same bytes.")] = 1,
    transport: Annotated[
        str, typer.Option(help="sync (SYNC AFFIRM) or fastsync (SYNC NOAFFIRM, 12.1+) for the SYNC destinations.")
    ] = "sync",
    topology: Annotated[
        str,
        typer.Option(help="single, two-sync (two SYNC standbys) or far-sync (primary -> far sync -> standby, 12.1+)."),
    ] = "single",
    async_sender: Annotated[
        bool, typer.Option(help="Also ship each thread's redo ASYNC (NSAn / TT02) to a third destination.")
    ] = False,
    segment_bytes: Annotated[
        str | None,
        typer.Option(help="Cut every trace into segments of about this size, e.g. 2MB (between writes)."),
    ] = None,
    drop_segment: Annotated[
        int, typer.Option(help="Delete segment K (1 = the first after the first file) of every longer trace.")
    ] = 0,
    lgwr_broadcast_rate: Annotated[
        float, typer.Option(help="Probability per LGWR write of a 'log write broadcast wait time' warning.")
    ] = 0.0,
    lgwr_mode_switch_every: Annotated[
        int, typer.Option(help="An adaptive log file sync switch every N LGWR writes (0: never).")
    ] = 0,
    extras: Annotated[
        bool, typer.Option(help="Also write alert logs, .trm files and an unrelated foreground trace per host.")
    ] = False,
    protection: Annotated[
        str, typer.Option(help="availability or protection: the protection mode the alert logs (--extras) report.")
    ] = "availability",
) -> None:
    """Write a simulated Data Guard trace set with its ground truth (truth.csv).

    Examples:

        dgtrace simulate /tmp/set --scenario standby-io --format-version 12.1 --writes 5000

        dgtrace simulate /tmp/far --topology far-sync --async-sender --segment-bytes 2MB --drop-segment 1

    Without the topology, segment, LGWR and extras options the set is the classic one: the same bytes
    for the same options and seed, and truth.csv with its ten classic columns.
    """
    options = SimOptions(
        scenario=scenario,
        format_version=format_version,
        writes=writes,
        size_bytes=None if size is None else parse_size(size),
        threads=threads,
        rtt_ms=rtt_ms,
        net_spike_rate=net_spike_rate,
        io_spike_rate=io_spike_rate,
        log_switch_every=log_switch_every,
        standby_skew_s=standby_skew_s,
        primary_tz=primary_tz,
        standby_tz=standby_tz,
        noise=noise,
        seed=seed,
        transport=transport,
        topology=topology,
        async_sender=async_sender,
        segment_bytes=None if segment_bytes is None else parse_size(segment_bytes),
        drop_segment=drop_segment,
        lgwr_broadcast_rate=lgwr_broadcast_rate,
        lgwr_mode_switch_every=lgwr_mode_switch_every,
        extras=extras,
        protection=protection,
    )
    result = simulate(outdir, options)
    Console(stderr=True).print(
        f"simulated {result.writes:,} remote writes ({options.scenario}, {options.format_version}, "
        f"{options.threads} thread(s)): {len(result.files)} trace files, "
        f"{result.trace_bytes:,} bytes in {outdir}; truth in {result.truth}",
        highlight=False,
        soft_wrap=True,
    )


def simulate_share_command(
    outdir: Annotated[Path, typer.Argument(help="Directory to create (must be new or empty).")],
    configs: Annotated[int, typer.Option(help="Data Guard configurations (sales/salesdr, hr/hrdr, ...).")] = 3,
    days: Annotated[int, typer.Option(help="Days; each day is a new set of processes under <host>/<YYYY-MM-DD>.")] = 2,
    writes: Annotated[int, typer.Option(help="Remote writes per primary thread, configuration and day.")] = 300,
    format_version: Annotated[
        str, typer.Option("--format-version", help="Oracle trace layout: 11.2, 12.1, 19c or 23ai.")
    ] = "19c",
    threads: Annotated[int, typer.Option(help="Primary RAC threads of every configuration.")] = 2,
    seed: Annotated[int, typer.Option(help="Random seed; the same seed gives the same bytes.")] = 1,
    gzip_older: Annotated[bool, typer.Option(help="Gzip the .trc files of every day but the last.")] = True,
    extras: Annotated[
        bool, typer.Option(help="Alert logs, .trm files and an unrelated foreground trace per host and day.")
    ] = True,
) -> None:
    """Write an archive share of several Data Guard configurations over several days, with its truth.

    Every configuration has its own databases and hosts but the same threads, log sequences and
    msgids at the same hours as the others: only the configuration tells their writes apart.
    truth.csv has one row per remote write (with primary_db, standby_db and day); share.json lists
    every file with its configuration, role and day.

    Examples:

        dgtrace simulate-share /tmp/share --configs 3 --days 2

        dgtrace simulate-share /tmp/old --configs 5 --days 7 --format-version 11.2 --no-gzip-older
    """
    options = ShareOptions(
        configs=configs,
        days=days,
        writes=writes,
        format_version=format_version,
        seed=seed,
        gzip_older=gzip_older,
        extras=extras,
        threads=threads,
    )
    result = simulate_share(outdir, options)
    Console(stderr=True).print(
        f"simulated {result.writes:,} remote writes of {configs} configuration(s) over {days} day(s): "
        f"{len(result.files)} files in {outdir}; truth in {result.truth}, file list in {result.manifest}",
        highlight=False,
        soft_wrap=True,
    )
