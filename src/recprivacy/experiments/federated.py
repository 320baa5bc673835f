"""Study ``federated`` (paper 004) and audit section ``attribute``.

The study trains one federated recommender per defence (``methods``) with one of three
engines (``engine``, ``recprivacy.federated.engines``: ``simulator``, the fast in-process
default; ``flower-sim``, Flower's simulation engine; ``flower``, a Flower deployment started
on this machine or joined at ``superlink: host:port``), evaluates Hit@K / NDCG@K of the global model on the leave-one-out split (each
user's latest interaction held out, digest §6/G20; full ranking, training items masked), then
runs one extra attack round (digest G11) and attacks the uploads: for every attribute, ζ,
attacker and component, ``attack_seeds`` random ζ-splits (mean ± std). The attack round samples
its clients like any other (``attack_clients: round``, G11's default, so the adversary knows ζ
of about half the users); ``attack_clients: all`` lets every client take part (G11's option:
ζ of all users, twice the known users and twice the targets). It renders the layouts
of Tables II-VI and the Figure 4-7 analyses with the paper's numbers beside ours:

* Table II / V -- DNN (AIA) weighted F1 per method, attribute and ζ;
* Table III -- Hit@20 of APM against FixRec-min / FixRec-max;
* Tables IV / V -- F1 by attacker (DT, SVC, KNN, AIA) and ζ;
* Table VI -- Hit@20 and F1 for FedLightGCN / FedNCF (``model`` option) with none / ldp / apm;
* Figure 4 -- F1 per component of Pure FedRec's updates (``components``);
* Figure 5 -- Hit@20 during training per method; Figure 7 -- the ``dims`` sweep.

Methods are the upload defences of ``recprivacy.defenses.apm`` (``none`` = Pure FedRec,
``apm``, ``fixrec_max``, ``fixrec_min``, ``ldp`` = FedNews / +LDP, ``gaussian`` = FedRec-GN)
and the objective-perturbation baselines of ``recprivacy.defenses.federated_dp``
(``fgerai``, ``fgerai_nl``, ``fdpmf`` and the noise-free ``fedmf``); F-DPMF and FedMF always
train federated MF, whatever ``model`` says. Each method's privacy statement is listed in the
``privacy`` table.

``fused_adam``: the DNN attacker uses PyTorch's fused Adam (about 2x faster, not bitwise
equal to the default; ``recprivacy.attacks.attribute``). ``attack_inputs``: ``zscore`` (G12,
the default) or ``raw``, the ablation that feeds the attackers the unscaled ΔΘ.

``holdout``: ``latest`` holds out each user's latest interaction (digest G20); ``random`` one
seeded-random interaction per user, for datasets without timestamps (Coat), where "latest"
would mean the last row of the file.

Beside the paper's attackers every table row carries the blind baselines (majority, uniform)
and, for models with a feature user tower, the trivial zero-column rule on ``ΔE_U`` (digest
§3.5, G22), labelled as going beyond the paper.

Deviations from the digest, measured on ml-100k (docs/decisions.md): parameters start at
N(0, 0.1²) rather than N(0, 1) (G9: with N(0, 1) the 2-layer MLP's logits reach ~10³ and SGD
diverges to NaN in the first round), and the local step is 0.01 rather than 0.001 (with the
smaller initialisation, 0.001 stays below a random ranking after 10 rounds: Hit@20 0.003;
0.01 reaches 0.104 after 10 rounds; 0.05 diverges).

The audit section ``attribute`` is the black-box variant: the same attackers infer gender and
age from the top-k list the audited (centralised) recommender gives each user.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from typing import Any, Literal

import numpy as np
from pydantic import Field, PositiveInt

from recprivacy.attacks.attribute import (
    AttributeAttacker,
    COMPONENT_SETS,
    attack_report,
    check_zeta,
    component_matrix,
    recommendation_matrix,
    zero_column_attack,
    zero_updates,
    zeta_split,
)
from recprivacy.config import Config, StudyOptions
from recprivacy.data.interactions import Interactions
from recprivacy.data.registry import load_dataset
from recprivacy.data.split import temporal_split
from recprivacy.defenses.apm import make_defence
from recprivacy.defenses.federated_dp import BASELINES, make_baseline
from recprivacy.experiments.audit import AuditContext, SectionWriter, catalogue_fit, register_audit_section
from recprivacy.experiments.results import Results
from recprivacy.experiments.runner import new_results, register_study
from recprivacy.experiments.sampling import sample_users
from recprivacy.federated.features import attribute_labels, user_features
from recprivacy.federated.models import make_federated_model
from recprivacy.federated.protocol import LocalTraining
from recprivacy.federated.engines import Method, train_federation
from recprivacy.federated.simulator import FederatedSimulator, GlobalRecommender, RoundUploads
from recprivacy.metrics.attack import multiclass_attack_report, weighted_f1
from recprivacy.metrics.intervals import Estimate, paired_difference_interval
from recprivacy.metrics.ranking import evaluate
from recprivacy.report.figures import line_plot

METHOD_LABELS = {
    "none": "Pure", "apm": "APM (ours)", "ldp": "FedNews / +LDP", "gaussian": "FedRec-GN",
    "fixrec_max": "FixRec-max", "fixrec_min": "FixRec-min",
    "fgerai": "F-GERAI", "fgerai_nl": "F-GERAI-NL", "fdpmf": "F-DPMF", "fedmf": "FedMF (no noise)",
}  # fmt: skip

# Paper 004 numbers (digest §9). Keys: (dataset, method, attribute, zeta) -> AIA F1.
PAPER_F1 = {
    ("ml-100k", "none", "age", 0.1): 0.528, ("ml-100k", "none", "age", 0.2): 0.560,
    ("ml-1m", "none", "age", 0.1): 0.522, ("ml-1m", "none", "age", 0.2): 0.570,
    ("ml-100k", "gaussian", "age", 0.1): 0.455, ("ml-100k", "gaussian", "age", 0.2): 0.496,
    ("ml-1m", "gaussian", "age", 0.1): 0.449, ("ml-1m", "gaussian", "age", 0.2): 0.461,
    ("ml-100k", "ldp", "age", 0.1): 0.446, ("ml-100k", "ldp", "age", 0.2): 0.480,
    ("ml-1m", "ldp", "age", 0.1): 0.439, ("ml-1m", "ldp", "age", 0.2): 0.479,
    ("ml-100k", "apm", "age", 0.1): 0.429, ("ml-100k", "apm", "age", 0.2): 0.470, ("ml-100k", "apm", "age", 0.3): 0.498,
    ("ml-1m", "apm", "age", 0.1): 0.414, ("ml-1m", "apm", "age", 0.2): 0.434,
    ("ml-100k", "none", "gender", 0.1): 0.677, ("ml-100k", "none", "gender", 0.2): 0.708,
    ("ml-1m", "none", "gender", 0.1): 0.684, ("ml-1m", "none", "gender", 0.2): 0.682,
    ("ml-100k", "gaussian", "gender", 0.1): 0.575, ("ml-100k", "gaussian", "gender", 0.2): 0.642,
    ("ml-1m", "gaussian", "gender", 0.1): 0.627, ("ml-1m", "gaussian", "gender", 0.2): 0.634,
    ("ml-100k", "ldp", "gender", 0.1): 0.568, ("ml-100k", "ldp", "gender", 0.2): 0.592,
    ("ml-1m", "ldp", "gender", 0.1): 0.597, ("ml-1m", "ldp", "gender", 0.2): 0.619,
    ("ml-100k", "apm", "gender", 0.1): 0.559, ("ml-100k", "apm", "gender", 0.2): 0.581, ("ml-100k", "apm", "gender", 0.3): 0.585,
    ("ml-1m", "apm", "gender", 0.1): 0.574, ("ml-1m", "apm", "gender", 0.2): 0.603,
    ("ml-100k", "fdpmf", "age", 0.1): 0.584, ("ml-100k", "fdpmf", "age", 0.2): 0.599,
    ("ml-1m", "fdpmf", "age", 0.1): 0.579, ("ml-1m", "fdpmf", "age", 0.2): 0.590,
    ("ml-100k", "fgerai", "age", 0.1): 0.503, ("ml-100k", "fgerai", "age", 0.2): 0.507,
    ("ml-1m", "fgerai", "age", 0.1): 0.501, ("ml-1m", "fgerai", "age", 0.2): 0.531,
    ("ml-100k", "fgerai_nl", "age", 0.1): 0.509, ("ml-100k", "fgerai_nl", "age", 0.2): 0.559,
    ("ml-1m", "fgerai_nl", "age", 0.1): 0.505, ("ml-1m", "fgerai_nl", "age", 0.2): 0.539,
    ("ml-100k", "fdpmf", "gender", 0.1): 0.703, ("ml-100k", "fdpmf", "gender", 0.2): 0.694,
    ("ml-1m", "fdpmf", "gender", 0.1): 0.709, ("ml-1m", "fdpmf", "gender", 0.2): 0.717,
    ("ml-100k", "fgerai", "gender", 0.1): 0.639, ("ml-100k", "fgerai", "gender", 0.2): 0.648,
    ("ml-1m", "fgerai", "gender", 0.1): 0.627, ("ml-1m", "fgerai", "gender", 0.2): 0.640,
    ("ml-100k", "fgerai_nl", "gender", 0.1): 0.657, ("ml-100k", "fgerai_nl", "gender", 0.2): 0.658,
    ("ml-1m", "fgerai_nl", "gender", 0.1): 0.634, ("ml-1m", "fgerai_nl", "gender", 0.2): 0.665,
}  # fmt: skip
ENGINE_LABELS = {"simulator": "in-process simulator", "flower-sim": "Flower simulation engine",
                 "flower": "Flower deployment engine (SuperLink and SuperNodes)"}
INPUT_NOTES = {
    "zscore": "The attackers read ΔΘ z-scored over their known users (digest G12).",
    "raw": "The attackers read the raw ΔΘ (the `attack_inputs: raw` ablation, not the paper's G12 z-scoring).",
}
# Table IV (zeta = 0.1): (dataset, method, attribute) -> {attacker: F1}.
PAPER_BY_ATTACKER = {
    ("ml-100k", "none", "age"): {"tree": 0.427, "svc": 0.465, "knn": 0.491, "dnn": 0.528},
    ("ml-100k", "gaussian", "age"): {"tree": 0.399, "svc": 0.380, "knn": 0.446, "dnn": 0.455},
    ("ml-100k", "ldp", "age"): {"tree": 0.401, "svc": 0.406, "knn": 0.417, "dnn": 0.446},
    ("ml-100k", "apm", "age"): {"tree": 0.394, "svc": 0.356, "knn": 0.413, "dnn": 0.429},
    ("ml-100k", "none", "gender"): {"tree": 0.601, "svc": 0.566, "knn": 0.677, "dnn": 0.677},
    ("ml-100k", "gaussian", "gender"): {"tree": 0.564, "svc": 0.481, "knn": 0.625, "dnn": 0.575},
    ("ml-100k", "ldp", "gender"): {"tree": 0.561, "svc": 0.474, "knn": 0.608, "dnn": 0.568},
    ("ml-100k", "apm", "gender"): {"tree": 0.556, "svc": 0.472, "knn": 0.613, "dnn": 0.559},
    ("ml-1m", "none", "age"): {"tree": 0.460, "svc": 0.487, "knn": 0.520, "dnn": 0.522},
    ("ml-1m", "gaussian", "age"): {"tree": 0.397, "svc": 0.381, "knn": 0.445, "dnn": 0.449},
    ("ml-1m", "ldp", "age"): {"tree": 0.388, "svc": 0.390, "knn": 0.417, "dnn": 0.439},
    ("ml-1m", "apm", "age"): {"tree": 0.377, "svc": 0.333, "knn": 0.428, "dnn": 0.414},
    ("ml-1m", "none", "gender"): {"tree": 0.671, "svc": 0.640, "knn": 0.680, "dnn": 0.684},
    ("ml-1m", "gaussian", "gender"): {"tree": 0.616, "svc": 0.520, "knn": 0.601, "dnn": 0.627},
    ("ml-1m", "ldp", "gender"): {"tree": 0.614, "svc": 0.513, "knn": 0.596, "dnn": 0.597},
    ("ml-1m", "apm", "gender"): {"tree": 0.550, "svc": 0.496, "knn": 0.550, "dnn": 0.574},
    ("ml-100k", "fdpmf", "age"): {"tree": 0.417, "svc": 0.401, "knn": 0.512, "dnn": 0.584},
    ("ml-100k", "fgerai", "age"): {"tree": 0.406, "svc": 0.422, "knn": 0.483, "dnn": 0.503},
    ("ml-100k", "fgerai_nl", "age"): {"tree": 0.413, "svc": 0.474, "knn": 0.488, "dnn": 0.509},
    ("ml-100k", "fdpmf", "gender"): {"tree": 0.580, "svc": 0.559, "knn": 0.656, "dnn": 0.703},
    ("ml-100k", "fgerai", "gender"): {"tree": 0.571, "svc": 0.566, "knn": 0.613, "dnn": 0.639},
    ("ml-100k", "fgerai_nl", "gender"): {"tree": 0.580, "svc": 0.587, "knn": 0.646, "dnn": 0.657},
    ("ml-1m", "fdpmf", "age"): {"tree": 0.443, "svc": 0.390, "knn": 0.449, "dnn": 0.579},
    ("ml-1m", "fgerai", "age"): {"tree": 0.415, "svc": 0.408, "knn": 0.425, "dnn": 0.501},
    ("ml-1m", "fgerai_nl", "age"): {"tree": 0.419, "svc": 0.449, "knn": 0.430, "dnn": 0.505},
    ("ml-1m", "fdpmf", "gender"): {"tree": 0.572, "svc": 0.520, "knn": 0.647, "dnn": 0.709},
    ("ml-1m", "fgerai", "gender"): {"tree": 0.612, "svc": 0.559, "knn": 0.599, "dnn": 0.627},
    ("ml-1m", "fgerai_nl", "gender"): {"tree": 0.618, "svc": 0.566, "knn": 0.631, "dnn": 0.634},
}  # fmt: skip
PAPER_HIT20 = {
    ("ml-100k", "fedrec", "apm"): 0.103, ("ml-100k", "fedrec", "fixrec_min"): 0.105, ("ml-100k", "fedrec", "fixrec_max"): 0.067,
    ("ml-1m", "fedrec", "apm"): 0.053, ("ml-1m", "fedrec", "fixrec_min"): 0.054, ("ml-1m", "fedrec", "fixrec_max"): 0.043,
    ("ml-100k", "fedlightgcn", "none"): 0.080, ("ml-100k", "fedlightgcn", "ldp"): 0.073, ("ml-100k", "fedlightgcn", "apm"): 0.076,
    ("ml-100k", "fedncf", "none"): 0.075, ("ml-100k", "fedncf", "ldp"): 0.070, ("ml-100k", "fedncf", "apm"): 0.073,
    ("ml-1m", "fedlightgcn", "none"): 0.082, ("ml-1m", "fedlightgcn", "ldp"): 0.077, ("ml-1m", "fedlightgcn", "apm"): 0.080,
    ("ml-1m", "fedncf", "none"): 0.076, ("ml-1m", "fedncf", "ldp"): 0.072, ("ml-1m", "fedncf", "apm"): 0.074,
}  # fmt: skip
# Table VI F1: (dataset, model, method, attribute) -> F1.
PAPER_TABLE6 = {
    ("ml-100k", "fedlightgcn", "none", "age"): 0.594, ("ml-100k", "fedlightgcn", "none", "gender"): 0.696,
    ("ml-100k", "fedlightgcn", "ldp", "age"): 0.462, ("ml-100k", "fedlightgcn", "ldp", "gender"): 0.585,
    ("ml-100k", "fedlightgcn", "apm", "age"): 0.415, ("ml-100k", "fedlightgcn", "apm", "gender"): 0.573,
    ("ml-100k", "fedncf", "none", "age"): 0.509, ("ml-100k", "fedncf", "none", "gender"): 0.651,
    ("ml-100k", "fedncf", "ldp", "age"): 0.488, ("ml-100k", "fedncf", "ldp", "gender"): 0.637,
    ("ml-100k", "fedncf", "apm", "age"): 0.474, ("ml-100k", "fedncf", "apm", "gender"): 0.620,
    ("ml-1m", "fedlightgcn", "none", "age"): 0.550, ("ml-1m", "fedlightgcn", "none", "gender"): 0.728,
    ("ml-1m", "fedlightgcn", "ldp", "age"): 0.471, ("ml-1m", "fedlightgcn", "ldp", "gender"): 0.601,
    ("ml-1m", "fedlightgcn", "apm", "age"): 0.450, ("ml-1m", "fedlightgcn", "apm", "gender"): 0.585,
    ("ml-1m", "fedncf", "none", "age"): 0.509, ("ml-1m", "fedncf", "none", "gender"): 0.676,
    ("ml-1m", "fedncf", "ldp", "age"): 0.460, ("ml-1m", "fedncf", "ldp", "gender"): 0.675,
    ("ml-1m", "fedncf", "apm", "age"): 0.422, ("ml-1m", "fedncf", "apm", "gender"): 0.658,
}  # fmt: skip


# Table V (APM on ml-100k; its ζ = 0.1 row is Table IV's): (attribute, zeta) -> {attacker: F1}.
PAPER_TABLE5 = {
    ("age", 0.2): {"dnn": 0.470, "tree": 0.403, "svc": 0.361, "knn": 0.430},
    ("age", 0.3): {"dnn": 0.498, "tree": 0.403, "svc": 0.382, "knn": 0.436},
    ("gender", 0.2): {"dnn": 0.581, "tree": 0.570, "svc": 0.483, "knn": 0.623},
    ("gender", 0.3): {"dnn": 0.585, "tree": 0.572, "svc": 0.482, "knn": 0.627},
}


def paper_f1(dataset: str, model: str, method: str, attribute: str, zeta: float) -> float | None:
    """The paper's DNN (AIA) F1 for a cell: Table II for FedRec, Table VI (ζ = 0.1 only) for the others."""
    if model == "fedrec":
        return PAPER_F1.get((dataset, method, attribute, zeta))
    return PAPER_TABLE6.get((dataset, model, method, attribute)) if zeta == 0.1 else None


