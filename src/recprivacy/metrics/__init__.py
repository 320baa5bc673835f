"""Metrics: full-ranking recommendation quality (``ranking``) and attack success (``attack``).

The names are imported on first use (PEP 562 ``__getattr__``), so code that needs only
``metrics.ranking`` (a model, or a federated device's ClientApp, which Flower starts once per
message) does not import SciPy and scikit-learn through ``metrics.attack``."""

from __future__ import annotations

from recprivacy.lazy import lazy_getattr

_ATTACK = ("advantage", "balanced_accuracy", "binary_attack_report", "blind_guess", "empirical_epsilon",
           "multiclass_attack_report", "precision_recall_f1", "roc_auc", "roc_curve", "tpr_at_fpr")  # fmt: skip
_HOME = {**dict.fromkeys(_ATTACK, "recprivacy.metrics.attack"),
         **dict.fromkeys(("evaluate", "hit_matrix", "ranking_metrics"), "recprivacy.metrics.ranking")}
__all__ = sorted(_HOME)
__getattr__ = lazy_getattr(__name__, _HOME)
