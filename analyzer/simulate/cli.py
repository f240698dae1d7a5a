"""The `dgtrace simulate` command: options in, a trace set and a one-line summary out."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from analyzer.simulate.options import DEFAULT_WRITES, SimOptions
from analyzer.simulate.runner import simulate
from analyzer.units import parse_size

_FROM_SCENARIO = "(default: the scenario's value)"


def simulate_command(
    outdir: Annotated[Path, typer.Argument(help="Directory to create (must be new or empty).")],
    scenario: Annotated[
        str,
        typer.Option(help="baseline, standby-io, network, log-switch or mixed."),
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
) -> None:
    """Write a simulated SYNC transport trace set with its ground truth (truth.csv)."""
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
    )
    result = simulate(outdir, options)
    Console(stderr=True).print(
        f"simulated {result.writes:,} remote writes ({options.scenario}, {options.format_version}, "
        f"{options.threads} thread(s)): {len(result.files)} trace files, "
        f"{result.trace_bytes:,} bytes in {outdir}; truth in {result.truth}",
        highlight=False,
        soft_wrap=True,
    )
