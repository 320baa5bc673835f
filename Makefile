# recprivacy: `make demo` runs the audit on the built-in synthetic dataset; `make test` runs the suite;
# `make results` regenerates RESULTS.md from the committed records in benchmarks/results/.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-$(shell cat pyproject.toml | cksum | cut -d' ' -f1)

.PHONY: demo test install clean bench results

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

$(STAMP): $(BIN)/python pyproject.toml
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet torch==2.13.0
	$(BIN)/pip install --quiet -e '.[test]'
	rm -f $(VENV)/.installed-*
	touch $(STAMP)

install: $(STAMP)

demo: $(STAMP)
	$(BIN)/recprivacy audit --out runs

# one pytest-xdist worker per core, plus one; a test file's tests stay together on one worker, in order (its
# module fixtures are built once, and tests that build on an earlier one's state keep it), and the files
# of the Ray tests go to one worker together (RAY_FILES in tests/conftest.py); the 20
# slowest tests are listed at the end. Python writes its bytecode caches (an environment that sets
# PYTHONDONTWRITEBYTECODE would make every process the suite starts compile the package and pytest
# rewrite every test module's asserts again: 13 CPU s to collect the suite against 7.5 cached)
test: $(STAMP)
	PYTHONDONTWRITEBYTECODE= $(BIN)/python -m pytest tests -n auto --dist loadfile --no-loadscope-reorder --durations=20

bench: $(STAMP)
	$(BIN)/python benchmarks/recommenders.py

results: $(STAMP)
	$(BIN)/python benchmarks/results.py

clean:
	rm -rf $(VENV) runs .pytest_cache
