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

# one worker per core (pytest-xdist); a test file's tests stay on one worker, so its module
# fixtures are built once
test: $(STAMP)
	$(BIN)/python -m pytest tests -n auto --dist loadfile

bench: $(STAMP)
	$(BIN)/python benchmarks/recommenders.py

results: $(STAMP)
	$(BIN)/python benchmarks/results.py

clean:
	rm -rf $(VENV) runs .pytest_cache