def paper_by_attacker(dataset: str, model: str, method: str, attribute: str, zeta: float = 0.1) -> dict[str, float]:
    """The paper's F1 by attacker: Table IV at ζ = 0.1, Table V (APM on ml-100k) at ζ = 0.2 and
    0.3; both tables cover FedRec only."""
    if model != "fedrec":
        return {}
    if zeta == 0.1:
        return PAPER_BY_ATTACKER.get((dataset, method, attribute), {})
    return PAPER_TABLE5.get((attribute, zeta), {}) if (dataset, method) == ("ml-100k", "apm") else {}


class FederatedOptions(StudyOptions):
    """Options of the ``federated`` study (defaults: the digest's ml-100k setting)."""

    model: Literal["fedrec", "fedlightgcn", "fedncf", "fedmf"] = "fedrec"
    dims: list[int] = Field(default_factory=lambda: [64], min_length=1)
    rounds: int = Field(100, ge=1)
    clients_per_round: float = Field(0.5, gt=0)
    lr: float = Field(0.01, gt=0)
    local_epochs: int = Field(5, ge=1)
    batch_size: int = Field(32, ge=1)
    n_negatives: int = Field(4, ge=0)
    init_std: float = Field(0.1, gt=0)
    methods: list[Literal["none", "apm", "fixrec_max", "fixrec_min", "ldp", "gaussian", "fgerai", "fgerai_nl", "fdpmf",
                          "fedmf"]] = Field(default_factory=lambda: ["none", "apm"], min_length=1)
    resistance: Literal["paper_sec5_7", "paper_eq11"] = "paper_sec5_7"
    delta: float = 0.5
    eps_min: float = 30.0
    eps_max: float = 60.0
    epsilon: float = 40.0
    sigma: float = 0.0354
    eps_x: float = 1.0
    eps_f: float = 1.0
    eps_dpmf: float = 40.0
    holdout: Literal["latest", "random"] = "latest"
    attributes: list[Literal["gender", "age", "occupation"]] = Field(default_factory=lambda: ["gender", "age"], min_length=1)
    zetas: list[float] = Field(default_factory=lambda: [0.1, 0.2], min_length=1)
    attackers: list[Literal["dnn", "tree", "svc", "knn", "random", "stratified", "majority"]] = Field(
        default_factory=lambda: ["dnn"], min_length=1
    )
    components: list[Literal["all", "user", "item", "mlp", "mlp1", "mlp2"]] = Field(default_factory=lambda: ["all"], min_length=1)
    attack_seeds: int = Field(5, ge=1)
    attack_clients: Literal["round", "all"] = "round"
    fused_adam: bool = False
    attack_inputs: Literal["zscore", "raw"] = "zscore"
    eval_every: int = Field(10, ge=1)
    max_users: int | None = Field(None, ge=2)
    engine: Literal["simulator", "flower-sim", "flower"] = "simulator"
    superlink: str | None = None


