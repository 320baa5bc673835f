"""Fixtures shared by integration files.

``synthetic_matrix``: one uninterrupted run of the reduced attack x defence matrix on the synthetic data
(``shared_matrix.MATRIX_CONFIG``, by ``recprivacy matrix``), built once per test session and shared by every file that
asks for it: ``test_matrix.py`` checks its tables, ``test_matrix_interactions.py`` its interactions column, and
``test_report_layout.py`` lays out its report. Under
pytest-xdist each worker is a process of its own, so the run folder lives in the session's shared
temporary folder and a file lock lets the first worker that asks build it while the others wait
(pytest-xdist's recipe for session fixtures that should run once). The three files used to run three
matrices of their own (issue 49: the suite under 8 minutes).
"""

from __future__ import annotations

import hashlib
import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from filelock import FileLock
from typer.testing import CliRunner

from recprivacy.cli import app
from shared_matrix import MATRIX_CONFIG


def _shared_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The session's temporary folder every xdist worker sees (each worker's own is below it)."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if base.name.startswith("popen-gw") else base


@pytest.fixture(scope="session")
def matrix_run(tmp_path_factory) -> Callable[[dict[str, Any]], tuple[Path, Path]]:
    """``matrix_run(config) -> (config_path, run_dir)``: the finished run folder of ``recprivacy matrix
    --config`` on ``config`` (what the command printed, piped at 100 columns, in ``terminal.txt`` beside the
    config), made once per session and config (keyed by the config's content), under
    a lock shared by the xdist workers. Call it where the run is needed: a worker that asks while
    another builds it waits."""
    shared = _shared_folder(tmp_path_factory)

    def get(config: dict[str, Any]) -> tuple[Path, Path]:
        key = hashlib.sha256(json.dumps(config, sort_keys=True).encode()).hexdigest()[:12]
        folder = shared / f"matrix-{key}"
        with FileLock(str(shared / f"matrix-{key}.lock")):
            path, out = folder / "matrix.yaml", folder / "whole"
            if not (out.is_dir() and any((run / "results.json").is_file() for run in out.iterdir())):
                shutil.rmtree(out, ignore_errors=True)  # what a failed attempt left
                folder.mkdir(exist_ok=True)
                path.write_text(yaml.safe_dump(config))
                result = CliRunner().invoke(app, ["matrix", "--config", str(path), "--out", str(out)], env={"COLUMNS": "100"})
                assert result.exit_code == 0, result.output
                (folder / "terminal.txt").write_text(result.stdout)  # what the command printed, piped at 100 columns
            (run_dir,) = out.iterdir()
            return path, run_dir

    return get


@pytest.fixture(scope="session")
def synthetic_matrix(matrix_run) -> Path:
    """The run folder of the shared reduced matrix (``MATRIX_CONFIG``; module docstring)."""
    return matrix_run(MATRIX_CONFIG)[1]
