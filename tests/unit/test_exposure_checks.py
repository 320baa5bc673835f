"""The slate-size sweep's checks against the paper's trends (Figs. 6-7)."""

from recprivacy.experiments.exposure.checks import sweep_checks


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
