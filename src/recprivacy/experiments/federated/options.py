"""``study_options`` of the ``federated`` study (paper 004), checked before any data load, and
the names its tables give the methods and engines.

Defaults are the paper's ml-100k setting (where it is silent, docs/decisions.md, "Federated
attribute inference and APM (paper 004)"), with two deviations decided on measurements (the
measurements are in docs/decisions.md, "Initialisation N(0, 0.1²), local step 0.01"): parameters
start at N(0, 0.1²) (``init_std``) rather than the paper's N(0, 1) (with N(0, 1) SGD diverges in the first
round), and the local step (``lr``) is 0.01 rather than 0.001 (with the smaller initialisation
0.001 stays below a random ranking after the first rounds; a larger step diverges).
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from recprivacy.config import StudyOptions
from recprivacy.defenses.federated_dp import BASELINES

METHOD_LABELS = {
    "none": "Pure", "apm": "APM (ours)", "ldp": "FedNews / +LDP", "gaussian": "FedRec-GN",
    "fixrec_max": "FixRec-max", "fixrec_min": "FixRec-min",
    "fgerai": "F-GERAI", "fgerai_nl": "F-GERAI-NL", "fdpmf": "F-DPMF", "fedmf": "FedMF (no noise)",
}  # fmt: skip

ENGINE_LABELS = {"simulator": "in-process simulator", "flower-sim": "Flower simulation engine",
                 "flower": "Flower deployment engine (SuperLink and SuperNodes)"}


class FederatedOptions(StudyOptions):
    """Options of the ``federated`` study (defaults: the paper's ml-100k setting, see above)."""

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
    wave_size: int = Field(8, ge=1)  # Flower engines: devices training at once (one ClientApp process each)


def factory_options(method: str, options: FederatedOptions) -> dict:
    """The keyword arguments of ``make_baseline`` / ``make_defence`` for ``method``."""
    if method in BASELINES:
        return {"eps_x": options.eps_x, "eps_f": options.eps_f, "eps_dpmf": options.eps_dpmf}
    return {"delta": options.delta, "eps_min": options.eps_min, "eps_max": options.eps_max, "resistance": options.resistance,
            "epsilon": options.epsilon, "sigma": options.sigma}
