"""The federated protocol: local SGD, client sampling, aggregation, pseudo-gradients."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
import torch
import torch.nn.functional as F

from recprivacy.errors import ConfigError, RecPrivacyError
from recprivacy.federated.models import FEDERATED_MODELS, ITEM, make_federated_model
from recprivacy.federated.protocol import (
    ClientBatch,
    LocalTraining,
    aggregate,
    client_rng,
    client_schedule,
    local_update,
    pseudo_gradient,
    sample_clients,
)

N_USERS, N_ITEMS, D1, DIM = 6, 15, 5, 4


def _toy(seed: int = 0) -> tuple[sp.csr_matrix, np.ndarray]:
    rng = np.random.default_rng(seed)
    rows = [rng.choice(N_ITEMS, size=k, replace=False) for k in (3, 5, 1, 7, 2, 4)]
    csr = sp.csr_matrix(
        (np.ones(sum(map(len, rows))), (np.repeat(np.arange(N_USERS), [len(r) for r in rows]), np.concatenate(rows))),
        shape=(N_USERS, N_ITEMS),
    )
    x = rng.random((N_USERS, D1)).astype(np.float32)
    return csr, x


def _globals(model, seed: int = 1) -> dict[str, torch.Tensor]:
    return {k: v.double() for k, v in model.init_params(torch.Generator().manual_seed(seed), 0.3).items()}


def _reference_client(model, params, positives, x, cfg, seed, round_, user, private=None):
    """Plain autograd SGD of one client on the dense item table (the equations, no tricks)."""
    p = {k: v.clone().requires_grad_(True) for k, v in params.items()}
    if private is not None:
        p.update({k: v.clone().requires_grad_(True) for k, v in private.items()})
    sched = client_schedule(positives, model.n_items, cfg, client_rng(seed, round_, user, "train"))
    xt = torch.as_tensor(x, dtype=torch.float64)[None]
    for items, labels, valid in zip(sched.items, sched.labels, sched.valid):
        it = torch.as_tensor(items[valid])
        table = p[ITEM]
        mean = table[torch.as_tensor(positives)].mean(0)[None] if model.uses_neighbours else None
        small = {k: v[None] for k, v in p.items() if k != ITEM}
        logits = model.logits(small, xt, mean, table[it][None])
        loss = F.binary_cross_entropy_with_logits(logits[0], torch.as_tensor(labels[valid], dtype=torch.float64), reduction="sum")
        grads = torch.autograd.grad(loss, list(p.values()))
        with torch.no_grad():
            for v, g in zip(p.values(), grads):
                v -= cfg.lr * g
    return {k: v.detach() for k, v in p.items()}


@pytest.mark.parametrize("name", sorted(FEDERATED_MODELS))
def test_local_update_equals_plain_sgd_on_the_dense_table(name):
    csr, x = _toy()
    model = make_federated_model(name, N_ITEMS, D1, DIM)
    params = _globals(model)
    cfg = LocalTraining(lr=0.05, local_epochs=2, batch_size=3, n_negatives=2)
    users = np.array([1, 3, 4])
    batch = ClientBatch.select(users, x, csr)
    private = {s.name: torch.randn(len(users), *s.shape, dtype=torch.float64) for s in model.private_specs()}
    out = local_update(model, params, batch, cfg, seed=7, round_=2, private=private)
    for i, u in enumerate(users):
        ref = _reference_client(model, params, batch.positives(i), x[u], cfg, 7, 2, u,
                                {k: v[i] for k, v in private.items()} or None)
        for k in ref:
            torch.testing.assert_close(out[k][i], ref[k], rtol=1e-9, atol=1e-10)
        assert not torch.equal(out[ITEM][i], params[ITEM])


def test_batched_client_equals_the_same_client_trained_alone():
    csr, x = _toy(3)
    model = make_federated_model("fedrec", N_ITEMS, D1, DIM)
    params = _globals(model)
    cfg = LocalTraining(lr=0.02, local_epochs=3, batch_size=4, n_negatives=3)
    together = local_update(model, params, ClientBatch.select(np.arange(N_USERS), x, csr), cfg, 0, 5)
    alone = local_update(model, params, ClientBatch.select(np.array([3]), x, csr), cfg, 0, 5)
    for k in alone:
        torch.testing.assert_close(together[k][3], alone[k][0], rtol=1e-12, atol=1e-12)


def test_schedule_has_every_positive_and_q_fresh_negatives_each_epoch():
    positives = np.array([2, 5, 9])
    cfg = LocalTraining(local_epochs=2, batch_size=4, n_negatives=2)
    s = client_schedule(positives, 12, cfg, np.random.default_rng(0))
    per_epoch = 3  # ceil(3 * 3 / 4)
    assert s.items.shape == (2 * per_epoch, 4)
    for e in range(2):
        sl = slice(e * per_epoch, (e + 1) * per_epoch)
        items, labels, valid = s.items[sl][s.valid[sl]], s.labels[sl][s.valid[sl]], s.valid[sl]
        assert valid.sum() == 9
        assert sorted(items[labels == 1]) == [2, 5, 9]
        negatives = items[labels == 0]
        assert len(negatives) == 6 and not np.isin(negatives, positives).any()


def test_sample_clients_is_seeded_sorted_and_checked():
    a = sample_clients(10, 4, seed=3, round_=1)
    assert np.array_equal(a, sample_clients(10, 4, seed=3, round_=1))
    assert np.all(np.diff(a) > 0) and len(a) == 4
    assert not np.array_equal(a, sample_clients(10, 4, seed=3, round_=2))
    with pytest.raises(ConfigError, match="clients per round"):
        sample_clients(10, 11, seed=0, round_=1)


def test_aggregate_is_the_unweighted_mean_and_identity_on_equal_uploads():
    w = torch.tensor([[1.0, 2.0], [3.0, 6.0]])
    assert torch.equal(aggregate({"w": w})["w"], torch.tensor([2.0, 4.0]))
    same = torch.ones(3, 2, 2) * 0.7
    assert torch.equal(aggregate({"w": same})["w"], same[0])


def test_aggregate_refuses_a_non_finite_upload_and_names_round_parameter_and_client():
    ok = {"w": torch.ones(3, 2), "b": torch.zeros(3)}
    ok["b"][2] = float("nan")
    with pytest.raises(RecPrivacyError, match=r"round 7: 1 client\(s\) uploaded non-finite 'b' \(first: client 42\)"):
        aggregate(ok, np.array([5, 9, 42]), 7)
    ok["b"][2] = 0.0
    ok["w"][0, 1] = float("inf")
    with pytest.raises(RecPrivacyError, match="'w' .first: client 5.; local training diverged"):
        aggregate(ok, np.array([5, 9, 42]), 1)
    ok["w"][2, 1] = -float("inf")  # opposite infinities: the mean is NaN, both clients are named
    with pytest.raises(RecPrivacyError, match=r"2 client\(s\) uploaded non-finite 'w' \(first: client 5\)"):
        aggregate(ok, np.array([5, 9, 42]), 1)


def test_aggregate_names_no_client_when_finite_uploads_overflow_the_mean():
    """Only a non-finite upload is refused: finite values whose sum overflows float32 are
    averaged as they are (every upload was searched, none was at fault)."""
    big = torch.full((2, 1), 3e38)
    assert torch.isinf(aggregate({"w": big})["w"]).all()


def test_simulator_round_names_the_client_whose_local_training_diverged():
    from recprivacy.data.interactions import Interactions
    from recprivacy.federated.simulator import FederatedSimulator

    users, items = np.repeat(np.arange(6), 3), np.array([0, 1, 2, 3, 4, 5, 1, 6, 7, 2, 8, 9, 0, 4, 7, 3, 5, 9])
    train = Interactions(users, items, 6, 10)
    model = make_federated_model("fedmf", 10, 1, 4)
    sim = FederatedSimulator(model, train, np.zeros((6, 1), np.float32), LocalTraining(0.05, 1, 4, 1), 1.0, seed=0, init_std=0.1)
    sim.private["P_u"][3] = float("nan")  # user 3 diverged: its item-row gradients are NaN
    before = {k: v.clone() for k, v in sim.params.items()}
    with pytest.raises(RecPrivacyError, match=r"round 1: 1 client\(s\) uploaded non-finite 'item' \(first: client 3\)"):
        sim.run_round()
    assert all(torch.equal(sim.params[k], v) for k, v in before.items())  # the global model was not averaged with NaN


def test_pseudo_gradient_is_global_minus_upload_over_lr():
    g = {"w": torch.tensor([1.0, 1.0])}
    up = {"w": torch.tensor([[0.5, 1.0], [1.0, 2.0]])}
    assert torch.allclose(pseudo_gradient(g, up, 0.5)["w"], torch.tensor([[1.0, 0.0], [0.0, -2.0]]))


def test_local_training_rejects_bad_settings():
    with pytest.raises(ConfigError, match="lr"):
        LocalTraining(lr=0)
    with pytest.raises(ConfigError, match="batch_size"):
        LocalTraining(batch_size=0)
