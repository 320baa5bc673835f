"""Judging an attack that guesses a class per user (an attribute value), used by the
``attribute`` audit section and the matrix: predictions pooled over seeded ζ-splits, each class
metric beside its blind guess on the same users, and the margin with a paired bootstrap over
users (``intervals.paired_difference_interval``).

Accuracy is set against always guessing the majority class; weighted F1 against the better of
that guess and a uniform one, whose expected weighted F1 is ``sum_c p_c 2 p_c / (C p_c + 1)``
(``metrics.attack``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from recprivacy.attacks.attribute import AttributeAttacker, zeta_split
from recprivacy.experiments.audit import SectionWriter
from recprivacy.metrics.attack import weighted_f1
from recprivacy.metrics.intervals import Estimate, paired_difference_interval


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

    def uniform_f1(w: np.ndarray | None) -> float:
        p = np.bincount(truth, weights=w, minlength=n_classes) / (len(truth) if w is None else w.sum())
        return float((p * 2 * p / (n_classes * p + 1)).sum())

    stats = {"accuracy": lambda w: float(np.average(truth == pred, weights=w)),
             "majority_accuracy": lambda w: float(np.average(truth == majority, weights=w)),
             "weighted_f1": lambda w: weighted_f1(truth, pred, n_classes, w),
             "blind_weighted_f1": lambda w: max(weighted_f1(truth, majority, n_classes, w), uniform_f1(w))}  # fmt: skip
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
