"""F-GERAI, F-GERAI-NL and F-DPMF (paper 004's objective-perturbation baselines)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
import torch
import torch.nn.functional as F
from scipy import stats

from recprivacy.data.interactions import Interactions
from recprivacy.defenses.federated_dp import (
    FEATURES_PART,
    OBJECTIVE_PART,
    FeatureLDP,
    FunctionalMechanism,
    ItemObjectiveNoise,
    make_baseline,
    taylor_coefficients,
)
from recprivacy.errors import ConfigError
from recprivacy.federated.features import user_features
from recprivacy.federated.models import ITEM, make_federated_model
from recprivacy.federated.protocol import (ClientBatch, LocalTraining, Schedule, client_features, client_noise, client_rng,
                                           client_schedule, local_update)
from recprivacy.federated.simulator import FederatedSimulator
from recprivacy.privacy import NoiseSource, StatementContext

N_USERS, N_ITEMS, D1, DIM = 5, 14, 6, 4


def _toy(seed: int = 0) -> tuple[sp.csr_matrix, np.ndarray]:
    rng = np.random.default_rng(seed)
    rows = [rng.choice(N_ITEMS, size=k, replace=False) for k in (4, 6, 2, 5, 3)]
    users = np.repeat(np.arange(N_USERS), [len(r) for r in rows])
    csr = sp.csr_matrix((np.ones(len(users)), (users, np.concatenate(rows))), shape=(N_USERS, N_ITEMS))
    return csr, rng.random((N_USERS, D1)).astype(np.float32)


def test_taylor_coefficients_are_the_hand_computed_ones():
    a0, a1, a2 = taylor_coefficients(np.array([1.0, 0.0]))
    assert a0 == pytest.approx(0.693147, abs=1e-6) and a2 == 0.125
    assert a1.tolist() == [-0.5, 0.5]
    assert taylor_coefficients(np.array([1.0]), 0.3)[1].tolist() == [pytest.approx(-0.2)]
    # loss at s = (2, -1), r = (1, 0), no noise: (log2 - 1 + 0.5) + (log2 - 0.5 + 0.125)
    fm = FunctionalMechanism()
    loss = fm.loss(torch.tensor([[2.0, -1.0]]), torch.tensor([[1.0, 0.0]]), torch.ones(1, 2), None)
    assert loss.item() == pytest.approx(2 * math.log(2) - 0.875, abs=1e-6)
    # near s = 0 the expansion is the BCE up to O(s^3)
    s = torch.tensor([[0.1]])
    bce = F.binary_cross_entropy_with_logits(s, torch.ones(1, 1)).item()
    assert fm.loss(s, torch.ones(1, 1), torch.ones(1, 1), None).item() == pytest.approx(bce, abs=1e-4)
    # the noise only shifts the linear coefficient: d loss / d s = 1/2 - r + eta + s/4
    s = torch.tensor([[0.4]], requires_grad=True)
    fm.loss(s, torch.ones(1, 1), torch.ones(1, 1), torch.tensor([[0.7]])).backward()
    assert s.grad.item() == pytest.approx(0.5 - 1 + 0.7 + 0.1)


def test_functional_mechanism_noise_is_laplace_with_the_configured_scale_and_zero_on_padding():
    fm = FunctionalMechanism(epsilon=0.5, sensitivity=1.0)
    valid = np.ones((400, 250), bool)
    valid[:, -10:] = False
    sched = Schedule(np.zeros(valid.shape, np.int64), np.zeros(valid.shape, np.float32), valid)
    noise = fm.draw(sched.valid, 10, 4, np.random.default_rng(0)).slots
    assert (noise[~valid] == 0).all()
    body = noise[valid]
    assert abs(body.mean()) < 0.03
    assert body.var() == pytest.approx(2 * (1.0 / 0.5) ** 2, rel=0.03)  # Var Lap(b) = 2 b^2, b = 2
    assert stats.kstest(body, "laplace", args=(0.0, 2.0)).pvalue > 1e-3


def test_dpmf_noise_norm_is_gamma_and_direction_uniform():
    obj = ItemObjectiveNoise(epsilon=40.0, sensitivity=2.0)
    eta = obj.draw(None, 20000, 8, np.random.default_rng(1)).items
    norms = np.linalg.norm(eta, axis=1)
    scale = 2.0 / 40.0
    assert norms.mean() == pytest.approx(8 * scale, rel=0.02)  # Gamma(d, Δ/ε): mean d Δ/ε
    assert norms.var() == pytest.approx(8 * scale**2, rel=0.05)  # variance d (Δ/ε)^2
    assert stats.kstest(norms, "gamma", args=(8, 0.0, scale)).pvalue > 1e-3
    directions = eta / norms[:, None]
    assert np.abs(directions.mean(axis=0)).max() < 0.02
    assert directions.var(axis=0) == pytest.approx(np.full(8, 1 / 8), rel=0.05)


def test_feature_ldp_laplace_on_numeric_columns_and_k_rr_on_blocks():
    n = 6000
    x = np.zeros((n, 6), np.float32)
    x[:, 0] = 0.25
    x[:, 1] = 1.7  # out of range: clipped to 1 before the noise
    gender = np.arange(n) % 2
    x[np.arange(n), 2 + gender] = 1.0
    age = np.arange(n) % 2  # classes 0 and 1 of 2..?
    x[np.arange(n), 4 + age] = 1.0
    ldp = FeatureLDP(epsilon=1.0, blocks={"gender": (2, 3), "age": (4, 5)}, clip_output=False)
    out = client_features(x, np.arange(n), NoiseSource("simulation", 3), ldp)
    assert out[:, 0].mean() == pytest.approx(0.25, abs=0.05) and out[:, 0].var() == pytest.approx(2.0, rel=0.06)
    assert out[:, 1].mean() == pytest.approx(1.0, abs=0.05)
    # by default the noisy values are clipped back to [0, 1] (post-processing)
    clipped = client_features(x, np.arange(n), NoiseSource("simulation", 3), FeatureLDP(epsilon=1.0, blocks={"gender": (2, 3), "age": (4, 5)}))
    assert np.array_equal(clipped[:, :2], np.clip(out[:, :2], 0, 1)) and np.array_equal(clipped[:, 2:], out[:, 2:])
    for cols, truth in (((2, 3), gender), ((4, 5), age)):
        block = out[:, list(cols)]
        assert np.array_equal(block.sum(axis=1), np.ones(n)) and np.isin(block, (0, 1)).all()
        kept = (block.argmax(axis=1) == truth).mean()
        assert kept == pytest.approx(math.e / (math.e + 1), abs=0.02)
    assert ldp.keep_probability("gender") == pytest.approx(math.e / (math.e + 1))
    # per-user streams: a user's report does not depend on who else is perturbed
    assert np.array_equal(client_features(x[[7]], np.array([7]), NoiseSource("simulation", 3), ldp), out[[7]])


def _reference(model, params, private, positives, x, cfg, seed, round_, user, loss_fn, eta=None):
    """Plain autograd SGD of one client on the dense table with an explicit objective."""
    p = {k: v.clone().requires_grad_(True) for k, v in {**params, **private}.items()}
    sched = client_schedule(positives, model.n_items, cfg, client_rng(seed, round_, user, "train"))
    per_epoch = sched.valid.sum() / cfg.local_epochs
    xt = torch.as_tensor(x, dtype=torch.float64)[None]
    for s, (items, labels, valid) in enumerate(zip(sched.items, sched.labels, sched.valid)):
        table = p[ITEM]
        mean = table[torch.as_tensor(positives)].mean(0)[None] if model.uses_neighbours else None
        small = {k: v[None] for k, v in p.items() if k != ITEM}
        logits = model.logits(small, xt, mean, table[torch.as_tensor(items)][None])
        loss = loss_fn(s, logits, torch.as_tensor(labels, dtype=torch.float64)[None], torch.as_tensor(valid, dtype=torch.float64)[None])
        if eta is not None:
            loss = loss + (valid.sum() / per_epoch) * (eta * table).sum()
        grads = torch.autograd.grad(loss, list(p.values()))
        with torch.no_grad():
            for v, g in zip(p.values(), grads):
                v -= cfg.lr * g
    return {k: v.detach() for k, v in p.items()}


def _params(model, seed=2):
    return {k: v.double() for k, v in model.init_params(torch.Generator().manual_seed(seed), 0.3).items()}


@pytest.mark.parametrize("model_name", ["fedrec", "fedncf"])
def test_functional_mechanism_local_update_is_sgd_on_the_perturbed_taylor_objective(model_name):
    csr, x = _toy()
    model = make_federated_model(model_name, N_ITEMS, D1, DIM)
    params = _params(model)
    cfg = LocalTraining(lr=0.05, local_epochs=2, batch_size=3, n_negatives=2)
    fm = FunctionalMechanism(epsilon=1.0)
    users = np.array([0, 1, 3])
    out = local_update(model, params, ClientBatch.select(users, x, csr), cfg, seed=4, round_=3, objective=fm,
                       noise=NoiseSource("simulation", 4))
    plain = local_update(model, params, ClientBatch.select(users, x, csr), cfg, seed=4, round_=3)
    for i, u in enumerate(users):
        positives = csr.indices[csr.indptr[u] : csr.indptr[u + 1]].astype(np.int64)
        sched = client_schedule(positives, N_ITEMS, cfg, client_rng(4, 3, u, "train"))
        slots = torch.as_tensor(fm.draw(sched.valid, N_ITEMS, DIM, client_noise(NoiseSource("simulation", 4), 3, u, "objective")).slots)
        ref = _reference(model, params, {}, positives, x[u], cfg, 4, 3, u,
                         lambda s, lg, lb, v: fm.loss(lg, lb, v, slots[s][None]))  # fmt: skip
        for k in ref:
            torch.testing.assert_close(out[k][i], ref[k], rtol=1e-9, atol=1e-10)
        assert not torch.allclose(out["E_U"][i], plain["E_U"][i])


def test_dpmf_local_update_is_sgd_on_bce_plus_the_linear_item_term():
    csr, x = _toy(1)
    model = make_federated_model("fedmf", N_ITEMS, D1, DIM)
    params = _params(model)
    cfg = LocalTraining(lr=0.05, local_epochs=2, batch_size=4, n_negatives=2)
    obj = ItemObjectiveNoise(epsilon=5.0)
    users = np.array([0, 2, 4])
    private = {"P_u": torch.randn(len(users), DIM, dtype=torch.float64, generator=torch.Generator().manual_seed(0))}
    out = local_update(model, params, ClientBatch.select(users, x, csr), cfg, seed=9, round_=2, private=private, objective=obj,
                       noise=NoiseSource("simulation", 9))
    for i, u in enumerate(users):
        positives = csr.indices[csr.indptr[u] : csr.indptr[u + 1]].astype(np.int64)
        eta = torch.as_tensor(obj.draw(None, N_ITEMS, DIM, client_noise(NoiseSource("simulation", 9), 0, u, "objective")).items)  # round 0
        ref = _reference(model, params, {"P_u": private["P_u"][i]}, positives, x[u], cfg, 9, 2, u,
                         lambda s, lg, lb, v: (F.binary_cross_entropy_with_logits(lg, lb, reduction="none") * v).sum(), eta)
        for k in ref:
            torch.testing.assert_close(out[k][i], ref[k], rtol=1e-9, atol=1e-10)
        # every row of the table moves (the linear term), not only the scored ones
        assert (out[ITEM][i] != params[ITEM]).all()


def _train() -> Interactions:
    rng = np.random.default_rng(0)
    users = np.repeat(np.arange(8), 6)
    items = np.concatenate([rng.choice(15, 6, replace=False) for _ in range(8)])
    feats = {"gender": np.array(list("MFMFMFMM")), "age": np.array([20, 30, 40, 50, 25, 37, 61, 18])}
    return Interactions(users, items, 8, 15, ratings=rng.integers(1, 6, 48).astype(float), user_features=pd.DataFrame(feats))


def test_fgerai_nl_leaves_features_untouched_and_fgerai_randomises_them():
    train = _train()
    feats = user_features(train)
    model = make_federated_model("fedrec", train.n_items, feats.dim, 4)
    local = LocalTraining(lr=0.05, local_epochs=1, batch_size=4, n_negatives=1)
    nl = make_baseline("fgerai_nl", feats.blocks)
    assert nl.features is None
    sim = FederatedSimulator(model, train, feats.x, local, 4, seed=1, objective=nl.objective, feature_privacy=nl.features, init_std=0.3)
    assert np.array_equal(sim.features, feats.x)
    full = make_baseline("fgerai", feats.blocks)
    sim2 = FederatedSimulator(model, train, feats.x, local, 4, seed=1, objective=full.objective, feature_privacy=full.features, init_std=0.3)
    assert not np.array_equal(sim2.features, feats.x)
    for cols in feats.blocks.values():
        assert np.array_equal(sim2.features[:, cols].sum(axis=1), np.ones(train.n_users))


def _baseline_run(name: str, train: Interactions) -> tuple[FederatedSimulator, object]:
    """A seeded 4-client simulator of baseline ``name`` on ``train`` (2 local epochs)."""
    feats = user_features(train)
    baseline = make_baseline(name, feats.blocks)
    model = make_federated_model(baseline.model or "fedrec", train.n_items, feats.dim, 4)
    local = LocalTraining(lr=0.01, local_epochs=2, batch_size=4, n_negatives=1)
    sim = FederatedSimulator(model, train, feats.x, local, 4, seed=5, objective=baseline.objective,
                             feature_privacy=baseline.features, init_std=0.1, noise="simulation")
    return sim, baseline


@pytest.mark.parametrize("name", ["fgerai", "fgerai_nl", "fdpmf"])
def test_baselines_give_the_features_and_uploads_recorded_before_the_layering_refactor(name):
    """``golden/private_training_seed0.json`` (recorded at 3438802, when the defences still
    imported the protocol): same randomised features and second-round uploads."""
    items = np.concatenate([np.random.default_rng(0).choice(15, 6, replace=False) for _ in range(8)])
    feats = {"gender": np.array(list("MFMFMFMM")), "age": np.array([20, 30, 40, 50, 25, 37, 61, 18])}
    train = Interactions(np.repeat(np.arange(8), 6), items, 8, 15, ratings=np.random.default_rng(5).integers(1, 6, 48).astype(float),
                         user_features=pd.DataFrame(feats))
    sim, _ = _baseline_run(name, train)
    sim.run_round()
    uploads = sim.run_round().uploads
    golden = json.loads((Path(__file__).parent / "golden" / "private_training_seed0.json").read_text())[name]
    np.testing.assert_array_equal(np.asarray(sim.features, np.float64).ravel(), golden["features"])
    assert set(uploads) == set(golden["uploads"])
    for key, value in uploads.items():
        np.testing.assert_array_equal(value.double().ravel().numpy(), golden["uploads"][key], err_msg=key)


@pytest.mark.parametrize("name", ["fgerai", "fgerai_nl", "fdpmf"])
def test_uploads_carry_no_added_noise(name):
    sim, baseline = _baseline_run(name, _train())
    model, local = sim.model, sim.local
    before = {k: v.clone() for k, v in sim.params.items()}
    private = {k: v.clone() for k, v in sim.private.items()}
    up = sim.run_round()
    batch = ClientBatch.select(up.users, sim.features, sim.train_csr)
    trained = local_update(model, before, batch, local, 5, 1, {k: v[up.users] for k, v in private.items()}, baseline.objective,
                           sim.noise)
    for k in up.uploads:
        assert torch.isfinite(trained[k]).all() and torch.equal(up.uploads[k], trained[k]), k
    assert set(up.uploads) == {s.name for s in model.shared_specs()}  # F-DPMF: the item table only


def test_privacy_statements_are_honest():
    blocks = {"gender": np.array([18, 19]), "age": np.array([20, 21, 22])}
    fgerai = make_baseline("fgerai", blocks).privacy_statement(StatementContext(rounds=100, local_epochs=5, n_columns=23))
    assert fgerai.epsilon == pytest.approx((18 + 2) * 1.0) and fgerai.setting == "local"
    assert any("p=0.731" in n for n in fgerai.notes)
    assert fgerai.part(FEATURES_PART).epsilon == fgerai.epsilon  # the headline is the attributes' guarantee
    assert fgerai.part(OBJECTIVE_PART).epsilon == pytest.approx(100 * 5 * 1.0)
    nl = make_baseline("fgerai_nl").privacy_statement(StatementContext(rounds=100, local_epochs=5))
    assert nl.epsilon == pytest.approx(500.0) and not nl.parts
    assert any("NO protection" in n for n in nl.notes) and any("not the uploads" in n for n in nl.notes)
    dpmf = make_baseline("fdpmf").privacy_statement(StatementContext(rounds=100))
    assert dpmf.epsilon == pytest.approx(4000.0) and any("nominal" in n for n in dpmf.notes)
    assert not make_baseline("fedmf").privacy_statement().formal


def test_baseline_statements_read_only_their_part_of_the_context():
    """Rounds x local epochs for the functional mechanism, rounds for F-DPMF, the width of x_u
    for the feature randomiser (its default context: one feature or block alone)."""
    context = StatementContext(rounds=3, local_epochs=2, n_columns=5, counts={"item": 9}, delta=1e-7)
    assert FunctionalMechanism(0.5).privacy_statement(context).epsilon == pytest.approx(3 * 2 * 0.5)
    assert ItemObjectiveNoise(40.0).privacy_statement(context).epsilon == pytest.approx(3 * 40.0)
    ldp = FeatureLDP(1.0, {"gender": (3, 4)})
    assert ldp.privacy_statement(context).epsilon == pytest.approx(3 + 1)  # columns 0-2 and the gender block
    alone = ldp.privacy_statement()
    assert alone.epsilon == 1.0 and "not given" in alone.notes[0]


def test_bad_baseline_settings_are_config_errors():
    with pytest.raises(ConfigError, match="eps_x"):
        make_baseline("fgerai", {"gender": np.array([0, 1])}, eps_x=0)
    with pytest.raises(ConfigError, match="eps_f"):
        make_baseline("fgerai_nl", eps_f=-1)
    with pytest.raises(ConfigError, match="F-DPMF epsilon"):
        make_baseline("fdpmf", eps_dpmf=0)
    with pytest.raises(ConfigError, match="baseline"):
        make_baseline("gerai")
    csr, x = _toy()
    model = make_federated_model("fedrec", N_ITEMS, D1, DIM)
    with pytest.raises(ConfigError, match="neighbourhood"):
        local_update(model, _params(model), ClientBatch.select(np.array([0]), x, csr), LocalTraining(), 0, 1,
                     objective=ItemObjectiveNoise())


def test_functional_mechanism_clips_the_slope_but_keeps_the_minimiser():
    """Inside |a1 + s/4| <= max_slope the loss is the Taylor polynomial; beyond, it continues
    with slope ±max_slope (hand-computed), so the per-sample minimiser s* = -4 a1 is kept."""
    fm, bare = FunctionalMechanism(max_slope=1.0), FunctionalMechanism(max_slope=math.inf)
    one, r = torch.ones(1, 1), torch.zeros(1, 1)  # r = 0: a1 = 1/2 + eta
    eta = torch.tensor([[2.5]])  # a1 = 3, minimiser s* = -12
    s = torch.tensor([[-12.0, -10.0, 0.0, 4.0]], requires_grad=True)
    values = [fm.loss(s[:, i : i + 1], r, one, eta).item() for i in range(4)]
    poly = [bare.loss(s[:, i : i + 1], r, one, eta).item() for i in range(4)]
    # u = a1 + s/4 = 0, 0.5 (inside: the polynomial), 3, 4 (outside: linear continuation)
    assert values[:2] == pytest.approx(poly[:2], abs=1e-5)
    a0 = math.log(2)
    assert values[2] == pytest.approx(a0 - 2 * 9 + 4 * (1.0 * (3 - 0.5)), abs=1e-5)  # huber(3, 1) = 2.5
    assert values[3] == pytest.approx(a0 - 2 * 9 + 4 * (1.0 * (4 - 0.5)), abs=1e-5)
    assert poly[3] == pytest.approx(a0 + 3 * 4 + 16 / 8, abs=1e-5)
    total = fm.loss(s, r.expand(1, 4), torch.ones(1, 4), eta.expand(1, 4))
    total.backward()
    assert s.grad.tolist()[0] == pytest.approx([0.0, 0.5, 1.0, 1.0])
    grid = torch.linspace(-30, 10, 4001)[None]
    clipped = [fm.loss(grid[:, i : i + 1], r, one, eta).item() for i in range(0, 4001, 10)]
    assert grid[0, ::10][int(np.argmin(clipped))].item() == pytest.approx(-12.0, abs=0.1)
    with pytest.raises(ConfigError, match="max_slope"):
        FunctionalMechanism(max_slope=0.0)


def test_clipped_slope_keeps_local_sgd_finite_under_heavy_noise():
    """With ε_f = 0.05 the Laplace coefficients reach ±100: local SGD on the bare polynomial
    diverges, on the slope-clipped loss it stays finite (what ml-100k's client 118 needed)."""
    rng = np.random.default_rng(0)
    n_items = 60
    csr = sp.csr_matrix((np.ones(40), (np.zeros(40, int), rng.choice(n_items, 40, replace=False))), shape=(1, n_items))
    x = rng.random((1, D1)).astype(np.float32)
    model = make_federated_model("fedrec", n_items, D1, 8)
    params = model.init_params(torch.Generator().manual_seed(0), 0.1)
    cfg = LocalTraining(lr=0.01, local_epochs=5, batch_size=32, n_negatives=4)
    batch = ClientBatch.select(np.array([0]), x, csr)

    def trained(max_slope: float) -> dict:
        return local_update(model, params, batch, cfg, seed=0, round_=1, objective=FunctionalMechanism(0.05, max_slope=max_slope),
                            noise=NoiseSource("simulation", 0))  # the seeded draw that diverges without the clip

    assert not all(torch.isfinite(v).all() for v in trained(math.inf).values())
    assert all(torch.isfinite(v).all() for v in trained(1.0).values())
