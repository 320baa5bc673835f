"""Judging an attack that guesses a class per user (an attribute value), used by the
``attribute`` audit section and the matrix: predictions pooled over seeded ζ-splits, each class
metric beside its blind guess on the same users, and the margin with a paired bootstrap over
users (``intervals.paired_difference_interval``).

The verdict is on one primary metric, **balanced accuracy**, the mean per-class recall over the
``C`` classes present among the attacked users, ``BA = (1 / C) sum_c TP_c / n_c``, against a
blind guess of ``1 / C``: always guessing one class ``c`` recalls all of ``c`` and none of the
others (``BA = 1 / C``, the majority-class guess included), and guessing at random with any
probabilities ``q`` has expected ``BA = (1 / C) sum_c q_c = 1 / C``. Accuracy (against always
guessing the majority class) and weighted F1 (against the better of that guess and a uniform
one, whose expected weighted F1 is ``sum_c p_c 2 p_c / (C p_c + 1)``, ``metrics.attack``) are
secondary rows: shown with their numbers and no verdict word of their own, so they can never
contradict the primary metric.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from recprivacy.attacks.attribute import AttributeAttacker, zeta_split
from recprivacy.experiments.audit import SectionWriter
from recprivacy.metrics.attack import weighted_f1
from recprivacy.metrics.intervals import Estimate, paired_difference_interval
from recprivacy.metrics.verdict import Verdict, users_sample

#: the class metric a class-guessing attack is judged on; the others are secondary rows
PRIMARY = "balanced_accuracy"

#: each class metric's (baseline ``class_metric``, baseline name with ``{blind}`` its value, label)
CLASS_BASELINES = {
    "balanced_accuracy": ("chance_balanced_accuracy", "blind guess (1/C = {blind:.3f})", "balanced accuracy"),
    "accuracy": ("majority_accuracy", "majority-class guess", "accuracy"),
    "weighted_f1": ("blind_weighted_f1", "better of majority-class and uniform guess", "weighted F1"),
}


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


def balanced_accuracy(truth: np.ndarray, pred: np.ndarray, n_classes: int, w: np.ndarray | None = None) -> float:
    """Mean per-class recall with sample weights ``w``: ``(1 / C) sum_c TP_c / n_c`` over the
    ``C`` classes with ``n_c = sum_{i: y_i = c} w_i > 0``, ``TP_c = sum_{i: y_i = p_i = c} w_i``."""
    w = np.ones(len(truth)) if w is None else np.asarray(w, dtype=np.float64)
    hit = truth == pred
    support = np.bincount(truth, weights=w, minlength=n_classes)
    tp = np.bincount(truth[hit], weights=w[hit], minlength=n_classes)
    present = support > 0
    return float((tp[present] / support[present]).mean())


def chance_balanced_accuracy(truth: np.ndarray, n_classes: int, w: np.ndarray | None = None) -> float:
    """A blind guess's balanced accuracy, ``1 / C`` with ``C`` the classes of positive weight
    (module docstring); ``1 / C`` of the attacked users unless a bootstrap draw loses a class."""
    w = np.ones(len(truth)) if w is None else np.asarray(w, dtype=np.float64)
    return 1.0 / int((np.bincount(truth, weights=w, minlength=n_classes) > 0).sum())


def class_metric(name: str, rows: np.ndarray, truth: np.ndarray, pred: np.ndarray,
                 n_classes: int) -> Callable[[np.ndarray | None], float]:  # fmt: skip
    """``w -> metric`` with sample weights ``w`` (``intervals.paired_difference_interval``):
    ``balanced_accuracy`` / ``accuracy`` / ``weighted_f1`` of ``pred``; ``chance_balanced_accuracy``
    a blind guess's ``1 / C``; ``majority_accuracy`` of always guessing the majority class of
    ``truth``; ``blind_weighted_f1`` the better of that guess's weighted F1 and a uniform guess's
    expected one, ``sum_c p_c 2 p_c / (C p_c + 1)`` (``metrics.attack``)."""
    majority = np.full(len(truth), np.bincount(truth, minlength=n_classes).argmax())

    def uniform_f1(w: np.ndarray | None) -> float:
        p = np.bincount(truth, weights=w, minlength=n_classes) / (len(truth) if w is None else w.sum())
        return float((p * 2 * p / (n_classes * p + 1)).sum())

    stats = {"balanced_accuracy": lambda w: balanced_accuracy(truth, pred, n_classes, w),
             "chance_balanced_accuracy": lambda w: chance_balanced_accuracy(truth, n_classes, w),
             "accuracy": lambda w: float(np.average(truth == pred, weights=w)),
             "majority_accuracy": lambda w: float(np.average(truth == majority, weights=w)),
             "weighted_f1": lambda w: weighted_f1(truth, pred, n_classes, w),
             "blind_weighted_f1": lambda w: max(weighted_f1(truth, majority, n_classes, w), uniform_f1(w))}  # fmt: skip
    return stats[name]


def judge_class_metric(metric: str, rows: np.ndarray, truth: np.ndarray, pred: np.ndarray,
                       n_classes: int) -> tuple[Estimate, float, str, Estimate]:  # fmt: skip
    """``metric`` of the predictions and its margin over the metric's blind guess on the same
    users, with a paired bootstrap over users: (value, baseline, baseline name, margin)."""
    baseline, name, _ = CLASS_BASELINES[metric]
    value, blind, margin = paired_difference_interval(class_metric(metric, rows, truth, pred, n_classes),
                                                      class_metric(baseline, rows, truth, pred, n_classes), rows)  # fmt: skip
    return value, blind, name.format(blind=blind), margin


def judge_classes(out: SectionWriter, attack: str, rows: np.ndarray, truth: np.ndarray, pred: np.ndarray,
                  n_classes: int, attacker: str, seeds: int) -> Verdict:  # fmt: skip
    """Risk rows of a class-guessing attack whose predictions are pooled over ``seeds`` ζ-splits:
    balanced accuracy against a blind guess's ``1 / C`` (the verdict, ``chance = 1 / C``), then
    accuracy and weighted F1 against their blind guesses as secondary rows; each row's sample is
    the distinct users attacked."""
    sample = users_sample(len(np.unique(rows)), seeds, "one ζ-split each, predictions pooled, bootstrap over users")
    primary = CLASS_BASELINES[PRIMARY][2]
    value, blind, name, margin = judge_class_metric(PRIMARY, rows, truth, pred, n_classes)
    verdict = out.judge(attack, primary, value, blind, name, margin, attacker, chance=blind, sample=sample)
    for metric in [m for m in CLASS_BASELINES if m != PRIMARY]:
        value, blind, name, margin = judge_class_metric(metric, rows, truth, pred, n_classes)
        out.secondary(attack, CLASS_BASELINES[metric][2], primary, value, blind, name, margin, attacker, sample=sample)
    return verdict
