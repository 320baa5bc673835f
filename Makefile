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

# one pytest-xdist worker per core; each takes a contiguous share of the tests (so a file's module
# fixtures are mostly built once) and a worker that runs out steals from the other's queue, so a
# slow share (the Flower deployments wait on processes) does not leave a core idle; the 20 slowest
# tests are listed at the end
test: $(STAMP)
	$(BIN)/python -m pytest tests -n auto --dist worksteal --durations=20

bench: $(STAMP)
	$(BIN)/python benchmarks/recommenders.py

results: $(STAMP)
	$(BIN)/python benchmarks/results.py

clean:
	rm -rf $(VENV) runs .pytest_cache
