"""The exposure study's checks: the slate-size sweep against the paper's trends (Figs. 6-7),
and the claims stored as rules in ``papers/000/checks.yaml`` on hand-made runs and rows."""

import math

from recprivacy.experiments.exposure.checks import attack_checks, protection_checks, sweep_checks


def run(recall: float) -> dict:
    return {"all": {"recall@10": recall}, "user_log": {"recall@10": recall}}


def test_the_sequence_decoder_rule_compares_each_encoder_with_its_point_wise_decoder():
    runs = {("mean", "point", 0): run(0.1), ("mean", "point", 1): run(0.2), ("mean", "gru", 0): run(0.3), ("mean", "gru", 1): run(0.1),
            ("att", "point", 0): run(0.2), ("att", "gru", 0): run(0.1), ("max", "gru", 0): run(0.5)}  # fmt: skip
    baselines = {"all": {"popularity": {"recall@10": 0.1}, "popularity@kM": {"recall@10": 0.3}}}
    rows = attack_checks(runs, baselines)
    # mean: 0.2 > 0.15 wins; att: 0.1 < 0.2 loses; max has no point-wise run, so is not judged
    assert rows[0] == ["sequence decoders beat point-wise decoding (same encoder, Recall@10, all items)", False,
                       "1 of 2 encoder/decoder pairs"]  # fmt: skip
    assert [r[1:] for r in rows[1:]] == [[True, "0.5000 vs 0.1000 (5.0x)"], [False, "0.5000 vs 0.3000 (1.7x)"]]


def protection_rows(simulated: bool) -> list[dict]:
    """Frozen, uniform rows: selection -> (Rec*@10, Acc*, next-item recall@N) at L = 0, 0.5, 1."""
    table = {"random": [(0.30, 1.0, 0.20), (0.25, 0.6, 0.15), (0.20, 0.4, 0.10)],
             "dissimilar": [(0.30, 1.0, 0.20), (0.27, 0.7, 0.18), (0.22, 0.5, 0.09)],
             "similar": [(0.30, 1.0, 0.20), (0.20, 0.65, 0.16), (0.23, 0.6, 0.10)]}  # fmt: skip
    return [{"selection": sel, "replacement": "uniform", "L": L, "attacker": "frozen", "recall@10": rec, "acc*": acc,
             "next-item recall@N": nir if simulated else math.nan, "pair_recall": [rec], "users": [0]}
            for sel, points in table.items() for L, (rec, acc, nir) in zip((0.0, 0.5, 1.0), points)]  # fmt: skip


def test_the_selection_rules_compare_equal_perturbed_l_on_the_utility_of_the_slates():
    simulated = protection_checks(protection_rows(True), True)
    assert simulated == [
        ["Rec* falls as L grows (frozen attacker), every strategy", False, "2 of 3 strategies non-increasing in L"],
        # L = 0.5: 0.18 > 0.15; L = 1: 0.09 < 0.10 (L = 0 is the same clean slates, left out)
        ["dissimilar selection keeps more utility (next-item recall@N) than random (uniform replacement, equal L)", False,
         "1 of 2 ratios"],
        # L = 0.5: 0.20 < 0.27; L = 1: 0.23 > 0.22
        ["similar selection lowers Rec* more than dissimilar (uniform replacement, equal L)", False, "1 of 2 ratios"],
    ]  # fmt: skip
    logged = protection_checks(protection_rows(False), False)
    # logged slates have no next-item recall (NaN): the utility is Acc*, 0.7 > 0.6 and 0.5 > 0.4
    assert logged[1] == ["dissimilar selection keeps more utility (acc*) than random (uniform replacement, equal L)", True,
                         "2 of 2 ratios"]  # fmt: skip
    assert logged[2] == simulated[2] and len(logged) == 3


def test_sweep_checks_find_the_peak_and_compare_the_spread_over_n():
    curves = {
        "point": {5: 0.30, 10: 0.31, 20: 0.305},  # peak at 10, range 0.01
        "gru": {5: 0.40, 10: 0.44, 20: 0.45},  # peak at 20, range 0.05
        "lstm": {10: 0.42},  # one slate size: no trend to check
    }
    rows = sweep_checks(curves)
    assert [r[:2] for r in rows] == [
        ["point: Recall@10 peaks at N = 10", True],
        ["gru: Recall@10 peaks at N = 10", False],
        ["point-wise decoding varies less with N than the sequence decoders", True],
    ]
    assert rows[1][2] == "N=5: 0.4000, N=10: 0.4400, N=20: 0.4500"
    assert rows[2][2] == "range over N: point 0.0100, sequence 0.0500-0.0500"


def test_sweep_checks_without_point_wise_decoding_skip_the_spread_claim():
    rows = sweep_checks({"gru": {5: 0.5, 10: 0.4, 15: 0.3}})
    assert rows == [["gru: Recall@10 peaks at N = 10", False, "N=5: 0.5000, N=10: 0.4000, N=15: 0.3000"]]


def test_the_peak_is_not_checked_without_slate_sizes_on_both_sides_of_ten():
    rows = sweep_checks({"point": {5: 0.2, 10: 0.3}, "gru": {5: 0.4, 10: 0.5}})
    assert [r[0] for r in rows] == ["point-wise decoding varies less with N than the sequence decoders"]


def test_the_spread_compares_only_curves_over_the_same_slate_sizes():
    rows = sweep_checks({"point": {5: 0.2, 10: 0.3, 20: 0.4}, "gru": {5: 0.4, 10: 0.41}})
    assert [r[0] for r in rows] == ["point: Recall@10 peaks at N = 10"]
