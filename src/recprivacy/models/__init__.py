"""Recommenders and the registry that builds them by name.

``MODEL_NAMES`` lists every public name without importing a model; ``make_model(name,
**params)`` imports the model's module on first use and builds one, checking the parameter
names against the constructor. ``MODELS`` (name -> class) and the classes themselves are
exported lazily (PEP 562), so ``import recprivacy.models`` and config validation of a model
name do not import torch. The names ``gmf``, ``mlp`` and ``neumf`` preset the ``variant`` of
``NCF``; ``ncf`` leaves it a parameter (default NeuMF).
"""

from __future__ import annotations

import inspect
from importlib import import_module
from typing import TYPE_CHECKING, Any

from recprivacy.errors import ConfigError

if TYPE_CHECKING:
    from recprivacy.models.base import Recommender

#: class name -> module defining it
_CLASSES: dict[str, str] = {
    "ALS": "recprivacy.models.als",
    "BPRMF": "recprivacy.models.bpr",
    "ItemCF": "recprivacy.models.itemcf",
    "LFM": "recprivacy.models.lfm",
    "LightGCN": "recprivacy.models.lightgcn",
    "NCF": "recprivacy.models.ncf",
    "Popularity": "recprivacy.models.popularity",
    "Recommender": "recprivacy.models.base",
    "SASRec": "recprivacy.models.sasrec",
    "SRGNN": "recprivacy.models.srgnn",
}

#: registry name -> class name
_REGISTRY: dict[str, str] = {
    "popularity": "Popularity",
    "itemcf": "ItemCF",
    "lfm": "LFM",
    "bpr": "BPRMF",
    "als": "ALS",
    "neumf": "NCF",
    "ncf": "NCF",
    "gmf": "NCF",
    "mlp": "NCF",
    "lightgcn": "LightGCN",
    "sasrec": "SASRec",
    "srgnn": "SRGNN",
}

#: every registry name, sorted
MODEL_NAMES: tuple[str, ...] = tuple(sorted(_REGISTRY))

#: constructor arguments fixed by a registry name
PRESETS: dict[str, dict[str, Any]] = {
    "neumf": {"variant": "neumf"},
    "gmf": {"variant": "gmf"},
    "mlp": {"variant": "mlp"},
}


def check_model_name(name: str) -> str:
    """``name`` if it is registered, else a ``ConfigError`` listing the valid names."""
    if name not in _REGISTRY:
        raise ConfigError(f"unknown model {name!r}; valid names: {', '.join(MODEL_NAMES)}")
    return name


def model_params(name: str) -> list[str]:
    """Constructor parameter names a registry name accepts (without its preset ones)."""
    cls = model_class(name)
    names = [p for p in inspect.signature(cls.__init__).parameters if p != "self"]
    return [p for p in names if p not in PRESETS.get(name, {})]


def resolved_params(name: str, params: dict[str, Any]) -> dict[str, Any]:
    """``params`` with every other constructor argument of ``name`` written out at its default
    (what a run saves as the settings it ran with). ``seed`` is left out: the run's seed sets it
    unless ``params`` names one."""
    signature = inspect.signature(model_class(name).__init__).parameters
    defaults = {p: signature[p].default for p in model_params(name) if p != "seed"}
    return {**{k: v for k, v in defaults.items() if v is not inspect.Parameter.empty}, **params}


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
    return model_class(name)(**PRESETS.get(name, {}), **params)


def model_class(name: str) -> type[Recommender]:
    """The class a registry name builds (its module is imported on first use)."""
    return _export(_REGISTRY[check_model_name(name)])


def _export(class_name: str) -> Any:
    return getattr(import_module(_CLASSES[class_name]), class_name)


def __getattr__(name: str) -> Any:
    """``MODELS`` and the model classes, imported on first use (PEP 562)."""
    if name == "MODELS":
        return {key: model_class(key) for key in _REGISTRY}
    if name in _CLASSES:
        return _export(name)
    raise AttributeError(f"module 'recprivacy.models' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(__all__)


__all__ = ["ALS", "BPRMF", "ItemCF", "LFM", "LightGCN", "MODELS", "MODEL_NAMES", "NCF", "PRESETS", "Popularity",
           "Recommender", "SASRec", "SRGNN", "check_model_name", "make_model", "model_class", "model_params",
           "resolved_params"]
