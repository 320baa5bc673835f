"""The synthetic generator: shape, determinism, planted structure, and exposure-log consistency."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import roc_auc_score

from recprivacy.data.interactions import Interactions
from recprivacy.data.preprocess import preprocess
from recprivacy.data import synthetic
from recprivacy.data.split import random_split
from recprivacy.data.synthetic import (
    AGE_CODES,
    GENRES,
    make_synthetic,
    make_synthetic_exposure,
    make_world,
    synthetic_world,
)
from recprivacy.errors import ConfigError, DataError

SMALL = dict(n_users=60, n_items=300, n_interactions=2400, seed=1)


@pytest.fixture(scope="module", params=["auto", "candidates"])
def default(request) -> Interactions:
    """The default data, drawn exactly (``auto`` at this size) and from candidates (issue 33):
    every documented property must hold for both."""
    return make_synthetic(sampler=request.param)


@pytest.fixture(scope="module")
def small() -> Interactions:
    return make_synthetic(**SMALL)


@pytest.fixture(scope="module")
def exposure(small):
    return make_synthetic_exposure(small, slate_size=10, history_len=5, n_steps=6, seed=3)


def test_default_shape_and_ids(default):
    assert (default.n_users, default.n_items, len(default)) == (943, 1682, 100_000)
    assert default.user_ids.tolist() == list(range(1, 944))
    assert default.item_ids[[0, -1]].tolist() == [1, 1682]
    assert default.name == "synthetic"
    counts = default.user_counts()
    assert counts.min() >= 20
    assert counts.max() <= int(0.4 * 1682)
    assert counts.max() > 4 * np.median(counts)  # heavy tail
    assert len(set(zip(default.users.tolist(), default.items.tolist()))) == len(default)  # no repeats


def test_ratings_timestamps_and_features(default):
    assert set(np.unique(default.ratings).tolist()) == {1.0, 2.0, 3.0, 4.0, 5.0}
    shares = np.bincount(default.ratings.astype(int))[1:] / len(default)
    assert shares == pytest.approx([0.061, 0.114, 0.271, 0.342, 0.212], abs=0.01)  # MovieLens-100K
    idx = default.order()
    same_user = default.users[idx][1:] == default.users[idx][:-1]
    assert np.all(np.diff(default.timestamps[idx])[same_user] > 0)  # strictly increasing per user
    uf = default.user_features
    assert list(uf.columns) == ["gender", "age", "occupation"]
    assert set(uf["gender"]) == {"M", "F"} and 0.6 < (uf["gender"] == "M").mean() < 0.8
    assert set(uf["age"]) <= set(AGE_CODES.tolist()) and uf["occupation"].between(0, 20).all()
    genres = default.item_features
    assert list(genres.columns) == list(GENRES) and genres.to_numpy().sum(1).min() >= 1


def test_provenance_records_every_parameter(default):
    (step,) = default.provenance
    assert step["step"] == "synthetic"
    assert step["n_interactions"] == 100_000 and step["seed"] == 0 and step["popularity_exponent"] == 1.0
    assert {"demographic_strength", "drift", "n_phases", "order_noise", "mean_gap", "rating_noise"} <= set(step)
    assert step["sampler"] in ("exact", "candidates")


def test_auto_sampler_is_exact_on_small_worlds_only(monkeypatch):
    assert make_synthetic(**SMALL).provenance[0]["sampler"] == "exact"
    monkeypatch.setattr(synthetic, "EXACT_CELLS", 60 * 300 - 1)
    assert make_synthetic(**SMALL).provenance[0]["sampler"] == "candidates"
    with pytest.raises(ConfigError, match="sampler"):
        make_synthetic(**SMALL, sampler="gibbs")


def test_candidate_draws_follow_the_exact_item_distribution():
    """Same world, same counts: per-item interaction counts of the two samplers agree closely
    (sampling-importance-resampling tends to the exact draw)."""
    shape = dict(n_users=400, n_items=500, n_interactions=24_000, seed=4)
    exact = make_synthetic(**shape, sampler="exact").item_counts()
    drawn = make_synthetic(**shape, sampler="candidates").item_counts()
    assert np.corrcoef(exact, drawn)[0, 1] > 0.95
    assert np.abs(exact - drawn).sum() / exact.sum() < 0.25


def test_deterministic_from_seed(small):
    again = make_synthetic(**SMALL)
    for name in ("users", "items", "ratings", "timestamps"):
        assert np.array_equal(getattr(small, name), getattr(again, name))
    assert small.user_features.equals(again.user_features)
    assert small.item_features.equals(again.item_features)
    other = make_synthetic(**{**SMALL, "seed": 2})
    assert not np.array_equal(small.items, other.items)


def test_popularity_is_power_law_like(default):
    counts = np.sort(default.item_counts())[::-1]
    top_share = counts[: len(counts) // 10].sum() / counts.sum()
    assert top_share > 0.25  # uniform popularity would give 0.10
    flat = make_synthetic(n_users=300, n_items=500, n_interactions=12_000, popularity_exponent=0.0)
    flat_counts = np.sort(flat.item_counts())[::-1]
    assert flat_counts[:50].sum() / flat_counts.sum() < top_share


def _attribute_auc(data: Interactions, label: np.ndarray) -> float:
    """Logistic regression from a user's binary item vector, fit on 600 users, AUC on the rest."""
    x = data.to_csr()
    order = np.random.default_rng(0).permutation(data.n_users)
    train, test = order[:600], order[600:]
    model = LogisticRegression(C=0.1, max_iter=2000).fit(x[train], label[train])
    return roc_auc_score(label[test], model.predict_proba(x[test])[:, 1])


