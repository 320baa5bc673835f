"""The utility section on a seeded sample of test users (issue 33): a sample at least as large as
the test users gives the unsampled section's numbers exactly; a smaller one ranks exactly that
many users and says so in the section's text."""

from __future__ import annotations

import pytest

from recprivacy.config import load_config
from recprivacy.experiments.runner import run_study

TINY = {"name": "synthetic", "options": {"n_users": 120, "n_items": 120, "n_interactions": 3600}}


def _utility(max_users: int | None):
    return run_study(load_config(base={
        "name": "utility-sample", "study": "audit", "seed": 4, "noise": "simulation", "dataset": TINY,
        "model": {"name": "bpr", "params": {"n_epochs": 3}}, "eval": {"ks": [5, 10]},
        "study_options": {"sections": ["utility"], "utility": {"max_users": max_users}},
    }))  # fmt: skip


@pytest.fixture(scope="module")
def runs():
    return {n: _utility(n) for n in (None, 120, 25)}


def test_a_sample_as_large_as_the_test_users_changes_nothing(runs):
    assert runs[120].metrics == runs[None].metrics
    assert runs[120].tables["risk_summary"].rows == runs[None].tables["risk_summary"].rows


def test_a_small_sample_ranks_that_many_users_and_says_so(runs):
    everyone, sampled = runs[None].metrics, runs[25].metrics
    assert everyone["utility/n_users"] > 25 and sampled["utility/n_users"] == 25
    text = "\n".join(s.text for s in runs[25].sections)
    assert f"Ranked a seeded random sample of 25 of the {int(everyone['utility/n_users'])} test users" in text
    assert "Ranked a seeded random sample" not in "\n".join(s.text for s in runs[None].sections)
    assert sampled["utility/recall@5"] != everyone["utility/recall@5"]
