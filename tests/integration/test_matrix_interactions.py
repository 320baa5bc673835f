"""The interactions column of the attack x defence matrix (issue 51), on the session's shared reduced
matrix (``synthetic_matrix`` in ``conftest.py``: no run of its own): one cell's verdict and its
defence's change re-derived by hand from the numbers its record holds, the adaptive attacker's own
references, the easy non-members beside the verdict, popularity randomization (members' lists untouched) unchanged, and ``columns`` planning
only the rows and the selected columns."""

from __future__ import annotations

from decimal import Decimal

import pytest

from recprivacy.experiments import load_results
from recprivacy.experiments.matrix import MatrixOptions
from recprivacy.experiments.matrix.grid import plan_cells
from recprivacy.metrics.verdict import MIN_GROUP

BASELINES = ("item popularity", "user's history similarity", "blind guess", "references' ranking without the target",
             "references' ranking under the defence, without the target")
ATTACKS = ("seen-item filter", "list neighbourhood", "reference-calibrated filter")


@pytest.fixture(scope="module")
def records(synthetic_matrix) -> dict[tuple[str, str], dict]:
    """The interactions column's verdict records by (defence, attacker)."""
    results = load_results(synthetic_matrix)
    return {(v["defence"], v["attacker"]): v for v in results.verdicts if v["attack"] == "interactions"}


def _printed(x: float) -> Decimal:
    return Decimal(f"{x:.3f}")


@pytest.mark.slow
def test_one_cell_verdict_and_its_defence_change_rederived_by_hand(records):
    cell, none = records["dpmf_eps1", "frozen"], records["none", "frozen"]
    # the verdict: the best list attack's ROC AUC against the strongest data-only baseline, on held-out pairs
    assert cell["strongest_attack"] in ATTACKS and cell["baseline_name"] in BASELINES and cell["best"]
    value, margin, sample = cell["value"], cell["margin"], cell["sample"]
    assert sample["units"] == ["training pairs", "held-out pairs"] and "members' lists" in sample["combined"]
    assert min(sample["positives"], sample["negatives"]) >= MIN_GROUP and cell["chance"] == 0.5
    assert margin["value"] == pytest.approx(value["value"] - cell["baseline"])
    assert value["level"] == pytest.approx(1 - 0.05 / 3)  # the best of 3 attacks (Bonferroni)
    if value["high"] < 0.5:
        word = "below blind guess"
    else:
        word = "leaks" if margin["low"] > 0 else "no leak measured" if margin["high"] <= 0 else "inconclusive"
    assert cell["label"] == word and cell["baseline_name"] in cell["text"], cell
    # the defence's change: the two printed values' difference, with a paired interval over the same pairs
    assert cell["undefended"] == float(_printed(none["value"]["value"])) and cell["defended"] == float(_printed(value["value"]))
    assert _printed(cell["change"]["value"]) == _printed(value["value"]) - _printed(none["value"]["value"])
    change = cell["change"]
    word = "backfires" if change["low"] > 0 else "reduces" if change["high"] < 0 else "no measurable change"
    assert cell["change_label"] == word and "interaction-level membership" in cell["change_text"]



@pytest.mark.slow
def test_the_adaptive_attacker_has_references_of_its_own_and_both_share_every_baseline(records):
    # DPMF trains differently from the undefended BPR-MF: its own references, judged against the same baselines
    frozen, adaptive = records["dpmf_eps1", "frozen"], records["dpmf_eps1", "adaptive"]
    assert adaptive["strongest_attack"] in ATTACKS and adaptive["baseline"] == frozen["baseline"]
    assert adaptive["baseline_name"] == frozen["baseline_name"]
    assert frozen["best"] != adaptive["best"]  # the verdict is on the stronger of the two
    stronger = max((frozen, adaptive), key=lambda r: r["value"]["value"])
    assert stronger["best"] and "change" in stronger
    # a row serving the undefended target's model: references trained as it was, so the two coincide
    pop = records["popularity_randomization", "adaptive"]
    assert pop["value"] == records["popularity_randomization", "frozen"]["value"]


@pytest.mark.slow
def test_easy_non_members_are_beside_the_verdict_on_the_same_training_pairs(records):
    for defence in ("none", "dpmf_eps1", "upcsdg_g0.5"):
        hard, easy = records[defence, "frozen"], records[defence, "easy non-members"]
        assert not easy["best"] and "change" not in easy and easy["baseline_name"] in BASELINES
        assert easy["sample"]["units"] == ["training pairs", "never-had pairs"]
        assert easy["sample"]["positives"] == hard["sample"]["positives"]  # the same training pairs
        assert easy["sample"]["negatives"] >= hard["sample"]["negatives"]  # a never-had pair for every slot


@pytest.mark.slow
def test_popularity_randomization_leaves_members_lists_and_so_the_cell_unchanged(records):
    pop, none = records["popularity_randomization", "frozen"], records["none", "frozen"]
    assert pop["value"] == none["value"] and pop["change"]["value"] == 0.0
    assert pop["change"]["low"] == pop["change"]["high"] == 0.0 and pop["change_label"] == "no measurable change"
    assert ("exposure_perturbation", "frozen") not in records  # exposures: the column does not apply


def test_columns_plans_only_the_rows_and_the_selected_columns():
    only = [c.setting for c in plan_cells(MatrixOptions(columns=["interactions"]))]
    assert only == [{"part": "rows"}, {"part": "column", "attack": "interactions"}]
    every = [c.setting for c in plan_cells(MatrixOptions())]
    assert {"part": "column", "attack": "interactions"} in every and {"part": "mechanisms"} in every
    canaries = [c.setting for c in plan_cells(MatrixOptions(columns=["canaries"]))]
    assert canaries == [{"part": "rows"}, {"part": "column", "attack": "canaries"}, {"part": "sequential"}]
    with pytest.raises(ValueError):
        MatrixOptions(columns=["nonsense"])