def _prepare(config: Config, options: FederatedOptions, results: Results) -> tuple[Interactions, Interactions, Interactions]:
    """Dataset (optionally its first ``max_users`` users), leave-latest-one-out split."""
    ds = config.dataset
    with results.timed("load_data"):
        data = load_dataset(ds.name, ds.data_dir, **ds.options)
    for z in options.zetas:
        check_zeta(z)
    for attribute in options.attributes:
        attribute_labels(data, attribute)
    for method in options.methods:
        if method in BASELINES:
            make_baseline(method, None, **_factory_options(method, options))
        else:
            make_defence(method, **_factory_options(method, options))
    if options.max_users is not None and options.max_users < data.n_users:
        data = data.subset_users(np.arange(options.max_users)).reindex()
    if options.holdout == "random":
        shuffled = data.select(np.random.default_rng(0).permutation(len(data)), "shuffle_rows", seed=0)
        train, test = temporal_split(shuffled.with_changes(timestamps=None), leave_last=1)
    else:
        train, test = temporal_split(data, leave_last=1)
    results.dataset = data.fingerprint()
    return data, train, test


def _factory_options(method: str, options: FederatedOptions) -> dict:
    """The keyword arguments of ``make_baseline`` / ``make_defence`` for ``method``."""
    if method in BASELINES:
        return {"eps_x": options.eps_x, "eps_f": options.eps_f, "eps_dpmf": options.eps_dpmf}
    return {"delta": options.delta, "eps_min": options.eps_min, "eps_max": options.eps_max, "resistance": options.resistance,
            "epsilon": options.epsilon, "sigma": options.sigma}


