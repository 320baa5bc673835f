"""The answer that opens an audit report (issue 48, built on the one judgement): one line per risk
from the risk rows, the paper protocol left to the risk summary, and a terminal form that fits
80, 100 and 120 columns with one line per risk."""

from __future__ import annotations

import pytest

from recprivacy.experiments.audit.answer import answers, terminal_lines
from recprivacy.experiments.audit.writer import SectionWriter
from recprivacy.experiments.results import Results
from recprivacy.metrics.intervals import Estimate
from recprivacy.metrics.verdict import Sample, users_sample


def _e(v: float, lo: float, hi: float) -> Estimate:
    return Estimate(v, lo, hi, "hand", 300)


@pytest.fixture
def writers() -> list[SectionWriter]:
    results = Results(name="t", study="audit", config={})
    membership, attribute = SectionWriter("membership", results), SectionWriter("attribute", results)
    sample = Sample(150, 150)
    for protocol in ("served", "paper"):
        attack = f"user-level membership inference (protocol {protocol}, best: LiRA (online))"
        membership.judge(attack, "ROC AUC", _e(0.96, 0.94, 0.99), 0.52, "history statistic", _e(0.44, 0.4, 0.48),
                         chance=0.5, sample=sample)  # fmt: skip
        membership.secondary(attack, "TPR at 1% FPR", "ROC AUC", _e(0.64, 0.55, 0.72), 0.02, "blind guess at 1% FPR", _e(0.62, 0.5, 0.7),
                             sample=sample)  # fmt: skip
    membership.defence("user-level membership inference vs Popularity Randomization (alpha 0.1, protocol paper)", "ROC AUC",
                       _e(0.9, 0.85, 0.93), 0.98, _e(-0.08, -0.12, -0.04), "ROC AUC", sample=sample)  # fmt: skip
    attribute.judge("attribute inference from top-20 lists (gender)", "balanced accuracy", _e(0.6, 0.55, 0.65), 0.5,
                    "blind guess (1/C = 0.500)", _e(0.1, 0.05, 0.15), "knn", chance=0.5, sample=users_sample(900))  # fmt: skip
    return [membership, attribute]


def test_one_line_per_risk_with_the_strongest_attack_in_plain_words(writers):
    rows = [a.row() for a in answers(writers)]
    assert [r[:2] for r in rows] == [["membership", "leaks"], ["defence: Popularity Randomization (alpha 0.1, protocol paper)",
                                     "reduces"], ["attribute (gender)", "leaks"]]  # fmt: skip
    assert rows[0][2] == ("ROC AUC 0.96 [0.94, 0.99] by LiRA (online) vs 0.52 (history statistic); finds 64% of members "
                          "at 1% false positives, where the blind guess finds 2%")
    assert rows[1][2] == "ROC AUC 0.90 [0.85, 0.93] with the defence, 0.98 without it; measured under the paper's protocol, " \
        "not the served one"
    assert rows[0][3] == "150 members / 150 non-members; 1 seed, bootstrap"
    assert rows[2][2].startswith("balanced accuracy 0.60 [0.55, 0.65] by the knn attacker vs 0.50")


@pytest.mark.parametrize("width", [80, 100, 120])
def test_the_terminal_form_fits_the_width_one_line_per_risk(writers, width):
    rows = [a.row() for a in answers(writers)]
    lines = terminal_lines(rows, width)
    assert len(lines) == len(rows) and all(len(line) <= width and "\n" not in line for line in lines)
    assert lines[1].startswith("Popularity Randomization  reduces")
    assert lines[2].startswith("attribute (gender)")
    assert all(row[1] in line for row, line in zip(rows, lines))
