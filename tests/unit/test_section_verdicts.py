"""The verdict rule as the audit sections apply it (issue 32), on hand-made cases: the attribute
attack judged by balanced accuracy against 1/C with accuracy and weighted F1 as secondary rows, and
the exposure protection rows judged by their change's label."""

from __future__ import annotations

import numpy as np
import pytest
import sklearn.metrics as skm

from recprivacy.experiments.audit import SectionWriter
from recprivacy.experiments.exposure.protection import CHANGE_LABEL, judge_rows
from recprivacy.experiments.federated.classes import balanced_accuracy, chance_balanced_accuracy, class_metric, judge_classes
from recprivacy.experiments.results import Results
from recprivacy.metrics.intervals import paired_difference_interval, weighted_mean


def _writer() -> SectionWriter:
    return SectionWriter("s", Results(name="t", study="audit", config={}))


def test_a_constant_margin_has_a_point_interval_and_the_attack_its_bootstrap():
    a = np.array([0.2, 0.4, 0.6, 0.8])
    value, base, margin = paired_difference_interval(weighted_mean(a), weighted_mean(a - 0.1), np.arange(4))
    assert (value.value, base) == pytest.approx((0.5, 0.4))
    assert (margin.value, margin.low, margin.high) == pytest.approx((0.1, 0.1, 0.1))
    assert 0.2 <= value.low < 0.5 < value.high <= 0.8


def test_a_users_targets_are_resampled_together():
    # two users, each with many identical targets: only 2 clusters, so the interval stays wide
    a = np.repeat([0.0, 1.0], 50)
    value, _, _ = paired_difference_interval(weighted_mean(a), weighted_mean(np.zeros(100)), np.repeat([0, 1], 50))
    assert value.low == 0.0 and value.high == 1.0


def test_an_attack_below_the_same_k_baseline_reads_no_leak():
    rng = np.random.default_rng(0)
    attack, guess = rng.binomial(1, 0.10, 2000), rng.binomial(1, 0.25, 2000)
    out = _writer()
    value, blind, margin = paired_difference_interval(weighted_mean(attack), weighted_mean(guess), np.arange(2000))
    verdict = out.judge("exposure", "Recall@10", value, blind, "popularity guess, 10 items", margin)
    assert verdict.label == "no leak measured"
    (risk,) = out.risks
    assert risk.row()[3] == f"{blind:.4f} (popularity guess, 10 items)" and risk.row()[5] == "no leak measured"
    assert verdict.text.startswith("no leak measured: ")


def test_a_straddling_interval_reads_inconclusive_and_a_clear_margin_leaks():
    rng = np.random.default_rng(1)
    base = rng.binomial(1, 0.3, 300).astype(float)
    same = rng.permutation(base)  # the same mean, other targets: margin 0 with a spread
    better = np.maximum(base, rng.binomial(1, 0.5, 300))
    for attack, label in ((same, "inconclusive"), (better, "leaks")):
        value, blind, margin = paired_difference_interval(weighted_mean(attack), weighted_mean(base), np.arange(300))
        assert _writer().judge("a", "m", value, blind, "guess", margin).label == label


def test_class_metrics_hand_computed():
    truth, pred = np.array([0, 0, 0, 1]), np.array([1, 1, 0, 1])
    rows = np.arange(4)
    assert class_metric("accuracy", rows, truth, pred, 2)(None) == 0.5
    assert class_metric("majority_accuracy", rows, truth, pred, 2)(None) == 0.75
    # majority guess: F1 of class 0 = 2*0.75/(1.75) = 6/7, class 1 = 0 -> weighted 0.75 * 6/7
    # uniform guess: sum p_c 2 p_c / (2 p_c + 1) = 0.75 * 1.5/2.5 + 0.25 * 0.5/1.5
    assert class_metric("blind_weighted_f1", rows, truth, pred, 2)(None) == pytest.approx(max(0.75 * 6 / 7, 0.45 + 1 / 12))
    w = np.array([1.0, 1.0, 1.0, 3.0])  # class 1 now the weighted half; majority class stays 0 (full-sample)
    assert class_metric("accuracy", rows, truth, pred, 2)(w) == pytest.approx(4 / 6)
    # balanced accuracy: recall of class 0 = 1/3, of class 1 = 1 -> (1/3 + 1) / 2, with or without weights
    assert class_metric("balanced_accuracy", rows, truth, pred, 2)(None) == pytest.approx(2 / 3)
    assert class_metric("balanced_accuracy", rows, truth, pred, 2)(w) == pytest.approx(2 / 3)


