"""The study kit's rule kinds beyond one cell (``kit.checks``): one against several others with
an offset, the best of a set against another set, curves over a key (peak, monotone, rise,
spread), the largest value of a key, claims that name the setting and evidence templates. Every
expected value is worked out by hand in the comments."""

from __future__ import annotations

import math

import pytest

from recprivacy.errors import DataError
from recprivacy.experiments.kit import Measurement, aggregate, apply_rules, load_rules, tally


def summaries(*cells: tuple[float, dict], metric: str = "auc") -> list:
    """One seed per cell: (value, setting)."""
    return aggregate([Measurement("t", "t", setting, metric, value, 0) for value, setting in cells])


def rows(rules: list[dict], found: list) -> list[list]:
    return tally(apply_rules(load_rules(rules), found))


def test_one_against_several_others_must_beat_each_and_the_offset_moves_the_bar():
    found = summaries((0.50, {"m": "apm"}), (0.52, {"m": "ldp"}), (0.49, {"m": "gauss"}), (0.60, {"m": "none"}))
    below = {"metric": "auc", "where": {"m": "apm"}, "less_than": {"m": ["ldp", "gauss"]}, "says": "apm lowest",
             "shows": "{value:.2f} vs {other:.2f} ({others_low:.2f}-{others_high:.2f})"}  # fmt: skip
    # 0.50 < 0.52 but not < 0.49: fails; the nearest other is the smallest, 0.49
    assert rows([below], found) == [["apm lowest", False, "0.50 vs 0.49 (0.49-0.52)"]]
    # no_less_than with offset -0.015: 0.50 >= 0.52 - 0.015 = 0.505? no; with -0.02: 0.50 >= 0.50, yes (inclusive)
    near = {"metric": "auc", "where": {"m": "apm"}, "no_less_than": {"m": "ldp"}, "says": "apm near ldp"}
    assert rows([{**near, "offset": -0.015}], found)[0][1] is False
    assert rows([{**near, "offset": -0.02}], found)[0][1] is True
    # a list in where means any of: apm and gauss are each judged against none (0.60): both below
    assert rows([{"metric": "auc", "where": {"m": ["apm", "gauss"]}, "no_more_than": {"m": "none"}, "says": "below"}], found) == [
        ["below", True, "2 of 2 settings"]]


def test_the_best_of_a_set_against_the_best_of_another_strictly_or_by_a_factor():
    found = summaries((0.16, {"kind": "model", "e": "att", "d": "tf"}), (0.12, {"kind": "model", "e": "mean", "d": "tf"}),
                      (0.05, {"kind": "guess", "name": "pop", "budget": "k"}), (0.08, {"kind": "guess", "name": "rand", "budget": "k"}),
                      (0.30, {"kind": "guess", "budget": "kM"}), (math.nan, {"kind": "model", "e": "max", "d": "tf"}))  # fmt: skip
    twice = {"metric": "auc", "where": {"kind": "model"}, "best": "max", "times": 2, "says": "best ({e}+{d}) at least twice",
             "shows": "{value:.2f} vs {other:.2f} ({ratio:.1f}x)"}  # fmt: skip
    # best model 0.16 (the NaN is not judged), best k guess 0.08: 0.16 >= 2 x 0.08 holds (inclusive); 0.16 < 2 x 0.30
    assert rows([{**twice, "against": {"kind": "guess", "budget": "k"}}], found) == [["best (att+tf) at least twice", True, "0.16 vs 0.08 (2.0x)"]]
    assert rows([{**twice, "against": {"kind": "guess", "budget": "kM"}}], found)[0][1:] == [False, "0.16 vs 0.30 (0.5x)"]
    # best: min compares the lowest of each set, strictly: 0.12 < 0.05 fails
    low = {"metric": "auc", "where": {"kind": "model"}, "best": "min", "against": {"kind": "guess"}, "says": "lowest"}
    assert rows([low], found) == [["lowest", False, "0 of 1 settings"]]
    # an empty set on either side judges nothing
    assert apply_rules(load_rules([{**low, "against": {"kind": "other"}}]), found)[0].passed is None


