"""Study ``federated`` (paper 004): attribute inference from a federated recommender's uploads,
and the APM defence.

The study trains one federated recommender per defence (``methods``, :mod:`.methods`) with one
of three engines (``engine``, ``recprivacy.federated.engines``: ``simulator``, the fast
in-process default; ``flower-sim``, Flower's simulation engine; ``flower``, a Flower deployment
started on this machine or joined at ``superlink: host:port``), evaluates Hit@K / NDCG@K of the
global model on the leave-one-out split (full ranking, training items masked), then runs one
extra attack round (the paper attacks "a well-trained round" without saying which) and attacks
the uploads: for every attribute, ζ, attacker and
component, ``attack_seeds`` random ζ-splits (mean ± std). Each (d, method) is a group of
study-kit cells (:mod:`.cells`: its training on the configured engine, then one cell per attack
setting; on a local ``flower`` deployment, the groups this process runs share one federation),
so a run stores its cells as they finish, resumes (``recprivacy run --resume``) and
runs its groups on Ray (``--executor ray``); the driver loads and splits the data and writes
each method's privacy statement (``methods.method_statement``: it needs no training). The attack round
samples its clients like any other (``attack_clients: round``, the default, so the adversary
knows ζ of about half the users); ``attack_clients: all`` lets every client take part (ζ of
all users, twice the known users and twice the targets). It renders the layouts
of Tables II-VI and the Figure 4-7 analyses with the paper's numbers beside ours
(:mod:`.render`). Each method's privacy statement is listed in the ``privacy`` table.

``holdout``: ``latest`` holds out each user's latest interaction (leave-one-out; the paper does
not say which one); ``random``
one seeded-random interaction per user, for datasets without timestamps (Coat), where "latest"
would mean the last row of the file. ``max_users``: the dataset's first users only.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from recprivacy.attacks.attribute import check_zeta
from recprivacy.config import Config
from recprivacy.data.interactions import Interactions
from recprivacy.data.registry import load_dataset
from recprivacy.data.split import temporal_split
from recprivacy.defenses.apm import make_defence
from recprivacy.defenses.federated_dp import BASELINES, make_baseline
from recprivacy.experiments.federated.cells import AttackKey, FederatedGrid, plan_cells
from recprivacy.experiments.federated.methods import method_statement
from recprivacy.experiments.federated.options import METHOD_LABELS, FederatedOptions, factory_options
from recprivacy.experiments.federated.render import privacy_section, render
from recprivacy.experiments.kit import Bench, Cell, CellResult
from recprivacy.experiments.results import Results
from recprivacy.experiments.runner import new_results
from recprivacy.federated.engines import shared_deployments
from recprivacy.federated.features import attribute_labels, user_features
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


def run_federated(config: Config, options: FederatedOptions, bench: Bench | None = None) -> Results:
    """The ``federated`` study (module docstring); its cells run on ``bench`` (default: in this
    process, records in memory; ``recprivacy run`` passes the run folder's store)."""
    results = new_results(config)
    data, train, test = prepare(config, options, results)
    feats = user_features(train)
    labels = {a: attribute_labels(data, a) for a in options.attributes}
    cells = plan_cells(options)
    with shared_deployments():  # the flower engine's methods train on one local deployment
        found = (bench or Bench()).run(FederatedGrid(results.name, config, options, train, test, feats, labels), cells)
    hits: dict[tuple[int, str], dict[str, float]] = {}
    curves: dict[str, tuple[list, list]] = {}
    statements: dict[str, PrivacyStatement] = {}
    for cell in (c for c in cells if c.setting["kind"] == "training"):
        dim, method, result = cell.setting["dim"], cell.setting["method"], found[cell.key]
        hits[(dim, method)] = {m.metric: m.value for m in result.measurements if m.unit != "s" and m.metric != "attack_clients"}
        curves[f"{METHOD_LABELS[method]} d={dim}"] = (result.arrays["rounds"].tolist(), result.arrays["hits"].tolist())
        values = {m.metric: m.value for m in result.measurements}
        results.timings[f"round_seconds_median/{method}/d={dim}"] = values["round_seconds_median"]
        results.metrics[f"{method}/d={dim}/attack_clients"] = values["attack_clients"]
        statement = method_statement(config, options, method, train, feats, dim)
        if statement is not None:
            key = "epsilon" if method in BASELINES else "epsilon_basic_composition"
            results.metrics[f"{method}/d={dim}/{key}"] = statement.epsilon
            if dim == options.dims[0]:
                statements[method] = statement
    render(results, data.name, options, config.eval.ks, hits, attack_rows(cells, found, results), curves)
    privacy_section(results, statements)
    results.seeds.update({"split": 0, "attack_splits": options.attack_seeds})
    return results


def attack_rows(cells: Sequence[Cell], found: Mapping[str, CellResult], results: Results) -> dict[AttackKey, dict[str, float]]:
    """The attack cells' values by (d, method, attribute, ζ, attacker, component), leaving out
    the cells that measured nothing; their seconds add up in ``results.timings`` per method."""
    rows: dict[AttackKey, dict[str, float]] = {}
    for cell in (c for c in cells if c.setting["kind"] == "attack" and found[c.key].measurements):
        s = cell.setting
        values = {m.metric: m.value for m in found[cell.key].measurements if m.unit != "s"}
        rows[(s["dim"], s["method"], s["attribute"], s["zeta"], s["attacker"], s["component"])] = values
        seconds = sum(m.value for m in found[cell.key].measurements if m.unit == "s")
        timer = f"attack/{s['method']}/d={s['dim']}"
        results.timings[timer] = results.timings.get(timer, 0.0) + seconds
    return rows
