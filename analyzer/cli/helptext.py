"""The command line's help and parsing: values named, not typed (`MS`, `ZONE`, never `<float range>`
or `<list[str]>`), and the global options accepted anywhere before `--` (`dgtrace analyze X --quiet`)."""

from __future__ import annotations

import sys
from typing import Any

import typer
from typer.core import TyperCommand, TyperGroup

from analyzer.base.errors import ExitCode

#: options of the whole program, accepted anywhere on the command line (`dgtrace analyze X --quiet`)
GLOBAL_FLAGS = ("--debug", "--quiet", "-q")


def _plain_types(params: list[Any]) -> None:
    """Help shows a value's name (`MS`, `ZONE`), never a Python type (`<float range>`, `<list[str]>`)."""
    for param in params:
        named = getattr(param, "param_type_name", "") == "argument"  # its name says it already
        shown = "" if named or getattr(param, "is_flag", False) else (param.metavar or _metavar(param))
        param.display_type_rich = lambda ctx, shown=shown: shown or None
        param._get_number_range_help_str = lambda: ""


def _metavar(param: Any) -> str:
    """N, NUMBER, TEXT or PATH from the option's type (typer's `bare_type`, click's `type.name`)."""
    try:
        kind = str(param.bare_type())
    except AttributeError:
        kind = str(getattr(getattr(param, "type", None), "name", ""))
    names = {
        "int": "N",
        "integer": "N",
        "float": "NUMBER",
        "str": "TEXT",
        "text": "TEXT",
        "Path": "PATH",
        "path": "PATH",
    }
    return next((v for k, v in names.items() if k in kind), "VALUE")


class Command(TyperCommand):
    """A command whose help names values, not types."""

    def format_help(self, ctx: Any, formatter: Any) -> None:
        _plain_types(self.get_params(ctx))
        super().format_help(ctx, formatter)


class Group(TyperGroup):
    """The program: global options may come anywhere before `--`; help names values, not types."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        end = args.index("--") if "--" in args else len(args)
        head = [a for a in args[:end] if a in GLOBAL_FLAGS]
        rest = [a for a in args[:end] if a not in GLOBAL_FLAGS]
        return super().parse_args(ctx, [*head, *rest, *args[end:]])

    def format_help(self, ctx: Any, formatter: Any) -> None:
        _plain_types(self.get_params(ctx))
        super().format_help(ctx, formatter)

    def invoke(self, ctx: Any) -> Any:
        try:
            return super().invoke(ctx)
        except KeyboardInterrupt:  # outside a command's own guard
            sys.stderr.write("dgtrace: interrupted\n")
            raise typer.Exit(int(ExitCode.INTERRUPTED)) from None
