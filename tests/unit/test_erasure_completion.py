"""The forgotten comparison's history-completion attack (``experiments.erasure.verify``): a user
served from a random half of their history, scored by the share of the other half in the list.
On tiny planted data: the halves split every user's rows, a model that memorised its members
completes their histories and not a never-member's, and the direction is learned from the
adversary's shadow users, not assumed."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.metrics import roc_auc_score

from recprivacy.data.interactions import Interactions
from recprivacy.experiments.erasure.verify import completion, completion_scores, halves

N_USERS, N_ITEMS, PER_USER = 40, 60, 12


def _data(seed: int = 0) -> Interactions:
    rng = np.random.default_rng(seed)
    items = np.concatenate([rng.choice(N_ITEMS, PER_USER, replace=False) for _ in range(N_USERS)])
    users = np.repeat(np.arange(N_USERS), PER_USER)
    return Interactions(users=users, items=items, n_users=N_USERS, n_items=N_ITEMS, user_ids=np.arange(N_USERS),
                        item_ids=np.arange(N_ITEMS))  # fmt: skip


class Memoriser:
    """Serves a history that is part of a trained user's history the rest of that history first,
    then one fixed order; any other history gets the fixed order (its items excluded)."""

    def __init__(self, data: Interactions, trained: np.ndarray) -> None:
        self.known = [set(data.items[data.users == u]) for u in trained]
        self.order = np.random.default_rng(3).permutation(data.n_items)

    def recommend_histories(self, histories: Interactions, k: int) -> np.ndarray:
        out = []
        for u in range(histories.n_users):
            seen = set(histories.items[histories.users == u])
            rest = next((sorted(h - seen) for h in self.known if seen and seen <= h), [])
            out.append([*rest, *(i for i in self.order if i not in seen and i not in rest)][:k])
        return np.asarray(out, dtype=np.int64)


def test_halves_split_every_users_rows_into_a_query_and_a_hidden_half():
    data = _data()
    users = np.array([5, 2, 9])
    query, hidden = halves(data, users, seed=1)
    for j, u in enumerate(users):
        mine = set(data.items[data.users == u])
        q, h = set(query.items[query.users == j]), set(hidden.items[hidden.users == j])
        assert q | h == mine and not q & h
        assert len(q) == (len(mine) + 1) // 2
    other, _ = halves(data, users, seed=2)
    assert not np.array_equal(other.items, query.items)  # the split is drawn, seeded


def test_a_memorising_model_completes_its_members_histories_and_not_the_others():
    data = _data()
    members, never = np.arange(20), np.arange(20, 40)
    model = Memoriser(data, members)
    scores = completion(model, data, np.concatenate([members, never]), k=10, seed=0)
    assert np.all(scores[:20] == 1.0)  # each hidden half (6 items) is the top of the list
    assert scores[20:].mean() < 0.5
    labels = np.r_[np.ones(20), np.zeros(20)]
    assert roc_auc_score(labels, scores) > 0.95


def test_a_model_that_learned_nobody_gives_no_signal():
    data = _data()
    model = Memoriser(data, np.array([], dtype=np.int64))
    scores = completion(model, data, np.arange(40), k=10, seed=0)
    assert abs(roc_auc_score(np.r_[np.ones(20), np.zeros(20)], scores) - 0.5) < 0.25


@pytest.mark.parametrize("shadow_members_trained, sign", [(True, 1.0), (False, -1.0)])
def test_the_direction_is_learned_on_the_shadow_users(shadow_members_trained, sign):
    data = _data()
    target_users, shadow_users = np.arange(20), np.arange(20, 40)
    shadow_labels = np.r_[np.ones(10), np.zeros(10)]
    trained = shadow_users[:10] if shadow_members_trained else shadow_users[10:]
    target = Memoriser(data, target_users[:10])
    scores = completion_scores(target, data, target_users, 10, 0, (Memoriser(data, trained), data, shadow_users, shadow_labels))
    assert np.allclose(scores, sign * completion(target, data, target_users, 10, 0))
