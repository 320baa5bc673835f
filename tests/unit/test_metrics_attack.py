"""Attack metrics: hand-computed values on 10-sample examples, brute-force and scikit-learn /
scipy cross-checks, blind-guess baselines and input validation."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import binomtest, mannwhitneyu
from sklearn.metrics import f1_score, roc_auc_score

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
    weighted_f1,
)

# 5 positives, 5 negatives. Sorted by score: P .9, N .85, P .8, P .7, P .6, N .5, N .4, N .3, P .2, N .1
# ROC points (FPR, TPR): (0,0) (0,.2) (.2,.2) (.2,.4) (.2,.6) (.2,.8) (.4,.8) (.6,.8) (.8,.8) (.8,1) (1,1)
Y = np.array([1, 1, 1, 1, 1, 0, 0, 0, 0, 0])
S = np.array([0.9, 0.8, 0.7, 0.6, 0.2, 0.85, 0.5, 0.4, 0.3, 0.1])


def test_roc_auc_hand_computed() -> None:
    # pairs with positive > negative: .9 beats 5, .8/.7/.6 beat 4 each, .2 beats 1 -> 18 / 25
    assert roc_auc(Y, S) == pytest.approx(18 / 25)


def test_roc_curve_keeps_every_operating_point() -> None:
    fpr, tpr, _ = roc_curve(Y, S)
    np.testing.assert_allclose(fpr, [0, 0, 0.2, 0.2, 0.2, 0.2, 0.4, 0.6, 0.8, 0.8, 1])
    np.testing.assert_allclose(tpr, [0, 0.2, 0.2, 0.4, 0.6, 0.8, 0.8, 0.8, 0.8, 1, 1])


def test_tpr_at_fpr_hand_computed_without_interpolation() -> None:
    # FPR <= 0.1 reaches only (0, .2); FPR <= .2 reaches (.2, .8); FPR <= .5 still .8; <= .8 gives 1
    out = tpr_at_fpr(Y, S, fprs=(0.001, 0.1, 0.2, 0.5, 0.8))
    assert out == pytest.approx({0.001: 0.2, 0.1: 0.2, 0.2: 0.8, 0.5: 0.8, 0.8: 1.0})


def test_advantage_hand_computed() -> None:
    # max TPR - FPR is at (.2, .8): 0.6
    assert advantage(Y, S) == pytest.approx(0.6)


def brute_force_rates(y: np.ndarray, s: np.ndarray) -> np.ndarray:
    """(FPR, TPR) of the decision s >= t for every distinct score t, plus 'nobody positive'."""
    rows = [(0.0, 0.0)]
    for t in np.unique(s):
        pred = s >= t
        rows.append((pred[y == 0].mean(), pred[y == 1].mean()))
    return np.array(rows)


def test_tpr_at_fpr_and_advantage_match_brute_force_on_random_scores() -> None:
    rng = np.random.default_rng(1)
    y = rng.integers(0, 2, 300)
    s = np.round(rng.normal(size=300) + 0.7 * y, 1)  # rounding creates ties
    rates = brute_force_rates(y, s)
    for f, tpr in tpr_at_fpr(y, s, fprs=(0.01, 0.05, 0.3)).items():
        assert tpr == pytest.approx(rates[rates[:, 0] <= f, 1].max())
    assert advantage(y, s) == pytest.approx((rates[:, 1] - rates[:, 0]).max())
    u = mannwhitneyu(s[y == 1], s[y == 0]).statistic
    assert roc_auc(y, s) == pytest.approx(u / ((y == 1).sum() * (y == 0).sum()))


# 5 positives, 5 negatives, sorted by score: N P P P N N P N N P (no perfect region at either end)
# ROC points: (0,0) (.2,0) (.2,.2) (.2,.4) (.2,.6) (.4,.6) (.6,.6) (.6,.8) (.8,.8) (1,.8) (1,1)
Y_EPS = np.array([0, 1, 1, 1, 0, 0, 1, 0, 0, 1])
S_EPS = np.arange(10, 0, -1, dtype=float)


def test_empirical_epsilon_point_estimate_hand_computed() -> None:
    # log(TPR / FPR): best at (.2, .6) -> log 3; log((1 - FPR) / (1 - TPR)): best (.2,.6) -> log 2
    assert empirical_epsilon(Y_EPS, S_EPS) == pytest.approx(np.log(3))
    # delta = .1: log((.6 - .1) / .2) = log 2.5 beats log((1 - .1 - .2) / .4) = log 1.75
    assert empirical_epsilon(Y_EPS, S_EPS, delta=0.1) == pytest.approx(np.log(2.5))


def test_empirical_epsilon_is_infinite_for_a_zero_fpr_hit_and_finite_with_confidence() -> None:
    assert empirical_epsilon(Y, S) == np.inf  # threshold .9: TPR .2 at FPR 0
    assert np.isfinite(empirical_epsilon(Y, S, confidence=0.95))


def test_empirical_epsilon_with_clopper_pearson_matches_scipy_binomtest() -> None:
    # one-sided bounds at 97.5% each = the ends of scipy's two-sided 95% exact interval
    n = 5
    fpr, tpr, _ = roc_curve(Y_EPS, S_EPS)
    best = 0.0
    for f, t in zip(np.rint(fpr * n).astype(int), np.rint(tpr * n).astype(int)):
        t_lo = binomtest(t, n).proportion_ci(0.95).low
        f_hi = binomtest(f, n).proportion_ci(0.95).high
        for num, den in ((t_lo, f_hi), (1 - f_hi, 1 - t_lo)):
            if num > 0:
                best = max(best, np.log(num / den))
    got = empirical_epsilon(Y_EPS, S_EPS, confidence=0.95)
    assert got == pytest.approx(best)
    assert got < np.log(3)


def test_empirical_epsilon_of_a_blind_attack_is_zero() -> None:
    # identical scores: only the points (0, 0) and (1, 1) -> every term is log 1 = 0 or skipped
    assert empirical_epsilon(Y, np.zeros(10)) == 0.0


def test_balanced_accuracy_is_the_single_threshold_auc() -> None:
    # at s >= .5: TP 4 (.9 .8 .7 .6), FP 2 (.85 .5) -> TPR .8, FPR .4 -> (1 + .8 - .4) / 2 = .7
    pred = (S >= 0.5).astype(int)
    assert balanced_accuracy(Y, pred) == pytest.approx((1 + 0.8 - 0.4) / 2)


def test_precision_recall_f1_hand_computed() -> None:
    # TP 4, FP 2, FN 1: precision 4/6, recall 4/5, F1 = 2TP / (2TP + FP + FN) = 8/11
    out = precision_recall_f1(Y, (S >= 0.5).astype(int))
    assert out == pytest.approx({"precision": 2 / 3, "recall": 0.8, "f1": 8 / 11})
    # macro: class 0 has TP 3, FP 1, FN 2 -> precision 3/4, recall 3/5, F1 6/9
    macro = precision_recall_f1(Y, (S >= 0.5).astype(int), average="macro")
    assert macro["f1"] == pytest.approx((8 / 11 + 6 / 9) / 2)


def test_weighted_f1_hand_computed_and_equal_to_scikit_learn_with_weights() -> None:
    # the example above: class 1 F1 8/11 (support 5), class 0 F1 6/9 (support 5)
    assert weighted_f1(Y, (S >= 0.5).astype(int), 2) == pytest.approx((8 / 11 + 6 / 9) / 2)
    # class 2 never true nor predicted: F1 0 with weight 0; weights 3 on the first row
    w = np.array([3.0] + [1.0] * 9)
    # class 1: TP 3+1+1+1 = 6, true 7, predicted 8 -> F1 12/15; class 0: TP 3, true 5, predicted 4 -> 6/9
    assert weighted_f1(Y, (S >= 0.5).astype(int), 3, w) == pytest.approx((7 * 12 / 15 + 5 * 6 / 9) / 12)
    rng = np.random.default_rng(0)
    y, p, w = rng.integers(0, 4, 200), rng.integers(0, 4, 200), rng.random(200)
    expected = f1_score(y, p, labels=np.arange(5), average="weighted", sample_weight=w, zero_division=0)
    assert weighted_f1(y, p, 5, w) == pytest.approx(expected)
    # bootstrap draws (rows of weight 0), classes missing from truth or guess
    for _ in range(50):
        truth, pred = rng.integers(0, 4, 40), rng.integers(0, 4, 40)  # class 3 may be missing from either
        w = rng.multinomial(40, np.full(40, 1 / 40)).astype(float)  # a bootstrap draw, some rows weight 0
        expected = f1_score(truth, pred, labels=np.arange(5), average="weighted", sample_weight=w, zero_division=0)
        assert weighted_f1(truth, pred, 5, w) == pytest.approx(expected, abs=1e-12)
    assert weighted_f1(Y, Y, 2, np.zeros(10)) == 0.0  # no support at all


def test_binary_attack_report_hand_computed() -> None:
    r = binary_attack_report(Y, S, threshold=0.5)
    expected = {
        "auc": 18 / 25,
        "tpr@0.1%fpr": 0.2,
        "tpr@1%fpr": 0.2,
        "tpr@10%fpr": 0.2,
        "advantage": 0.6,
        "balanced_accuracy": 0.7,
        "accuracy": 0.7,  # TP 4 + TN 3
        "precision": 2 / 3,
        "recall": 0.8,
        "f1": 8 / 11,
        "tpr": 0.8,
        "fpr": 0.4,
    }
    for key, value in expected.items():
        assert r[key] == pytest.approx(value), key
    assert (r["n_pos"], r["n_neg"]) == (5, 5)
    assert r["epsilon_lower_95"] == pytest.approx(empirical_epsilon(Y, S, confidence=0.95))
    # prevalence .5: always-positive F1 = 2 * .5 / 1.5
    assert r["blind"] == pytest.approx(
        {"auc": 0.5, "advantage": 0.0, "epsilon_lower_95": 0.0, "balanced_accuracy": 0.5, "accuracy": 0.5,
         "precision": 0.5, "f1": 2 / 3, "tpr@0.1%fpr": 0.001, "tpr@1%fpr": 0.01, "tpr@10%fpr": 0.1}
    )


def test_blind_guess_binary_values() -> None:
    y = np.array([1, 1, 1, 0, 0, 0, 0, 0, 0, 0])  # prevalence .3
    assert blind_guess(y, "auc") == 0.5
    assert blind_guess(y, "advantage") == 0.0
    assert blind_guess(y, "accuracy") == pytest.approx(0.7)
    assert blind_guess(y, "precision") == pytest.approx(0.3)
    assert blind_guess(y, "f1") == pytest.approx(0.6 / 1.3)
    assert blind_guess(y, "tpr@1%fpr") == pytest.approx(0.01)
    # "always positive" really scores that F1
    assert f1_score(y, np.ones(10)) == pytest.approx(0.6 / 1.3)
    with pytest.raises(ValueError, match="recall"):
        blind_guess(y, "recall")


Y_MC = np.array(["a", "a", "a", "b", "c"])  # priors .6 .2 .2


def test_blind_guess_multiclass_takes_the_better_baseline() -> None:
    # majority ("a"): accuracy .6, balanced 1/3, F1_a = 2*.6/(1.6) = .75 -> macro .25, weighted .45
    # uniform: accuracy 1/3, F1_c = 2p / (3p + 1): a 1.2/2.8, b = c = .4/1.6 = .25
    #   macro (3/7 + .5) / 3, weighted .6 * 3/7 + .2 * .25 * 2
    assert blind_guess(Y_MC, "accuracy") == pytest.approx(0.6)
    assert blind_guess(Y_MC, "balanced_accuracy") == pytest.approx(1 / 3)
    assert blind_guess(Y_MC, "macro_f1") == pytest.approx((3 / 7 + 0.5) / 3)
    assert blind_guess(Y_MC, "weighted_f1") == pytest.approx(0.45)


def test_uniform_baseline_formula_matches_simulated_random_guessing() -> None:
    rng = np.random.default_rng(2)
    y = rng.choice(np.array(["a", "b", "c"]), size=30000, p=[0.6, 0.2, 0.2])
    guess = rng.choice(np.array(["a", "b", "c"]), size=30000)
    r = multiclass_attack_report(y, guess, labels=["a", "b", "c"])
    assert f1_score(y, guess, average="macro") == pytest.approx(r["baseline_uniform"]["macro_f1"], abs=0.01)
    assert f1_score(y, guess, average="weighted") == pytest.approx(r["baseline_uniform"]["weighted_f1"], abs=0.01)


PROBA = np.array(
    [[0.7, 0.2, 0.1], [0.5, 0.4, 0.1], [0.2, 0.7, 0.1], [0.3, 0.6, 0.1], [0.6, 0.1, 0.3]]
)  # argmax: a a b b a


def test_multiclass_report_hand_computed() -> None:
    r = multiclass_attack_report(Y_MC, PROBA, labels=["a", "b", "c"])
    # 3 of 5 right; recalls a 2/3, b 1, c 0
    assert r["accuracy"] == pytest.approx(0.6)
    assert r["balanced_accuracy"] == pytest.approx(5 / 9)
    # F1: a (TP 2, FP 1, FN 1) 2/3; b (TP 1, FP 1) 2/3; c 0
    assert r["macro_f1"] == pytest.approx(4 / 9)
    assert r["weighted_f1"] == pytest.approx(0.6 * 2 / 3 + 0.2 * 2 / 3)
    # one-vs-rest AUC: a 3/6, b 3/4, c 4/4
    assert r["auc_ovr"] == pytest.approx((0.5 + 0.75 + 1) / 3)
    assert r["auc_ovr"] == pytest.approx(roc_auc_score(Y_MC, PROBA, multi_class="ovr", labels=["a", "b", "c"]))
    assert (r["n"], r["n_classes"], r["labels"]) == (5, 3, ["a", "b", "c"])
    assert r["blind"]["accuracy"] == pytest.approx(0.6)


def test_multiclass_report_from_predicted_labels_has_no_auc() -> None:
    r = multiclass_attack_report(Y_MC, np.array(["a", "a", "b", "b", "a"]), labels=["a", "b", "c"])
    assert r["accuracy"] == pytest.approx(0.6)
    assert "auc_ovr" not in r


@pytest.mark.parametrize(
    ("y", "s", "match"),
    [
        (Y, S[:9], "y_true has 10 entries but scores has 9"),
        (np.ones(10, dtype=int), S, "y_true: only one class"),
        (Y, np.where(np.arange(10) == 2, np.nan, S), "scores: non-finite value nan at index 2"),
        (Y * 2, S, "y_true: expected binary labels"),
    ],
)
def test_bad_binary_inputs_are_rejected(y: np.ndarray, s: np.ndarray, match: str) -> None:
    for fn in (roc_auc, advantage, tpr_at_fpr, empirical_epsilon, binary_attack_report):
        with pytest.raises(ValueError, match=match):
            fn(y, s)


def test_bad_multiclass_and_label_inputs_are_rejected() -> None:
    with pytest.raises(ValueError, match="y_true: label 'c' is not in labels"):
        multiclass_attack_report(Y_MC, PROBA[:, :2], labels=["a", "b"])
    with pytest.raises(ValueError, match=r"proba_or_pred: expected \[n, 3\]"):
        multiclass_attack_report(Y_MC, PROBA[:, :2], labels=["a", "b", "c"])
    with pytest.raises(ValueError, match="y_true has 5 entries but y_pred has 4"):
        balanced_accuracy(Y_MC, Y_MC[:4])
    with pytest.raises(ValueError, match="average"):
        precision_recall_f1(Y, Y, average="micro")
    with pytest.raises(ValueError, match="fprs"):
        tpr_at_fpr(Y, S, fprs=(1.5,))
