"""Every verdict of a small demo audit agrees with its own numbers (issue 32): each risk-summary
row, as ``results.json`` records it (``Results.verdicts``), gets the label ``metrics.verdict``
gives its value, baseline, margin, blind guess and sample (``judge_attack`` for an attack's primary
metric, no word for a secondary one, ``judge_defence`` for a defence's row, whose baseline is the
undefended attack, ``judge_reference`` / ``judge_cost`` for a reference row); the printed margin is
the printed value minus the printed baseline, and the baseline is named. Every section runs,
membership too."""

from __future__ import annotations

import re
from typing import Any

import pytest

from recprivacy.config import load_config
from recprivacy.experiments.runner import run_study
from recprivacy.experiments.results import Results
from recprivacy.metrics.intervals import Estimate
from recprivacy.metrics.verdict import SECONDARY, Sample, judge_attack, judge_cost, judge_defence, judge_reference

NUMBER = r"([+-]?\d+\.\d+)"
#: "value [low, high]", with the interval's level after it when it is not 95% ("(99.3%)")
INTERVAL = re.compile(rf"^{NUMBER} \[{NUMBER}, {NUMBER}\]( \(\d+\.\d%\))?$")


@pytest.fixture(scope="module")
def demo() -> Results:
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
    return run_study(config)


@pytest.fixture(scope="module")
def demo_risks(demo: Results) -> list[list[str]]:
    return demo.tables["risk_summary"].rows


def _parse(cell: str) -> tuple[float, float, float]:
    match = INTERVAL.match(cell)
    assert match, f"expected 'value [low, high]', got {cell!r}"
    value, low, high = map(float, match.groups()[:3])
    return value, low, high


def test_every_section_reports_rows_with_intervals_and_named_baselines(demo_risks):
    attacks = " ".join(row[0] for row in demo_risks)
    for expected in ("target utility", "exposure leakage", "attribute inference", "synthetic release",
                     "user-level membership inference (protocol served", "user-level membership inference (protocol paper",
                     "vs Popularity Randomization"):  # fmt: skip
        assert expected in attacks
    for row in demo_risks:
        if row[2].startswith("not resolvable"):  # TPR at an FPR below 1 / n: no number in any cell
            assert row[2] == row[4] and row[5].startswith((row[2], "secondary")), row
            continue
        _parse(row[2])
        assert re.match(rf"^{NUMBER} \(.+\)$", row[3]), row[3]


def _estimate(d: dict[str, Any]) -> Estimate:
    return Estimate(d["value"] if d["resolvable"] else float("nan"), d["low"], d["high"], d["method"], d["n"], d["level"],
                    d["resolvable"])  # fmt: skip


def _sample(d: dict[str, Any] | None) -> Sample | None:
    return None if d is None else Sample(d["positives"], d["negatives"], d["seeds"], d["combined"], tuple(d["units"]))


def _rejudged(record: dict[str, Any]) -> str:
    """The label ``metrics.verdict`` gives the record's own numbers."""
    value, margin, sample = _estimate(record["value"]), _estimate(record["margin"]), _sample(record["sample"])
    if record["kind"] == "secondary":
        return SECONDARY
    if record["kind"] == "defence":
        return judge_defence(margin, "", sample=sample).label
    if record["kind"] == "reference":
        return (judge_reference if record["attack"].startswith("target utility") else judge_cost)(margin, "").label
    return judge_attack(value, record["baseline"], margin, "", chance=record["chance"], ceiling=record["ceiling"],
                        sample=sample).label  # fmt: skip


def test_each_verdict_is_the_rule_applied_to_its_own_numbers(demo):
    assert [r["row"] for r in demo.verdicts] == demo.tables["risk_summary"].rows
    kinds = {r["section"]: set() for r in demo.verdicts}
    for record in demo.verdicts:
        kinds[record["section"]].add(record["kind"])
        assert record["label"] == _rejudged(record), record
        if record["kind"] != "secondary":
            assert record["sample"] is not None, record
        if record["value"]["resolvable"] and record["margin"]["resolvable"]:
            printed = [float(record["row"][i].split(" ")[0]) for i in (2, 3, 4)]
            assert printed[2] == pytest.approx(printed[0] - printed[1], abs=1e-9), record["row"]
            assert record["value"]["low"] <= record["value"]["value"] <= record["value"]["high"]
    assert kinds["utility"] == {"reference"} and kinds["attribute"] == {"attack", "secondary"}
    assert {"attack", "defence"} <= kinds["exposure"] | kinds["membership"]


def test_the_attribute_attack_is_judged_on_balanced_accuracy_against_one_over_c(demo):
    rows = [r for r in demo.verdicts if r["section"] == "attribute"]
    primary = [r for r in rows if r["kind"] == "attack"]
    assert primary and all(r["metric"] == "balanced accuracy" and r["baseline_name"].startswith("blind guess (1/C = ")
                           and r["chance"] == r["baseline"] for r in primary)  # fmt: skip
    assert {r["metric"] for r in rows if r["kind"] == "secondary"} == {"accuracy", "weighted F1"}
    assert all("ζ-split each" in r["sample"]["text"] for r in rows)
