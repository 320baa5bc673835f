"""Every recommender trains end to end on tiny data with a planted structure.

Users fall into four taste groups of unequal size; each user interacts with items of the
group's own block of 20 items only. Popularity therefore serves every user the largest group's
block, and a model that learns the structure must beat it on held-out interactions.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from recprivacy.data.interactions import Interactions
from recprivacy.data.split import random_split
from recprivacy.metrics.ranking import evaluate
from recprivacy.models import MODELS, make_model, model_params

GROUP_SIZES = (60, 40, 30, 20)
BLOCK = 20
PER_USER = 10

#: brief training settings per learned model (small data, few epochs)
SETTINGS = {
    "itemcf": {},
    "als": {"factors": 16, "regularization": 0.1, "alpha": 5.0},
    "lfm": {"n_factors": 16, "lr": 0.05, "n_epochs": 20, "batch_size": 64},
    "bpr": {"n_factors": 16, "n_epochs": 40, "batch_size": 128, "eval_every": 2},
    "lightgcn": {"n_factors": 16, "lr": 0.01, "n_epochs": 40, "batch_size": 128, "eval_every": 2},
}


def planted() -> Interactions:
    rng = np.random.default_rng(0)
    groups = np.repeat(np.arange(len(GROUP_SIZES)), GROUP_SIZES)
    users = np.repeat(np.arange(len(groups)), PER_USER)
    items = np.concatenate([rng.choice(BLOCK, PER_USER, replace=False) + BLOCK * g for g in groups])
    return Interactions(users=users, items=items, n_users=len(groups), n_items=BLOCK * len(GROUP_SIZES),
                        ratings=np.full(len(users), 4.0), name="planted")


@pytest.fixture(scope="module")
def splits():
    return random_split(planted(), ratios=(0.7, 0.1, 0.2), seed=0)


@pytest.fixture(scope="module")
def popularity_recall(splits):
    train, valid, test = splits
    model = make_model("popularity").fit(train, valid)
    return evaluate(model, test, ks=(10,), exclude=valid)["recall@10"]


@pytest.mark.parametrize("name", sorted(SETTINGS))
def test_learned_models_beat_popularity(name, splits, popularity_recall):
    train, valid, test = splits
    model = make_model(name, **SETTINGS[name]).fit(train, valid)
    recall = evaluate(model, test, ks=(10,), exclude=valid)["recall@10"]
    assert recall > popularity_recall + 0.2, (name, recall, popularity_recall)


@pytest.mark.parametrize("name", ["lfm", "bpr", "lightgcn"])
def test_same_seed_same_recommendations(name, splits):
    train, valid, _ = splits
    params = {**SETTINGS[name], "n_epochs": 3, "seed": 11}
    first = make_model(name, **params).fit(train, valid).recommend(np.arange(20), k=5)
    second = make_model(name, **params).fit(train, valid).recommend(np.arange(20), k=5)
    assert torch.equal(first, second)


@pytest.mark.parametrize("name", sorted(MODELS))
def test_every_registered_model_fits_scores_and_excludes_seen(name, splits):
    train, valid, _ = splits
    params = {"n_epochs": 1} if "n_epochs" in model_params(name) else {}
    model = make_model(name, **params).fit(train, valid)
    users = np.arange(10)
    assert model.score(users).shape == (10, train.n_items)
    top = model.recommend(users, k=15).numpy()
    seen = train.to_csr()[users].toarray().astype(bool)
    assert not np.take_along_axis(seen, top, axis=1).any()
