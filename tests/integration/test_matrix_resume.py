"""The matrix on the study kit (issue 49): ``recprivacy matrix`` stores every finished cell in its
run folder; a run that dies mid-way keeps them, and ``recprivacy run --resume RUN_DIR`` measures
only the cells not stored and writes the numbers of the uninterrupted run; its cells on Ray workers give
the numbers of the in-process run. The matrix is the reduced
one on the synthetic data that test_matrix.py checks (``shared_matrix.MATRIX_CONFIG``); its
uninterrupted run is the session's shared one (``synthetic_matrix`` in ``conftest.py``), so this file
runs only the interrupted and resumed run. That test comes first and asks for the shared run only once
its own run is done: under pytest-xdist another worker may be building it meanwhile."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from kit_runs import on_local_ray

from recprivacy.cli import app
from recprivacy.config import load_config
from recprivacy.experiments import load_results
from recprivacy.experiments.matrix.grid import MatrixGrid
from shared_matrix import MATRIX_CONFIG

pytestmark = pytest.mark.slow

#: the cells in the order they run: the central rows and six central columns (interactions last), Pure FedRec and
#: the three upload defences, sequential, mechanisms
N_CELLS = 13
#: the run dies measuring its fourth cell (the exposure column), with the rows, membership and attribute stored
DIES_AT = 4

runner = CliRunner()


def invoke(*args: object):
    return runner.invoke(app, [str(a) for a in args])


def records(folder: Path) -> list[dict]:
    return [json.loads(line) for line in (folder / "records.jsonl").read_text().splitlines()]


@pytest.fixture(scope="module")
def config(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("matrix") / "matrix.yaml"
    path.write_text(yaml.safe_dump(MATRIX_CONFIG))
    return path


def test_a_killed_matrix_resumes_without_remeasuring_and_gives_the_same_numbers(config, matrix_run, monkeypatch):
    monkeypatch.delenv("RECPRIVACY_QUIET", raising=False)  # the progress lines say how many cells were stored
    measure, calls = MatrixGrid.measure, []

    def dies(self, cell, prepared):
        calls.append(cell.key)
        if len(calls) == DIES_AT:
            raise RuntimeError("the machine went away")
        return measure(self, cell, prepared)

    monkeypatch.setattr(MatrixGrid, "measure", dies)
    died = invoke("run", config, "--out", config.parent / "died")
    assert isinstance(died.exception, RuntimeError) and "cell part=column attack=exposure" in str(died.exception)
    (folder,) = (config.parent / "died").iterdir()
    assert not (folder / "results.json").exists() and len(records(folder)) == DIES_AT - 1

    def counted(self, cell, prepared):
        calls.append(cell.key)
        return measure(self, cell, prepared)

    calls.clear()
    monkeypatch.setattr(MatrixGrid, "measure", counted)
    resumed = invoke("run", "--resume", folder)
    assert resumed.exit_code == 0, resumed.output
    assert f"cells: {DIES_AT - 1} stored, {N_CELLS - DIES_AT + 1} to run" in resumed.stderr
    stored = {json.dumps(r["cell"], sort_keys=True, separators=(",", ":")) for r in records(folder)[: DIES_AT - 1]}
    assert len(calls) == N_CELLS - DIES_AT + 1 and not stored & set(calls)  # no stored cell measured again

    monkeypatch.undo()  # the shared uninterrupted run, if this worker builds it, measures unpatched
    config_path, whole = matrix_run(MATRIX_CONFIG)
    assert config_path.read_text() == config.read_text()
    again, first = load_results(folder), load_results(whole)
    assert again.tables == first.tables
    assert json.dumps(again.verdicts) == json.dumps(first.verdicts)
    assert json.dumps(again.metrics) == json.dumps(first.metrics)
    assert [s.text for s in again.sections] == [s.text for s in first.sections]


def test_the_matrix_stores_one_record_per_cell(synthetic_matrix):
    stored = records(synthetic_matrix)
    assert len(stored) == N_CELLS
    assert [r["cell"] for r in stored[:2]] == [{"part": "rows"}, {"part": "column", "attack": "membership"}]
    membership = {(m["setting"]["defence"], m["setting"]["attacker"]) for m in stored[1]["measurements"] if m["unit"] != "s"}
    assert {("none", "frozen"), ("dpmf_eps1", "adaptive")} <= membership  # each attacker's value is a measurement


def test_the_matrix_on_local_ray_gives_the_in_process_numbers(local_ray, tmp_path):
    """``--executor ray``: the cells on two local Ray workers (``kit.RayExecutor``), each group preparing the rows
    in its own process, give the in-process run's numbers. Reduced to what the path needs (one DP-SGD row, the
    canary column, one sequential defence): each group builds the rows again."""
    from recprivacy.experiments import run_study

    sequential = {**MATRIX_CONFIG["study_options"]["sequential"], "defences": ["EdgeRand"]}
    options = {**MATRIX_CONFIG["study_options"], "columns": ["canaries"], "dpsgd_epsilons": [1.0], "sequential": sequential}
    config = load_config(base={**MATRIX_CONFIG, "study_options": options})
    on_ray = on_local_ray(config, tmp_path)
    assert [r["cell"] for r in records(tmp_path)] == [{"part": "rows"}, {"part": "column", "attack": "canaries"},
                                                       {"part": "sequential"}]  # fmt: skip
    in_process = run_study(config)
    assert json.dumps(on_ray.verdicts) == json.dumps(in_process.verdicts)
    assert [v for v in on_ray.verdicts if v["attack"] == "canaries"]
    assert on_ray.tables == in_process.tables
