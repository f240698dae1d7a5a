#!/usr/bin/env bash
# The wheel as users get it (CI runs this once): built, pip-installed into a directory of its own, and a focused
# part of the tests run against that installed copy, not the checkout: the parse stage (the compiled scanner
# against the pure path), the command line, and every output of the samples and simulated sets byte for byte.
#
#   scripts/test_installed_wheel.sh [PYTHON]      (default: .venv/bin/python, else python3)
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${1:-$([ -x .venv/bin/python ] && echo .venv/bin/python || echo python3)}
PYTHON=$(command -v "$PYTHON")
PYTHON=$(cd "$(dirname "$PYTHON")" && pwd)/$(basename "$PYTHON") # absolute, the venv kept

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$PYTHON" -m build --wheel --no-isolation --outdir "$work/dist" . >"$work/build.log" 2>&1 || {
  cat "$work/build.log"
  exit 1
}
wheel=$(echo "$work"/dist/dgtrace-*.whl)
echo "built $(basename "$wheel")"
case "$wheel" in
*-cp311-abi3-*) ;;
*) echo "not a cp311-abi3 wheel (one wheel for every Python >= 3.11)" >&2 && exit 1 ;;
esac
"$PYTHON" -m pip install --quiet --no-deps --target "$work/site" "$wheel" # its dependencies: this Python's

mkdir "$work/tree"
cp -r tests samples scripts pyproject.toml "$work/tree/" # no analyzer/ here: the installed one is imported
cd "$work/tree"
export PYTHONPATH="$work/site"
"$PYTHON" -c '
import sys
import analyzer
from analyzer.parse import scanner
from analyzer.parse.grammar import grammar_dir
assert analyzer.__file__.startswith(sys.argv[1]), analyzer.__file__
assert str(grammar_dir()).startswith(sys.argv[1]), grammar_dir()
print("installed:", analyzer.__file__, "scanner:", scanner.name())
' "$work/site"
"$PYTHON" -m pytest -q -p no:cacheprovider -m "not slow" tests/parse tests/cli/test_trace.py \
  --deselect tests/parse/test_scanner.py::test_the_c_sources_compile_cleanly_with_every_warning_an_error
"$PYTHON" -m pytest -q -p no:cacheprovider tests/e2e/test_outputs.py