def test_balanced_accuracy_with_weights_by_hand():
    truth, pred = np.array([0, 0, 0, 1, 2]), np.array([0, 1, 0, 1, 1])
    # unweighted: recall_0 = 2/3, recall_1 = 1/1, recall_2 = 0/1 -> (2/3 + 1 + 0) / 3 = 5/9
    assert balanced_accuracy(truth, pred, 3) == pytest.approx(5 / 9)
    # w = (1, 2, 1, 3, 1): recall_0 = (1 + 1) / (1 + 2 + 1) = 1/2, recall_1 = 3/3, recall_2 = 0/1 -> 1.5 / 3
    w = np.array([1.0, 2.0, 1.0, 3.0, 1.0])
    assert balanced_accuracy(truth, pred, 3, w) == pytest.approx(0.5)
    assert skm.balanced_accuracy_score(truth, pred, sample_weight=w) == pytest.approx(0.5)
    # a class of weight 0 (lost by a bootstrap draw) leaves the mean, and the blind guess becomes 1/2
    w0 = np.array([1.0, 2.0, 1.0, 3.0, 0.0])
    assert balanced_accuracy(truth, pred, 3, w0) == pytest.approx(0.75)
    assert (chance_balanced_accuracy(truth, 3), chance_balanced_accuracy(truth, 3, w0)) == (1 / 3, 1 / 2)
    # class 3 of n_classes = 4 has no user: C counts the classes present
    assert balanced_accuracy(truth, pred, 4) == pytest.approx(5 / 9) and chance_balanced_accuracy(truth, 4) == 1 / 3


def _judged(truth: np.ndarray, pred: np.ndarray, n_classes: int, seeds: int = 1, rows: np.ndarray | None = None) -> list:
    out = _writer()
    rows = np.arange(len(truth)) if rows is None else rows
    verdict = judge_classes(out, "attribute", rows, truth, pred, n_classes, "test attacker", seeds)
    assert [r.metric for r in out.risks] == ["balanced accuracy", "accuracy", "weighted F1"]
    assert out.risks[0].verdict is verdict and out.risks[0].kind == "attack"
    assert [(r.kind, r.verdict.label) for r in out.risks[1:]] == [("secondary", "secondary")] * 2
    return out.risks


def test_a_coin_flip_attacker_on_an_imbalanced_attribute_never_reads_leaks():
    rng = np.random.default_rng(2)
    truth = (rng.random(600) < 0.3).astype(int)  # majority class 0 at ~70%
    pred = rng.integers(0, 2, 600)  # coin flips: balanced accuracy ~ 1/2, accuracy ~ 1/2 under the majority's ~0.7
    primary, accuracy, f1 = _judged(truth, pred, 2)
    assert primary.verdict.label in ("no leak measured", "inconclusive")
    assert (primary.baseline, primary.chance, primary.baseline_name) == (0.5, 0.5, "blind guess (1/C = 0.500)")
    assert "majority-class" in accuracy.baseline_name and accuracy.margin.high < 0  # would read "no leak measured"
    assert accuracy.row()[5] == f1.row()[5] == "secondary (the verdict is on balanced accuracy) (test attacker)"


def test_always_the_majority_class_scores_exactly_one_over_c():
    rng = np.random.default_rng(3)
    truth = rng.choice(3, 600, p=[0.6, 0.3, 0.1])
    primary, accuracy, _ = _judged(truth, np.zeros(600, dtype=int), 3)
    assert primary.value.value == 1 / 3 and primary.baseline == 1 / 3
    assert (primary.margin.value, primary.margin.low, primary.margin.high) == (0.0, 0.0, 0.0)
    assert primary.verdict.label == "no leak measured"
    assert accuracy.margin.value == 0.0  # the majority-class guess itself


def test_a_near_perfect_attacker_leaks_and_the_sample_names_the_pooled_splits():
    rng = np.random.default_rng(4)
    users = np.concatenate([np.arange(300), rng.permutation(300)])  # two ζ-splits attacking the same 300 users
    labels = (rng.random(300) < 0.2).astype(int)
    truth = labels[users]
    pred = np.where(rng.random(600) < 0.05, 1 - truth, truth)
    primary, *_ = _judged(truth, pred, 2, seeds=2, rows=users)
    assert primary.verdict.label == "leaks" and primary.margin.low > 0
    assert (primary.sample.positives, primary.sample.seeds) == (300, 2)
    assert str(primary.sample).startswith("300 users attacked; 2 seeds, one ζ-split each, predictions pooled")


def test_too_few_users_are_not_judged():
    primary, *_ = _judged(np.array([0, 1] * 4), np.array([0, 1] * 4), 2)
    assert primary.verdict.label == "not enough users"


def test_a_perturbation_that_raises_the_attack_backfires_by_its_label():
    users = np.repeat(np.arange(12), 2)
    row = {"selection": "random", "replacement": "uniform", "attacker": "frozen", "users": users}
    clean = {**row, "L": 0.0, "pair_recall": np.full(24, 0.2)}
    worse = {**row, "L": 0.4, "pair_recall": np.full(24, 0.5)}
    few = {**row, "L": 0.6, "pair_recall": np.full(24, 0.5), "users": users % 5}
    judged = judge_rows([clean, worse, few])
    assert [r[CHANGE_LABEL] for r in judged] == ["reference", "backfires", "not enough users"]
    assert judged[1]["change vs L = 0"] == "backfires: Rec*@10 gains +0.300 [+0.300, +0.300]"
