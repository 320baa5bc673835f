"""UPC-SDG building blocks (paper 003): counts, selection, attention, f_sim, losses, Gumbel
straight-through, duplicate-free assignment. Values are computed by hand in the comments."""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.sparse as sp
import torch

from recprivacy.defenses.upcsdg.generation import (
    NO_CANDIDATE,
    GenerationModule,
    assign_replacements,
    authors_replacements,
    gumbel_softmax,
    zero_original,
)
from recprivacy.defenses.upcsdg.model import similarity_hinge, utility_loss
from recprivacy.defenses.upcsdg.selection import PairBatch, SelectionModule, replacement_counts, select_lowest
from recprivacy.defenses.upcsdg.similarity import ItemSimilarity


def test_replacement_counts_round_half_up_and_min_replace():
    sizes = np.array([5, 7, 10, 1, 3, 5])
    k = np.array([0.2, 0.2, 0.2, 0.2, 0.2, 0.3])
    # 1.0 -> 1, 1.4 -> 1, 2.0 -> 2, 0.2 -> 0, 0.6 -> 1, 0.3*5 = 1.5 (float 1.4999...) -> 2
    assert replacement_counts(k, sizes).tolist() == [1, 1, 2, 0, 1, 2]
    assert replacement_counts(k, sizes, min_replace=1).tolist() == [1, 1, 2, 1, 1, 2]
    assert replacement_counts(np.full(2, 0.99), np.array([3, 0]), min_replace=5).tolist() == [3, 0]


def _batch() -> PairBatch:
    # user 0 has items {1, 3, 4}, user 2 has items {0, 2}; user 1 is not in the batch
    csr = sp.csr_matrix((np.ones(5), ([0, 0, 0, 2, 2], [4, 1, 3, 2, 0])), shape=(3, 5))
    return PairBatch.from_csr(csr, np.array([0, 2]))


def test_pair_batch_groups_items_by_user():
    batch = _batch()
    assert batch.seg.tolist() == [0, 0, 0, 1, 1]
    assert batch.items.tolist() == [1, 3, 4, 0, 2]
    assert batch.sizes.tolist() == [3, 2]
    assert batch.pair_users.tolist() == [0, 0, 0, 2, 2]


def test_select_lowest_takes_the_smallest_scores_with_ties_to_lower_items():
    batch = _batch()
    scores = torch.tensor([0.5, -1.0, 0.5, 2.0, 1.0])
    chosen = select_lowest(scores, batch, torch.tensor([2, 1]))
    # user 0: item 3 (-1.0), then items 1 and 4 tie at 0.5 -> item 1; user 2: item 2 (1.0)
    assert batch.items[chosen].tolist() == [3, 1, 2]
    assert select_lowest(scores, batch, torch.tensor([0, 0])).numel() == 0


def test_attention_weights_pooling_and_reconstruction_loss():
    torch.manual_seed(0)
    batch = _batch()
    users, items = torch.randn(3, 4), torch.randn(5, 4)
    module = SelectionModule(4, beta=1.0).eval()
    loss, logits = module(users, items, batch)
    v = logits.detach()
    a = module.weights(v, batch.seg, 2)
    assert a[:3].sum().item() == pytest.approx(1.0) and a[3:].sum().item() == pytest.approx(1.0)
    # Eq. 3 with the 1/|I_u| factor: t_0 = (a_01 q_1 + a_03 q_3 + a_04 q_4) / 3
    t0 = (a[0] * items[1] + a[1] * items[3] + a[2] * items[4]) / 3
    assert torch.allclose(module.pooled(a, items[batch.items], batch)[0], t0, atol=1e-6)
    t = module.pooled(a, items[batch.items], batch)
    expected = ((module.f(t) - users[[0, 2]]) ** 2).sum(1).mean()
    assert loss.item() == pytest.approx(expected.item(), rel=1e-5)
    # beta < 1: a_ui = exp(v_ui) / (sum_j exp v_uj)^beta
    half = SelectionModule(4, beta=0.5).weights(v, batch.seg, 2)
    by_hand = torch.exp(v[:3]) / torch.exp(v[:3]).sum() ** 0.5
    assert torch.allclose(half[:3], by_hand, rtol=1e-5)


def test_attention_logit_is_h_relu_w1_concat():
    module = SelectionModule(2, hidden=2)
    with torch.no_grad():
        module.w1.weight.copy_(torch.tensor([[1.0, 0.0, 1.0, 0.0], [0.0, -1.0, 0.0, 0.0]]))
        module.w1.bias.copy_(torch.tensor([0.0, 0.5]))
        module.h.weight.copy_(torch.tensor([[2.0, 3.0]]))
    # W1 [p; q] + b = [p0 + q0, -p1 + 0.5]; p = (1, 2), q = (3, 4) -> relu([4, -1.5]) = [4, 0] -> h = 8
    assert module.logits(torch.tensor([[1.0, 2.0]]), torch.tensor([[3.0, 4.0]])).item() == pytest.approx(8.0)
    # f is an MLP with dropout: train and eval modes differ
    assert any(isinstance(m, torch.nn.Dropout) for m in module.f)


