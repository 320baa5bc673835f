"""Shared fixtures. Real datasets are found through RECPRIVACY_DATA; with
RECPRIVACY_REQUIRE_DATA=1 (as in CI) a missing dataset fails the test instead of skipping.

OpenMP threads wait passively (``OMP_WAIT_POLICY=PASSIVE``, unless the environment sets it):
set here, before anything imports PyTorch, so its OpenMP runtime reads it at start-up, and
inherited by the processes a test starts (Flower SuperNodes, Ray workers). With the default
policy an idle intra-op thread spins while it waits for the next parallel region; on a 2-core
machine shared with other processes that spinning burned ~9x the CPU of the work itself (the
SASRec unit fixture: 20 CPU s with spinning, 2.3 CPU s passive). The thread count and how work
is split are unchanged, so the results are bitwise the same (checked on that fixture's scores)."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import pytest

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")


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
