"""What the private SR-GNN defences of paper 002 share: DIPSGNN (``defenses.dipsgnn``),
EdgeRand (``defenses.edgerand``) and the DP-SGD engine (``defenses.dpsgd``).

Each takes its backbone as an object, an unfitted ``models.srgnn.SRGNN`` (default: the
A-PGNN-style backbone DIPSGNN builds on, raw transition counts and user features), and trains
a copy of it with itself as the copy's ``TrainingHooks`` (``models/srgnn.py``, "Layering"), so
the model layer never imports ``privacy/``. The backbone passed in is never changed; the
trained copy is ``model_``, and the defence scores through it and hands every other read of
fitted state or SR-GNN method (``net_``, ``history_``, ``score_samples``, ``edge_reuse``, ...)
on to it (to the backbone before fitting, for its hyperparameters).

Shared decisions:

* user features: eps1-LDP by DIPSGNN Algorithm 3 (``privacy.mechanisms.perturb_features``),
  drawn once per user from the ``"user features"`` stream; ``eps1 = inf`` keeps them clean.
  Their claim (Theorem 4.1) is ``feature_statement``;
* randomness: ``NoiseSource(noise, backbone.seed)``, operating-system entropy by default and
  seeded only in ``"simulation"`` mode; every statement names it;
* ``from_params`` builds a defence from one flat parameter block (a YAML ``method_params`` or
  ``params`` entry): SR-GNN's constructor arguments go to the backbone, the rest to the defence.
"""

from __future__ import annotations

import copy
import inspect
from typing import Any, ClassVar

import numpy as np
import pandas as pd
import torch

from recprivacy.data.interactions import Interactions
from recprivacy.defenses.kinds import DefenceKind
from recprivacy.defenses.trained_copy import TrainedCopy
from recprivacy.errors import ConfigError
from recprivacy.models.base import Recommender
from recprivacy.models.srgnn import SRGNN, TrainingHooks
from recprivacy.privacy.accounting import PrivacyStatement, check_positive
from recprivacy.privacy.mechanisms import multi_feature_budget, perturb_features
from recprivacy.privacy.randomness import NoiseMixin, check_mode

#: the backbone of DIPSGNN and its baselines when none is given: raw transition counts (the
#: sensitivity-C calibration of Theorem 4.2 is over counts) and the perturbed user features
DEFAULT_BACKBONE = {"adjacency": "count", "user_mode": "features"}
_SRGNN_PARAMS = frozenset(inspect.signature(SRGNN.__init__).parameters) - {"self"}


class PrivateSRGNN(TrainedCopy, TrainingHooks, NoiseMixin, Recommender):
    """An SR-GNN backbone trained under a defence (module docstring); subclasses add the
    network, steps and statements of their mechanism."""

    kind: ClassVar[DefenceKind] = "training"
    #: the name of the guarantee a subclass's statement leads with (``_stated``)
    headline: ClassVar[str]
    sequential = True
    #: SR-GNN settings the defence's mechanism needs, checked on the backbone
    required: dict[str, Any] = {}

    def __init__(self, backbone: SRGNN | None = None, eps1: float = 20.0, noise: str = "secure") -> None:
        name = type(self).__name__
        backbone = SRGNN(**DEFAULT_BACKBONE) if backbone is None else backbone
        if not isinstance(backbone, SRGNN):
            raise ConfigError(f"{name}.backbone: expected an SRGNN, got {type(backbone).__name__}")
        for key, value in self.required.items():
            if getattr(backbone, key) != value:
                raise ConfigError(f"{name}: the backbone's {key} must be {value!r} (the mechanism needs it), "
                                  f"got {getattr(backbone, key)!r}")
        self.backbone = backbone
        self.eps1 = check_positive(f"{name}.eps1", eps1, allow_inf=True)
        self.noise = check_mode(noise, f"{name}.noise")

    @classmethod
    def from_params(cls, **params: Any) -> "PrivateSRGNN":
        """The defence from one flat parameter block (module docstring); the backbone defaults
        to ``DEFAULT_BACKBONE``."""
        backbone = {**DEFAULT_BACKBONE, **{k: v for k, v in params.items() if k in _SRGNN_PARAMS}}
        return cls(SRGNN(**backbone), **{k: v for k, v in params.items() if k not in _SRGNN_PARAMS})

    @property
    def seed(self) -> int:
        """The backbone's seed, which also seeds the simulation noise."""
        return self.backbone.seed

    def __setattr__(self, name: str, value: Any) -> None:
        """Refuse SR-GNN hyperparameters: they belong to the backbone (set them there)."""
        if name in _SRGNN_PARAMS:
            raise ConfigError(f"{type(self).__name__}.{name} is a backbone parameter: set it on .backbone")
        super().__setattr__(name, value)

    def __getattr__(self, name: str) -> Any:
        """Fitted state and SR-GNN methods from the trained copy (the backbone before fitting)."""
        if name.startswith("__") or name in ("backbone", "model_"):
            raise AttributeError(name)
        source = self.__dict__.get("model_", self.__dict__.get("backbone"))
        if source is None:
            raise AttributeError(name)
        return getattr(source, name)

    @property
    def wrapped(self) -> SRGNN:
        return self.backbone

    # ------------------------------------------------------------------ Recommender
    def fit(self, train: Interactions, valid: Interactions | None = None) -> "PrivateSRGNN":
        """Train a copy of the backbone with this defence's hooks."""
        model = copy.deepcopy(self.backbone)
        model.hooks = self
        self.model_ = model.fit(train, valid)
        return self

    # ------------------------------------------------------------------ hooks and claims
    def label(self, model: SRGNN) -> str:
        return type(self).__name__

    def user_features(self, model: SRGNN, table: pd.DataFrame) -> pd.DataFrame:
        """DIPSGNN Algorithm 3 with ``eps1`` from the ``"user features"`` stream."""
        rng: np.random.Generator = self.noise_source().generator("user features")
        return perturb_features(table, model.user_numeric, model.user_categorical, self.eps1, rng,
                                bounds=model.user_bounds, categories=model.user_categories)

    def noise_generator(self) -> torch.Generator:
        """The torch generator of the mechanism's noise (``"noise"`` stream)."""
        return self.noise_source().torch_generator("noise")

    def _stated(self, parts: dict[str, PrivacyStatement]) -> PrivacyStatement:
        """One statement of the named guarantees ``parts``, led by ``headline``, naming the noise."""
        return self.noise_source().stamp(PrivacyStatement.of_parts(parts, self.headline))

    def feature_statement(self) -> PrivacyStatement:
        """Local guarantee of the user features (DIPSGNN Theorem 4.1), or why there is none."""
        mode = self.backbone.user_mode
        if mode != "features":
            return PrivacyStatement.no_guarantee("user features", "not used", f"user_mode is {mode!r}")
        columns = list(self.backbone.user_numeric) + list(self.backbone.user_categorical)
        return self.noise_source().stamp(multi_feature_budget(self.eps1, len(columns)).statement(columns))
