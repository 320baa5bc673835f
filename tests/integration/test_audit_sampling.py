"""The attribute and exposure audit sections attack a seeded sample of users (``max_users``):
unchanged numbers when the sample is the whole population, a stated sample otherwise."""

from __future__ import annotations

from recprivacy.config import load_config
from recprivacy.experiments.runner import run_study

ATTRIBUTE = {
    "name": "audit-attr", "study": "audit", "seed": 0,
    "dataset": {"name": "synthetic", "options": {"n_users": 80, "n_items": 60, "n_interactions": 1800}},
    "model": {"name": "popularity"}, "eval": {"ks": [10]},
}  # fmt: skip
EXPOSURE = {
    "name": "audit-exposure", "study": "audit",
    "dataset": {"name": "synthetic", "options": {"n_users": 80, "n_items": 120, "n_interactions": 2400}},
    "model": {"name": "bpr", "params": {"n_epochs": 3, "eval_every": 1}},
}  # fmt: skip


def _attribute(max_users: int | None) -> dict:
    options = {"k": 10, "attackers": ["knn", "dnn"], "seeds": 2, "max_users": max_users}
    return run_study(load_config(base={**ATTRIBUTE, "study_options": {"sections": ["attribute"], "attribute": options}}))


def test_attribute_sample_of_everyone_gives_the_unsampled_numbers():
    full, sampled = _attribute(None), _attribute(1000)
    keys = [k for k in full.metrics if k.startswith("attribute/")]
    assert keys and all(full.metrics[k] == sampled.metrics[k] for k in keys)


def test_attribute_sample_is_stated_and_smaller():
    results = _attribute(40)
    assert "seeded random sample of 40 users" in results.sections[-1].text
    assert results.tables["attribute-lists"].rows


def test_exposure_attacks_a_stated_sample():
    options = {"n_epochs": 2, "max_pairs_per_user": 5, "dim": 16, "max_users": 30}
    results = run_study(load_config(base={**EXPOSURE, "study_options": {"sections": ["exposure"], "exposure": options}}))
    assert "sample of 30 of the 80 users" in results.sections[-1].text
    assert "slates of 3 held-out users" in results.tables["exposure-attack"].caption
