"""The build of the compiled line scanner (analyzer/parse/_scanner.c); everything else is in pyproject.toml.

The extension is built against Python's limited API, so one wheel per platform (`cp311-abi3`) serves every
Python from 3.11 on. It is optional: without a C compiler or Python's headers the build goes on without it,
and dgtrace reads through its pure Python path (`dgtrace --version` then says `scanner: python`).
`DGTRACE_SCANNER=python` in the environment of the build leaves it out on purpose.
"""

from __future__ import annotations

import hashlib
import os
import sys
from pathlib import Path
from typing import Any

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext
from setuptools.command.build_py import build_py

SKIPPED = (
    "dgtrace: the compiled line scanner was not built ({reason}); dgtrace will read traces through its "
    "pure Python path, about three times slower (`dgtrace --version` says `scanner: python`)"
)


class OptionalBuildExt(build_ext):
    """build_ext that never fails the install: a missing compiler or header leaves the pure path."""

    def run(self) -> None:
        if os.environ.get("DGTRACE_SCANNER") == "python":
            print(SKIPPED.format(reason="DGTRACE_SCANNER=python"), file=sys.stderr)
            return
        try:
            super().run()
        except Exception as err:  # any failure to compile means the pure path, said loudly
            print(SKIPPED.format(reason=f"{type(err).__name__}: {err}"), file=sys.stderr)

    def build_extension(self, ext: Any) -> None:
        try:
            super().build_extension(ext)
        except Exception as err:
            print(SKIPPED.format(reason=f"{type(err).__name__}: {err}"), file=sys.stderr)


class BuildPy(build_py):
    """The grammars (grammars/*.lark at the top of the repository) go into the wheel as analyzer/grammars."""

    def run(self) -> None:
        super().run()
        if getattr(self, "editable_mode", False):  # an editable install reads grammars/ in the checkout
            return
        target = Path(self.build_lib) / "analyzer" / "grammars"
        target.mkdir(parents=True, exist_ok=True)
        for grammar in sorted(Path("grammars").glob("*.lark")):
            self.copy_file(str(grammar), str(target / grammar.name))


UNIX_FLAGS = ["-std=c11", "-O2", "-Wall", "-Wextra"]
SOURCES = sorted(Path("analyzer/parse").glob("_scanner*.[ch]"))
#: the sources' digest, compiled in: a test sees a module built from other sources (an editable install not rebuilt)
DIGEST = hashlib.sha256(b"".join(path.read_bytes() for path in SOURCES)).hexdigest()

setup(
    ext_modules=[
        Extension(
            "analyzer.parse._scanner",
            sources=["analyzer/parse/_scanner.c", "analyzer/parse/_scanner_arrow.c"],
            depends=["analyzer/parse/_scanner_arrow.h"],
            define_macros=[("Py_LIMITED_API", "0x030B0000"), ("SCANNER_SOURCES", f'"{DIGEST}"')],
            py_limited_api=True,
            optional=True,
            extra_compile_args=[] if sys.platform == "win32" else UNIX_FLAGS,
        )
    ],
    cmdclass={"build_ext": OptionalBuildExt, "build_py": BuildPy},
    options={"bdist_wheel": {"py_limited_api": "cp311"}},
)
