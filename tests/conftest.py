"""Shared fixtures. Real datasets are found through RECPRIVACY_DATA; with
RECPRIVACY_REQUIRE_DATA=1 (as in CI) a missing dataset fails the test instead of skipping."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest


def _data_root() -> Path | None:
    env = os.environ.get("RECPRIVACY_DATA")
    if env:
        return Path(env)
    guess = Path(__file__).resolve().parents[2] / "shared" / "datasets"
    return guess if guess.is_dir() else None


@pytest.fixture(scope="session")
def data_root() -> Path:
    """Folder holding the real datasets (``ml-100k/``, ``ml-1m/``, ...)."""
    root = _data_root()
    if root is None or not root.is_dir():
        msg = f"real datasets not found (RECPRIVACY_DATA={os.environ.get('RECPRIVACY_DATA')!r})"
        if os.environ.get("RECPRIVACY_REQUIRE_DATA") == "1":
            pytest.fail(msg)
        pytest.skip(msg)
    return root


@pytest.fixture(scope="session")
def dataset_dir(data_root: Path):
    """``dataset_dir("ml-100k")`` -> the folder, failing/skipping as data_root does."""

    def get(name: str) -> Path:
        path = data_root / name
        if not path.is_dir():
            msg = f"dataset folder {path} is missing"
            if os.environ.get("RECPRIVACY_REQUIRE_DATA") == "1":
                pytest.fail(msg)
            pytest.skip(msg)
        return path

    return get


@pytest.fixture(autouse=True)
def _quiet_progress(monkeypatch):
    """No progress lines on stderr in tests (so one-line error checks see one line); a test
    of progress output removes ``RECPRIVACY_QUIET`` itself."""
    monkeypatch.setenv("RECPRIVACY_QUIET", "1")


@pytest.fixture(scope="session")
def benchmark_script():
    """``benchmark_script("federated_quality")`` -> the module of ``benchmarks/<name>.py`` (the scripts
    are not a package)."""

    def load(name: str):
        spec = importlib.util.spec_from_file_location(name, Path(__file__).resolve().parents[1] / "benchmarks" / f"{name}.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module

    return load


GOLDEN = Path(__file__).parent / "unit" / "golden"


def measured_numbers(results: Any) -> dict[str, Any]:
    """What a run of a study measured, as JSON values (NaN as the string ``"NaN"``): seeds,
    noise, metrics, every table with its caption, section titles and texts, figure names.
    Wall-clock times are left out: ``timings``, metrics whose last part is ``seconds`` and
    table columns named ``seconds``."""
    tables = {}
    for name, table in results.tables.items():
        keep = [i for i, column in enumerate(table.columns) if column != "seconds"]
        tables[name] = {"columns": [table.columns[i] for i in keep], "caption": table.caption,
                        "rows": [[row[i] for i in keep] for row in table.rows]}  # fmt: skip
    numbers = {"seeds": results.seeds, "noise": results.noise,
               "metrics": {k: v for k, v in results.metrics.items() if k.rsplit("/", 1)[-1] != "seconds"},
               "tables": tables, "sections": [[s.title, s.text] for s in results.sections], "figures": sorted(results.figures)}  # fmt: skip
    return json.loads(json.dumps(numbers), parse_constant=str)


@pytest.fixture
def golden():
    """``golden(name, {"part": results, ...})`` asserts that every part measures exactly the
    numbers recorded in ``tests/unit/golden/<name>.json`` (``measured_numbers``). With
    ``RECPRIVACY_RECORD_GOLDEN=1`` it records them instead, with the commit they were measured
    at, and the test is skipped (a recording proves nothing)."""

    def check(name: str, runs: dict[str, Any]) -> None:
        path = GOLDEN / f"{name}.json"
        measured = {part: measured_numbers(results) for part, results in runs.items()}
        if os.environ.get("RECPRIVACY_RECORD_GOLDEN") == "1":
            commit = subprocess.run(["git", "log", "-1", "--format=%h %s"], capture_output=True, text=True,
                                    cwd=GOLDEN, check=True).stdout.strip()  # fmt: skip
            staged = path.with_suffix(".json.tmp")
            staged.write_text(json.dumps({"recorded_at": commit, "runs": measured}, indent=1) + "\n")
            staged.replace(path)
            pytest.skip(f"recorded {path.name} at {commit}")
        recorded = json.loads(path.read_text(), parse_constant=str)["runs"]
        assert measured.keys() == recorded.keys()
        for part, numbers in measured.items():
            for field, value in numbers.items():
                if isinstance(value, dict):
                    assert value.keys() == recorded[part][field].keys(), (part, field)
                    for key, item in value.items():
                        assert item == recorded[part][field][key], (part, field, key)
                else:
                    assert value == recorded[part][field], (part, field)

    return check
