"""Shared fixtures. Real datasets are found through RECPRIVACY_DATA; with
RECPRIVACY_REQUIRE_DATA=1 (as in CI) a missing dataset fails the test instead of skipping."""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path

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
    are not a package; ``benchmarks/`` goes on ``sys.path`` as when a script runs, for ``record``)."""
    folder = Path(__file__).resolve().parents[1] / "benchmarks"
    if str(folder) not in sys.path:
        sys.path.append(str(folder))

    def load(name: str):
        spec = importlib.util.spec_from_file_location(name, folder / f"{name}.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module

    return load
