"""Recommenders and the registry that builds them by name.

``MODELS`` maps every public name to its class; ``make_model(name, **params)`` builds one,
checking the parameter names against the constructor. The names ``gmf``, ``mlp`` and
``neumf`` preset the ``variant`` of ``NCF``; ``ncf`` leaves it a parameter (default NeuMF).
"""

from __future__ import annotations

import inspect
from typing import Any

from recprivacy.errors import ConfigError
from recprivacy.models.base import Recommender
from recprivacy.models.bpr import BPRMF
from recprivacy.models.itemcf import ItemCF
from recprivacy.models.lfm import LFM
from recprivacy.models.lightgcn import LightGCN
from recprivacy.models.ncf import NCF
from recprivacy.models.popularity import Popularity
from recprivacy.models.sasrec import SASRec
from recprivacy.models.srgnn import SRGNN

MODELS: dict[str, type[Recommender]] = {
    "popularity": Popularity,
    "itemcf": ItemCF,
    "lfm": LFM,
    "bpr": BPRMF,
    "neumf": NCF,
    "ncf": NCF,
    "gmf": NCF,
    "mlp": NCF,
    "lightgcn": LightGCN,
    "sasrec": SASRec,
    "srgnn": SRGNN,
}

#: constructor arguments fixed by a registry name
PRESETS: dict[str, dict[str, Any]] = {
    "neumf": {"variant": "neumf"},
    "gmf": {"variant": "gmf"},
    "mlp": {"variant": "mlp"},
}


def model_params(name: str) -> list[str]:
    """Constructor parameter names a registry name accepts (without its preset ones)."""
    cls = _model_class(name)
    names = [p for p in inspect.signature(cls.__init__).parameters if p != "self"]
    return [p for p in names if p not in PRESETS.get(name, {})]


def make_model(name: str, **params: Any) -> Recommender:
    """Build the recommender registered as ``name`` with constructor arguments ``params``.

    Raises ``ConfigError`` naming the valid models for an unknown name, or the bad parameter
    and the allowed ones for an unknown (or preset) parameter.
    """
    allowed = model_params(name)
    for key in params:
        if key not in allowed:
            preset = PRESETS.get(name, {})
            why = f"is fixed to {preset[key]!r} by the name {name!r}" if key in preset else "is not a parameter"
            raise ConfigError(f"model {name!r}: {key!r} {why}; allowed parameters: {', '.join(allowed)}")
    return _model_class(name)(**PRESETS.get(name, {}), **params)


def _model_class(name: str) -> type[Recommender]:
    if name not in MODELS:
        raise ConfigError(f"unknown model {name!r}; valid names: {', '.join(sorted(MODELS))}")
    return MODELS[name]


__all__ = ["BPRMF", "ItemCF", "LFM", "LightGCN", "MODELS", "NCF", "Popularity", "Recommender", "SASRec",
           "SRGNN", "make_model", "model_params"]