def run_federated(config: Config, options: FederatedOptions) -> Results:
    """The ``federated`` study (module docstring)."""
    results = new_results(config)
    data, train, test = _prepare(config, options, results)
    feats = user_features(train)
    labels = {a: attribute_labels(data, a) for a in options.attributes}
    local = LocalTraining(options.lr, options.local_epochs, options.batch_size, options.n_negatives)
    ks = config.eval.ks
    curves: dict[str, tuple[list, list]] = {}
    rows: dict[tuple, dict] = {}
    hits: dict[tuple, dict] = {}
    statements: dict[str, object] = {}
    for dim in options.dims:
        for method in options.methods:
            factory = _factory_options(method, options)
            baseline = make_baseline(method, feats.blocks, **factory) if method in BASELINES else None
            model = make_federated_model((baseline and baseline.model) or options.model, train.n_items, feats.dim, dim)
            defence = None if baseline else make_defence(method, **factory)
            sim = FederatedSimulator(model, train, feats.x, local, options.clients_per_round, config.seed, defence, options.init_std,
                                     objective=baseline and baseline.objective, feature_privacy=baseline and baseline.features,
                                     noise=config.noise)
            fed = train_federation(sim, Method(method, factory, feats.blocks), options.rounds, options.eval_every, options.engine,
                                   options.attack_clients == "all", options.superlink, desc=f"{options.model} d={dim} {method}")
            evaluations = [(t, evaluate(GlobalRecommender(model, p, sim.features, sim.train_csr, private), test, ks=ks))
                           for t, (p, private) in sorted(fed.snapshots.items())]
            final = evaluations[-1][1]
            hits[(dim, method)] = {k: float(v) for k, v in final.items()}
            curves[f"{METHOD_LABELS[method]} d={dim}"] = ([r for r, _ in evaluations], [m[f"hit@{ks[-1]}"] for _, m in evaluations])
            results.timings[f"round_seconds_median/{method}/d={dim}"] = float(np.median(fed.round_seconds))
            with results.timed(f"attack/{method}/d={dim}"):
                attacked, cells = _attack_round(sim, fed.attack, labels, feats.blocks, options, dim, method)
                rows.update(cells)
                results.metrics[f"{method}/d={dim}/attack_clients"] = float(attacked)
            statement = None
            if defence is not None:
                counts = defaultdict(int)
                for spec in model.shared_specs():
                    counts[spec.component] += spec.size
                statement = defence.privacy_statement(dict(counts), rounds=options.rounds)
                results.metrics[f"{method}/d={dim}/epsilon_basic_composition"] = statement.epsilon
            elif baseline is not None:
                statement = baseline.privacy_statement(options.rounds, options.local_epochs, feats.dim)
                results.metrics[f"{method}/d={dim}/epsilon"] = statement.epsilon
            if statement is not None and dim == options.dims[0]:
                statements[method] = sim.noise.stamp(statement)
    _render(results, data.name, options, ks, hits, rows, curves)
    if statements:
        privacy_rows = [[METHOD_LABELS[m], s.epsilon, s.unit, s.scope, s.accountant, " | ".join(s.notes), s.noise]
                        for m, s in statements.items()]
        table = results.add_table("privacy", ["method", "epsilon (local)", "protects", "scope", "accountant", "notes", "noise"],
                                  privacy_rows,
                                  "What each method claims (its privacy_statement), composed honestly")
        results.add_section("Privacy statements (paper 004 methods)", "", [table])
    results.seeds.update({"split": 0, "attack_splits": options.attack_seeds})
    return results


