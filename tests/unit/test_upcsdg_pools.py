"""UPC-SDG on candidate pools (issue 33): a sampled softmax in training, per-user pools at export.
Small cases are computed by hand; a pool holding the whole catalogue must give the paper's release."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
import torch

from recprivacy.data.synthetic import make_synthetic
from recprivacy.defenses.upcsdg import UPCSDG, FrozenEmbeddings, PrivacyPreferences
from recprivacy.defenses.upcsdg.model import AUTO_TRAIN_USERS
from recprivacy.defenses.upcsdg.candidates import NO_ITEM, CandidatePools, grouped_product, nearest_items
from recprivacy.defenses.upcsdg.generation import assign_replacements
from recprivacy.defenses.upcsdg.selection import PairBatch
from recprivacy.defenses.upcsdg.similarity import ItemSimilarity
from recprivacy.errors import ConfigError
from recprivacy.privacy.randomness import DrawRecord


@pytest.fixture(scope="module")
def train():
    return make_synthetic(n_users=40, n_items=80, n_interactions=800, seed=1)


@pytest.fixture(scope="module")
def embeddings(train) -> FrozenEmbeddings:
    g = torch.Generator().manual_seed(1)
    return FrozenEmbeddings(torch.randn(train.n_users, 8, generator=g), torch.randn(train.n_items, 8, generator=g), "random")


def _prefs(n: int) -> PrivacyPreferences:
    return PrivacyPreferences.uniform(n, 0.4, 0.5)


def test_grouped_product_by_hand():
    left = torch.tensor([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])   # pairs 0, 1 of group 0; pair 2 of group 1
    right = torch.tensor([[[1.0, 2.0], [3.0, 4.0]],             # group 0's candidates
                          [[5.0, 6.0], [7.0, 8.0]]])            # group 1's
    out = grouped_product(left, torch.tensor([0, 0, 1]), right, group=1)
    # pair 0: (1, 0)·(1, 2) = 1, (1, 0)·(3, 4) = 3; pair 1: 2, 4; pair 2: (1, 1)·(5, 6) = 11, 15
    assert out.tolist() == [[1.0, 3.0], [2.0, 4.0], [11.0, 15.0]]
    assert torch.equal(grouped_product(left, torch.tensor([0, 0, 1]), right, group=64), out)


def test_nearest_items_and_pools_by_hand():
    items = torch.tensor([[1.0, 0.0], [0.9, 0.1], [0.0, 1.0], [-1.0, 0.0], [0.5, 0.5]])
    near = nearest_items(items, 2)
    # item 0: dots with items 1..4 = 0.9, 0, -1, 0.5 -> [1, 4]; item 2: dots 0, 0.1, -0, 0.5 -> [4, 1]
    assert near[0].tolist() == [1, 4] and near[2].tolist() == [4, 1]
    csr = sp.csr_matrix((np.ones(2), ([0, 0], [0, 2])), shape=(2, 5))   # user 0 owns {0, 2}; user 1 owns nothing
    pools = CandidatePools.build(csr, items, size=4, rng=np.random.default_rng(0), neighbours_per_item=2)
    row0 = pools.items[0][pools.items[0] != NO_ITEM].tolist()
    assert not {0, 2} & set(row0) and len(set(row0)) == len(row0) and row0 == sorted(row0)
    assert {1, 4} <= set(row0) and len(row0) <= 4   # both neighbour slots: 1 and 4 (twice each); 2 draws
    assert pools.available([0]).sum().item() == len(row0)
    assert pools.embeddings([0], items).shape == (1, 4, 2)


def test_similarity_from_dots_equals_rows_on_any_candidates():
    items = torch.randn(12, 4, generator=torch.Generator().manual_seed(2))
    originals, candidates = torch.tensor([0, 5]), torch.tensor([[3, 7, 11], [1, 2, 0]])
    for mode in ("paper", "code", "cosine"):
        sim = ItemSimilarity(items, mode)
        dots = (sim.table[originals][:, None, :] * sim.table[candidates]).sum(-1)
        expected = sim.rows(originals).gather(1, candidates)
        assert torch.allclose(sim.from_dots(originals, dots, candidates), expected, atol=1e-6)


def test_assign_replacements_over_pools_maps_columns_to_items():
    # user 0's pool holds items [5, 2, 9] (padding last), user 1's [1, 3]; scores over the pool columns
    pools = CandidatePools(torch.tensor([[2, 5, 9, NO_ITEM], [1, 3, NO_ITEM, NO_ITEM]]))
    csr = sp.csr_matrix((2, 10))
    table = torch.tensor([[1.0, 3.0, 2.0, 9.0],    # best column 3 is padding -> column 1 = item 5
                          [1.0, 3.0, 2.0, 9.0],    # column 1 taken -> column 2 = item 9
                          [5.0, 1.0, 0.0, 0.0]])   # user 1: column 0 = item 1
    out = assign_replacements(np.array([0, 0, 1]), csr, lambda pairs: table[pairs].clone(), pools=pools)
    assert out.tolist() == [5, 9, 1]


def test_sampled_softmax_over_the_whole_catalogue_is_the_full_softmax(train, embeddings):
    model = UPCSDG(n_epochs=1, seed=0, pool_size=None).fit(train, embeddings, _prefs(train.n_users))
    batch = PairBatch.from_csr(model.csr_, np.arange(12))
    full = model._generator_losses(batch.pair_users, batch.items, torch.Generator().manual_seed(5))
    every = torch.arange(train.n_items)
    sampled = model._generator_losses(batch.pair_users, batch.items, torch.Generator().manual_seed(5), every)
    assert [x.item() for x in sampled] == [x.item() for x in full]


class _WholeCatalogue(UPCSDG):
    """Export over pools that hold every item each user has not interacted with."""

    def _export_pools(self, noise: DrawRecord) -> CandidatePools:
        owned = self.csr_.toarray() != 0
        table = np.full(owned.shape, NO_ITEM)
        for u, row in enumerate(owned):
            free = np.flatnonzero(~row)
            table[u, : len(free)] = free
        return CandidatePools(torch.from_numpy(table))


def test_a_pool_of_the_whole_catalogue_gives_the_paper_release(train, embeddings):
    gamma = np.where(np.arange(train.n_users) % 3 == 0, 0.05, 0.5)   # some pairs run out of candidates
    prefs = PrivacyPreferences(np.full(train.n_users, 0.5), gamma, np.ones(train.n_users, bool))
    full = UPCSDG(n_epochs=2, batch_users=8, seed=0, pool_size=None).fit(train, embeddings, prefs)
    pooled = _WholeCatalogue(n_epochs=2, batch_users=8, seed=0, pool_size=None).fit(train, embeddings, prefs)
    a, b = full.generate(), pooled.generate()
    assert len(a.dropped) > 0
    assert a.replacements.equals(b.replacements) and a.dropped.equals(b.dropped)


def test_pooled_release_keeps_every_promise(train, embeddings):
    gamma = np.where(np.arange(train.n_users) % 3 == 0, 0.1, 0.6)
    prefs = PrivacyPreferences(np.full(train.n_users, 0.4), gamma, np.ones(train.n_users, bool))
    model = UPCSDG(n_epochs=2, batch_users=8, seed=0, pool_size=16, noise="simulation").fit(train, embeddings, prefs)
    assert model.pool_ == 16
    release, pools = model.generate(), model._export_pools(DrawRecord(model.noise_source()))
    table, csr = release.replacements, train.to_csr()
    assert not table.duplicated(["user", "replacement_item"]).any()
    for u, v in table[["user", "replacement_item"]].itertuples(index=False):
        assert v in pools.items[u].tolist() and csr[u, v] == 0      # from the user's pool, never their own
    recomputed = model.similarity_.of_items(torch.tensor(table["original_item"].to_numpy()),
                                            torch.tensor(table["replacement_item"].to_numpy())).numpy()
    assert (recomputed <= gamma[table["user"]]).all()
    assert len(table) + len(release.dropped) == int(np.floor(0.4 * np.diff(csr.indptr) + 0.5 + 1e-9).sum())
    assert release.summary["method"]["pool_size"] == 16
    assert model.generate().replacements.equals(table)                 # simulation noise: the same pools again


def test_pool_size_settings():
    assert UPCSDG()._pool_width(1024) is None and UPCSDG()._pool_width(1025) == 512
    assert UPCSDG(candidates="authors")._pool_width(5000) is None
    assert UPCSDG(replacement="random")._pool_width(5000) is None
    assert UPCSDG(pool_size=100)._pool_width(100) is None and UPCSDG(pool_size=100)._pool_width(101) == 100
    assert UPCSDG(pool_size=None)._pool_width(10**6) is None
    with pytest.raises(ConfigError, match="pool_size: a pool needs"):
        UPCSDG(pool_size=64, candidates="authors")
    with pytest.raises(ConfigError, match="UPCSDG.pool_size"):
        UPCSDG(pool_size=0)


def test_training_on_a_sample_of_users_releases_every_user(train, embeddings):
    """``train_users=N`` trains on N seeded users (the same N for the same seed) and the release
    still replaces items of users outside the sample, each within the cap."""
    prefs = _prefs(train.n_users)
    model = UPCSDG(n_epochs=2, batch_users=8, seed=3, pool_size=16, train_users=10, noise="simulation")
    model.fit(train, embeddings, prefs)
    sample = model.trained_users_
    assert len(sample) == 10 and len(np.unique(sample)) == 10 and np.all(np.diff(sample) > 0)
    again = UPCSDG(n_epochs=2, batch_users=8, seed=3, pool_size=16, train_users=10, noise="simulation")
    assert np.array_equal(again.fit(train, embeddings, prefs).trained_users_, sample)
    release = model.generate()
    handled = set(release.replacements["user"].tolist()) | set(release.dropped["user"].tolist())
    assert handled == set(np.flatnonzero(model.counts_ > 0).tolist())   # every user with a selected item
    assert set(release.replacements["user"].tolist()) - set(sample.tolist())   # replaced outside the sample too
    assert release.summary["method"]["train_users"] == 10
    assert (release.replacements["f_sim"].dropna() <= 0.5 + 1e-9).all()


def test_train_users_settings(train, embeddings):
    active = int((train.user_counts() > 0).sum())
    assert UPCSDG(train_users=None)._sample_size(10**6) is None
    assert UPCSDG(train_users=50)._sample_size(50) is None and UPCSDG(train_users=50)._sample_size(51) == 50
    pooled, full = UPCSDG(pool_size=512), UPCSDG(pool_size=None)
    pooled.pool_, full.pool_ = 512, None
    assert pooled._sample_size(AUTO_TRAIN_USERS + 1) == AUTO_TRAIN_USERS and pooled._sample_size(AUTO_TRAIN_USERS) is None
    assert full._sample_size(10**6) is None                      # the paper path (pool_size: null) trains on every user
    model = UPCSDG(n_epochs=1, seed=0, pool_size=None).fit(train, embeddings, _prefs(train.n_users))
    assert len(model.trained_users_) == active and model.generate().summary["method"]["train_users"] == active
    with pytest.raises(ConfigError, match="UPCSDG.train_users"):
        UPCSDG(train_users=0)
