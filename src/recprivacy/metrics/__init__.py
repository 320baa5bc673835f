"""Metrics: full-ranking recommendation quality (``ranking``) and attack success (``attack``)."""

from recprivacy.metrics.attack import (
    advantage,
    balanced_accuracy,
    binary_attack_report,
    blind_guess,
    empirical_epsilon,
    multiclass_attack_report,
    precision_recall_f1,
    roc_auc,
    roc_curve,
    tpr_at_fpr,
)
from recprivacy.metrics.ranking import evaluate, hit_matrix, ranking_metrics

__all__ = [
    "advantage",
    "balanced_accuracy",
    "binary_attack_report",
    "blind_guess",
    "empirical_epsilon",
    "evaluate",
    "hit_matrix",
    "multiclass_attack_report",
    "precision_recall_f1",
    "ranking_metrics",
    "roc_auc",
    "roc_curve",
    "tpr_at_fpr",
]
