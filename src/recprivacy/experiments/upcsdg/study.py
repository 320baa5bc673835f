"""The ``upcsdg`` study (paper 003).

Per seed (``study_options.seeds``, default the config seed): prepare the dataset and its
train / validation / test split (``train.prepare_data``), fit the configured feature model
(BPR-MF, d = 64) on train and freeze its factors, then

* **Table 2**: Random, BPR-MF, NeuMF and LightGCN on the original training data and on the
  synthetic data of the paper's two settings, "−" (k = 0.8, γ = 0.1) and "+" (k = 0.2,
  γ = 0.9), tested on the original test split (PR, Recall, NDCG at 20, full ranking);
* **grid** (Figures 2 and 4): every (k, γ) of ``grid_k`` x ``grid_gamma`` with BPR-MF, the
  similarity of replacements to their originals, and the replaced-item recovery attack
  (``attacks.recovery``: blind and informed attackers with the frozen item embeddings, a blind
  attacker with item embeddings learned from the release, and the popularity guess);
* **ablations** (Table 3): UPC-SDG_s / _r / _f against UPC-SDG at ``ablation_gamma`` (0.9);
* **membership**: the user-level membership attack of paper 001 (``attacks.membership``,
  Assumption I) against ``membership_algorithm`` trained on the real data of the target's members
  and on a UPC-SDG release of it for every grid cell (the attack model is trained once on real
  shadow data and reused).

Each measurement is a study-kit cell (:mod:`.cells`; one group per seed, whose ``lab.SeedLab``
generates each synthetic dataset once per (variant, k, γ) and shares it among the parts), so a
run stores its cells as they finish, resumes (``recprivacy run --resume``) and runs its seeds
on Ray (``--executor ray``). The splits are prepared here, in the driver. Tables show means over seeds, the paper's
numbers beside ours (``paper_dataset``, default Office, the closest to Amazon Musical
Instruments); every measurement per seed is kept in the ``measurements`` table, from which
``merge_runs`` renders runs of single seeds as one.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pandas as pd

from recprivacy.config import Config, load_config, validate_options
from recprivacy.errors import ConfigError
from recprivacy.experiments.kit import Bench
from recprivacy.experiments.results import Results
from recprivacy.experiments.runner import new_results
from recprivacy.experiments.train import prepare_data
from recprivacy.experiments.upcsdg.cells import UPCSDGGrid, plan_cells, rows
from recprivacy.experiments.upcsdg.options import UPCSDGOptions
from recprivacy.experiments.upcsdg.render import render

_TEXT_COLUMNS = ("kind", "variant", "model", "attack")
"""Columns of the measurement rows that hold text; the others are numbers (None read back as NaN)."""


def run_upcsdg(config: Config, options: UPCSDGOptions, bench: Bench | None = None) -> Results:
    """The ``upcsdg`` study (see module docstring); its cells run on ``bench`` (default: in this
    process, records in memory; ``recprivacy run`` passes the run folder's store)."""
    results = new_results(config)
    seeds = options.seeds or [config.seed]
    data = {seed: prepare_data(config.model_copy(update={"seed": seed}), results) for seed in seeds}
    results.seeds["model"] = int(config.model.params.get("seed", seeds[-1]))  # as ``train.fit_model`` seeds the feature model
    cells = plan_cells(options, seeds)
    found = (bench or Bench()).run(UPCSDGGrid(results.name, config, options, data), cells)
    return render(results, options, pd.DataFrame(rows(cells, found, results)), seeds)


def merge_runs(runs: Sequence[Results]) -> Results:
    """One ``upcsdg`` result from runs of the same config that differ only in their seeds (for
    example one process per seed): their per-seed ``measurements`` rows together, rendered again.
    The report keeps the first run's dataset description; timings are summed."""
    if not runs or any(r.study != "upcsdg" for r in runs):
        raise ConfigError("merge_runs: expected one or more runs of the upcsdg study")
    def without_seeds(config: dict[str, Any]) -> dict[str, Any]:
        return {**config, "seed": None, "study_options": {**config.get("study_options", {}), "seeds": None}}
    first = runs[0]
    if any(without_seeds(r.config) != without_seeds(first.config) for r in runs[1:]):
        raise ConfigError("merge_runs: the runs' configs differ in more than their seeds")
    frames = [pd.DataFrame(r.tables["measurements"].rows, columns=r.tables["measurements"].columns) for r in runs]
    frame = pd.concat(frames, ignore_index=True)
    seeds = sorted(set(frame["seed"].astype(int)))
    if len(frame.drop_duplicates(["seed"]).index) != sum(f["seed"].nunique() for f in frames):
        raise ConfigError("merge_runs: two runs measured the same seed")
    config = load_config(base={**first.config, "study_options": {**first.config["study_options"], "seeds": seeds}})
    results = new_results(config)
    results.dataset = dict(first.dataset)
    for run in runs:
        for key, value in run.timings.items():
            results.timings[key] = results.timings.get(key, 0.0) + value
    numeric = {c: pd.to_numeric(frame[c]) for c in frame if c not in _TEXT_COLUMNS}
    return render(results, validate_options(UPCSDGOptions, config.study_options), frame.assign(**numeric), seeds)
