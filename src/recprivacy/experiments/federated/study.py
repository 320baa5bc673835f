"""Study ``federated`` (paper 004): attribute inference from a federated recommender's uploads,
and the APM defence.

The study trains one federated recommender per defence (``methods``, :mod:`.methods`) with one
of three engines (``engine``, ``recprivacy.federated.engines``: ``simulator``, the fast
in-process default; ``flower-sim``, Flower's simulation engine; ``flower``, a Flower deployment
started on this machine or joined at ``superlink: host:port``), evaluates Hit@K / NDCG@K of the
global model on the leave-one-out split (full ranking, training items masked), then runs one
extra attack round (digest G11) and attacks the uploads (:mod:`.cells`): for every attribute,
ζ, attacker and component, ``attack_seeds`` random ζ-splits (mean ± std). The attack round
samples its clients like any other (``attack_clients: round``, G11's default, so the adversary
knows ζ of about half the users); ``attack_clients: all`` lets every client take part (G11's
option: ζ of all users, twice the known users and twice the targets). It renders the layouts
of Tables II-VI and the Figure 4-7 analyses with the paper's numbers beside ours
(:mod:`.render`). Each method's privacy statement is listed in the ``privacy`` table.

``holdout``: ``latest`` holds out each user's latest interaction (digest §6/G20); ``random``
one seeded-random interaction per user, for datasets without timestamps (Coat), where "latest"
would mean the last row of the file. ``max_users``: the dataset's first users only.
"""

from __future__ import annotations

import numpy as np

from recprivacy.attacks.attribute import check_zeta
from recprivacy.config import Config
from recprivacy.data.interactions import Interactions
from recprivacy.data.registry import load_dataset
from recprivacy.data.split import temporal_split
from recprivacy.defenses.apm import make_defence
from recprivacy.defenses.federated_dp import BASELINES, make_baseline
from recprivacy.experiments.federated.cells import Cell, attack_round
from recprivacy.experiments.federated.methods import train_method
from recprivacy.experiments.federated.options import METHOD_LABELS, FederatedOptions, factory_options
from recprivacy.experiments.federated.render import privacy_section, render
from recprivacy.experiments.results import Results
from recprivacy.experiments.runner import new_results
from recprivacy.federated.features import attribute_labels, user_features
from recprivacy.metrics.ranking import evaluate
from recprivacy.privacy.accounting import PrivacyStatement


def prepare(config: Config, options: FederatedOptions, results: Results) -> tuple[Interactions, Interactions, Interactions]:
    """Dataset (optionally its first ``max_users`` users), leave-latest-one-out split; the
    options the data can refute (ζ, attributes, each method's settings) are checked first."""
    ds = config.dataset
    with results.timed("load_data"):
        data = load_dataset(ds.name, ds.data_dir, **ds.options)
    for z in options.zetas:
        check_zeta(z)
    for attribute in options.attributes:
        attribute_labels(data, attribute)
    for method in options.methods:
        if method in BASELINES:
            make_baseline(method, None, **factory_options(method, options))
        else:
            make_defence(method, **factory_options(method, options))
    if options.max_users is not None and options.max_users < data.n_users:
        data = data.subset_users(np.arange(options.max_users)).reindex()
    if options.holdout == "random":
        shuffled = data.select(np.random.default_rng(0).permutation(len(data)), "shuffle_rows", seed=0)
        train, test = temporal_split(shuffled.with_changes(timestamps=None), leave_last=1)
    else:
        train, test = temporal_split(data, leave_last=1)
    results.dataset = data.fingerprint()
    return data, train, test


def run_federated(config: Config, options: FederatedOptions) -> Results:
    """The ``federated`` study (module docstring)."""
    results = new_results(config)
    data, train, test = prepare(config, options, results)
    feats = user_features(train)
    labels = {a: attribute_labels(data, a) for a in options.attributes}
    ks = config.eval.ks
    curves: dict[str, tuple[list, list]] = {}
    rows: dict[Cell, dict] = {}
    hits: dict[tuple, dict] = {}
    statements: dict[str, PrivacyStatement] = {}
    for dim in options.dims:
        for method in options.methods:
            trained = train_method(config, options, method, train, feats, dim)
            fed = trained.federation
            evaluations = [(t, evaluate(trained.recommender(t), test, ks=ks)) for t in sorted(fed.snapshots)]
            final = evaluations[-1][1]
            hits[(dim, method)] = {k: float(v) for k, v in final.items()}
            curves[f"{METHOD_LABELS[method]} d={dim}"] = ([r for r, _ in evaluations], [m[f"hit@{ks[-1]}"] for _, m in evaluations])
            results.timings[f"round_seconds_median/{method}/d={dim}"] = float(np.median(fed.round_seconds))
            with results.timed(f"attack/{method}/d={dim}"):
                attacked, cells = attack_round(trained.sim, fed.attack, labels, feats.blocks, options, dim, method)
                rows.update(cells)
                results.metrics[f"{method}/d={dim}/attack_clients"] = float(attacked)
            if trained.statement is not None:
                key = "epsilon" if method in BASELINES else "epsilon_basic_composition"
                results.metrics[f"{method}/d={dim}/{key}"] = trained.statement.epsilon
                if dim == options.dims[0]:
                    statements[method] = trained.statement
    render(results, data.name, options, ks, hits, rows, curves)
    privacy_section(results, statements)
    results.seeds.update({"split": 0, "attack_splits": options.attack_seeds})
    return results
