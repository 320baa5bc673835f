"""Metrics: full-ranking recommendation quality (``ranking``) and attack success (``attack``).

The names are imported on first use (PEP 562 ``__getattr__``), so code that needs only
``metrics.ranking`` (a model, or a federated device's ClientApp, which Flower starts once per
message) does not import SciPy and scikit-learn through ``metrics.attack``."""

from __future__ import annotations

from importlib import import_module
from typing import Any

_ATTACK = ("advantage", "balanced_accuracy", "binary_attack_report", "blind_guess", "empirical_epsilon",
           "multiclass_attack_report", "precision_recall_f1", "roc_auc", "roc_curve", "tpr_at_fpr")  # fmt: skip
_HOME = {**dict.fromkeys(_ATTACK, "attack"), **dict.fromkeys(("evaluate", "hit_matrix", "ranking_metrics"), "ranking")}
__all__ = sorted(_HOME)


def __getattr__(name: str) -> Any:
    if name in _HOME:
        return getattr(import_module(f"recprivacy.metrics.{_HOME[name]}"), name)
    raise AttributeError(f"module 'recprivacy.metrics' has no attribute {name!r}")