def _attack_round(sim: FederatedSimulator, up: RoundUploads, labels: dict, blocks: dict, options: FederatedOptions,
                  dim: int, method: str) -> tuple[int, dict[tuple, dict]]:
    """Attack the uploads ``up`` of the extra round: every attribute x ζ x attacker x component
    over ``attack_seeds`` splits, plus the zero-column rule. Returns the number of clients
    attacked and mean / std per cell."""
    deltas = up.pseudo_gradients(sim.local.lr)
    comps = sim.model.components()
    inputs = {c: component_matrix(deltas, comps, c) for c in options.components
              if any(comps[n] in COMPONENT_SETS[c] for n in deltas)}
    out: dict[tuple, dict] = {}
    zero_share = float(zero_updates(deltas["E_U"]).mean()) if "E_U" in deltas else None
    for attribute, (y_all, names) in labels.items():
        y = y_all[up.users]
        for zeta in options.zetas:
            for component, x in inputs.items():
                for kind in options.attackers:
                    reps = [attack_report(x, y, names, zeta, seed, kind, options.fused_adam, options.attack_inputs == "zscore")
                            for seed in range(options.attack_seeds)]
                    out[(dim, method, attribute, zeta, kind, component)] = _summary(reps)
            if "E_U" in deltas and attribute in blocks:
                pred = zero_column_attack(deltas["E_U"], blocks[attribute])
                reps = [multiclass_attack_report(y[u], pred[u], np.arange(len(names)))
                        for u in (zeta_split(len(y), zeta, s)[1] for s in range(options.attack_seeds))]
                out[(dim, method, attribute, zeta, "zero-column", "user")] = {**_summary(reps), "zero_update_share": zero_share}
    return len(up.users), out


