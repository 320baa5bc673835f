"""make_private: DP-SGD for every torch recommender (defenses.dp_engine).

Per-user clipping against a hand computation and against autograd one user at a time on every
model, the Gaussian noise's mean and spread against σC, the accountant's ε against dp-accounting
directly, the privacy statement, and that every torch recommender trains privately."""

from __future__ import annotations

import math

import dp_accounting
import numpy as np
import pytest
import torch
from torch import nn

from recprivacy.data.synthetic import make_synthetic
from recprivacy.defenses.dp_engine import PrivateRecommender, _Losses, clipped_sum, make_private, noisy_mean
from recprivacy.defenses.dpsgd import DPSGD
from recprivacy.errors import ConfigError
from recprivacy.models.bpr import BPRMF
from recprivacy.models.itemcf import ItemCF
from recprivacy.models.lightgcn import LightGCN
from recprivacy.models.ncf import NCF
from recprivacy.models.sasrec import SASRec
from recprivacy.models.srgnn import SRGNN
from recprivacy.privacy.randomness import NoiseSource


@pytest.fixture(scope="module")
def data():
    return make_synthetic(n_users=40, n_items=30, n_interactions=400, min_user_interactions=5, seed=0)


def tiny_models():
    return [BPRMF(n_factors=4), LightGCN(n_factors=4, n_layers=2), NCF(gmf_dim=2, mlp_layers=(4, 2)),
            SASRec(hidden=4, max_len=8, dropout=0.0)]  # fmt: skip


class Linear(nn.Module):
    """Loss ``w · x`` per example: its gradient is ``x``."""

    def __init__(self) -> None:
        super().__init__()
        self.w = nn.Parameter(torch.zeros(2))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x @ self.w


def test_clipped_sum_by_hand():
    # unit 0 owns examples 0 and 2: gradient (3, 0) + (0, 4) = (3, 4), norm 5 -> clipped to (0.6, 0.8);
    # unit 1 owns example 1: (0.3, 0.4), norm 0.5 < C -> unchanged; the sum is (0.9, 1.2)
    x = torch.tensor([[3.0, 0.0], [0.3, 0.4], [0.0, 4.0]])
    summed, _ = clipped_sum(Linear(), np.array([0, 1, 0]), (x,), 2, max_norm=1.0)
    expected = torch.tensor([0.6, 0.8]) * 5 / (5 + 1e-6) + torch.tensor([0.3, 0.4])
    assert torch.allclose(summed["w"], expected, atol=1e-6)


@pytest.mark.parametrize("model", tiny_models(), ids=lambda m: type(m).__name__)
def test_clipped_sum_equals_autograd_one_user_at_a_time(model, data):
    task = model.private_task(data)
    users = task.users[:7]
    owners, examples = task.draw(users)
    losses = _Losses(task)
    grads = []
    for unit in range(len(users)):
        mine = torch.from_numpy(np.flatnonzero(owners == unit))
        losses.zero_grad()
        losses(*(t[mine] for t in examples)).sum().backward()
        grads.append({k: p.grad.clone() if p.grad is not None else torch.zeros_like(p) for k, p in losses.named_parameters()})
    norms = [float(torch.sqrt(sum(g.pow(2).sum() for g in unit.values()))) for unit in grads]
    c = float(np.median(norms))  # some users are clipped, some are not
    # BPR-MF's loss is row-local: the engine's per-user gradients on touched rows, and torch.func's, both checked
    for lookups in {(), tuple(f"net.{t}" for t in task.lookups)}:
        summed, _ = clipped_sum(losses, owners, examples, len(users), max_norm=c, lookups=lookups)
        for k in summed:
            expected = sum(unit[k] * min(1.0, c / (norm + 1e-6)) for unit, norm in zip(grads, norms))
            assert torch.allclose(summed[k], expected, atol=1e-5), (k, lookups)
        assert float(torch.sqrt(sum(v.pow(2).sum() for v in summed.values()))) <= c * len(users) + 1e-5


def test_only_bpr_mf_declares_a_row_local_loss(data):
    declared = {type(m).__name__: m.private_task(data).lookups for m in tiny_models()}
    assert declared == {"BPRMF": ("user", "item", "item"), "LightGCN": (), "NCF": (), "SASRec": ()}


