"""The ``membership`` study: user-level membership inference against recommenders and the
Popularity Randomization defence (paper 001), reproducing the paper's tables and figures.

A config names the experiments (``study_options.experiments``, keys of ``plan.EXPERIMENTS``:
``hit_rate`` = Table 2, ``assumption1`` = Figure 3, ``assumption2`` = Tables 3-5,
``assumption3`` = Figure 6, ``kmeans`` = Tables 6-7, ``sweep_k`` / ``sweep_l`` / ``weighting``
= Figure 8, ``mimi`` = Figure 9, ``shadow_size`` = §3.4, ``features`` = Figure 10,
``defense`` = Figures 12-13) and the datasets (default: ``dataset.name``). Steps:

1. load every dataset (``data.registry.load_dataset`` with ``dataset.data_dir`` and
   ``study_options.dataset_options[name]``) and apply ``dataset.preprocessing``;
2. for each of ``n_seeds`` seeds (``seed``, ``seed + 1``, ...), one ``MembershipLab`` runs the
   union of the experiments' settings as study-kit cells (:mod:`.cells`), training each
   recommender once; finished cells are stored, so an interrupted run resumes;
3. every metric is averaged over seeds (mean and standard deviation) and each experiment is
   rendered as a table in the paper's layout with the paper's number beside ours
   (:mod:`.render`), plus ROC curves on log-log axes, heat maps and 2-D feature embeddings.

``dataset.split`` and ``model`` of the config are not used: the study partitions users itself
(``attacks.membership.partition``) and trains every algorithm in ``study_options.algorithms``
with ``study_options.model_params``.
"""

from __future__ import annotations

from recprivacy.config import Config
from recprivacy.data.interactions import Interactions
from recprivacy.data.preprocess import preprocess
from recprivacy.data.registry import load_dataset
from recprivacy.experiments.kit import Bench
from recprivacy.experiments.membership.collect import collect, merge_plans
from recprivacy.experiments.membership.options import MembershipOptions
from recprivacy.experiments.membership.plan import plan_experiment
from recprivacy.experiments.membership.render import render
from recprivacy.experiments.results import Results
from recprivacy.experiments.runner import new_results

def load_datasets(config: Config, options: MembershipOptions) -> dict[str, Interactions]:
    """The configured datasets, loaded and preprocessed."""
    names = options.datasets or [config.dataset.name]
    p = config.dataset.preprocessing
    out = {}
    for name in names:
        extra = options.dataset_options.get(name, config.dataset.options if name == config.dataset.name else {})
        data = load_dataset(name, config.dataset.data_dir, **extra)
        out[name] = preprocess(data, implicit_threshold=p.implicit_threshold, kcore=p.kcore, min_user=p.min_user, dedup=p.dedup)
    return out


def run_membership(config: Config, options: MembershipOptions, bench: Bench | None = None) -> Results:
    """The ``membership`` study (see module docstring); its cells run on ``bench`` (default: in
    this process, records in memory; ``recprivacy run`` passes the run folder's store)."""
    results = new_results(config)
    with results.timed("load_data"):
        datasets = load_datasets(config, options)
    names = list(datasets)
    results.dataset = datasets[names[0]].fingerprint()
    plans = {name: plan_experiment(name, options, names) for name in options.experiments}
    seeds = [config.seed + i for i in range(options.n_seeds)]
    collected = collect(datasets, options, merge_plans(list(plans.values())), seeds, results, bench or Bench(), config.noise)
    results.seeds.update({f"seed{i}": s for i, s in enumerate(seeds)})
    with results.timed("render"):
        render(results, options, names, plans, collected)
    return results
