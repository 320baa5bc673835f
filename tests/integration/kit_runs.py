"""Runs of a study on the study kit for the golden tests: its cells on two local Ray workers,
and a CLI run interrupted after some stored cells and resumed (``test_cli_resume``'s helpers)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from test_cli_resume import interrupted_copy, invoke

from recprivacy.config import Config
from recprivacy.experiments import Results, load_results, run_study


def on_local_ray(config: Config, folder: Path) -> Results:
    """The study of ``config`` with its cells on the local Ray instance (the ``local_ray``
    fixture of ``tests/conftest.py``, which the test requests), stored under ``folder``."""
    from recprivacy.experiments.kit import Bench, RayExecutor, RecordStore

    return run_study(config, Bench(RecordStore(folder), RayExecutor()))


def stored_cells(folder: Path) -> int:
    return len((folder / "records.jsonl").read_text().splitlines())


def resumed_runs(study: dict[str, Any], root: Path, keeps: tuple[int, ...]) -> dict[int, tuple[Results, str]]:
    """Run the study of ``study`` through ``recprivacy run``, then for each ``keep`` resume a copy
    cut after ``keep`` stored cells: the resumed run's results and its progress lines, by keep.
    Each resumed run must say it found ``keep`` cells stored and the rest to run."""
    config = root / "study.yaml"
    config.write_text(yaml.safe_dump(study, allow_unicode=True))
    assert invoke("run", config, "--out", root / "runs").exit_code == 0
    (run_dir,) = (root / "runs").iterdir()
    out = {}
    for keep in keeps:
        folder = interrupted_copy(run_dir, root / f"kept{keep}", keep)
        result = invoke("run", "--resume", folder)
        assert result.exit_code == 0, result.output
        assert f"cells: {keep} stored, {stored_cells(run_dir) - keep} to run" in result.stderr
        out[keep] = load_results(folder), result.stderr
    return out