def test_demographics_shape_preferences(default):
    female = (default.user_features["gender"] == "F").to_numpy()
    older = (default.user_features["age"] >= 35).to_numpy()
    assert 0.7 < _attribute_auc(default, female) < 0.95  # learnable, not trivial
    assert _attribute_auc(default, older) > 0.65
    blind = make_synthetic(demographic_strength=0.0)
    assert _attribute_auc(blind, (blind.user_features["gender"] == "F").to_numpy()) < 0.65


def _next_item_rank(data: Interactions, recent: int | None) -> np.ndarray:
    """Rank of each user's last item among unseen items, scored by latent similarity to the
    mean factor of the user's ``recent`` previous items (all previous items if None)."""
    v = synthetic_world(data).item_factors
    ranks = []
    for seq in data.sequences():
        history = seq[:-1] if recent is None else seq[:-1][-recent:]
        score = v @ v[history].mean(0)
        score[seq[:-1]] = -np.inf
        ranks.append((score > score[seq[-1]]).sum())
    return np.array(ranks)


def test_sequences_carry_interest_drift(default):
    recent_hits = (_next_item_rank(default, recent=5) < 50).mean()
    whole_hits = (_next_item_rank(default, recent=None) < 50).mean()
    assert recent_hits > whole_hits + 0.05  # recent items predict the next one better


def test_world_is_rebuilt_and_aligned_after_processing(small):
    world = make_world(n_users=60, n_items=300, seed=1)
    assert np.array_equal(synthetic_world(small).user_factors, world.user_factors)
    processed = preprocess(small, implicit_threshold=4, kcore=3)
    aligned = synthetic_world(processed)
    rows = processed.user_ids - 1
    assert np.array_equal(aligned.user_factors, world.user_factors[rows])
    assert np.array_equal(aligned.item_factors, world.item_factors[processed.item_ids - 1])
    assert aligned.user_features.equals(processed.user_features)
    assert aligned.affinity(np.array([0]), np.array([1, 2])).shape == (1, 2)


def test_bad_parameters():
    with pytest.raises(ConfigError, match="n_interactions"):
        make_synthetic(n_users=10, n_items=100, n_interactions=150)
    with pytest.raises(ConfigError, match="n_items"):
        make_synthetic(n_items=0)
    with pytest.raises(DataError, match="synthetic"):
        synthetic_world(Interactions(users=[0], items=[0], n_users=1, n_items=1))


def test_exposure_shape_and_determinism(small, exposure):
    assert len(exposure) == small.n_users * 6
    assert np.array_equal(np.diff(exposure.slate_offsets), np.full(len(exposure), 10))
    slates = exposure.slate_items.reshape(-1, 10)
    assert all(len(np.unique(s)) == 10 for s in slates)
    assert exposure.provenance[-1]["step"] == "synthetic_exposure"
    again = make_synthetic_exposure(small, slate_size=10, history_len=5, n_steps=6, seed=3)
    assert np.array_equal(exposure.slate_items, again.slate_items)
    assert np.array_equal(exposure.clicked, again.clicked)
    assert 0.05 < exposure.clicked.mean() < 0.6


def test_exposure_replays_consistently(small, exposure):
    """Slates avoid items the user already had, clicks lie in the slate, and each history is
    the 5 latest earlier clicks (the data's interactions first), oldest first."""
    sequences = small.sequences()
    clicks_so_far = {u: list(sequences[u]) for u in range(small.n_users)}
    last_time = {u: -1 for u in range(small.n_users)}
    for r in range(len(exposure)):
        u = int(exposure.users[r])
        past = clicks_so_far[u]
        assert exposure.history(r).tolist() == past[-5:]
        assert not set(exposure.slate(r).tolist()) & set(past)
        assert set(exposure.clicks(r).tolist()) <= set(exposure.slate(r).tolist())
        assert exposure.times[r] > max(last_time[u], small.timestamps[small.users == u].max())
        last_time[u] = exposure.times[r]
        past.extend(exposure.clicks(r).tolist())


def test_exposure_reflects_preferences(small, exposure):
    world = synthetic_world(small)
    shown_users = np.repeat(exposure.users, 10)
    affinity = np.einsum("ij,ij->i", world.user_factors[shown_users], world.item_factors[exposure.slate_items])
    assert affinity[exposure.clicked].mean() > affinity[~exposure.clicked].mean()
    random_items = np.random.default_rng(0).integers(0, small.n_items, len(shown_users))
    chance = np.einsum("ij,ij->i", world.user_factors[shown_users], world.item_factors[random_items])
    assert affinity.mean() > chance.mean() + 0.3  # the scorer knows the users


def test_exposure_for_a_split_and_capacity_check(small):
    train = random_split(small, (0.8, 0.2), seed=0)[0].subset_users(np.arange(10))
    log = make_synthetic_exposure(train, n_steps=2)
    assert sorted(set(log.users.tolist())) == list(range(10)) and log.n_items == small.n_items
    with pytest.raises(ConfigError, match="n_steps"):
        make_synthetic_exposure(small, n_steps=40)