class Tables(nn.Module):
    """Loss ``t[a] · x + v[b] · y`` per example: gradient ``x`` on row a of ``t``, ``y`` on row b of ``v``."""

    def __init__(self) -> None:
        super().__init__()
        self.t = nn.Parameter(torch.zeros(3, 2))
        self.v = nn.Parameter(torch.zeros(2, 2))

    def forward(self, a: torch.Tensor, x: torch.Tensor, b: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return (self.t[a] * x).sum(-1) + (self.v[b] * y).sum(-1)


def test_row_local_clipped_sum_by_hand():
    # unit 0 owns examples 0 and 1, both on row 2 of t: (3, 0) + (0, 4) = (3, 4), norm 5, clipped to (0.6, 0.8);
    # unit 1 owns example 2, (0.3, 0.4) on row 0 of t: norm 0.5 < C, unchanged. The personal table v is summed
    # unclipped and left out of the norm: unit 0's (30, 40) on row 0 of v stays, as does unit 1's (1, 2) on row 1.
    a, b = torch.tensor([2, 2, 0]), torch.tensor([0, 0, 1])
    x = torch.tensor([[3.0, 0.0], [0.0, 4.0], [0.3, 0.4]])
    y = torch.tensor([[30.0, 0.0], [0.0, 40.0], [1.0, 2.0]])
    summed, loss = clipped_sum(Tables(), np.array([0, 0, 1]), (a, x, b, y), 2, max_norm=1.0, personal=frozenset({"v"}),
                               lookups=("t", "", "v", ""))  # fmt: skip
    clipped = torch.tensor([0.6, 0.8]) * 5 / (5 + 1e-6)
    assert torch.allclose(summed["t"], torch.stack([torch.tensor([0.3, 0.4]), torch.zeros(2), clipped]), atol=1e-6)
    assert torch.equal(summed["v"], torch.tensor([[30.0, 40.0], [1.0, 2.0]]))
    assert loss == 0.0  # every table starts at zero


def test_a_loss_not_declared_row_local_everywhere_takes_the_general_path():
    # lookups naming only t leave v to no table: the row-local path would miss v's gradient, so it is not taken
    a, b = torch.tensor([2, 0]), torch.tensor([0, 1])
    x, y = torch.tensor([[3.0, 4.0], [0.3, 0.4]]), torch.tensor([[1.0, 0.0], [0.0, 1.0]])
    partial, _ = clipped_sum(Tables(), np.array([0, 1]), (a, x, b, y), 2, max_norm=10.0, lookups=("t", "", "", ""))
    general, _ = clipped_sum(Tables(), np.array([0, 1]), (a, x, b, y), 2, max_norm=10.0)
    assert all(torch.equal(partial[k], general[k]) for k in general) and torch.equal(general["v"], torch.eye(2))


class Personal(nn.Module):
    """Loss ``w · x + v[u] · y`` per example: gradient ``x`` on the shared ``w``, ``y`` on row u of ``v``."""

    def __init__(self) -> None:
        super().__init__()
        self.w = nn.Parameter(torch.zeros(2))
        self.v = nn.Parameter(torch.zeros(2, 2))

    def forward(self, x: torch.Tensor, u: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return x @ self.w + (self.v[u] * y).sum(-1)


def test_personal_rows_are_summed_unclipped_and_left_out_of_the_norm():
    # unit 0: shared gradient (3, 4), clipped to (0.6, 0.8) whatever its personal gradient (30, 40)
    x = torch.tensor([[3.0, 4.0], [0.3, 0.4]])
    u, y = torch.tensor([0, 1]), torch.tensor([[30.0, 40.0], [1.0, 2.0]])
    summed, _ = clipped_sum(Personal(), np.array([0, 1]), (x, u, y), 2, max_norm=1.0, personal=frozenset({"v"}))
    assert torch.allclose(summed["w"], torch.tensor([0.6, 0.8]) * 5 / (5 + 1e-6) + torch.tensor([0.3, 0.4]), atol=1e-6)
    assert torch.equal(summed["v"], y)


def test_noise_has_mean_zero_and_std_sigma_c():
    sigma, c, expected = 1.7, 0.5, 4.0
    generator = NoiseSource("simulation", 0).torch_generator("gradient noise")
    zeros = {"a": torch.zeros(200_000), "b": torch.zeros(50, 1000)}
    noised = noisy_mean(zeros, sigma * c, expected, generator)
    draws = torch.cat([v.flatten() for v in noised.values()]) * expected
    # 250,000 draws: the sample std's relative standard error is 1/sqrt(2n) = 0.14%
    assert abs(float(draws.std()) / (sigma * c) - 1) < 0.01
    assert abs(float(draws.mean())) < 5 * sigma * c / math.sqrt(len(draws))
    again = noisy_mean(zeros, sigma * c, expected, NoiseSource("simulation", 0).torch_generator("gradient noise"))
    assert all(torch.equal(noised[k], again[k]) for k in zeros)  # simulation repeats; secure does not
    secure = [noisy_mean(zeros, 1.0, 1.0, NoiseSource("secure").torch_generator("gradient noise"))["b"] for _ in range(2)]
    assert not torch.equal(*secure)


@pytest.fixture(scope="module")
def private_bpr(data):
    return make_private(BPRMF(n_factors=4), epsilon=2.0, delta=1e-3, noise="simulation", batch_users=10,
                        n_epochs=2).fit(data)  # fmt: skip


def test_epsilon_matches_dp_accounting_directly(private_bpr):
    q, sigma, steps = private_bpr.sample_rate_, private_bpr.noise_multiplier_, private_bpr.steps_
    assert q == pytest.approx(10 / 40) and steps == 2 * 4
    accountant = dp_accounting.rdp.RdpAccountant()
    accountant.compose(dp_accounting.PoissonSampledDpEvent(q, dp_accounting.GaussianDpEvent(sigma)), steps)
    statement = private_bpr.privacy_statement()
    assert statement.epsilon == pytest.approx(accountant.get_epsilon(1e-3), rel=1e-9)
    assert 1.9 < statement.epsilon <= 2.0  # the calibration reaches the target without exceeding it


def test_privacy_statement_says_what_is_protected(private_bpr, data):
    statement = private_bpr.privacy_statement()
    assert statement.unit.startswith("one user: every training interaction")
    assert "joint DP" in statement.scope and "own rows (user) are not released" in statement.scope
    assert statement.setting == "joint" and "joint differential privacy" in statement.sentence()
    assert statement.delta == 1e-3 and "8 DP-SGD steps" in statement.scope
    assert "q = 0.25" in statement.accountant and f"{private_bpr.noise_multiplier_:.4g}" in statement.accountant
    assert statement.noise.startswith("simulation") and any("no early stopping" in n for n in statement.notes)
    graph = make_private(LightGCN(n_factors=4), delta=1e-3, batch_users=40, n_epochs=1).fit(data).privacy_statement()
    assert "graph held fixed" in graph.unit and graph.notes[0].startswith("NOT a guarantee for a user's interactions")
    assert graph.noise.startswith("secure")


@pytest.mark.parametrize("model", [*tiny_models(), SRGNN(hidden=4, n_epochs=1, max_len=8)], ids=lambda m: type(m).__name__)
def test_every_torch_recommender_trains_privately(model, data):
    extra = {} if isinstance(model, SRGNN) else {"batch_users": 20, "n_epochs": 2}
    private = make_private(model, epsilon=4.0, delta=1e-3, noise="simulation", **extra).fit(data)
    assert isinstance(private, DPSGD if isinstance(model, SRGNN) else PrivateRecommender)
    scores = private.score(np.arange(5))
    assert scores.shape == (5, data.n_items) and torch.isfinite(scores).all()
    assert private.recommend(np.arange(5), 3).shape == (5, 3)
    assert not hasattr(model, "n_items_")  # the recommender given is not changed


def test_bad_input_is_one_clear_line(data):
    with pytest.raises(ConfigError, match=r"cannot train ItemCF by DP-SGD; supported: BPRMF, LightGCN, NCF, SASRec, SRGNN"):
        make_private(ItemCF())
    with pytest.raises(ConfigError, match=r"delta = 0.1 must be smaller than 1/n_records"):
        make_private(BPRMF(), delta=0.1).fit(data)
    with pytest.raises(ConfigError, match="epsilon"):
        make_private(BPRMF(), epsilon=0)
    with pytest.raises(ConfigError, match="SRGNN trains with its own batch_size"):
        make_private(SRGNN(), n_epochs=3)
