"""`dgtrace simulate` and `dgtrace simulate-share`: their options and help are those of `analyzer.simulate.cli`."""

from __future__ import annotations

import functools
from typing import Any

from analyzer.cli.base import app, guard
from analyzer.cli.helptext import Command
from analyzer.simulate.cli import simulate_command, simulate_share_command


@app.command("simulate", cls=Command)  # its help and examples are the docstring of simulate_command
@functools.wraps(simulate_command)
def _simulate(*args: Any, **kwargs: Any) -> None:
    with guard():
        simulate_command(*args, **kwargs)


@app.command("simulate-share", cls=Command)
@functools.wraps(simulate_share_command)
def _simulate_share(*args: Any, **kwargs: Any) -> None:
    with guard():
        simulate_share_command(*args, **kwargs)