def _summary(reports: list[dict]) -> dict[str, float]:
    keys = ("weighted_f1", "macro_f1", "accuracy")
    out = {f"{k}_mean": float(np.mean([r[k] for r in reports])) for k in keys}
    out.update({f"{k}_std": float(np.std([r[k] for r in reports])) for k in keys})
    out["blind_weighted_f1"] = float(np.mean([r["blind"]["weighted_f1"] for r in reports]))
    out["majority_weighted_f1"] = float(np.mean([r["baseline_majority"]["weighted_f1"] for r in reports]))
    return out


def _fmt(cell: dict | None) -> str:
    return "-" if cell is None else f"{cell['weighted_f1_mean']:.3f} ± {cell['weighted_f1_std']:.3f}"


def _fmt_zero(cell: dict | None) -> str:
    return "-" if cell is None else f"{_fmt(cell)} ({cell['zero_update_share']:.1%} zero updates)"


def _render(results: Results, dataset: str, options: FederatedOptions, ks: list[int], hits: dict, rows: dict, curves: dict) -> None:
    """Tables II-VI and Figures 4, 5, 7 layouts with the paper's numbers beside ours."""
    k = ks[-1]
    dim0, zeta0 = options.dims[0], options.zetas[0]
    for (dim, method), m in hits.items():
        for name, value in m.items():
            results.metrics[f"{method}/d={dim}/{name}"] = value
    for (dim, method, attribute, zeta, kind, component), cell in rows.items():
        for name, value in cell.items():
            results.metrics[f"{method}/d={dim}/{attribute}/zeta={zeta}/{kind}/{component}/{name}"] = value
    model = options.model
    f1_rows = []
    for method in options.methods:
        for attribute in options.attributes:
            for zeta in options.zetas:
                cell = rows.get((dim0, method, attribute, zeta, "dnn", "all"))
                zero = rows.get((dim0, method, attribute, zeta, "zero-column", "user"))
                paper = paper_f1(dataset, model, method, attribute, zeta)
                f1_rows.append([METHOD_LABELS[method], attribute, zeta, _fmt(cell), paper,
                                None if cell is None else cell["blind_weighted_f1"], _fmt_zero(zero),
                                hits[(dim0, method)].get(f"hit@{k}")])
    tables = [results.add_table(
        "table2_aia_f1", ["method", "attribute", "zeta", "AIA weighted F1 (ours, mean ± std)", "paper", "blind guess",
                          "zero-column rule (beyond paper)", f"Hit@{k} (ours)"], f1_rows,
        f"Tables II / V / VI layout: DNN attack on the full ΔΘ of one attack round, {options.attack_seeds} ζ-splits; "
        f"model {model}, d = {dim0}")]  # fmt: skip
    hit_rows = [[METHOD_LABELS[m], hits[(dim0, m)].get(f"hit@{k}"), hits[(dim0, m)].get(f"ndcg@{k}"),
                 PAPER_HIT20.get((dataset, model, m)) if k == 20 else None] for m in options.methods]
    tables.append(results.add_table("table3_hit", ["method", f"Hit@{k} (ours)", f"NDCG@{k} (ours)", "paper Hit@20"], hit_rows,
                                    "Table III / VI layout: leave-latest-one-out, full ranking of the final global model"))
    by_attacker = [a for a in options.attackers if a != "dnn"]
    if by_attacker:
        att_rows = [[METHOD_LABELS[m], a, z] + [_fmt(rows.get((dim0, m, a, z, kind, "all"))) for kind in options.attackers]
                    + [paper_by_attacker(dataset, model, m, a, z).get(kind) for kind in options.attackers]
                    for m in options.methods for a in options.attributes for z in options.zetas]
        tables.append(results.add_table("table4_attackers", ["method", "attribute", "zeta"] + [f"{x} (ours)" for x in options.attackers]
                                        + [f"{x} (paper)" for x in options.attackers], att_rows,
                                        "Tables IV / V layout: weighted F1 by attacker and ζ, full ΔΘ"))
    if len(options.components) > 1:
        comp_rows = [[METHOD_LABELS[m], a, c, _fmt(rows.get((dim0, m, a, zeta, "dnn", c)))]
                     for m in options.methods for a in options.attributes for zeta in options.zetas[:1] for c in options.components]
        tables.append(results.add_table("fig4_components", ["method", "attribute", "component", "AIA weighted F1"], comp_rows,
                                        f"Figure 4 analysis: DNN attack per component of ΔΘ, ζ = {zeta0} (paper: user leaks most, MLP1 > MLP2)"))
    figures = [results.add_figure("fig5_hit_curve", line_plot({l: c for l, c in curves.items()}, "round", f"Hit@{k}", markers=True),
                                  f"Figure 5 analogue: Hit@{k} of the global model during training")]
    if len(options.dims) > 1:
        dims_rows = [[d, METHOD_LABELS[m], hits[(d, m)].get(f"hit@{k}")] + [_fmt(rows.get((d, m, a, zeta0, "dnn", "all"))) for a in options.attributes]
                     for d in options.dims for m in options.methods]
        tables.append(results.add_table("fig7_dims", ["d", "method", f"Hit@{k}"] + [f"F1 {a}" for a in options.attributes], dims_rows,
                                        "Figure 7 analysis: embedding size sweep (paper: Hit@20 flattens from d = 64; F1 grows with d)"))
    text = (
        f"Federated {model} on `{dataset}` with the {ENGINE_LABELS[options.engine]}: {options.rounds} rounds, "
        f"{options.clients_per_round} of the users per round, {options.local_epochs} local epochs of SGD "
        f"(lr {options.lr}, batch {options.batch_size}, {options.n_negatives} negatives per positive), init N(0, {options.init_std}²). "
        "The attacker is the honest-but-curious server on one extra round's uploads; F1 is weighted F1 (digest G13). "
        f"{INPUT_NOTES[options.attack_inputs]} "
        "The zero-column rule reads which one-hot column of ΔE_U is non-zero (digest §3.5): it is the strongest known attack "
        "and is reported beside, not instead of, the paper's; it misses only clients whose whole ΔE_U is zero (no gradient "
        "reached the user table; their share is in brackets)."
    )
    results.add_section("Federated attribute inference and APM (paper 004)", text, tables, figures)


