"""The kit's executors: in-process and local Ray (2 workers) give identical measurements on a
smoke grid of tiny real cells (a seeded synthetic dataset, an LFM trained for two epochs), and
an error inside a cell names the cell, in-process and from a Ray worker."""

from __future__ import annotations

import sys

import numpy as np
import pytest

from recprivacy.errors import ConfigError
from recprivacy.experiments.kit import Bench, Cell, CellResult, InProcess, Measurement, RayExecutor, RecordStore, make_executor

ray = pytest.importorskip("ray")  # the optional 'ray' extra (installed in the test environment)


class TinyLFM:
    """Cells (seed, n_factors): the mean score an LFM gives on a seeded synthetic dataset."""

    def prepare(self, group: str):
        from recprivacy.data.synthetic import make_synthetic

        return make_synthetic(n_users=40, n_items=30, n_interactions=400, seed=int(group), min_user_interactions=5)

    def measure(self, cell: Cell, data) -> CellResult:
        from recprivacy.models import make_model

        if cell.setting["n_factors"] == 0:
            raise ConfigError("n_factors must be positive")
        model = make_model("lfm", n_factors=cell.setting["n_factors"], n_epochs=2, seed=cell.setting["seed"]).fit(data)
        scores = model.score(np.arange(data.n_users)).numpy()
        return CellResult([Measurement("toy", "smoke", cell.setting, "mean_score", float(scores.mean()), cell.setting["seed"])],
                          {"first_row": scores[0]})  # fmt: skip


CELLS = [Cell({"seed": s, "n_factors": f}, str(s)) for s in (0, 1, 2) for f in (2, 4)]


@pytest.fixture(autouse=True)
def _by_value():
    ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])  # workers need not import this test file


def test_ray_and_in_process_give_identical_measurements(local_ray, tmp_path):
    here = Bench(RecordStore(tmp_path / "here"), InProcess()).run(TinyLFM(), CELLS)
    there = Bench(RecordStore(tmp_path / "ray"), RayExecutor()).run(TinyLFM(), CELLS)
    assert list(there) == [c.key for c in CELLS]
    for key in here:
        assert here[key].measurements == there[key].measurements
        assert np.array_equal(here[key].arrays["first_row"], there[key].arrays["first_row"])
    assert len(RecordStore(tmp_path / "ray").load()) == len(CELLS)


def test_a_failing_cell_is_named_in_process_and_from_ray(local_ray, tmp_path):
    bad = [*CELLS[:2], Cell({"seed": 0, "n_factors": 0}, "0")]
    for executor in (InProcess(), RayExecutor()):
        with pytest.raises(ConfigError, match=r"^cell seed=0 n_factors=0: n_factors must be positive$"):
            Bench(RecordStore(), executor).run(TinyLFM(), bad)


def test_unknown_executor_and_a_stray_address_are_config_errors():
    with pytest.raises(ConfigError, match="--executor: expected one of inprocess, ray, got 'dask'"):
        make_executor("dask")
    with pytest.raises(ConfigError, match="--ray-address 10.0.0.1:6379: only with --executor ray"):
        make_executor("inprocess", "10.0.0.1:6379")
