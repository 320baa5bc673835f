"""The one judgement (``metrics.verdict``) agrees with the rule sentence every report prints, over
random estimates and intervals (hypothesis), zero-width intervals at 0, 0.5 and 1, attacks below a
blind guess and samples too small to judge; and hand-made cases of each word."""

from __future__ import annotations

import math

from hypothesis import given, settings
from hypothesis import strategies as st

from recprivacy.metrics.intervals import Estimate
from recprivacy.metrics.verdict import (ATTACK_WORDS, DEFENCE_WORDS, MIN_GROUP, RULE, Sample, judge_attack, judge_cost,
                                        judge_defence, judge_reference, secondary)

EDGES = (0.0, 0.5, 1.0)
unit = st.one_of(st.sampled_from(EDGES), st.floats(0.0, 1.0))


@st.composite
def interval(draw: st.DrawFn, lo: float = 0.0, hi: float = 1.0) -> Estimate:
    """An estimate in ``[lo, hi]``: often a zero-width interval at an edge, else three sorted draws."""
    if draw(st.booleans()):
        v = draw(st.sampled_from([e for e in (lo, (lo + hi) / 2, hi, 0.0) if lo <= e <= hi]))
        return Estimate(v, v, v, "point", 100)
    a, b, c = sorted(draw(st.floats(lo, hi)) for _ in range(3))
    return Estimate(b, a, c, "drawn", 100, resolvable=draw(st.integers(0, 19)) > 0)


def rule_sentence_word(value: Estimate, baseline: float, margin: Estimate, chance: float | None, sample: Sample) -> str:
    """The rule as the report's sentence states it, read literally (written apart from the module)."""
    if not value.resolvable or not margin.resolvable:
        return "not resolvable"
    if sample.positives < MIN_GROUP or (sample.negatives is not None and sample.negatives < MIN_GROUP):
        return "not enough users"
    if value.value >= 1.0 and baseline >= 1.0:
        return "saturated"
    if chance is not None and value.high < chance:
        return "below blind guess"
    if margin.low > 0:
        return "leaks"
    if margin.high <= 0:
        return "no leak measured"
    return "inconclusive"


def test_the_printed_rule_names_every_word_in_the_order_applied():
    attack = [RULE.index(f"**{w}**") for w in ATTACK_WORDS]
    assert attack == sorted(attack)
    defence = [RULE.index(f"**{w}**") for w in DEFENCE_WORDS if w not in ATTACK_WORDS]
    assert defence == sorted(defence) and min(defence) > max(attack)
    assert f"fewer than {MIN_GROUP} members" in RULE and "lo > 0" in RULE and "hi <= 0" in RULE


@settings(max_examples=600, deadline=None)
@given(value=interval(), baseline=unit, margin=interval(-1.0, 1.0), chance=st.sampled_from([None, 0.5, 0.25]),
       positives=st.integers(0, 40), negatives=st.one_of(st.none(), st.integers(0, 40)))
def test_attack_word_agrees_with_the_rule_sentence(value, baseline, margin, chance, positives, negatives):
    sample = Sample(positives, negatives)
    verdict = judge_attack(value, baseline, margin, "the baseline", chance=chance, sample=sample)
    assert verdict.label == rule_sentence_word(value, baseline, margin, chance, sample)
    assert verdict.text.startswith(verdict.label)
    if verdict.label in ("leaks", "no leak measured", "inconclusive"):
        assert f"{margin.value:+.3f} [{margin.low:+.3f}, {margin.high:+.3f}]" in verdict.text


@settings(max_examples=300, deadline=None)
@given(change=interval(-1.0, 1.0), positives=st.integers(0, 40))
def test_defence_word_agrees_with_the_rule_sentence(change, positives):
    verdict = judge_defence(change, "ROC AUC", sample=Sample(positives, positives))
    if not change.resolvable:
        expected = "not resolvable"
    elif positives < MIN_GROUP:
        expected = "not enough users"
    else:
        expected = "backfires" if change.low > 0 else "reduces" if change.high < 0 else "no measurable change"
    assert verdict.label == expected


def _e(v: float, lo: float, hi: float) -> Estimate:
    return Estimate(v, lo, hi, "hand", 200)


def test_both_at_the_ceiling_is_saturated_not_a_safe_result():
    # issue 45, case 1: ROC AUC 1 [1, 1] against a statistic at 1: the metric cannot separate them
    v = judge_attack(_e(1.0, 1.0, 1.0), 1.0, _e(0.0, 0.0, 0.0), "a statistic", chance=0.5, sample=Sample(200, 200))
    assert v.label == "saturated" and "cannot separate" in v.text


def test_a_zero_margin_below_the_ceiling_reads_no_leak_and_a_straddle_inconclusive():
    assert judge_attack(_e(0.5, 0.5, 0.5), 0.5, _e(0.0, 0.0, 0.0), "blind", chance=0.5).label == "no leak measured"
    assert judge_attack(_e(0.55, 0.45, 0.65), 0.5, _e(0.05, -0.05, 0.15), "blind", chance=0.5).label == "inconclusive"


def test_an_attack_below_its_blind_guess_is_flagged_not_safe():
    # issue 45, case 6: references of another algorithm score 0.40-0.42 with intervals below 0.5
    v = judge_attack(_e(0.41, 0.36, 0.46), 0.52, _e(-0.11, -0.17, -0.05), "history", chance=0.5, sample=Sample(100, 100))
    assert v.label == "below blind guess" and "not evidence of safety" in v.text


def test_one_member_is_not_enough_to_judge():
    # issue 46: one member against 14 non-members gave a firm verdict
    v = judge_defence(_e(0.571, 0.286, 0.786), "ROC AUC", sample=Sample(1, 14))
    assert v.label == "not enough users" and "1 members / 14 non-members" in v.text


def test_reference_cost_and_secondary_words():
    assert judge_reference(_e(0.1, 0.05, 0.15), "a random ranking").label == "above"
    assert judge_reference(_e(0.0, -0.05, 0.05), "a random ranking").label == "not above"
    assert judge_cost(_e(-0.1, -0.15, -0.05), "Recall@10").text == "reference: costs 0.1000 [0.0500, 0.1500] of Recall@10"
    assert judge_cost(_e(0.0, -0.1, 0.1), "Recall@10").label == "no measurable cost"
    assert secondary("ROC AUC").label == "secondary" and "ROC AUC" in secondary("ROC AUC").text


def test_unresolvable_value_gives_no_word():
    bad = Estimate(math.nan, 0.0, 1.0, "FPR step", 45, resolvable=False)
    assert judge_attack(bad, 0.01, bad, "blind").text == "not resolvable with n = 45"
