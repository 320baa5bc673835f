"""Interaction-level membership on MovieLens-100K with reference recommenders (issue 51, the
CI-sized version of ``benchmarks/interaction_membership.py``, one seed, ALS): references trained
as the target was, on every known row except the candidate pairs, make the seen-item filter
stronger against hard non-members (the member's held-out items), and against easy non-members
(items never had) the references' ranking alone, without the target, is the strongest baseline:
most of what an attack reads there is the data, not the target."""

from __future__ import annotations

import pytest

from recprivacy.data.registry import load_dataset
from sklearn.metrics import roc_auc_score

pytestmark = [pytest.mark.realdata]


@pytest.fixture(scope="module")
def scored(dataset_dir, benchmark_script):
    return benchmark_script("interaction_membership").seed_scored(load_dataset("ml-100k", dataset_dir("ml-100k").parent), "als", 0, references=2)


def _auc(run, key: str) -> float:
    return float(roc_auc_score(run.labels, {**run.attacks, **run.baselines}[key]))


def test_references_sharpen_the_seen_item_filter_against_hard_non_members(scored):
    hard = scored["hard"]
    assert _auc(hard, "reference_filter") > _auc(hard, "seen_filter") + 0.01
    assert abs(_auc(hard, "reference_fit") - 0.5) < 0.05  # held-out items fit the member as well as trained ones


def test_against_easy_non_members_the_references_alone_are_the_strongest_baseline(scored):
    easy = scored["easy"]
    fit = _auc(easy, "reference_fit")
    assert fit > max(_auc(easy, "user_history"), _auc(easy, "item_popularity"))
    assert _auc(easy, "reference_filter") > fit  # the target still adds to it