def curve(metric: str = "auc", **points: dict) -> list:
    """Summaries of curves over N: name -> {N: value}."""
    return summaries(*[(v, {"dec": name, "N": n}) for name, c in points.items() for n, v in c.items()], metric=metric)


def test_a_curve_peaks_at_a_key_only_judged_with_points_on_both_sides():
    found = curve(point={5: 0.30, 10: 0.31, 20: 0.305}, gru={20: 0.45, 5: 0.40, 10: 0.44}, lstm={5: 0.2, 10: 0.3})
    rule = {"metric": "auc", "over": "N", "peaks_at": 10, "says": "{dec} peaks at 10", "shows": "{curve}"}
    # gru's points are sorted by N before judging; lstm has no N above 10: not judged
    assert rows([rule], found) == [["point peaks at 10", True, "N=5: 0.3000, N=10: 0.3100, N=20: 0.3050"],
                                   ["gru peaks at 10", False, "N=5: 0.4000, N=10: 0.4400, N=20: 0.4500"]]  # fmt: skip


def test_monotone_and_rising_curves_are_tallied_per_curve():
    found = curve(a={0: 0.3, 1: 0.25, 2: 0.25}, b={0: 0.3, 1: 0.2, 2: 0.22}, c={0: 0.1})
    falls = {"metric": "auc", "over": "N", "non_increasing": True, "counts": "curves non-increasing", "says": "falls"}
    # a: 0.3 >= 0.25 >= 0.25 holds; b rises from 0.2 to 0.22: fails; c has one point: not judged
    assert rows([falls], found) == [["falls", False, "1 of 2 curves non-increasing"]]
    grows = {"metric": "auc", "over": "N", "non_decreasing": True, "rises": True, "says": "{dec} grows", "shows": "{first} to {last}"}
    up = curve(a={1: 0.1, 2: 0.2, 3: 0.2}, b={1: 0.1, 2: 0.1}, c={1: 0.1, 2: 0.3, 3: 0.2})
    # a: steps never fall and 0.2 > 0.1; b: level, so it does not rise; c: the last step falls
    assert [r[:2] for r in rows([grows], up)] == [["a grows", True], ["b grows", False], ["c grows", False]]


def test_a_curve_varies_less_than_others_over_the_same_keys_only():
    found = curve(point={5: 0.20, 10: 0.21}, gru={5: 0.40, 10: 0.45}, lstm={5: 0.30, 10: 0.38}, tf={5: 0.1, 10: 0.1, 20: 0.9})
    rule = {"metric": "auc", "where": {"dec": "point"}, "over": "N", "varies_less_than": {"dec": ["gru", "lstm", "tf"]},
            "says": "point varies less", "shows": "{spread:.2f} vs {others_low:.2f}-{others_high:.2f}"}  # fmt: skip
    # ranges: point 0.01, gru 0.05, lstm 0.08; tf runs at other N and is left out
    assert rows([rule], found) == [["point varies less", True, "0.01 vs 0.05-0.08"]]
    narrow = curve(point={5: 0.20, 10: 0.30}, gru={5: 0.40, 10: 0.45})
    assert rows([rule], narrow)[0][1] is False  # 0.10 is not below 0.05