register_study("federated", run_federated, FederatedOptions, "federated GCN recommenders: attribute inference from uploads and APM (paper 004)")


# ---------------------------------------------------------------------------- audit section


class AttributeAuditOptions(StudyOptions):
    """Black-box attribute inference from recommendation lists; ``max_users``: attack a seeded
    random sample of at most this many users (None: all; ``experiments.sampling``)."""

    attributes: list[Literal["gender", "age", "occupation"]] = Field(default_factory=lambda: ["gender", "age"], min_length=1)
    k: int = Field(20, ge=1)
    zeta: float = Field(0.2, gt=0, lt=1)
    attackers: list[Literal["dnn", "tree", "svc", "knn"]] = Field(default_factory=lambda: ["dnn", "knn"], min_length=1)
    seeds: int = Field(3, ge=1)
    max_users: PositiveInt | None = 5000


def attribute_section(ctx: AuditContext, out: SectionWriter) -> None:
    """Infer attributes from each user's top-k list of the audited recommender; the best
    attacker's accuracy is judged against always guessing the majority class, its weighted F1
    against the better of that and a uniform guess, on the same users."""
    opts = ctx.options
    data = ctx.data.full
    have = [a for a in opts.attributes if data.user_features is not None and a in data.user_features.columns]
    if not have:
        out.write(f"Dataset `{data.name}` has none of the attributes {opts.attributes}; no attribute inference was run.")
        return
    users, lists = served_to_all(ctx, opts.k, opts.max_users)
    x = recommendation_matrix(lists, data.n_items)
    if opts.max_users is not None and len(users) == opts.max_users:
        out.write(f"Attacked a seeded random sample of {len(users)} users (`max_users`).")
    rows = []
    for attribute in have:
        y, names = attribute_labels(data, attribute)
        y = y[users]
        runs = {kind: pooled_predictions(x, y, len(names), opts.zeta, opts.seeds, kind) for kind in opts.attackers}
        best = max(runs, key=lambda kind: class_metric("weighted_f1", *runs[kind], len(names))(None))
        for kind, (rows_, truth, pred) in runs.items():
            rows.append([attribute, kind] + [class_metric(m, rows_, truth, pred, len(names))(None)
                                             for m in ("accuracy", "majority_accuracy", "weighted_f1", "blind_weighted_f1")])  # fmt: skip
            out.add_metric(f"{attribute}/{kind}/weighted_f1", rows[-1][4])
        judge_classes(out, f"attribute inference from top-{opts.k} lists ({attribute})", *runs[best], len(names), best)
    out.add_table("lists", ["attribute", "attacker", "accuracy", "majority-class guess", "weighted F1",
                            "blind weighted F1"], rows,
                  f"Attackers trained on a random {opts.zeta:.0%} of users with known attributes, tested on the rest; "
                  f"predictions pooled over {opts.seeds} splits")  # fmt: skip
    out.write(
        f"Black-box variant of paper 004's attack: the attacker sees only the top-{opts.k} list each user is recommended "
        "(as multi-hot item vectors) and the attributes of a share of users, and predicts the others' attributes. "
        "Accuracy is set against always guessing the majority class, weighted F1 against the better of that and guessing "
        "uniformly at random (both on the attacked users); intervals are a bootstrap over users. The attacker judged in "
        "the risk summary is the one with the best weighted F1 (chosen on the same users, so its margin is slightly "
        "optimistic)."
    )


