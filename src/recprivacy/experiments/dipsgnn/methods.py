"""The recommender of each row of paper 002's Table 2 and of the Fig. 7 ablation, built on one
SR-GNN backbone (``model.params``) with the study's privacy budgets.

Decision: the graph methods (SR-GNN, APGNN, DP-SGD, EdgeRand, DIPSGNN and the ablations) share
the backbone's hyperparameters and user features, so a row differs from another only by its
privacy mechanism (and APGNN / SR-GNN by the adjacency and the user side); ``method_params``
overrides a method's own arguments.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from recprivacy.config import Config
from recprivacy.defenses.dipsgnn import DIPSGNN
from recprivacy.defenses.dpmf import DPMF
from recprivacy.defenses.dpsgd import DPSGD
from recprivacy.defenses.edgerand import EdgeRand
from recprivacy.defenses.private_srgnn import PrivateSRGNN
from recprivacy.errors import ConfigError
from recprivacy.experiments.dipsgnn.options import DIPSGNNOptions, feature_params
from recprivacy.models.base import Recommender
from recprivacy.models.bpr import BPRMF
from recprivacy.models.lightgcn import LightGCN
from recprivacy.models.sasrec import SASRec
from recprivacy.models.srgnn import SRGNN

#: the SR-GNN family: scored per prefix graph, epochs selected on held-out prefixes
GRAPH_MODELS = (SRGNN, PrivateSRGNN)


def backbone_params(config: Config) -> dict[str, Any]:
    """SR-GNN parameters of every graph method: ``model.params`` with the config's ``noise``
    (the seed comes from ``seeds``)."""
    if config.model.name != "srgnn":
        raise ConfigError(f"model.name: the dipsgnn study trains the SR-GNN backbone; expected 'srgnn', got {config.model.name!r}")
    return {**{k: v for k, v in config.model.params.items() if k != "seed"}, "noise": config.noise}


def _graph_params(options: DIPSGNNOptions, backbone: dict[str, Any]) -> dict[str, Any]:
    """SR-GNN-family arguments shared by every graph method: backbone + user features."""
    return {**backbone, **feature_params(options.features)}


def build_method(name: str, options: DIPSGNNOptions, backbone: dict[str, Any], seed: int) -> Recommender:
    """The recommender of a Table 2 row (or ablation), seeded, with ``method_params`` applied."""
    g = {**_graph_params(options, backbone), "seed": seed}
    noise = g.pop("noise")
    priv = {"eps1": options.eps1, "eps2": options.eps2, "delta": options.delta, "noise": noise}
    extra = options.method_params.get(name, {})
    builders: dict[str, Callable[[], Recommender]] = {
        "BPRMF": lambda: BPRMF(**{"seed": seed, **extra}),
        "SASRec": lambda: SASRec(**{"max_len": options.max_len, "seed": seed, **extra}),
        "LightGCN": lambda: LightGCN(**{"seed": seed, **extra}),
        "SRGNN": lambda: SRGNN(**{**g, "user_mode": "none", "adjacency": "degree", **extra}),
        "APGNN": lambda: SRGNN(**{**g, "adjacency": "count", **extra}),
        "DPMF_imp": lambda: DPMF(**{"feedback": "implicit", "epsilon": options.eps2, "seed": seed, "noise": noise, **extra}),
        "DPMF_exp": lambda: DPMF(**{"feedback": "explicit", "epsilon": options.eps2, "seed": seed, "noise": noise, **extra}),
        "DPSGD": lambda: DPSGD.from_params(**{**g, **priv, **extra}),
        "EdgeRand": lambda: EdgeRand.from_params(**{**g, **priv, **extra}),
        "DIPSGNN": lambda: DIPSGNN.from_params(**{**g, **priv, "C": options.C, **extra}),
        "DIPSGNN_legacy": lambda: DIPSGNN.from_params(**{**g, **priv, "C": options.C, "noise_std_mode": "sigma_squared_legacy",
                                                         "noise_at_inference": False, **extra}),
        "Nonp": lambda: DIPSGNN.from_params(**{**g, **priv, "C": options.C, "eps1": math.inf, "eps2": math.inf, **extra}),
        "Nonp-U": lambda: DIPSGNN.from_params(**{**g, **priv, "C": options.C, "eps2": math.inf, "user_mode": "id", **extra}),
        "Priv-U": lambda: DIPSGNN.from_params(**{**g, **priv, "C": options.C, "user_mode": "id", **extra}),
    }
    return builders[name]()