def test_dropout_f_differs_between_train_and_eval():
    torch.manual_seed(1)
    module = SelectionModule(8, dropout=0.5)
    x = torch.randn(4, 8)
    module.train()
    a = module.f(x)
    module.eval()
    assert not torch.allclose(a, module.f(x))


ITEMS = torch.tensor([[1.0, 0.0], [0.0, 2.0], [-1.0, 1.0], [2.0, 1.0]])


def test_fsim_paper_mode_by_hand():
    sim = ItemSimilarity(ITEMS, "paper")
    # item 0: dots with all = [1, 0, -1, 2], min m_0 = -1, self = 1
    # f(0, v) = (dot + 1) / (1 + 1): v=0 -> 1, v=2 (least similar) -> 0, v=3 -> 1.5 (>1, not clamped)
    rows = sim.rows(torch.tensor([0]))[0]
    assert rows.tolist() == pytest.approx([1.0, 0.5, 0.0, 1.5])
    assert sim.of_items(torch.tensor([0, 0]), torch.tensor([0, 2])).tolist() == pytest.approx([1.0, 0.0])
    # item 1: dots [0, 4, 2, 2], min 0, self 4 -> f(1, 2) = 0.5
    assert sim.of_items(torch.tensor([1]), torch.tensor([2])).item() == pytest.approx(0.5)


def test_fsim_code_and_cosine_modes_by_hand():
    code = ItemSimilarity(ITEMS, "code")
    # v = 3: dots of q_3 with all = [2, 2, -1, 5]: min -1, max 5 -> f(0, 3) = (2 + 1) / 6 = 0.5
    assert code.of_items(torch.tensor([0]), torch.tensor([3])).item() == pytest.approx(0.5)
    assert code.rows(torch.tensor([0]))[0, 3].item() == pytest.approx(0.5)
    cosine = ItemSimilarity(ITEMS, "cosine")
    # cos(0, .) = [1, 0, -1/sqrt2, 2/sqrt5]; min = -1/sqrt2 -> f(0, 1) = (0 + c)/(1 + c), c = 1/sqrt2
    c = 1 / math.sqrt(2)
    assert cosine.of_items(torch.tensor([0]), torch.tensor([1])).item() == pytest.approx(c / (1 + c), rel=1e-5)
    assert cosine.rows(torch.tensor([0]))[0, 2].item() == pytest.approx(0.0, abs=1e-6)


def test_fsim_pairs_is_differentiable_in_generated_embedding():
    sim = ItemSimilarity(ITEMS, "paper")
    q_v = ITEMS[[3]].clone().requires_grad_(True)
    sim.pairs(torch.tensor([0]), q_v).sum().backward()
    # d f / d q_v = q_0 / (1 - (-1)) = (0.5, 0)
    assert q_v.grad[0].tolist() == pytest.approx([0.5, 0.0])


def test_similarity_hinge_is_zero_under_gamma_and_positive_above():
    gamma = torch.tensor([0.5, 0.3, 0.9])
    assert similarity_hinge(torch.tensor([0.5, 0.1, -2.0]), gamma).item() == 0.0
    # [0.7 - 0.5]_+ = 0.2, [0.1 - 0.3]_+ = 0, [1.2 - 0.9]_+ = 0.3 -> mean 0.5 / 3
    assert similarity_hinge(torch.tensor([0.7, 0.1, 1.2]), gamma).item() == pytest.approx(0.5 / 3)


def test_utility_loss_is_mean_negative_log_sigmoid():
    p = torch.tensor([[1.0, 0.0], [0.0, 1.0]])
    q = torch.tensor([[2.0, 5.0], [0.0, -1.0]])
    expected = (-math.log(1 / (1 + math.exp(-2.0))) - math.log(1 / (1 + math.exp(1.0)))) / 2
    assert utility_loss(p, q).item() == pytest.approx(expected, rel=1e-6)


def test_gumbel_straight_through_is_one_hot_forward_with_gradients():
    logits = torch.randn(6, 9, requires_grad=True)
    masked = logits.masked_fill(torch.arange(9) < 3, -torch.inf)
    y = gumbel_softmax(masked, tau=1.0, generator=torch.Generator().manual_seed(0), hard=True)
    assert torch.equal(y.detach().sum(1), torch.ones(6))
    assert set(y.detach().unique().tolist()) <= {0.0, 1.0}
    assert (y.detach()[:, :3] == 0).all()  # masked items are never drawn
    (y * torch.arange(9.0)).sum().backward()
    assert logits.grad.abs().sum() > 0
    assert torch.equal(logits.grad[:, :3], torch.zeros(6, 3))
    again = gumbel_softmax(masked, tau=1.0, generator=torch.Generator().manual_seed(0), hard=True)
    assert torch.equal(y, again)


def test_gumbel_samples_follow_the_softmax():
    logits = torch.log(torch.tensor([[0.7, 0.2, 0.1]])).repeat(20000, 1)
    y = gumbel_softmax(logits, 1.0, torch.Generator().manual_seed(3), hard=True)
    assert y.mean(0).tolist() == pytest.approx([0.7, 0.2, 0.1], abs=0.015)


