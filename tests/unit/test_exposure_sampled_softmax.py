"""The exposure attacker's sampled softmax (issue 33): the columns one step draws, the restricted
loss and its gradients against the plain softmax over the same columns computed by hand with
``F.cross_entropy``, the whole vocabulary giving the full loss, and the settings."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
import torch
import torch.nn.functional as F

from recprivacy.attacks.exposure.attack import AUTO_SOFTMAX_SAMPLE, ExposureAttack
from recprivacy.attacks.exposure.networks import ExposureAttackNet, sampled_columns
from recprivacy.data.exposure_pairs import ExposurePairs
from recprivacy.errors import ConfigError

V = 40
SPECIALS = {"pad": V, "sos": V + 2, "eos": V + 3, "cls": V + 4}


def _net() -> ExposureAttackNet:
    torch.manual_seed(0)
    return ExposureAttackNet(V, V + 5, SPECIALS, 3, "mean", "gru", dim=8, n_heads=2, dropout=0.0)


def test_sampled_columns_hold_the_draws_the_targets_and_the_specials() -> None:
    target = torch.tensor([3, 3, 17, V + 3])
    columns = sampled_columns(target, V, V + 5, 6, torch.Generator().manual_seed(1))
    assert torch.equal(columns, torch.unique(columns))                    # sorted, distinct
    assert {3, 17, *range(V, V + 5)} <= set(columns.tolist())
    drawn = set(columns.tolist()) - {3, 17, *range(V, V + 5)}
    assert 4 <= len(drawn) <= 6 and all(0 <= c < V for c in drawn)       # 6 draws, 2 may hit the targets
    again = sampled_columns(target, V, V + 5, 6, torch.Generator().manual_seed(1))
    assert torch.equal(columns, again)


def test_sampled_loss_and_gradients_equal_the_softmax_over_the_columns() -> None:
    net = _net()
    hidden = torch.randn(7, 8, requires_grad=True)
    target = torch.tensor([1, 5, 5, 30, V + 3, 12, 1])
    columns = torch.tensor([1, 2, 5, 9, 12, 30, V, V + 1, V + 2, V + 3, V + 4])
    loss = net.sampled_cross_entropy(hidden, target, columns)
    loss.backward()
    ours = (hidden.grad.clone(), net.output_weight.grad.clone(), net.out_bias.grad.clone())
    for p in (hidden, net.output_weight, net.out_bias):
        p.grad = None
    logits = hidden @ net.output_weight[columns].T + net.out_bias[columns]
    expected = F.cross_entropy(logits, torch.searchsorted(columns, target))
    expected.backward()
    assert loss.item() == pytest.approx(expected.item(), rel=1e-6)
    for got, want in zip(ours, (hidden.grad, net.output_weight.grad, net.out_bias.grad)):
        assert torch.allclose(got, want, atol=1e-6)
    outside = torch.ones(V + 5, dtype=torch.bool)
    outside[columns] = False
    assert (ours[1][outside] == 0).all() and (ours[2][outside] == 0).all()  # unsampled tokens get no gradient


def test_every_column_gives_the_full_softmax() -> None:
    net = _net()
    hidden, target = torch.randn(5, 8), torch.tensor([0, 7, 7, V + 3, 39])
    full = net.cross_entropy(hidden, target)
    assert net.sampled_cross_entropy(hidden, target, torch.arange(V + 5)).item() == pytest.approx(full.item(), rel=1e-6)


def _pairs(n: int, n_items: int, seed: int) -> ExposurePairs:
    rng = np.random.default_rng(seed)
    histories = np.stack([rng.choice(n_items, 2, replace=False) for _ in range(n)])
    slates = (histories[:, :1] + np.arange(3)) % n_items       # the slate starts at the latest click
    empty = sp.csr_matrix((n, n_items))
    return ExposurePairs(np.arange(n, dtype=np.int64), histories, slates, empty, empty, 2, n_items)


def test_a_sampled_attacker_learns_and_the_settings() -> None:
    pairs = _pairs(300, 60, 0)
    attack = ExposureAttack("mean", "gru", dim=16, n_epochs=15, batch_size=50, softmax_sample=8, seed=0).fit(pairs)
    full = ExposureAttack("mean", "gru", dim=16, n_epochs=15, batch_size=50, seed=0).fit(pairs)
    assert attack.sample_ == 8 and full.sample_ is None
    held = _pairs(200, 60, 1)          # the latest click is in the slate, the one before it is random
    recall, full_recall = (a.evaluate(held, (10,))["recall@10"] for a in (attack, full))
    assert recall > 2 * 10 / 60                             # twice a random top-10 of 60 items
    assert recall > 0.8 * full_recall
    assert ExposureAttack("mean", "gru")._sample_width(10**5) is None               # the paper: every token
    auto = ExposureAttack("mean", "gru", softmax_sample="auto")
    assert auto._sample_width(2 * AUTO_SOFTMAX_SAMPLE) is None
    assert auto._sample_width(2 * AUTO_SOFTMAX_SAMPLE + 1) == AUTO_SOFTMAX_SAMPLE
    assert ExposureAttack("mean", "point", softmax_sample="auto")._sample_width(10**5) is None
    assert ExposureAttack("mean", "gru", softmax_sample=50)._sample_width(50) is None
    with pytest.raises(ConfigError, match="point decoder's label-smoothed target"):
        ExposureAttack("mean", "point", softmax_sample=64)
    with pytest.raises(ConfigError, match="softmax_sample: expected None, 'auto' or a positive integer"):
        ExposureAttack("mean", "gru", softmax_sample=0)
