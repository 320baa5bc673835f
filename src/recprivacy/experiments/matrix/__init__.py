"""The attack x defence matrix (issue 32): every attack against every defence that changes
what it observes, on one dataset and one target, with frozen and adaptive attackers, the
utility each defence costs, its privacy statement, and claimed against measured epsilon.

``plan`` names the attacks, defences and which apply; ``options`` holds ``MatrixOptions``;
``cells`` judges one cell; ``central`` builds the defended worlds of the central target and runs
their columns (``membership``, ``exposure``, ``release`` run theirs); ``uploads`` runs the
federated-uploads column with the upload defences' rows; ``grid`` makes them the study kit's
cells and ``records`` keeps them in the run folder; ``study`` runs the cells and ``render``
writes the report. This package registers the ``matrix`` study, on the kit (``recprivacy run
--resume``, ``--executor``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from recprivacy.config import load_config
from recprivacy.experiments.matrix.cells import Change, Judged, MatrixCell, judged
from recprivacy.experiments.matrix.options import MatrixOptions
from recprivacy.experiments.matrix.render import cell_change, cell_headline
from recprivacy.experiments.matrix.study import run_matrix
from recprivacy.experiments.results import Results
from recprivacy.experiments.runner import register_study, run_study

register_study("matrix", run_matrix, MatrixOptions, "every attack against every applicable defence on one dataset and target",
               resumable=True)

__all__ = ["Change", "Judged", "Matrix", "MatrixCell", "MatrixOptions", "cell_change", "cell_headline", "default_matrix_config", "judged",
           "run_matrix"]


def default_matrix_config(dataset: str = "ml-100k", target: str = "bpr") -> dict[str, Any]:
    """The ``matrix`` study on ``dataset`` with the built-in ``target`` model (reduced epochs)."""
    return {"name": f"matrix-{dataset}-{target}", "study": "matrix", "seed": 0, "dataset": {"name": dataset},
            "model": {"name": target, "params": {"n_epochs": 60}}, "eval": {"ks": [10]}}  # fmt: skip


class Matrix:
    """``Matrix(dataset, target).run()``: the attack x defence matrix as ``Results``.

    Parameters
    ----------
    dataset:
        A dataset name (``ml-100k``, ``synthetic``, ...).
    target:
        A built-in model name (a factor model: the canary attack reads its item factors).
    data_dir:
        Where the dataset's files are (default: the usual search path).
    config:
        A YAML config to start from (its ``study`` must be ``matrix``).
    noise:
        Where the defences' noise comes from: ``secure`` (the OS's entropy) or ``simulation``
        (seeded, repeatable, for experiments only); default: the config's (``secure``).
    **options:
        ``study_options`` of ``MatrixOptions`` (e.g. ``canaries=500``).
    """

    def __init__(self, dataset: str = "ml-100k", target: str = "bpr", data_dir: str | Path | None = None,
                 config: str | Path | None = None, noise: str | None = None, **options: Any) -> None:  # fmt: skip
        self.dataset, self.target, self.data_dir, self.config, self.options = dataset, target, data_dir, config, options
        self.noise = noise

    def run(self) -> Results:
        """Run the study (the results are not written; ``results.write("runs")`` does)."""
        updates: dict[str, Any] = {f"study_options.{key}": value for key, value in self.options.items()}
        if self.data_dir is not None:
            updates["dataset.data_dir"] = str(self.data_dir)
        if self.noise is not None:
            updates["noise"] = self.noise
        base = None if self.config else default_matrix_config(self.dataset, self.target)
        return run_study(load_config(self.config, updates=updates, base=base))