def test_generation_query_uses_gamma_and_scores_all_items():
    gen = GenerationModule(2)
    assert gen.linear.in_features == 5 and gen.linear.out_features == 2
    p, q = torch.randn(3, 2), torch.randn(3, 2)
    r1 = gen.query(p, q, torch.full((3,), 0.1))
    r9 = gen.query(p, q, torch.full((3,), 0.9))
    assert not torch.allclose(r1, r9)
    assert gen.scores(p, q, torch.full((3,), 0.5), ITEMS).shape == (3, 4)


def test_assign_replacements_greedy_without_duplicates_or_own_items():
    # user 0 owns items {0, 1}; user 1 owns {4}. Three pairs of user 0, one of user 1.
    csr = sp.csr_matrix((np.ones(3), ([0, 0, 1], [0, 1, 4])), shape=(2, 6))
    table = torch.tensor([
        [9.0, 8.0, 5.0, 4.0, 1.0, 0.0],   # best non-owned: 2
        [9.0, 8.0, 5.0, 4.0, 1.0, 0.0],   # 2 is taken -> 3
        [0.0, 0.0, 1.0, 1.0, 1.0, 2.0],   # 5
        [0.0, 0.0, 1.0, 1.0, 9.0, 2.0],   # 4 is owned -> 5
    ])
    out = assign_replacements(np.array([0, 0, 0, 1]), csr, lambda pairs: table[pairs].clone())
    assert out.tolist() == [2, 3, 5, 5]


def test_blocked_candidates_are_masked_before_the_pick():
    # same owners and scores as above; blocked (over the cap): item 2 for every pair, item 5 for pair 2
    csr = sp.csr_matrix((np.ones(3), ([0, 0, 1], [0, 1, 4])), shape=(2, 6))
    table = torch.tensor([
        [9.0, 8.0, 5.0, 4.0, 1.0, 0.0],   # 2 blocked -> 3 (the best within the cap, not the best overall)
        [9.0, 8.0, 5.0, 4.0, 1.0, 0.0],   # 2 blocked, 3 taken -> 4
        [0.0, 0.0, 1.0, 1.0, 1.0, 2.0],   # 2, 3, 4, 5 blocked; 0, 1 owned -> none
        [0.0, 0.0, 1.0, 1.0, 9.0, 2.0],   # 4 owned -> 5
    ])
    blocked = torch.zeros(4, 6, dtype=torch.bool)
    blocked[:, 2] = True
    blocked[2, 3:] = True
    out = assign_replacements(np.array([0, 0, 0, 1]), csr, lambda pairs: table[pairs].clone(), lambda pairs: blocked[pairs])
    assert out.tolist() == [3, 4, NO_CANDIDATE, 5]
    # a pair with no candidate takes nothing: a later pair of the same user may still use the items
    out = assign_replacements(np.array([0, 0]), csr, lambda pairs: table[[2, 0]][pairs].clone(),
                              lambda pairs: blocked[[2, 1]][pairs])
    assert out.tolist() == [NO_CANDIDATE, 3]
    # the authors' masking (only the original excluded): pair 2 would take 5, which is blocked -> 0
    originals = np.array([0, 1, 4, 4])
    assert authors_replacements(originals, lambda pairs: table[pairs].clone(), "inf").tolist() == [1, 0, 5, 5]
    assert authors_replacements(originals, lambda pairs: table[pairs].clone(), "inf",
                                blocked=lambda pairs: blocked[pairs]).tolist() == [1, 0, 0, 5]
    everything = torch.ones(4, 6, dtype=torch.bool)
    assert authors_replacements(originals, lambda pairs: table[pairs].clone(),
                                blocked=lambda pairs: everything[pairs]).tolist() == [NO_CANDIDATE] * 4


def test_authors_masking_zeroes_only_the_original_and_allows_repeats():
    # rows: pairs (u0, i0), (u0, i1), (u1, i4); user 0 owns {0, 1}, user 1 owns {4}
    table = torch.tensor([
        [9.0, 8.0, 5.0, 4.0, 1.0, 0.0],      # original 0 -> 0 * 9 = 0, best is owned item 1
        [-3.0, -1.0, -2.0, -4.0, -5.0, -6.0],  # original 1 -> 0 beats every negative: identity
        [0.0, 0.0, 1.0, 1.0, 9.0, 2.0],      # original 4 -> 0; best 5
    ])
    originals = np.array([0, 1, 4])
    assert zero_original(table, torch.from_numpy(originals))[:, [0, 1, 4]].diagonal().tolist() == [0.0, 0.0, 0.0]
    assert authors_replacements(originals, lambda pairs: table[pairs].clone()).tolist() == [1, 1, 5]
    assert authors_replacements(originals, lambda pairs: table[pairs].clone(), "inf").tolist() == [1, 2, 5]
    # blocks smaller than the pair count give the same answer
    assert authors_replacements(originals, lambda pairs: table[pairs].clone(), block_pairs=2).tolist() == [1, 1, 5]
    with pytest.raises(ValueError, match="exclude"):
        authors_replacements(originals, lambda pairs: table[pairs].clone(), "none")
