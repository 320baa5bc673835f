"""The erasure rule (``metrics.verdict.judge_erasure``): each word from hand-made attack verdicts on
the forgotten users and on the positive control, in the rule's order, and the rule sentence names
every word."""

from __future__ import annotations

import pytest

from recprivacy.experiments.audit.writer import SectionWriter
from recprivacy.experiments.results import Results
from recprivacy.metrics.intervals import Estimate
from recprivacy.metrics.verdict import (ERASURE_RULE, ERASURE_WORDS, NO_EVIDENCE, NO_POWER, NOT_ERASED, Sample, Verdict,
                                        judge_erasure)

LEAKS, INCONCLUSIVE = Verdict("leaks", "leaks: +0.2"), Verdict("inconclusive", "inconclusive: +0.01")


@pytest.mark.parametrize(("forgotten", "control", "word"), [
    (LEAKS, LEAKS, NOT_ERASED),
    (LEAKS, INCONCLUSIVE, NOT_ERASED),  # the attack found them though the control is weak
    (INCONCLUSIVE, LEAKS, NO_EVIDENCE),
    (Verdict("no leak measured", "x"), LEAKS, NO_EVIDENCE),
    (INCONCLUSIVE, INCONCLUSIVE, NO_POWER),
    (INCONCLUSIVE, Verdict("below blind guess", "x"), NO_POWER),
    (Verdict("below blind guess", "x"), LEAKS, NOT_ERASED),  # told apart the other way
    (Verdict("below blind guess", "x"), INCONCLUSIVE, NO_POWER),
    (Verdict("not enough users", "not enough users to judge"), LEAKS, "not enough users"),
    (Verdict("not resolvable", "not resolvable with n = 5"), LEAKS, "not resolvable"),
    (Verdict("saturated", "saturated: both at 1"), LEAKS, "saturated"),
])  # fmt: skip
def test_each_word_in_the_rules_order(forgotten, control, word):
    verdict = judge_erasure(forgotten, control)
    assert verdict.label == word and verdict.label in ERASURE_WORDS
    assert verdict.text.startswith(word)


def test_the_rule_sentence_names_every_word():
    for word in ERASURE_WORDS:
        assert f"**{word}**" in ERASURE_RULE


def test_the_writer_judges_the_forgotten_margin_then_the_erasure():
    """Margin 0.62 - 0.55 = +0.07 with interval [+0.02, +0.12]: the attack leaks, so 'not erased',
    and the row keeps the control's word for re-judging."""
    out = SectionWriter("erasure", Results(name="t", study="erasure", config={}))
    value, margin = Estimate(0.62, 0.57, 0.67, "bootstrap", 200), Estimate(0.07, 0.02, 0.12, "bootstrap", 200)
    verdict = out.erasure("erasure: forgotten", "ROC AUC", value, 0.55, "history", margin, INCONCLUSIVE,
                          sample=Sample(100, 100))  # fmt: skip
    assert verdict.label == NOT_ERASED
    record = out.risks[0].record("erasure")
    assert record["control"] == "inconclusive" and record["kind"] == "erasure"
    assert record["row"][5] == NOT_ERASED and record["printed_margin"] == 0.07
