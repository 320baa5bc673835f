"""Issue 48's acceptance for progress: the demo audit, piped, shows at most 40 lines of
progress, one per stage, each with the run's ETA and none holding a Python value's repr."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

#: the built-in synthetic data at a third of its size, BPR-MF for a few epochs: every section runs
SMALLER = ["--set", "dataset.options.n_users=300", "--set", "dataset.options.n_items=400",
           "--set", "dataset.options.n_interactions=15000", "--set", "model.params.n_epochs=5"]  # fmt: skip

#: what a Python repr looks like in a line: a tuple or list of strings, a dict, an object, a module path
REPR = re.compile(r"\('|\['|\{'|<[a-z_.]+[ >]|recprivacy\.[a-z_]+\.|object at 0x|\b(?:True|False|None)\b")


@pytest.mark.slow
def test_the_demo_audit_piped_prints_one_line_per_stage_without_reprs(tmp_path: Path):
    env = {k: v for k, v in os.environ.items() if k not in ("RECPRIVACY_QUIET", "CI")}
    run = subprocess.run([sys.executable, "-m", "recprivacy", "audit", "--out", str(tmp_path / "runs"), *SMALLER],
                         capture_output=True, text=True, env=env, timeout=600, check=False)  # fmt: skip
    assert run.returncode == 0, run.stderr
    progress = [line for line in run.stderr.splitlines() if line.strip()]
    assert 10 <= len(progress) <= 40, run.stderr
    assert all(re.match(r"\[recprivacy \+\d+\.\ds \| \d+/\d+ \| ETA (unknown|\d+s|\d+m \d\ds)\] ", line)
               for line in progress), run.stderr  # fmt: skip
    assert not [line for line in progress + run.stdout.splitlines() if REPR.search(line)], run.stderr
    assert "epoch" not in run.stderr
    stages = [line.split("] ", 1)[1] for line in progress]
    assert "Membership inference (paper 001)" in stages and stages[-1].startswith("write the run folder")
    assert any(stage.startswith("membership: training 8 reference recommenders") for stage in stages)
