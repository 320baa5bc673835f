"""The matrix on the study kit (issue 49): ``recprivacy matrix`` stores every finished cell in its
run folder; a run that dies mid-way keeps them, and ``recprivacy run --resume RUN_DIR`` measures
only the cells not stored; an uninterrupted run with its cells on Ray workers gives the resumed
in-process run's numbers, number for number. The matrix is a reduced one on the synthetic data
(``REDUCED``: the shared reduced matrix of test_matrix.py, ``shared_matrix.MATRIX_CONFIG``, with one
DP-SGD row, one sequential defence and three columns, so that the path is whole but each run costs a
tenth of it). Until issue 49 an uninterrupted in-process run was the reference of both tests; the Ray
run is uninterrupted and the resumed run in-process, so their agreement checks both claims, and a
third run of the matrix is saved (the resumed run would have to be wrong exactly as Ray is for them to
agree on every number)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from kit_runs import on_local_ray
from typer.testing import CliRunner

from recprivacy.cli import app
from recprivacy.config import load_config
from recprivacy.experiments import load_results
from recprivacy.experiments.matrix.grid import MatrixGrid
from shared_matrix import MATRIX_CONFIG

pytestmark = pytest.mark.slow

#: the shared reduced matrix with one DP-SGD row, one sequential defence and the attribute, exposure and canary columns
REDUCED = {**MATRIX_CONFIG, "study_options": {
    **MATRIX_CONFIG["study_options"], "columns": ["attribute", "exposure", "canaries"], "dpsgd_epsilons": [1.0],
    "sequential": {**MATRIX_CONFIG["study_options"]["sequential"], "defences": ["EdgeRand"]}}}  # fmt: skip
#: the cells in the order they run: the central rows, the three columns, the sequential defence's canaries
CELLS = [{"part": "rows"}, {"part": "column", "attack": "attribute"}, {"part": "column", "attack": "exposure"},
         {"part": "column", "attack": "canaries"}, {"part": "sequential"}]  # fmt: skip
N_CELLS = len(CELLS)
#: the run dies measuring its third cell (the exposure column), with the rows and the attribute column stored
DIES_AT = 3

runner = CliRunner()


def invoke(*args: object):
    return runner.invoke(app, [str(a) for a in args])


def records(folder: Path) -> list[dict]:
    return [json.loads(line) for line in (folder / "records.jsonl").read_text().splitlines()]


@pytest.fixture(scope="module")
def config(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("matrix") / "matrix.yaml"
    path.write_text(yaml.safe_dump(REDUCED))
    return path


@pytest.fixture(scope="module")
def killed_and_resumed() -> dict[str, Path]:
    """The folder of the run the first test killed and resumed, for the second to compare with."""
    return {}


def test_a_killed_matrix_resumes_without_remeasuring(config, killed_and_resumed, monkeypatch):
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
    assert len(records(folder)) == N_CELLS and (folder / "results.json").is_file()
    killed_and_resumed["folder"] = folder


def test_the_matrix_on_local_ray_gives_the_resumed_runs_numbers(local_ray, killed_and_resumed, tmp_path):
    """``--executor ray``, uninterrupted: the cells on two local Ray workers (``kit.RayExecutor``), each group
    preparing the rows in its own process, one record per cell, give the killed and resumed in-process run's
    numbers (module docstring)."""
    on_ray = on_local_ray(load_config(base=REDUCED), tmp_path)
    stored = sorted(json.dumps(r["cell"], sort_keys=True) for r in records(tmp_path))  # in the order they finished
    assert stored == sorted(json.dumps(c, sort_keys=True) for c in CELLS)
    again = load_results(killed_and_resumed["folder"])  # the first test's run: this test needs it
    assert {v["attack"] for v in on_ray.verdicts} >= {"attribute", "exposure", "canaries"}
    assert on_ray.tables == again.tables
    assert json.dumps(on_ray.verdicts) == json.dumps(again.verdicts)
    assert json.dumps(on_ray.metrics) == json.dumps(again.metrics)
    assert [s.text for s in on_ray.sections] == [s.text for s in again.sections]
