"""Attack evaluation: how much better than a blind guess does an attack do?

Binary attacks (membership inference, binary attribute inference) give a score per target,
higher meaning "positive" (member / attribute value). Threshold-free metrics come from the ROC
curve of those scores; threshold metrics from the hard decision ``score >= threshold``.

* ``roc_auc``: area under the ROC curve (scikit-learn ``roc_auc_score``).
* ``tpr_at_fpr``: the largest TPR among the ROC points with ``FPR <= target``, read off the
  empirical curve without interpolation (the LiRA way of reporting membership inference).
* ``advantage``: ``max_t TPR(t) - FPR(t)`` (Yeom et al. 2018; Youden's J).
* ``balanced_accuracy``: ``(TPR + TNR) / 2`` of hard predictions. For one binary decision this
  equals ``(1 + TPR - FPR) / 2``, the area under the single-point ROC curve, which some papers
  (e.g. the user-level membership inference paper, 001) call "AUC".
* ``empirical_epsilon``: the differential-privacy lower bound implied by the attack's error
  rates (Kairouz et al. 2015; Jagielski et al. 2020).

Multi-class attacks (attribute inference over, e.g., age groups) are reported with accuracy,
balanced accuracy, macro / weighted F1 and one-vs-rest AUC. Every report carries the score of a
blind guess (``blind_guess``) so a reader can tell leakage from chance.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import numpy as np
from scipy.stats import beta
from sklearn import metrics as skm

REPORT_FPRS = (0.001, 0.01, 0.1)
AVERAGES = ("binary", "macro", "weighted")
_TPR_KEY = re.compile(r"^tpr@([0-9.]+)%fpr$")


# ---------------------------------------------------------------------------- validation
def _labels_1d(y: Any, name: str) -> np.ndarray:
    y = np.asarray(y)
    if y.ndim != 1:
        raise ValueError(f"{name}: expected a 1-D array, got shape {y.shape}")
    if y.size == 0:
        raise ValueError(f"{name}: empty; expected at least one sample")
    if y.dtype.kind == "f" and np.isnan(y).any():
        raise ValueError(f"{name}: NaN at index {int(np.flatnonzero(np.isnan(y))[0])}; expected a label")
    return y


def _same_length(a: np.ndarray, b: np.ndarray, name_a: str, name_b: str) -> None:
    if len(a) != len(b):
        raise ValueError(f"{name_a} has {len(a)} entries but {name_b} has {len(b)}; expected one per sample")


def _binary_labels(y_true: Any, name: str = "y_true", both: bool = True) -> np.ndarray:
    """``y_true`` as an int array of 0/1; with ``both`` it must hold both classes."""
    y = _labels_1d(y_true, name)
    values = np.unique(y)
    if not np.isin(values, (0, 1)).all():
        raise ValueError(f"{name}: expected binary labels 0/1 (1 = positive), got values {values[:5].tolist()}")
    if both and values.size < 2:
        raise ValueError(f"{name}: only one class present ({values[0].tolist()!r}); need positives and negatives")
    return y.astype(np.int64)


def _finite_scores(scores: Any, n: int, name: str = "scores") -> np.ndarray:
    s = np.asarray(scores, dtype=np.float64)
    if s.ndim != 1:
        raise ValueError(f"{name}: expected a 1-D array of scores, got shape {s.shape}")
    if len(s) != n:
        raise ValueError(f"y_true has {n} entries but {name} has {len(s)}; expected one per sample")
    bad = np.flatnonzero(~np.isfinite(s))
    if bad.size:
        raise ValueError(f"{name}: non-finite value {s[bad[0]]} at index {bad[0]}; expected finite numbers")
    return s


def _binary_inputs(y_true: Any, scores: Any) -> tuple[np.ndarray, np.ndarray]:
    y = _binary_labels(y_true)
    return y, _finite_scores(scores, len(y))


def _label_pair(y_true: Any, y_pred: Any) -> tuple[np.ndarray, np.ndarray]:
    y, p = _labels_1d(y_true, "y_true"), _labels_1d(y_pred, "y_pred")
    _same_length(y, p, "y_true", "y_pred")
    if np.unique(y).size < 2:
        raise ValueError(f"y_true: only one class present ({y[0].tolist()!r}); need at least two")
    return y, p


# ---------------------------------------------------------------------------- ROC-based
def roc_curve(y_true: Any, scores: Any, drop_intermediate: bool = False) -> tuple[np.ndarray, ...]:
    """``(fpr, tpr, thresholds)`` of the decisions ``score >= threshold`` (scikit-learn).

    All operating points are kept by default, so low-FPR readings and log-log plots are exact.
    """
    y, s = _binary_inputs(y_true, scores)
    return skm.roc_curve(y, s, drop_intermediate=drop_intermediate)


def roc_auc(y_true: Any, scores: Any) -> float:
    """Area under the ROC curve; 0.5 is a blind guess, 1.0 a perfect attack."""
    y, s = _binary_inputs(y_true, scores)
    return float(skm.roc_auc_score(y, s))


def tpr_at_fpr(y_true: Any, scores: Any, fprs: Sequence[float] = REPORT_FPRS) -> dict[float, float]:
    """For each target ``f``: ``max{TPR(t) : FPR(t) <= f}`` over all thresholds ``t``.

    No interpolation: only operating points the attack can actually realise count. With
    ``n_neg`` negatives the FPR moves in steps of ``1 / n_neg``; a target below that step is
    read at FPR = 0 (the positives scored above every negative), which is noisy for small
    ``n_neg``. A blind guess scores ``TPR = f``.
    """
    fpr, tpr, _ = roc_curve(y_true, scores)
    out = {}
    for f in fprs:
        if not 0.0 <= f <= 1.0:
            raise ValueError(f"fprs: target {f} is not a rate in [0, 1]")
        out[float(f)] = float(tpr[fpr <= f].max())
    return out


def advantage(y_true: Any, scores: Any) -> float:
    """Membership advantage ``max_t TPR(t) - FPR(t)`` (Yeom et al. 2018); 0 = blind guess."""
    fpr, tpr, _ = roc_curve(y_true, scores)
    return float(np.max(tpr - fpr))


def _clopper_pearson(k: np.ndarray, n: int, level: float) -> tuple[np.ndarray, np.ndarray]:
    """One-sided exact binomial bounds (lower, upper) on ``k / n``, each at ``level``."""
    a = 1.0 - level
    with np.errstate(invalid="ignore"):
        lower = np.where(k > 0, beta.ppf(a, k, n - k + 1), 0.0)
        upper = np.where(k < n, beta.ppf(1 - a, k + 1, n - k), 1.0)
    return lower, upper


def empirical_epsilon(y_true: Any, scores: Any, delta: float = 0.0, confidence: float | None = None) -> float:
    """Lower bound on the epsilon of an (epsilon, delta)-DP mechanism implied by this attack.

    Any (epsilon, delta)-DP mechanism forces, for every test (Kairouz et al. 2015),
    ``FPR + e^eps * FNR >= 1 - delta`` and ``FNR + e^eps * FPR >= 1 - delta``. Hence over all
    thresholds ``t`` (``FNR = 1 - TPR``)::

        eps >= max_t max( log((TPR - delta) / FPR), log((1 - delta - FPR) / (1 - TPR)) )

    Terms with a non-positive numerator carry no evidence and are skipped; the bound is 0 if
    nothing remains. ``confidence=None`` gives the point estimate, which is ``inf`` when some
    threshold has ``FPR = 0`` (or ``TPR = 1``) with a positive numerator. With a confidence
    level ``c`` (Jagielski et al. 2020), TPR is replaced by its Clopper-Pearson lower bound and
    FPR by its upper bound, each one-sided at ``1 - (1 - c) / 2`` so both hold jointly with
    probability ``>= c``; the result is finite. Choosing the threshold on the same samples makes
    the bound optimistic; for an audit, score held-out samples.
    """
    if not 0.0 <= delta < 1.0:
        raise ValueError(f"delta: expected a value in [0, 1), got {delta}")
    y, s = _binary_inputs(y_true, scores)
    fpr, tpr, _ = skm.roc_curve(y, s, drop_intermediate=False)
    if confidence is not None:
        if not 0.0 < confidence < 1.0:
            raise ValueError(f"confidence: expected a level in (0, 1), got {confidence}")
        n_pos, n_neg = int(y.sum()), int(len(y) - y.sum())
        level = 1.0 - (1.0 - confidence) / 2.0
        tpr = _clopper_pearson(np.rint(tpr * n_pos), n_pos, level)[0]
        fpr = _clopper_pearson(np.rint(fpr * n_neg), n_neg, level)[1]
    with np.errstate(divide="ignore"):
        terms = np.concatenate([_log_ratio(tpr - delta, fpr), _log_ratio(1.0 - delta - fpr, 1.0 - tpr)])
    return float(terms.max(initial=0.0))


def _log_ratio(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    """``log(num / den)`` where ``num > 0`` (``inf`` when ``den == 0``)."""
    keep = num > 0
    return np.log(num[keep]) - np.log(den[keep])


# ---------------------------------------------------------------------------- label-based
def balanced_accuracy(y_true: Any, y_pred: Any) -> float:
    """Mean per-class recall; for binary labels ``(1 + TPR - FPR) / 2``."""
    y, p = _label_pair(y_true, y_pred)
    return float(skm.balanced_accuracy_score(y, p))


def precision_recall_f1(y_true: Any, y_pred: Any, average: str = "binary") -> dict[str, float]:
    """Precision, recall and F1 (scikit-learn; 0 where undefined). ``average``: ``binary``
    (positive class 1), ``macro`` (unweighted class mean) or ``weighted`` (by class support)."""
    if average not in AVERAGES:
        raise ValueError(f"average: expected one of {AVERAGES}, got {average!r}")
    y, p = _label_pair(y_true, y_pred)
    if average == "binary":
        y, p = _binary_labels(y, "y_true"), _binary_labels(p, "y_pred", both=False)
    prec, rec, f1, _ = skm.precision_recall_fscore_support(y, p, average=average, zero_division=0)
    return {"precision": float(prec), "recall": float(rec), "f1": float(f1)}


def weighted_f1(y_true: np.ndarray, y_pred: np.ndarray, n_classes: int, weights: np.ndarray | None = None) -> float:
    """Support-weighted F1 over classes ``0..n_classes-1`` with sample ``weights``, in closed
    form: ``F1_c = 2 TP_c / (n_c + m_c)`` (``n_c`` true, ``m_c`` predicted members of ``c``; 0 when
    both are 0), averaged with weights ``n_c`` -- scikit-learn's ``f1_score(average="weighted",
    zero_division=0)`` without its per-call checks, for bootstraps that call it thousands of times."""
    y, p = np.asarray(y_true), np.asarray(y_pred)
    w = np.ones(len(y)) if weights is None else np.asarray(weights, dtype=np.float64)
    hit = y == p
    tp = np.bincount(y[hit], weights=w[hit], minlength=n_classes)
    support = np.bincount(y, weights=w, minlength=n_classes)
    both = support + np.bincount(p, weights=w, minlength=n_classes)
    f1 = np.divide(2 * tp, both, out=np.zeros(n_classes), where=both > 0)
    return float((support * f1).sum() / support.sum()) if support.sum() > 0 else 0.0


# ---------------------------------------------------------------------------- blind guesses
def _binary_blind(y: np.ndarray) -> dict[str, float]:
    """Scores of data-independent guessing on binary labels. Precision and F1 are those of
    "always positive", the constant guess with the highest F1: precision = prevalence p,
    F1 = 2p / (1 + p)."""
    p = float(y.mean())
    out = {"auc": 0.5, "advantage": 0.0, "epsilon": 0.0, "balanced_accuracy": 0.5}
    out.update({"accuracy": max(p, 1.0 - p), "precision": p, "f1": 2 * p / (1 + p)})
    return out


def _majority_baseline(y: np.ndarray, labels: np.ndarray) -> dict[str, float]:
    """Scores of predicting the most frequent class for everyone (exact, via scikit-learn).
    Balanced accuracy averages recall over the classes present in ``y``, hence ``1 / C_present``."""
    values, counts = np.unique(y, return_counts=True)
    pred = np.full(len(y), values[np.argmax(counts)])
    return {
        "accuracy": float(counts.max() / len(y)),
        "balanced_accuracy": 1.0 / len(values),
        "macro_f1": float(skm.f1_score(y, pred, labels=labels, average="macro", zero_division=0)),
        "weighted_f1": float(skm.f1_score(y, pred, labels=labels, average="weighted", zero_division=0)),
        "auc_ovr": 0.5,
    }


def _uniform_baseline(y: np.ndarray, labels: np.ndarray) -> dict[str, float]:
    """Expected scores of guessing a class uniformly at random, in the large-sample limit:
    class ``c`` with prevalence ``p_c`` gets precision ``p_c`` and recall ``1/C``, so
    ``F1_c = 2 p_c / (C p_c + 1)``."""
    c = len(labels)
    prior = np.array([np.mean(y == label) for label in labels])
    f1 = 2 * prior / (c * prior + 1)
    return {
        "accuracy": 1.0 / c,
        "balanced_accuracy": 1.0 / c,
        "macro_f1": float(f1.mean()),
        "weighted_f1": float((prior * f1).sum()),
        "auc_ovr": 0.5,
    }


def _multiclass_blind(y: np.ndarray, labels: np.ndarray) -> dict[str, float]:
    """Per metric, the better of the majority-class and uniform-random guesses."""
    majority, uniform = _majority_baseline(y, labels), _uniform_baseline(y, labels)
    return {m: max(majority[m], uniform[m]) for m in majority}


def blind_guess(y_true: Any, metric: str = "auc", labels: Sequence[Any] | None = None) -> float:
    """What a guess that ignores the attack's input scores on ``metric``.

    Binary 0/1 labels: ``auc`` 0.5, ``advantage`` 0, ``epsilon`` 0, ``balanced_accuracy`` 0.5,
    ``tpr@X%fpr`` X/100 (a random guess has TPR = FPR), ``accuracy`` the majority share,
    ``precision`` the prevalence and ``f1`` ``2p / (1 + p)`` ("always positive"). Other labels
    (or ``labels`` given): ``accuracy``, ``balanced_accuracy``, ``macro_f1``, ``weighted_f1``,
    ``auc_ovr``, each the better of always guessing the majority class and guessing uniformly at
    random. Recall has no blind baseline: guessing "positive" more often raises it at will.
    """
    y = _labels_1d(y_true, "y_true")
    tpr_key = _TPR_KEY.match(metric)
    if tpr_key:
        return float(tpr_key.group(1)) / 100.0
    is_binary = labels is None and np.isin(np.unique(y), (0, 1)).all()
    table = _binary_blind(y) if is_binary else _multiclass_blind(y, _class_labels(y, labels))
    if metric not in table:
        raise ValueError(f"metric: no blind-guess value for {metric!r}; known: {sorted(table)} and tpr@X%fpr")
    return table[metric]


def _class_labels(y: np.ndarray, labels: Sequence[Any] | None) -> np.ndarray:
    if labels is None:
        return np.unique(y)
    labels = np.asarray(labels)
    unknown = np.setdiff1d(np.unique(y), labels)
    if unknown.size:
        raise ValueError(f"y_true: label {unknown[0].tolist()!r} is not in labels {labels.tolist()}")
    return labels


# ---------------------------------------------------------------------------- reports
def _fpr_key(f: float) -> str:
    return f"tpr@{100 * f:g}%fpr"


def binary_attack_report(y_true: Any, scores: Any, threshold: float = 0.5) -> dict[str, Any]:
    """Everything a reviewer needs about a binary attack, with blind-guess baselines.

    Threshold-free: ``auc``, ``tpr@0.1%fpr``, ``tpr@1%fpr``, ``tpr@10%fpr``, ``advantage``,
    ``epsilon_lower_95`` (``empirical_epsilon`` at 95% confidence). At ``score >= threshold``:
    ``balanced_accuracy`` (the single-threshold quantity some papers call "AUC"), ``accuracy``,
    ``precision``, ``recall``, ``f1``, ``tpr``, ``fpr``. Also ``threshold``, ``n_pos``,
    ``n_neg`` and ``blind`` (metric -> blind-guess value, see ``blind_guess``).
    """
    y, s = _binary_inputs(y_true, scores)
    pred = (s >= threshold).astype(np.int64)
    n_pos = int(y.sum())
    n_neg = len(y) - n_pos
    tp, fp = int(pred[y == 1].sum()), int(pred[y == 0].sum())
    report: dict[str, Any] = {"auc": roc_auc(y, s)}
    report.update({_fpr_key(f): v for f, v in tpr_at_fpr(y, s, REPORT_FPRS).items()})
    report["advantage"] = advantage(y, s)
    report["epsilon_lower_95"] = empirical_epsilon(y, s, confidence=0.95)
    report["balanced_accuracy"] = float(skm.balanced_accuracy_score(y, pred))
    report["accuracy"] = float(skm.accuracy_score(y, pred))
    report.update(precision_recall_f1(y, pred, average="binary"))
    report.update({"tpr": tp / n_pos, "fpr": fp / n_neg, "threshold": float(threshold)})
    report.update({"n_pos": n_pos, "n_neg": n_neg})
    blind = _binary_blind(y)
    blind.update({_fpr_key(f): f for f in REPORT_FPRS})
    blind["epsilon_lower_95"] = blind.pop("epsilon")
    report["blind"] = blind
    return report


def _proba_or_pred(y: np.ndarray, x: Any, labels: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
    """Predicted labels and, for a 2-D input, the probability matrix (columns = ``labels``)."""
    x = np.asarray(x)
    _same_length(y, x, "y_true", "proba_or_pred")
    if x.ndim == 1:
        return x, None
    if x.ndim != 2 or x.shape[1] != len(labels):
        raise ValueError(f"proba_or_pred: expected [n, {len(labels)}] probabilities (one column per label), got {x.shape}")
    proba = np.asarray(x, dtype=np.float64)
    bad = np.argwhere(~np.isfinite(proba))
    if bad.size:
        raise ValueError(f"proba_or_pred: non-finite value at row {bad[0][0]}, column {bad[0][1]}")
    return labels[np.argmax(proba, axis=1)], proba


def _ovr_auc(y: np.ndarray, proba: np.ndarray, labels: np.ndarray) -> float:
    """Macro one-vs-rest ROC AUC over the classes present in ``y_true`` (C is small)."""
    present = [j for j, label in enumerate(labels) if (y == label).any()]
    return float(np.mean([skm.roc_auc_score(y == labels[j], proba[:, j]) for j in present]))


def multiclass_attack_report(y_true: Any, proba_or_pred: Any, labels: Sequence[Any]) -> dict[str, Any]:
    """Report of an attack that guesses one of several classes (e.g. an age group).

    ``proba_or_pred`` is either ``[n, len(labels)]`` scores (column ``j`` for ``labels[j]``,
    prediction = argmax) or ``[n]`` predicted labels. Returns ``accuracy``,
    ``balanced_accuracy``, ``macro_f1``, ``weighted_f1``, ``auc_ovr`` (macro one-vs-rest ROC AUC,
    only with scores), ``n``, ``n_classes``, ``labels``, ``baseline_majority``,
    ``baseline_uniform`` and ``blind`` (per metric, the better of the two baselines).
    """
    y = _labels_1d(y_true, "y_true")
    labels = _class_labels(y, labels)
    if np.unique(y).size < 2:
        raise ValueError(f"y_true: only one class present ({y[0].tolist()!r}); need at least two")
    pred, proba = _proba_or_pred(y, proba_or_pred, labels)
    report: dict[str, Any] = {
        "accuracy": float(skm.accuracy_score(y, pred)),
        "balanced_accuracy": float(skm.balanced_accuracy_score(y, pred)),
        "macro_f1": float(skm.f1_score(y, pred, labels=labels, average="macro", zero_division=0)),
        "weighted_f1": float(skm.f1_score(y, pred, labels=labels, average="weighted", zero_division=0)),
    }
    if proba is not None:
        report["auc_ovr"] = _ovr_auc(y, proba, labels)
    report.update({"n": len(y), "n_classes": len(labels), "labels": labels.tolist()})
    report["baseline_majority"] = _majority_baseline(y, labels)
    report["baseline_uniform"] = _uniform_baseline(y, labels)
    report["blind"] = _multiclass_blind(y, labels)
    return report
