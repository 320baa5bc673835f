"""Every verdict of a small demo audit agrees with its own numbers (issue 32): each risk-summary
row's verdict is what ``metrics.verdict.judge_attack`` says of the row's margin and interval
(``judge_defence`` for a defence's row, whose baseline is the undefended attack), the margin is
the value minus the baseline, and the baseline is named. Every section runs, membership too."""

from __future__ import annotations

import re

import pytest

from recprivacy.config import load_config
from recprivacy.experiments.audit import UNDEFENDED
from recprivacy.experiments.runner import run_study
from recprivacy.metrics.intervals import Estimate
from recprivacy.metrics.verdict import judge_attack, judge_defence

NUMBER = r"([+-]?\d+\.\d+)"
INTERVAL = re.compile(rf"^{NUMBER} \[{NUMBER}, {NUMBER}\]$")


@pytest.fixture(scope="module")
def demo_risks() -> list[list[str]]:
    config = load_config(base={
        "name": "audit-verdicts", "study": "audit", "seed": 0,
        "dataset": {"name": "synthetic", "options": {"n_users": 120, "n_items": 120, "n_interactions": 3600}},
        "model": {"name": "bpr", "params": {"n_epochs": 20}}, "eval": {"ks": [10]},
        "study_options": {"sections": ["utility", "exposure", "attribute", "synthetic_release", "membership"],
                          "membership": {"k": 20, "n_factors": 16, "n_references": 2},
                          "exposure": {"n_epochs": 2, "max_pairs_per_user": 5, "dim": 16, "ratios": [0.5]},
                          "attribute": {"k": 10, "attackers": ["knn", "tree"], "seeds": 2},
                          "synthetic_release": {"k": 0.5, "generator": {"n_epochs": 2}}},
    })  # fmt: skip
    return run_study(config).tables["risk_summary"].rows


#: how each ``judge_defence`` label begins its sentence
DEFENCE_TEXT = {"backfires": "defence backfires", "reduces": "reduces", "no measurable change": "no measurable change"}


def _parse(cell: str) -> tuple[float, float, float]:
    match = INTERVAL.match(cell)
    assert match, f"expected 'value [low, high]', got {cell!r}"
    value, low, high = map(float, match.groups())
    return value, low, high


def test_every_section_reports_rows_with_intervals_and_named_baselines(demo_risks):
    attacks = " ".join(row[0] for row in demo_risks)
    for expected in ("target utility", "exposure leakage", "attribute inference", "synthetic release",
                     "user-level membership inference (protocol served", "user-level membership inference (protocol paper",
                     "vs Popularity Randomization"):  # fmt: skip
        assert expected in attacks
    for row in demo_risks:
        if row[5].startswith("not resolvable"):
            assert row[2] == row[4] and row[5].startswith(row[2]), row
            continue
        _parse(row[2])
        assert re.match(rf"^{NUMBER} \(.+\)$", row[3]), row[3]


def test_each_verdict_is_the_rule_applied_to_its_own_numbers(demo_risks):
    for attack, metric, value_cell, baseline_cell, margin_cell, verdict in demo_risks:
        if verdict.startswith("not resolvable"):  # TPR at an FPR below 1 / n: no number to contradict
            continue
        value, low, high = _parse(value_cell)
        baseline = float(baseline_cell.split(" ")[0])
        margin = Estimate(*_parse(margin_cell), method="parsed", n=1)
        assert margin.value == pytest.approx(value - baseline, abs=2e-4), (attack, metric)
        assert low <= value <= high
        if attack.startswith("target utility"):
            assert verdict.startswith("reference: above") == (margin.low > 0), verdict
            continue
        if "(reference, not an attack)" in attack:  # a private alternative's utility cost
            assert (" costs " in verdict) == (margin.high < 0), verdict
            continue
        if baseline_cell.endswith(f"({UNDEFENDED})"):
            assert verdict.startswith(DEFENCE_TEXT[judge_defence(margin, "").label]), (attack, margin, verdict)
            continue
        chance = 0.5 if metric == "ROC AUC" else None
        expected = judge_attack(margin, "", attack=Estimate(value, low, high, "parsed", 1), chance=chance).label
        assert verdict.startswith(f"{expected}:"), (attack, metric, margin, verdict)
        if value < baseline:
            assert not verdict.startswith("leaks"), (attack, verdict)