def pooled_predictions(x: Any, y: np.ndarray, n_classes: int, zeta: float, seeds: int, kind: str,
                       x_attacked: Any = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:  # fmt: skip
    """``kind`` trained on the ζ share of each seeded split of ``x`` and applied to the rest of
    ``x_attacked`` (default ``x``; another view of the same users, e.g. defended lists, for an
    attacker that does not know the defence), pooled over ``seeds`` splits: (attacked rows,
    their true classes, predicted classes)."""
    x_attacked = x if x_attacked is None else x_attacked
    rows, preds = [], []
    for seed in range(seeds):
        known, unknown = zeta_split(len(y), zeta, seed)
        attacker = AttributeAttacker(kind, n_classes, seed).fit(x[known], y[known])
        rows.append(unknown)
        preds.append(attacker.score(x_attacked[unknown]).argmax(axis=1))
    rows_ = np.concatenate(rows)
    return rows_, y[rows_], np.concatenate(preds)


def class_metric(name: str, rows: np.ndarray, truth: np.ndarray, pred: np.ndarray,
                 n_classes: int) -> Callable[[np.ndarray | None], float]:  # fmt: skip
    """``w -> metric`` with sample weights ``w`` (``intervals.paired_difference_interval``):
    ``accuracy`` / ``weighted_f1`` of ``pred``; ``majority_accuracy`` of always guessing the
    majority class of ``truth``; ``blind_weighted_f1`` the better of that guess's weighted F1 and
    a uniform guess's expected one, ``sum_c p_c 2 p_c / (C p_c + 1)`` (``metrics.attack``)."""
    majority = np.full(len(truth), np.bincount(truth, minlength=n_classes).argmax())

    def f1(guess: np.ndarray, w: np.ndarray | None) -> float:
        return weighted_f1(truth, guess, n_classes, w)

    def uniform_f1(w: np.ndarray | None) -> float:
        p = np.bincount(truth, weights=w, minlength=n_classes) / (len(truth) if w is None else w.sum())
        return float((p * 2 * p / (n_classes * p + 1)).sum())

    stats = {"accuracy": lambda w: float(np.average(truth == pred, weights=w)),
             "majority_accuracy": lambda w: float(np.average(truth == majority, weights=w)),
             "weighted_f1": lambda w: f1(pred, w),
             "blind_weighted_f1": lambda w: max(f1(majority, w), uniform_f1(w))}  # fmt: skip
    return stats[name]


#: baseline of each judged class metric: (its class_metric, its name)
CLASS_BASELINES = {"accuracy": ("majority_accuracy", "majority-class guess"),
                   "weighted_f1": ("blind_weighted_f1", "better of majority-class and uniform guess")}


def judge_class_metric(metric: str, rows: np.ndarray, truth: np.ndarray, pred: np.ndarray,
                       n_classes: int) -> tuple[Estimate, float, str, Estimate]:  # fmt: skip
    """``metric`` of the predictions and its margin over the metric's blind guess on the same
    users, with a paired bootstrap over users: (value, baseline, baseline name, margin)."""
    baseline, name = CLASS_BASELINES[metric]
    value, blind, margin = paired_difference_interval(class_metric(metric, rows, truth, pred, n_classes),
                                                      class_metric(baseline, rows, truth, pred, n_classes), rows)  # fmt: skip
    return value, blind, name, margin


def judge_classes(out: SectionWriter, attack: str, rows: np.ndarray, truth: np.ndarray, pred: np.ndarray,
                  n_classes: int, attacker: str) -> None:  # fmt: skip
    """Risk rows of a class-guessing attack: accuracy against the majority-class guess and
    weighted F1 against the better blind guess (``judge_class_metric``)."""
    for metric in CLASS_BASELINES:
        value, blind, name, margin = judge_class_metric(metric, rows, truth, pred, n_classes)
        out.judge(attack, metric.replace("weighted_f1", "weighted F1"), value, blind, name, margin, attacker)


def served_to_all(ctx: AuditContext, k: int, max_users: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Users and the top-``k`` lists the target serves them: members from their training
    interactions, then (when the target serves users it was not trained on) held-out users
    from their whole history; at most ``max_users`` of them, a seeded sample
    (``sample_users``) drawn before any list is served."""
    everyone = np.concatenate([ctx.members, ctx.data.heldout_users if ctx.target.serves_unseen else ctx.members[:0]])
    chosen = sample_users(everyone, max_users, ctx.config.seed)
    is_member = np.isin(chosen, ctx.members)
    members, outsiders = chosen[is_member], chosen[~is_member]
    lists = [ctx.target.serve(members, k, ctx.data.train, trained=True)]
    if len(outsiders):
        lists.append(ctx.target.serve(outsiders, k, ctx.data.full, trained=False))
    return np.concatenate([members, outsiders]), np.concatenate(lists)


register_audit_section("attribute", attribute_section, "Attribute inference from recommendation lists", AttributeAuditOptions,
                       order=40, fit=catalogue_fit("attribute", "k"), needs=("user_features",))  # fmt: skip
