#!/usr/bin/env bash
# The compiled line scanner under AddressSanitizer and UndefinedBehaviorSanitizer (CI runs this).
#
# Builds analyzer/parse/_scanner*.c with -fsanitize=address,undefined (every finding fatal) and with
# -Wall -Wextra -Werror into a copy of the package, then runs the scanner's tests through it: the
# differential tests against the pure path (generated, mutated and hostile chunks: a million empty
# lines, 100,000-digit numbers, CR and NUL runs, random bytes, a 3 MB line, ...), the samples, the
# simulated sets of every generation and, when present, the real traces. A few minutes on two cores.
#
#   scripts/sanitize_scanner.sh [PYTHON]      (default: .venv/bin/python, else python3)
set -euo pipefail
export LC_ALL=C # globs in byte order (the digest of the sources)
cd "$(dirname "$0")/.."
PYTHON=${1:-$([ -x .venv/bin/python ] && echo .venv/bin/python || echo python3)}
PYTHON=$(command -v "$PYTHON")
PYTHON=$(cd "$(dirname "$PYTHON")" && pwd)/$(basename "$PYTHON")  # absolute, the venv kept
CC=${CC:-cc}

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/tree"
cp -r analyzer grammars tests samples scripts pyproject.toml "$work/tree/"
find "$work/tree/analyzer" \( -name '_scanner*.so' -o -name '_scanner*.pyd' -o -name __pycache__ \) -prune -exec rm -rf {} +

include=$("$PYTHON" -c 'import sysconfig; print(sysconfig.get_paths()["include"])')
suffix=$("$PYTHON" -c 'import importlib.machinery as m; print([s for s in m.EXTENSION_SUFFIXES if "abi3" in s][0])')
digest=$(cat analyzer/parse/_scanner*.[ch] | sha256sum | cut -d' ' -f1) # setup.py's SCANNER_SOURCES
"$CC" -DSCANNER_SOURCES="\"$digest\"" -std=c11 -O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=all \
  -Wall -Wextra -Wshadow -Werror -shared -fPIC -DPy_LIMITED_API=0x030B0000 -I"$include" \
  analyzer/parse/_scanner.c analyzer/parse/_scanner_arrow.c -o "$work/tree/analyzer/parse/_scanner$suffix"

# Python itself is not built with the sanitizers: their runtime goes first; leaks are Python's business.
# PYTHONMALLOC=malloc: every Python object (the chunk's bytes too) gets the sanitizer's red zones
export PYTHONMALLOC=malloc
export LD_PRELOAD="$("$CC" -print-file-name=libasan.so) $("$CC" -print-file-name=libubsan.so)"
export ASAN_OPTIONS=detect_leaks=0:abort_on_error=1:strict_string_checks=1:check_initialization_order=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
cd "$work/tree"
"$PYTHON" -c '
import sys
from analyzer.parse import _scanner, scanner
assert _scanner.__file__.startswith(sys.argv[1]), _scanner.__file__
assert scanner.name() == "compiled"
print("sanitized scanner:", _scanner.__file__)
' "$work/tree"
# --capture=sys: a sanitizer's report (on file descriptor 2) reaches the log
"$PYTHON" -m pytest -q --capture=sys -p no:cacheprovider -m "slow or not slow" tests/parse/test_scanner.py tests/parse/test_chunks.py
