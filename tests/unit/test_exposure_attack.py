"""Exposure attack networks and metrics: pooling (Eqs. 2-3), permutation invariance of the
attention encoder, the causal mask, teacher forcing, the Eq. 9 target, weight tying, greedy
decoding, the vocabulary, and the metric definitions (``attacks.exposure.metrics``) on hand-computed rankings."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from torch import nn

from recprivacy.attacks.exposure.attack import ExposureAttack, make_optimizer
from recprivacy.attacks.exposure.metrics import average_metrics, best_ranks, distinct_truth, per_pair_metrics
from recprivacy.attacks.exposure.networks import (
    CE_CHUNK,
    ExposureAttackNet,
    TiedSoftmaxCrossEntropy,
    pool,
    smoothed_targets,
    teacher_forcing,
)
from recprivacy.attacks.exposure.vocab import Vocabulary
from recprivacy.data.exposure_pairs import ExposurePairs

V = 12
SPECIALS = {"pad": V, "sos": V + 2, "eos": V + 3, "cls": V + 4}


def make_net(encoder: str = "att", decoder: str = "transformer", tie: str = "paper", seed: int = 0) -> ExposureAttackNet:
    torch.manual_seed(seed)
    return ExposureAttackNet(V, V + 5, SPECIALS, 3, encoder, decoder, dim=16, n_heads=2, dropout=0.1, tie=tie).eval()


def test_pooling_equals_mean_and_elementwise_max() -> None:
    x = torch.tensor([[[1.0, -2.0], [3.0, 0.0], [-1.0, 5.0]]])
    assert pool(x, "mean").tolist() == [[1.0, 1.0]]
    assert pool(x, "max").tolist() == [[3.0, 5.0]]


def test_pooled_encoders_pool_the_scaled_slate_embeddings() -> None:
    for mode in ("mean", "max"):
        net = make_net(mode, "point")
        slates = torch.tensor([[1, 4, 7, 2]])
        emb = net.enc_emb.weight[slates] * math.sqrt(16)
        expected = emb.mean(1) if mode == "mean" else emb.max(1).values
        assert torch.allclose(net.encode(slates), expected)


def test_attention_encoder_is_permutation_invariant_and_gives_a_memory_per_item() -> None:
    slates = torch.tensor([[1, 4, 7, 2, 9], [3, 3, 0, 11, 5]])
    perm = torch.tensor([4, 2, 0, 3, 1])
    with torch.no_grad():
        net = make_net("att", "gru")
        assert torch.allclose(net.encode(slates), net.encode(slates[:, perm]), atol=1e-5)
        memory_net = make_net("att", "transformer")
        memory = memory_net.encode(slates)
        assert memory.shape == (2, 5, 16)
        assert torch.allclose(memory[:, perm], memory_net.encode(slates[:, perm]), atol=1e-5)
        assert make_net("mean", "transformer").encode(slates).shape == (2, 1, 16)


def test_causal_mask_later_inputs_do_not_change_earlier_outputs() -> None:
    net = make_net("att", "transformer")
    slates = torch.tensor([[1, 4, 7, 2]])
    inputs = torch.tensor([[SPECIALS["sos"], 5, 6, 8]])
    changed = inputs.clone()
    changed[0, 2] = 0
    with torch.no_grad():
        a, b = net.sequence_logits(slates, inputs), net.sequence_logits(slates, changed)
    assert torch.allclose(a[:, :2], b[:, :2], atol=1e-6)
    assert not torch.allclose(a[:, 2:], b[:, 2:])


def test_teacher_forcing_reads_the_reversed_history() -> None:
    history = torch.tensor([[7, 5, 3]])  # b_3 (most recent), b_2, b_1
    inputs, targets = teacher_forcing(history, sos=20, eos=21)
    assert inputs.tolist() == [[20, 7, 5, 3]]
    assert targets.tolist() == [[7, 5, 3, 21]]


def test_label_smoothing_target_of_eq_9() -> None:
    y = smoothed_targets(torch.tensor([[0, 2, 4], [1, 1, 3]]), n_items=10)
    eps = 0.1
    assert torch.allclose(y.sum(1), torch.ones(2))
    assert torch.allclose(y[0, [0, 2, 4]], torch.full((3,), (1 - eps) / 3))
    assert torch.allclose(y[0, [1, 3, 5]], torch.full((3,), eps / 7))
    assert torch.allclose(y[1, [1, 3]], torch.full((2,), (1 - eps) / 2))  # the repeated item counts once
    assert torch.allclose(y[1, 0], torch.tensor(eps / 8))


@pytest.mark.parametrize("soft", [False, True])
def test_chunked_output_cross_entropy_matches_the_plain_softmax_loss_and_gradients(soft: bool) -> None:
    rows, size = 2 * CE_CHUNK + 37, 11  # three chunks, the last one short
    gen = torch.Generator().manual_seed(0)
    hidden = torch.randn(rows, 4, generator=gen, dtype=torch.float64, requires_grad=True)
    weight = torch.randn(size, 4, generator=gen, dtype=torch.float64, requires_grad=True)
    bias = torch.randn(size, generator=gen, dtype=torch.float64, requires_grad=True)
    if soft:
        target = smoothed_targets(torch.randint(0, size, (rows, 3), generator=gen), size).double()
        target = target / target.sum(1, keepdim=True)  # rows sum to 1 in double precision too
    else:
        target = torch.randint(0, size, (rows,), generator=gen)
    loss = TiedSoftmaxCrossEntropy.apply(hidden, weight, bias, target)
    grads = torch.autograd.grad(loss, (hidden, weight, bias))
    logits = hidden @ weight.T + bias
    expected = -(target * torch.log_softmax(logits, 1)).sum(1).mean() if soft else nn.functional.cross_entropy(logits, target)
    for got, want in zip((loss, *grads), (expected, *torch.autograd.grad(expected, (hidden, weight, bias)))):
        assert torch.allclose(got, want, atol=1e-12)
    detached = TiedSoftmaxCrossEntropy.apply(hidden.detach(), weight.detach(), bias.detach(), target)
    assert torch.equal(detached, loss.detach())  # the loss-only path (no gradient wanted) gives the same value


def test_weight_tying_modes_share_the_tables() -> None:
    paper = make_net("mean", "gru", "paper")
    assert paper.dec_emb.weight.data_ptr() == paper.enc_emb.weight.data_ptr() == paper.output_weight.data_ptr()
    code = make_net("mean", "gru", "code")
    assert code.output_weight.data_ptr() == code.dec_emb.weight.data_ptr() != code.enc_emb.weight.data_ptr()
    code_tf = make_net("att", "transformer", "code")
    assert code_tf.output_weight.data_ptr() not in (code_tf.dec_emb.weight.data_ptr(), code_tf.enc_emb.weight.data_ptr())
    none = make_net("mean", "lstm", "none")
    assert len({none.enc_emb.weight.data_ptr(), none.dec_emb.weight.data_ptr(), none.output_weight.data_ptr()}) == 3


@pytest.mark.parametrize("decoder", ["lstm", "gru", "transformer"])
def test_greedy_decoding_feeds_back_the_best_item_for_exactly_m_steps(decoder: str) -> None:
    net = make_net("max", decoder)
    with torch.no_grad():
        net.out_bias[V:] = 100.0  # specials would win every argmax if they were allowed
        slates = torch.tensor([[1, 4, 7, 2], [0, 3, 6, 9]])
        steps = net.greedy_item_logits(slates)
        assert steps.shape == (2, 3, V)
        chosen = steps.argmax(dim=2)
        inputs = torch.cat([torch.full((2, 1), SPECIALS["sos"]), chosen[:, :-1]], dim=1)
        forced = net.sequence_logits(slates, inputs)[:, :, :V]
    assert torch.allclose(steps, forced, atol=1e-5)


def test_point_decoder_gives_one_list() -> None:
    net = make_net("att", "point")
    assert net.greedy_item_logits(torch.tensor([[1, 2, 3]])).shape == (1, 1, V)


def _pairs(histories: list[list[int]], slates: list[list[int]], n_items: int = 10) -> ExposurePairs:
    import scipy.sparse as sp

    empty = sp.csr_matrix((2, n_items))
    return ExposurePairs(np.zeros(len(histories), dtype=np.int64), np.array(histories), np.array(slates), empty, empty, 2, n_items)


def test_vocabulary_indexes_training_items_and_flags_unseen_ones() -> None:
    vocab = Vocabulary.from_pairs(_pairs([[5, 2]], [[7, 2, 9]]))
    assert vocab.items.tolist() == [2, 5, 7, 9]
    assert (vocab.pad, vocab.oov, vocab.sos, vocab.eos, vocab.cls, vocab.size) == (4, 5, 6, 7, 8, 9)
    assert vocab.tokens(np.array([9, 3])).tolist() == [3, vocab.oov]
    assert vocab.known_rows(_pairs([[5, 2], [5, 2]], [[7, 2, 9], [7, 3, 9]])).tolist() == [True, False]
    assert Vocabulary.from_pairs(_pairs([[5, 2]], [[7, 2, 9]]), "full").n_items == 10


def test_warmup_schedule_follows_the_codes_scheduled_optim() -> None:
    param = nn.Parameter(torch.zeros(1))
    optimizer, scheduler = make_optimizer([param], lr=1e-4, schedule="warmup", warmup_steps=4)
    assert optimizer.defaults["betas"] == (0.9, 0.98) and optimizer.defaults["eps"] == 1e-9
    rates = []
    for _ in range(8):
        rates.append(optimizer.param_groups[0]["lr"])  # the rate of the coming step t = 1, 2, ...
        optimizer.step()
        scheduler.step()
    expected = [1e-4 * min(t**-0.5, t * 4**-1.5) for t in range(1, 9)]  # rises to step 4, then falls as t^-0.5
    assert rates == pytest.approx(expected) and max(rates) == pytest.approx(1e-4 / 2)
    constant, none = make_optimizer([param], lr=1e-3)
    assert none is None and constant.defaults["lr"] == 1e-3


def test_code_skipping_drops_repeated_truths_and_early_ends() -> None:
    pairs = _pairs([[5, 2], [4, 4], [2, 5]], [[7, 2, 9], [7, 5, 9], [9, 4, 2]])
    for encoder in ("att", "mean"):
        attack = ExposureAttack(encoder, "gru", dim=8, n_epochs=1, skip="code").fit(pairs)
        with torch.no_grad():
            attack.net_.out_bias[attack.vocab_.eos] = -100.0  # [EOS] never wins
        assert attack.code_skipped(attack.encode(pairs)).tolist() == [False, True, False]  # [4, 4] repeats
        with torch.no_grad():
            attack.net_.out_bias[attack.vocab_.eos] = 100.0  # [EOS] wins every step over all tokens
        report = attack.evaluate(pairs, (5,))
        expected = 3 if encoder == "att" else 1  # only the att encoder ends early (mean/max took the 2nd best)
        assert report["n_skipped"] == expected and report["n_pairs"] == 3 - expected
    assert ExposureAttack("att", "gru", dim=8, n_epochs=1).fit(pairs).evaluate(pairs, (5,))["n_skipped"] == 0


def test_score_gives_each_catalogue_item_its_best_step_log_probability() -> None:
    pairs = _pairs([[5, 2], [2, 5]], [[7, 2, 9], [9, 5, 2]])
    attack = ExposureAttack("att", "gru", dim=8, n_epochs=1).fit(pairs)
    scores = attack.score(np.array([[7, 2, 9], [9, 3, 2]]))  # item 3 is outside the vocabulary: read as [OOV]
    assert scores.shape == (2, 10) and scores.dtype == np.float32
    assert np.isneginf(scores[:, [0, 1, 3, 4, 6, 8]]).all()  # never named: not in the vocabulary {2, 5, 7, 9}
    with torch.no_grad():
        steps = torch.log_softmax(attack.net_.greedy_item_logits(torch.tensor([[2, 0, 3]])), dim=-1)[0]
    assert scores[0, [2, 5, 7, 9]] == pytest.approx(steps.max(dim=0).values.numpy(), abs=1e-6)
    assert np.exp(scores[0, [2, 5, 7, 9]]).max() <= 1.0


# ------------------------------------------------------------------ metrics (paper 000 §5.2)


def hand_ranked_scores() -> torch.Tensor:
    """Two decoding steps over 6 items: step 1 ranks items 0,1,2,3,4,5; step 2 ranks 3,5,0,1,2,4."""
    step1 = torch.tensor([6.0, 5, 4, 3, 2, 1])
    step2 = torch.zeros(6)
    step2[torch.tensor([3, 5, 0, 1, 2, 4])] = torch.tensor([6.0, 5, 4, 3, 2, 1])
    return torch.stack([step1, step2])[None]


def test_distinct_truth_blanks_repeats() -> None:
    assert distinct_truth(np.array([[5, 2, 5], [1, 1, 1]])).tolist() == [[5, 2, -1], [1, -1, -1]]


def test_metrics_on_a_hand_computed_ranking() -> None:
    truth = torch.as_tensor(distinct_truth(np.array([[5, 2, 5]])))
    ranks = best_ranks(hand_ranked_scores(), truth).numpy()
    assert ranks[0, :2].tolist() == [1.0, 2.0] and np.isnan(ranks[0, 2])  # item 5: min(5, 1); item 2: min(2, 4)
    m = per_pair_metrics(ranks, ks=(2, 3))
    assert m["recall@2"][0] == pytest.approx(0.5)
    assert m["ndcg@2"][0] == pytest.approx(1 / math.log2(3) / 2)
    assert m["mrr@2"][0] == pytest.approx(0.25)
    assert m["recall@3"][0] == pytest.approx(1.0)
    assert m["ndcg@3"][0] == pytest.approx((1 / math.log2(3) + 1 / math.log2(4)) / 2)
    assert m["mrr@3"][0] == pytest.approx((1 / 2 + 1 / 3) / 2)
    assert per_pair_metrics(ranks, ks=(1,), cutoff_factor=2)["recall@1"][0] == pytest.approx(0.5)  # top-kM list


def test_items_outside_the_candidates_are_never_found() -> None:
    scores = hand_ranked_scores()
    scores[:, :, 5] = -torch.inf
    ranks = best_ranks(scores, torch.tensor([[5, 2]])).numpy()
    assert ranks[0].tolist() == [math.inf, 2.0]  # item 2: rank 2 in step 1, 3 in step 2 without item 5


def test_ranks_within_a_depth_equal_the_full_count_and_deeper_ones_are_inf() -> None:
    gen = torch.Generator().manual_seed(0)
    scores = torch.randint(0, 30, (64, 3, 40), generator=gen).float()  # many ties
    scores[:8, :, :25] = -torch.inf  # some users allow only 15 candidates
    truth = torch.randint(0, 40, (64, 4), generator=gen)
    full = best_ranks(scores, truth)
    for depth in (1, 5, 20):
        cut = best_ranks(scores, truth, depth)
        assert torch.equal(torch.where(full < depth, full, torch.inf), cut)


def test_pair_and_user_averages() -> None:
    out = average_metrics({"recall@10": np.array([1.0, 1.0, 0.0])}, users=np.array([4, 4, 9]))
    assert out["recall@10"] == pytest.approx(2 / 3)
    assert out["user/recall@10"] == pytest.approx(0.5)
