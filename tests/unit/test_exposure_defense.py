"""Two-stage exposure perturbation: m = ceil(N L), unchanged unselected positions, selection
rules (random uniformity, deterministic and sampled similarity), replacement frequencies,
Acc* (Eq. 18) and next-item recall."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from recprivacy.data.exposure_pairs import ExposurePairs
from recprivacy.defenses.exposure_perturbation import (
    ExposurePerturbation,
    cosine_to_reference,
    gumbel_top_k,
    n_replaced,
    next_item_recall,
    select_by_similarity,
    select_random,
    slate_accuracy,
)
from recprivacy.errors import ConfigError

N_ITEMS = 20


def make_pairs(n: int = 400, seed: int = 0, user_log: sp.csr_matrix | None = None) -> ExposurePairs:
    rng = np.random.default_rng(seed)
    slates = np.stack([rng.choice(10, size=10, replace=False) for _ in range(n)])  # items 0..9 only
    histories = rng.integers(0, N_ITEMS, size=(n, 3))
    users = np.arange(n) % 4
    log = user_log if user_log is not None else sp.csr_matrix(np.ones((4, N_ITEMS)))
    clicks = sp.csr_matrix(np.eye(4, N_ITEMS))
    return ExposurePairs(users, histories, slates, log, clicks, 4, N_ITEMS, next_items=histories[:, 0])


def test_number_of_replaced_positions() -> None:
    assert [n_replaced(10, r) for r in (0.0, 0.2, 0.25, 0.4, 0.6, 0.8, 1.0)] == [0, 2, 3, 4, 6, 8, 10]
    assert n_replaced(5, 0.5) == 3
    with pytest.raises(ConfigError, match="ratio"):
        n_replaced(10, 1.5)


def test_only_the_selected_positions_change_and_exactly_m_of_them() -> None:
    pairs = make_pairs()
    out = ExposurePerturbation(ratio=0.4, exclude_slate=True, seed=3, noise="simulation").fit(pairs).perturb(pairs)
    changed = out.slates != pairs.slates
    assert (changed.sum(axis=1) == 4).all()
    assert (out.slates[changed] >= 10).all()  # excluded the slate's own items, so only 10..19 remain
    assert np.array_equal(out.histories, pairs.histories) and np.array_equal(out.users, pairs.users)
    again = ExposurePerturbation(ratio=0.4, exclude_slate=True, seed=3, noise="simulation").fit(pairs).perturb(pairs)
    assert np.array_equal(out.slates, again.slates)
    assert ExposurePerturbation(ratio=0.0).fit(pairs).perturb(pairs) is pairs


def test_secure_perturbation_differs_between_runs_of_the_same_config() -> None:
    pairs = make_pairs()
    runs = [ExposurePerturbation(ratio=0.4, seed=3).fit(pairs).perturb(pairs).slates for _ in range(2)]
    assert not np.array_equal(runs[0], runs[1])
    assert ExposurePerturbation(ratio=0.4, seed=3).fit(pairs).perturb(pairs).provenance[-1]["noise"] == "secure"


def test_random_selection_is_uniform_over_positions() -> None:
    rng = np.random.default_rng(0)
    positions = select_random(rng, 20_000, 10, 3)
    assert all(len(set(row)) == 3 for row in positions[:100])
    freq = np.bincount(positions.ravel(), minlength=10) / 20_000
    assert np.allclose(freq, 0.3, atol=0.015)


def test_gumbel_top_k_draws_one_item_with_the_target_probabilities() -> None:
    weights = np.array([1.0, 2.0, 3.0, 4.0, 0.0])
    draws = gumbel_top_k(np.random.default_rng(1), np.broadcast_to(np.log(weights + 1e-300), (40_000, 5)).copy(), 1)
    assert np.allclose(np.bincount(draws.ravel(), minlength=5) / 40_000, weights / 10, atol=0.01)


def test_cosine_and_deterministic_similarity_selection() -> None:
    emb = np.array([[[1.0, 0.0], [0.0, 1.0], [-1.0, 0.0], [1.0, 1.0]]])
    ref = np.array([[2.0, 0.0]])
    cos = cosine_to_reference(emb, ref)
    assert np.allclose(cos, [[1.0, 0.0, -1.0, 1 / np.sqrt(2)]])
    rng = np.random.default_rng(0)
    assert sorted(select_by_similarity(rng, cos, 2, "dissimilar", "deterministic")[0]) == [1, 2]
    assert sorted(select_by_similarity(rng, cos, 2, "similar", "deterministic")[0]) == [0, 3]
    assert np.allclose(cosine_to_reference(emb, np.zeros((1, 2))), 0.0)  # omega keeps a zero reference finite


def test_sampled_dissimilar_selection_prefers_less_similar_positions() -> None:
    cos = np.tile(np.linspace(-1, 1, 10), (20_000, 1))
    picks = select_by_similarity(np.random.default_rng(0), cos, 2, "dissimilar", "sample")
    freq = np.bincount(picks.ravel(), minlength=10)
    assert freq[0] > freq[4] > freq[9] > 0
    similar = np.bincount(select_by_similarity(np.random.default_rng(0), cos, 2, "similar", "sample").ravel(), minlength=10)
    assert similar[9] > similar[0]


def test_similarity_selection_through_the_defence_uses_the_history_reference() -> None:
    pairs = make_pairs(n=8)
    emb = np.zeros((N_ITEMS, 2))
    emb[:, 0] = 1.0
    emb[pairs.slates[0][:2], :] = [0.0, 1.0]  # two slate items point away from every history
    d = ExposurePerturbation(ratio=0.2, selection="dissimilar", mode="deterministic", exclude_slate=True).fit(pairs, emb)
    out = d.perturb(pairs)
    assert np.flatnonzero(out.slates[0] != pairs.slates[0]).tolist() == [0, 1]
    with pytest.raises(ConfigError, match="item_embeddings"):
        ExposurePerturbation(selection="similar").fit(pairs)


def drawn_items(replacement: str, log: sp.csr_matrix, batch_size: int = 400) -> tuple[np.ndarray, ExposurePairs]:
    """The one replacement item of every slate (L = 0.1, N = 10) and the pairs."""
    pairs = make_pairs(n=20_000, user_log=log)
    out = ExposurePerturbation(ratio=0.1, replacement=replacement, batch_size=batch_size, seed=0,
                               noise="simulation").fit(pairs).perturb(pairs)
    assert ((out.slates != pairs.slates).sum(axis=1) <= 1).all()
    pos = select_random(np.random.default_rng(0), len(pairs), 10, 1)  # the defence's own first draws
    return np.take_along_axis(out.slates, pos, axis=1).ravel(), pairs


def test_uniform_and_popularity_replacement_frequencies() -> None:
    counts = np.arange(N_ITEMS, dtype=float)
    log = sp.csr_matrix(np.vstack([counts, counts, np.zeros(N_ITEMS), np.zeros(N_ITEMS)]))
    drawn, _ = drawn_items("uniform", log)
    assert np.allclose(np.bincount(drawn, minlength=N_ITEMS) / len(drawn), 1 / N_ITEMS, atol=0.01)
    drawn, _ = drawn_items("popularity", log)
    assert np.allclose(np.bincount(drawn, minlength=N_ITEMS) / len(drawn), counts / counts.sum(), atol=0.01)


def test_batch_popularity_counts_only_the_users_of_the_batch() -> None:
    counts = np.arange(N_ITEMS, dtype=float)
    log = sp.csr_matrix(np.vstack([counts, counts, np.eye(1, N_ITEMS, 7)[0], np.zeros(N_ITEMS)]))
    drawn, pairs = drawn_items("batch_popularity", log, batch_size=2)  # batches alternate users {0, 1} and {2, 3}
    late = pairs.users >= 2
    assert (drawn[late] == 7).all()
    assert np.allclose(np.bincount(drawn[~late], minlength=N_ITEMS) / (~late).sum(), counts / counts.sum(), atol=0.015)


def test_batch_popularity_over_the_batch_slates() -> None:
    pairs = make_pairs(n=20_000)
    pairs = pairs.with_slates(np.where(np.arange(20_000)[:, None] % 2 == 0, pairs.slates, np.arange(10, 20)))
    out = ExposurePerturbation(ratio=0.1, replacement="batch_popularity", batch_pool="slates", batch_size=2, seed=0,
                               noise="simulation")
    drawn = np.take_along_axis(out.fit(pairs).perturb(pairs).slates, select_random(np.random.default_rng(0), 20_000, 10, 1), axis=1)
    assert np.allclose(np.bincount(drawn.ravel(), minlength=N_ITEMS) / 20_000, 1 / N_ITEMS, atol=0.01)
    # each batch of 2 holds one slate of 10 items out of 0..9 and the slate 10..19: every item once
    single = ExposurePerturbation(ratio=0.1, replacement="batch_popularity", batch_pool="slates", batch_size=1, seed=0)
    odd = single.fit(pairs).perturb(pairs).slates[1::2]
    assert (odd >= 10).all()  # a one-slate batch draws only that slate's items (the users' logs hold all 20)
    with pytest.raises(ConfigError, match="batch_pool"):
        ExposurePerturbation(batch_pool="users")


def test_acc_star_uses_set_semantics_against_the_click_set() -> None:
    clicks = sp.csr_matrix(np.array([[1, 1, 0, 0, 0, 0], [0, 0, 0, 0, 0, 1]]))
    pairs = ExposurePairs(np.array([0, 0, 1]), np.zeros((3, 1), dtype=np.int64),
                          np.array([[0, 2, 3, 4], [0, 0, 1, 3], [5, 5, 5, 5]]), clicks, clicks, 2, 6,
                          next_items=np.array([3, 2, 5]))  # fmt: skip
    assert slate_accuracy(pairs).tolist() == [0.25, 2 / 3, 1.0]
    assert next_item_recall(pairs).tolist() == [1.0, 0.0, 1.0]


def test_uniform_replacement_lowers_acc_star_on_average() -> None:
    pairs = make_pairs(n=2000)
    accs = [slate_accuracy(ExposurePerturbation(ratio=r, seed=1).fit(pairs).perturb(pairs)).mean() for r in (0, 0.4, 0.8)]
    assert accs[0] > accs[1] > accs[2]


def test_privacy_statement_claims_no_guarantee() -> None:
    statement = ExposurePerturbation().privacy_statement()
    assert not statement.formal and "No formal" in str(statement)
    assert statement.noise == "secure: operating-system entropy"
