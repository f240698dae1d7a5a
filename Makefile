# The README's quick start: `make demo` and `make test`. Both build .venv on first use.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: demo test test-fast lint bench golden clean

$(STAMP): pyproject.toml setup.py $(wildcard analyzer/parse/_scanner*.[ch])
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade "pip>=25.1"
	# an editable install by hatchling (before setuptools built the scanner) left analyzer/ in site-packages,
	# which would shadow the package
	rm -rf $(VENV)/lib/python*/site-packages/analyzer
	$(BIN)/python -m pip install --quiet -e . --group dev
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/dgtrace analyze samples/paper-2014 --tz -07:00

lint: $(STAMP)
	$(BIN)/ruff check analyzer tests scripts
	$(BIN)/ruff format --check analyzer tests scripts
	$(BIN)/mypy
	$(BIN)/lint-imports

# every test, spread over every core (pytest-xdist), with the hypothesis profile `ci` (its most examples)
test: lint
	HYPOTHESIS_PROFILE=$${HYPOTHESIS_PROFILE:-ci} $(BIN)/pytest -n logical --dist worksteal

# the inner loop: ruff, then every test not marked slow (whole trace sets, subprocesses, wheels,
# browsers, any test of 1 s or more) with the hypothesis profile `dev` (`ci` where CI=true)
test-fast: $(STAMP)
	$(BIN)/ruff check analyzer tests scripts
	$(BIN)/pytest -m "not slow" -q -n logical

golden: $(STAMP)
	$(BIN)/python scripts/regen_golden.py

# grep and dgtrace (JSON, text, CSV) alternating on 1 GB and 2 GB corpora: ratios, MB/s, peak RSS, scaling
bench: $(STAMP)
	$(BIN)/python scripts/bench.py $(BENCH_ARGS)

clean:
	rm -rf $(VENV) dist build .pytest_cache .mypy_cache .ruff_cache