def test_at_largest_keeps_the_cells_at_the_top_value_and_says_names_it():
    found = summaries((0.3, {"sel": "a", "rep": "uniform", "L": 0.5}), (0.4, {"sel": "a", "rep": "pop", "L": 0.5}),
                      (0.5, {"sel": "b", "rep": "uniform", "L": 0.5}), (0.4, {"sel": "b", "rep": "pop", "L": 0.5}),
                      (0.9, {"sel": "a", "rep": "uniform", "L": 0.2}), (0.1, {"sel": "a", "rep": "pop", "L": 0.2}))  # fmt: skip
    rule = {"metric": "auc", "where": {"rep": "uniform"}, "at_largest": "L", "less_than": {"rep": ["pop", "batch"]},
            "says": "uniform lowest (L = {L})", "shows": "lowest for {k} of {n} selections"}  # fmt: skip
    # at L = 0.5: a 0.3 < 0.4 holds, b 0.5 > 0.4 fails; L = 0.2 (where uniform loses) is not judged
    assert rows([rule], found) == [["uniform lowest (L = 0.5)", False, "lowest for 1 of 2 selections"]]


@pytest.mark.parametrize(("rule", "message"), [
    ({"metric": "auc", "says": "x", "best": "max"}, r"expected against \(the best of a set rule\)"),
    ({"metric": "auc", "says": "x", "best": "top", "against": {"a": 1}}, "best: expected one of max, min"),
    ({"metric": "auc", "says": "x", "over": "N"}, "expected one of peaks_at"),
    ({"metric": "auc", "says": "x", "over": "N", "rises": True, "at_least": 0.1}, "at_least: not for a curve rules"),
    ({"metric": "auc", "says": "x", "at_least": 0.1, "times": 2}, "times: not for one cell rules"),
    ({"metric": "auc", "says": "x", "over": "N", "best": "max", "rises": True}, "one kind of rule, got best, over"),
    ({"metric": "auc", "says": "x", "over": "N", "rises": "yes"}, "rises: expected true or false"),
    ({"metric": "auc", "says": "x", "less_than": {}}, "not an empty less_than"),
    ({"metric": "auc", "says": "x", "at_least": 0.1, "shows": "{mean}"}, "shows: unknown fact"),
])  # fmt: skip
def test_bad_rules_of_the_new_kinds_are_one_line_errors(rule, message):
    with pytest.raises(DataError, match=message):
        load_rules([rule])


def test_a_claim_naming_a_key_the_setting_lacks_is_an_error():
    with pytest.raises(DataError, match="says names 'dec'"):
        rows([{"metric": "auc", "at_least": 0, "says": "{dec} is positive"}], summaries((0.1, {"code": "x"})))
    with pytest.raises(DataError, match="shows names 'value', which a row of 2 verdicts lacks"):
        rows([{"metric": "auc", "at_least": 0, "says": "positive", "shows": "{value}"}], summaries((0.1, {"c": 1}), (0.2, {"c": 2})))


def test_above_and_below_are_strict_where_at_least_and_at_most_are_not():
    found = summaries((0.0, {"c": "zero"}), (0.1, {"c": "some"}))
    rule = {"metric": "auc", "says": "{c}", "counts": "cells"}
    assert rows([{**rule, "above": 0}], found) == [["zero", False, "0 of 1 cells"], ["some", True, "1 of 1 cells"]]
    assert [r[1] for r in rows([{**rule, "at_least": 0}], found)] == [True, True]
    assert [r[1] for r in rows([{**rule, "below": 0.1}], found)] == [True, False]


def test_times_scales_the_other_cell_in_a_one_against_others_rule():
    found = summaries((18.9, {"m": "dip", "ds": "a"}), (21.2, {"m": "sr", "ds": "a"}), (12.7, {"m": "dip", "ds": "b"}), (14.1, {"m": "sr", "ds": "b"}))
    rule = {"metric": "auc", "where": {"m": "dip"}, "no_less_than": {"m": "sr"}, "times": 0.9, "says": "{ds} keeps 90%",
            "shows": "{ratio:.3f}"}  # fmt: skip
    # a: 18.9 < 0.9 x 21.2 = 19.08; b: 12.7 >= 0.9 x 14.1 = 12.69
    assert rows([rule], found) == [["a keeps 90%", False, "0.892"], ["b keeps 90%", True, "0.901"]]
