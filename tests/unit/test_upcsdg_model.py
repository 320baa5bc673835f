"""UPCSDG end to end on tiny data: what the release must guarantee, and the variants."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from recprivacy.data.interactions import Interactions
from recprivacy.data.loaders.recbole import load_recbole
from recprivacy.data.synthetic import make_synthetic
from recprivacy.data.loaders.lightgcn import load_lightgcn
from recprivacy.defenses.upcsdg import UPCSDG, FrozenEmbeddings, PrivacyPreferences, write_release
from recprivacy.defenses.upcsdg.release import public_data
from recprivacy.defenses.upcsdg.selection import PairBatch
from recprivacy.errors import ConfigError, DataError, NotFittedError


@pytest.fixture(scope="module")
def train() -> Interactions:
    return make_synthetic(n_users=50, n_items=80, n_interactions=1000, seed=0)


@pytest.fixture(scope="module")
def embeddings(train) -> FrozenEmbeddings:
    g = torch.Generator().manual_seed(0)
    return FrozenEmbeddings(torch.randn(train.n_users, 8, generator=g), torch.randn(train.n_items, 8, generator=g), "random")


def _prefs(train: Interactions, k: float = 0.4, gamma: float = 0.5) -> PrivacyPreferences:
    return PrivacyPreferences.uniform(train.n_users, k, gamma)


def _sets(data: Interactions) -> list[set[int]]:
    csr = data.to_csr()
    return [set(csr.indices[csr.indptr[u] : csr.indptr[u + 1]].tolist()) for u in range(data.n_users)]


@pytest.fixture(scope="module")
def fitted(train, embeddings) -> UPCSDG:
    k = np.where(np.arange(train.n_users) % 2 == 0, 0.2, 0.8)
    prefs = PrivacyPreferences(k, np.full(train.n_users, 0.5), np.ones(train.n_users, bool))
    return UPCSDG(n_epochs=3, batch_users=16, max_pairs=64, seed=0).fit(train, embeddings, prefs)


def test_release_replaces_exactly_round_k_items_without_duplicates(train, fitted):
    release = fitted.generate()
    original, synthetic = _sets(train), _sets(release.data)
    sizes = np.array([len(s) for s in original])
    expected = np.floor(fitted.preferences_.k * sizes + 0.5 + 1e-9).astype(int)
    table = release.replacements
    assert np.bincount(table["user"], minlength=train.n_users).tolist() == expected.tolist()
    for u in range(train.n_users):
        rows = table[table["user"] == u]
        new = set(rows["replacement_item"])
        assert len(new) == len(rows)                       # no duplicate replacement within a user
        assert not new & original[u]                       # never an item the user has (incl. the replaced one)
        assert synthetic[u] == (original[u] - set(rows["original_item"])) | new
        assert len(synthetic[u]) == len(original[u])       # |V_u| = |I_u|
    assert len(release.data) == sum(sizes)
    assert release.data.ratings is None and release.data.timestamps is None and release.data.user_features is None
    assert release.per_user["n_replaced"].tolist() == expected.tolist()


def test_kept_items_are_the_highest_attention_ones(train, fitted, embeddings):
    release = fitted.generate()
    batch = PairBatch.from_csr(train.to_csr(), np.arange(train.n_users))
    with torch.no_grad():
        logits = fitted.selector_.eval().logits(embeddings.users[batch.pair_users], embeddings.items[batch.items])
    table = release.replacements
    replaced = set(zip(table["user"], table["original_item"]))
    is_replaced = np.array([(u, i) in replaced for u, i in zip(batch.pair_users.tolist(), batch.items.tolist())])
    for u in range(train.n_users):
        mine = batch.pair_users.numpy() == u
        if is_replaced[mine].any() and (~is_replaced[mine]).any():
            assert logits[mine][is_replaced[mine]].max() <= logits[mine][~is_replaced[mine]].min()


def test_embeddings_stay_frozen_and_export_is_deterministic(train, embeddings):
    before = (embeddings.users.clone(), embeddings.items.clone())
    model = UPCSDG(n_epochs=2, batch_users=16, seed=3).fit(train, embeddings, _prefs(train))
    assert torch.equal(embeddings.users, before[0]) and torch.equal(embeddings.items, before[1])
    first, second = model.generate(), model.generate()
    assert first.replacements.equals(second.replacements)
    again = UPCSDG(n_epochs=2, batch_users=16, seed=3).fit(train, embeddings, _prefs(train)).generate()
    assert again.replacements.equals(first.replacements)
    assert model.history_.losses and len(model.history_.losses) == 2


def test_gradients_of_the_two_losses_reach_disjoint_modules(train, embeddings):
    model = UPCSDG(n_epochs=1, seed=0).fit(train, embeddings, _prefs(train))
    batch = PairBatch.from_csr(model.csr_, np.arange(10))
    for module in (model.selector_, model.generator_):
        module.zero_grad(set_to_none=True)
    loss_d, _ = model.selector_(embeddings.users, embeddings.items, batch)
    loss_d.backward()
    assert all(p.grad is not None and p.grad.abs().sum() > 0 for p in model.selector_.w1.parameters())
    assert all(p.grad is None for p in model.generator_.parameters())
    model.selector_.zero_grad(set_to_none=True)
    loss_s, loss_g = model._generator_losses(batch.pair_users[:20], batch.items[:20], torch.Generator().manual_seed(0))
    (3 * loss_s + loss_g).backward()
    assert model.generator_.linear.weight.grad.abs().sum() > 0
    assert all(p.grad is None for p in model.selector_.parameters())


def test_training_lowers_the_similarity_hinge_under_a_small_gamma(train, embeddings):
    """The soft hinge L_s trains the generator towards the cap (the export then enforces it)."""
    hinge = {}
    for lr, epochs in ((1e-9, 1), (1e-2, 30)):
        model = UPCSDG(n_epochs=epochs, lr=lr, seed=0, lambda_g=0.0).fit(train, embeddings, _prefs(train, 0.5, 0.1))
        batch = PairBatch.from_csr(model.csr_, np.arange(train.n_users))
        model.generator_.eval()
        with torch.no_grad():
            hinge[lr] = model._generator_losses(batch.pair_users, batch.items, torch.Generator().manual_seed(0))[0].item()
        assert model.generate().summary["max_f_sim"] <= 0.1
    assert hinge[1e-2] < hinge[1e-9] - 0.1  # measured: 0.18 against 0.43


def test_ablations_and_gumbel_export(train, embeddings):
    prefs = _prefs(train, 0.5, 0.9)
    random_sel = UPCSDG(n_epochs=1, selection="random", seed=0).fit(train, embeddings, prefs)
    assert random_sel.selector_ is None and random_sel.generator_ is not None
    random_rep = UPCSDG(n_epochs=1, replacement="random", seed=0).fit(train, embeddings, prefs)
    assert random_rep.generator_ is None
    fixed = UPCSDG(n_epochs=1, replacement="fixed", fixed_similarity=0.9, seed=0).fit(train, embeddings, prefs)
    fixed_gap = (fixed.generate().replacements["f_sim"] - 0.9).abs().mean()
    random_gap = (random_rep.generate().replacements["f_sim"] - 0.9).abs().mean()
    assert fixed_gap < random_gap
    sampled = UPCSDG(n_epochs=1, export_sampling="gumbel", seed=0).fit(train, embeddings, prefs)
    argmax = UPCSDG(n_epochs=1, seed=0).fit(train, embeddings, prefs)
    assert not sampled.generate().replacements["replacement_item"].equals(argmax.generate().replacements["replacement_item"])
    for variant in (random_sel, random_rep, fixed, sampled):
        table = variant.generate().replacements
        assert not table.duplicated(["user", "replacement_item"]).any()


def test_release_randomness_is_secure_unless_simulated(train, embeddings):
    """Gumbel export sampling is a random choice at release: OS entropy by default, seeded only
    in simulation mode; the release says which."""
    prefs = _prefs(train, 0.5, 0.9)
    secure = UPCSDG(n_epochs=1, export_sampling="gumbel", seed=0).fit(train, embeddings, prefs)
    first = secure.generate()
    assert not first.replacements["replacement_item"].equals(secure.generate().replacements["replacement_item"])
    assert first.summary["method"]["noise"] == "secure: operating-system entropy"
    simulated = UPCSDG(n_epochs=1, export_sampling="gumbel", seed=0, noise="simulation").fit(train, embeddings, prefs)
    release = simulated.generate()
    assert release.replacements["replacement_item"].equals(simulated.generate().replacements["replacement_item"])
    assert release.summary["method"]["noise"].startswith("simulation (seeded, not protection): seed 0")


def test_authors_masking_lets_replacements_collapse(train, embeddings):
    prefs = _prefs(train, 0.8, 0.9)
    ours = UPCSDG(n_epochs=2, lambda_s=0.0, seed=0).fit(train, embeddings, prefs).generate()
    theirs_model = UPCSDG(n_epochs=2, lambda_s=0.0, candidates="authors", seed=0).fit(train, embeddings, prefs)
    theirs = theirs_model.generate()
    assert len(theirs.replacements) == len(ours.replacements)       # same number of replaced pairs
    table = theirs.replacements
    repeats = table.duplicated(["user", "replacement_item"]).sum()
    own = sum(r in s for r, s in zip(table["replacement_item"], [_sets(train)[u] for u in table["user"]]))
    assert repeats + own > 0                                         # the utility term pulls onto the same items
    assert len(theirs.data) < len(ours.data) == len(train)           # and they collapse in the release
    assert theirs.summary["method"]["candidates"] == "authors"
    with pytest.raises(ConfigError, match="candidates"):
        UPCSDG(candidates="none")


def _original_pairs(data: Interactions) -> set[tuple[int, int]]:
    return set(zip(data.user_ids[data.users].tolist(), data.item_ids[data.items].tolist()))


def test_export_round_trips_through_the_atomic_file_reader(tmp_path, train, fitted):
    release = fitted.generate()
    written = write_release(release, tmp_path / "out", "toy-synthetic", {"seed": 0})
    public, private = written["public"], written["private"]
    assert sorted(p.name for p in public.iterdir()) == ["item_list.txt", "toy-synthetic.inter", "toy-synthetic.item",
                                                        "train.txt", "user_list.txt"]
    assert sorted(p.name for p in private.iterdir()) == ["config.yaml", "dropped.csv", "privacy_per_user.csv",
                                                         "privacy_summary.json", "replacements.csv"]
    assert private.stat().st_mode & 0o077 == 0                       # the owner's eyes only
    loaded = load_recbole(public / "toy-synthetic.inter")
    assert _original_pairs(loaded) == _original_pairs(release.data)
    reread = load_lightgcn(public)  # train.txt with user_list.txt / item_list.txt
    assert _original_pairs(reread) == _original_pairs(release.data)
    assert (private / "replacements.csv").read_text().startswith("user,user_id,original_item")
    assert not list((tmp_path / "out").glob(".*"))  # no temporary files left behind
    with pytest.raises(ConfigError, match="already holds private, public"):
        write_release(release, tmp_path / "out")


def test_public_id_maps_hold_only_what_the_synthetic_data_holds():
    # user 20 has no synthetic interaction, items 100 and 300 are in no one's; internal ids are not in id order
    data = Interactions(users=np.array([1, 0, 0, 1]), items=np.array([0, 2, 4, 4]), n_users=3, n_items=5,
                        user_ids=np.array([30, 10, 20]), item_ids=np.array([500, 100, 400, 300, 200]))
    out = public_data(data)
    assert out.user_ids.tolist() == [10, 30] and out.item_ids.tolist() == [200, 400, 500]
    assert _original_pairs(out) == _original_pairs(data)
    # rows sorted by (user, item): 10 -> {500, 200}, 30 -> {400, 200}
    assert list(zip(out.users.tolist(), out.items.tolist())) == [(0, 0), (0, 2), (1, 0), (1, 1)]


def test_bad_settings_and_unfitted_use(train, embeddings):
    with pytest.raises(ConfigError, match="UPCSDG.selection"):
        UPCSDG(selection="best")
    with pytest.raises(ConfigError, match="UPCSDG.tau"):
        UPCSDG(tau=0)
    with pytest.raises(NotFittedError):
        UPCSDG().generate()
    with pytest.raises(DataError, match="preferences cover 3 users"):
        UPCSDG().fit(train, embeddings, PrivacyPreferences.uniform(3, 0.2, 0.5))
    small = FrozenEmbeddings(torch.zeros(2, 8), torch.zeros(80, 8), "small")
    with pytest.raises(DataError, match="embeddings cover 2 users"):
        UPCSDG().fit(train, small, _prefs(train))


def test_a_user_without_enough_free_items_is_an_error():
    crowded = Interactions(users=np.array([0, 0, 0, 1]), items=np.array([0, 1, 2, 0]), n_users=2, n_items=4)
    emb = FrozenEmbeddings(torch.randn(2, 4), torch.randn(4, 4), "r")
    with pytest.raises(DataError, match="user 0 has 3 of 4 items; replacing 2"):
        UPCSDG(n_epochs=1).fit(crowded, emb, PrivacyPreferences.uniform(2, 0.6, 0.5))


def test_external_state_dict_embeddings(tmp_path, train):
    path = tmp_path / "mf.pth.tar"
    torch.save({"embedding_user.weight": torch.ones(train.n_users, 4), "embedding_item.weight": torch.ones(train.n_items, 4)}, path)
    emb = FrozenEmbeddings.load(path).check(train)
    assert emb.dim == 4
    torch.save({"user": torch.ones(2, 2)}, tmp_path / "bad.pt")
    with pytest.raises(DataError, match=r"missing key\(s\) \['embedding_user.weight'"):
        FrozenEmbeddings.load(tmp_path / "bad.pt")


def test_privacy_statement_says_no_formal_guarantee():
    statement = UPCSDG().privacy_statement()
    assert not statement.formal and "No formal" in str(statement)


def test_gamma_is_a_hard_cap_and_a_pair_without_candidate_is_dropped(train, embeddings):
    gamma = np.where(np.arange(train.n_users) % 3 == 0, 0.05, 0.5)   # a third of the users ask for 0.05
    prefs = PrivacyPreferences(np.full(train.n_users, 0.6), gamma, np.ones(train.n_users, bool))
    model = UPCSDG(n_epochs=2, batch_users=16, seed=0).fit(train, embeddings, prefs)
    release = model.generate()
    table, dropped, original = release.replacements, release.dropped, _sets(train)
    similarity = model.similarity_
    recomputed = similarity.of_items(torch.tensor(table["original_item"].to_numpy()),
                                     torch.tensor(table["replacement_item"].to_numpy())).numpy()
    assert (recomputed <= gamma[table["user"]]).all()                  # never above the user's own cap
    assert len(dropped) and set(gamma[dropped["user"]]) == {0.05}      # the tiny caps ran out of candidates
    for u, item, order in dropped[["user", "original_item", "order"]].itertuples(index=False):
        earlier = table[(table["user"] == u) & (table["order"] < order)]["replacement_item"]
        free = np.setdiff1d(np.arange(train.n_items), [*original[u], *earlier])
        assert (similarity.rows(torch.tensor([item]))[0, free].numpy() > gamma[u]).all()  # truly none was left
    synthetic = _sets(release.data)
    for u in range(train.n_users):
        removed = set(table[table["user"] == u]["original_item"]) | set(dropped[dropped["user"] == u]["original_item"])
        assert synthetic[u] == (original[u] - removed) | set(table[table["user"] == u]["replacement_item"])
    per_user, expected = release.per_user, np.floor(0.6 * np.array([len(s) for s in original]) + 0.5 + 1e-9)
    assert (per_user["n_replaced"] + per_user["n_dropped"]).tolist() == expected.astype(int).tolist()
    assert per_user["n_dropped"].sum() == release.summary["dropped_interactions"] == len(dropped)
    assert release.summary["users_with_drops"] == dropped["user"].nunique()
    assert release.pairs_matrix("original_item").nnz == len(table) + len(dropped)
