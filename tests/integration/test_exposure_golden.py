"""The ``exposure`` study and audit section give the numbers recorded before issue 35 moved
``experiments/exposure.py`` into a package: the same seeds, simulation noise and tiny synthetic
data must give the same metrics and table cells (to 1e-12; wall-clock columns left out).

Re-record only on purpose (a change that is meant to move the numbers), and say why in the commit:
``PYTHONPATH=src python tests/integration/test_exposure_golden.py --record``.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from recprivacy.config import load_config
from recprivacy.experiments import run_study
from recprivacy.experiments.results import Results

GOLDEN = Path(__file__).resolve().parents[1] / "unit" / "golden" / "exposure_smoke.json"
#: table columns that measure wall-clock time, not the study's outcome
CLOCK_COLUMNS = {"fit s", "train pairs/s", "eval pairs/s"}
SYNTHETIC = {"name": "synthetic", "options": {"n_users": 60, "n_items": 150, "n_interactions": 2400, "seed": 0}}
SMOKE = {
    "simulated": {
        "name": "exposure-golden-simulated", "study": "exposure", "seed": 0, "noise": "simulation", "dataset": SYNTHETIC,
        "model": {"name": "sasrec", "params": {"hidden": 16, "n_blocks": 1, "n_epochs": 2, "eval_every": 1}},
        "study_options": {
            "max_pairs_per_user": 6, "experiments": ["attack", "slate_sweep", "protection"], "encoders": ["mean", "att"],
            "decoders": ["point", "transformer"], "slate_sizes": [5, 10], "attacker": {"dim": 16, "n_epochs": 2, "patience": 1},
            "protection": {"selections": ["random", "similar"], "replacements": ["uniform", "batch_popularity"],
                           "ratios": [0.0, 0.5], "attacker": "mean+point", "embedding_epochs": 1},
        },
    },
    "impressions": {
        "name": "exposure-golden-impressions", "study": "exposure", "seed": 1, "noise": "simulation", "dataset": SYNTHETIC,
        "study_options": {"source": "impressions", "max_pairs_per_user": 5, "experiments": ["attack"], "encoders": ["max"],
                          "decoders": ["lstm"], "attacker": {"dim": 16, "n_epochs": 2}},
    },
    "audit": {
        "name": "exposure-golden-audit", "study": "audit", "seed": 0, "noise": "simulation",
        "dataset": {"name": "synthetic", "options": {"n_users": 80, "n_items": 120, "n_interactions": 2400}},
        "model": {"name": "bpr", "params": {"n_epochs": 3, "eval_every": 1}},
        "study_options": {"sections": ["exposure"], "exposure": {"n_epochs": 2, "max_pairs_per_user": 5, "dim": 16}},
    },
}  # fmt: skip


def outcome(results: Results) -> dict[str, Any]:
    """The numbers and words a run produced: metrics, every table cell but wall-clock
    columns, and the section texts."""
    tables = {}
    for name, table in results.tables.items():
        keep = [i for i, c in enumerate(table.columns) if c not in CLOCK_COLUMNS]
        tables[name] = {"columns": [table.columns[i] for i in keep], "rows": [[row[i] for i in keep] for row in table.rows]}
    return {"metrics": dict(results.metrics), "tables": tables, "texts": [s.text for s in results.sections]}


def run_smoke(name: str) -> dict[str, Any]:
    return outcome(run_study(load_config(base=SMOKE[name])))


def same(a: Any, b: Any) -> bool:
    """Equal JSON values, floats to 1e-12 (NaN equals NaN)."""
    if isinstance(a, float) or isinstance(b, float):
        if not isinstance(a, (int, float)) or not isinstance(b, (int, float)):
            return False
        return (math.isnan(a) and math.isnan(b)) or abs(a - b) <= 1e-12
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    return a == b


def test_same_checks_floats_to_1e_12_and_structure_exactly() -> None:
    assert same({"a": [1.0, float("nan"), "x"]}, {"a": [1.0 + 1e-13, float("nan"), "x"]})
    assert not same({"a": [1.0]}, {"a": [1.0 + 1e-11]})
    assert not same({"a": [1.0]}, {"a": [1.0, 2.0]}) and not same({"a": 1}, {"b": 1}) and not same(0.5, "0.5")


@pytest.mark.parametrize("name", list(SMOKE))
def test_smoke_numbers_match_the_record(name: str) -> None:
    recorded = json.loads(GOLDEN.read_text())["runs"][name]
    now = run_smoke(name)
    for part in ("metrics", "tables", "texts"):
        assert same(now[part], recorded[part]), f"{name}: {part} differ from {GOLDEN.name}"


def record() -> None:
    """Write the record (atomically) with the commit it was made at."""
    commit = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True, check=True,
                            cwd=GOLDEN.parent).stdout.strip()  # fmt: skip
    doc = {"recorded_at_commit": commit, "runs": {name: run_smoke(name) for name in SMOKE}}
    tmp = GOLDEN.with_suffix(".tmp")
    tmp.write_text(json.dumps(doc, indent=1) + "\n")
    tmp.replace(GOLDEN)


if __name__ == "__main__" and sys.argv[1:] == ["--record"]:
    record()
