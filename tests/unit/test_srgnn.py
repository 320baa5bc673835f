"""SR-GNN: prefix samples, batched session graphs, the gated update, readout and training."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from recprivacy.data.interactions import Interactions
from recprivacy.errors import ConfigError, DataError
from recprivacy.metrics.ranking import ranking_metrics
from recprivacy.models import make_model
from recprivacy.models.srgnn import (
    SRGNN,
    SequenceSamples,
    SRGNNNet,
    UserEncoder,
    batch_inputs,
    degree_normalised,
    length_pooled_batches,
    session_graphs,
)

PAD = 10


def graphs_of(seqs: list[list[int]], pad: int = PAD):
    samples = SequenceSamples.whole([np.array(s) for s in seqs], np.arange(len(seqs)))
    x, lengths = batch_inputs(samples, np.arange(len(seqs)), 100, pad)
    return session_graphs(x, lengths, pad)


# --------------------------------------------------------------------------- samples


def test_prefix_samples_follow_the_paper_example() -> None:
    s = SequenceSamples.prefixes([np.array([1, 2, 3, 4]), np.array([7])])
    assert len(s) == 3  # n - 1 samples; a sequence of length 1 gives none
    x, lengths = batch_inputs(s, np.arange(3), 100, PAD)
    assert x.tolist() == [[1, PAD, PAD], [1, 2, PAD], [1, 2, 3]]
    assert lengths.tolist() == [1, 2, 3]
    assert s.targets().tolist() == [2, 3, 4]


def test_test_context_reads_only_the_test_segment_and_max_len_keeps_the_last_items() -> None:
    # train part [1, 2, 3], test part [4, 5, 6]: targets 5 and 6 with inputs from position 3 on
    s = SequenceSamples.prefixes([np.array([1, 2, 3, 4, 5, 6])], first_target=4, context_start=3)
    x, _ = batch_inputs(s, np.arange(len(s)), 100, PAD)
    assert x.tolist() == [[4, PAD], [4, 5]] and s.targets().tolist() == [5, 6]
    full = SequenceSamples.prefixes([np.array([1, 2, 3, 4, 5, 6])], first_target=3)
    x, _ = batch_inputs(full, np.arange(len(full)), 2, PAD)
    assert x.tolist() == [[2, 3], [3, 4], [4, 5]] and full.targets().tolist() == [4, 5, 6]
    with pytest.raises(DataError, match="first target"):
        SequenceSamples.prefixes([np.array([1, 2])], first_target=1, context_start=1)


def test_truth_matrix_gives_the_hand_computed_recall_and_mrr() -> None:
    # target at rank 3 and at rank 11 of a full ranking over 30 items
    s = SequenceSamples.prefixes([np.array([0, 5]), np.array([0, 7])])
    ranked = np.array([[1, 2, 5] + list(range(8, 25)), [1, 2, 3, 4, 8, 9, 10, 11, 12, 13, 7] + list(range(14, 23))])
    m = ranking_metrics(ranked, s.truth(30), ks=(5, 10, 20), per_user=True)
    assert m["recall@5"].tolist() == [1.0, 0.0] and m["mrr@5"][0] == pytest.approx(1 / 3)
    assert m["recall@10"][1] == 0.0 and m["mrr@10"][1] == 0.0
    assert m["recall@20"][1] == 1.0 and m["mrr@20"][1] == pytest.approx(1 / 11)


def test_length_pooled_batches_cover_every_sample_once_and_group_lengths() -> None:
    rng = np.random.default_rng(0)
    lengths = rng.integers(1, 80, size=1000)
    batches = list(length_pooled_batches(lengths, 10, rng, pool=20))
    assert np.sort(np.concatenate(batches)).tolist() == list(range(1000))
    spread = np.mean([np.ptp(lengths[b]) for b in batches])
    assert spread < 0.2 * np.ptp(lengths)


# --------------------------------------------------------------------------- graphs


def test_transition_counts_accumulate_and_nodes_are_distinct_items() -> None:
    g = graphs_of([[1, 2, 1, 2]])
    assert g.nodes.tolist() == [[1, 2]]
    assert g.adjacency[0].tolist() == [[0.0, 2.0], [1.0, 0.0]]  # 1->2 twice, 2->1 once
    assert g.alias[0].tolist() == [0, 1, 0, 1] and g.last.tolist() == [3]


def test_batched_graphs_match_a_per_sequence_construction() -> None:
    rng = np.random.default_rng(3)
    seqs = [list(rng.integers(0, 6, size=n)) for n in (1, 4, 9, 7)]
    g = graphs_of(seqs)
    for b, seq in enumerate(seqs):
        items = np.unique(seq)
        n = len(items)
        assert g.nodes[b, :n].tolist() == items.tolist() and g.node_mask[b].sum() == n
        assert (g.nodes[b, n:] == PAD).all()
        alias = g.alias[b, : len(seq)].numpy()
        assert items[alias].tolist() == [int(v) for v in seq]  # alias reconstructs the sequence
        expected = np.zeros((g.adjacency.shape[1],) * 2)
        np.add.at(expected, (alias[:-1], alias[1:]), 1.0)
        assert np.array_equal(g.adjacency[b].numpy(), expected)


def test_removing_one_transition_changes_exactly_one_count_by_one() -> None:
    full, shorter = graphs_of([[1, 2, 1, 2]]), graphs_of([[1, 2, 1]])
    diff = (full.adjacency - shorter.adjacency)[0]
    assert diff.abs().sum() == 1.0 and diff[0, 1] == 1.0


def test_degree_normalisation_divides_by_out_and_in_degree() -> None:
    a = torch.tensor([[[0.0, 2.0, 1.0], [1.0, 0.0, 0.0], [0.0, 0.0, 0.0]]])
    a_in, a_out = degree_normalised(a)
    assert torch.allclose(a_out[0], torch.tensor([[0, 2 / 3, 1 / 3], [1, 0, 0], [0, 0, 0]]))
    # A_in[i, j] = A[j, i] / in-degree(i): node 0 is entered once (from 1), node 1 twice, node 2 once
    assert torch.allclose(a_in[0], torch.tensor([[0, 1.0, 0], [1.0, 0, 0], [1.0, 0, 0]]))


# --------------------------------------------------------------------------- network


def net(user: bool = True, n_steps: int = 1) -> SRGNNNet:
    torch.manual_seed(0)
    encoder = UserEncoder(3, 4, torch.rand(3, 5)) if user else None
    return SRGNNNet(PAD, 8, n_steps, "count", encoder)


def test_gated_update_equals_torch_gru_cell() -> None:
    m = net()
    cell = torch.nn.GRUCell(16, 8)
    with torch.no_grad():
        cell.weight_ih.copy_(m.gate_input.weight)
        cell.bias_ih.copy_(m.gate_input.bias)
        cell.weight_hh.copy_(m.gate_hidden.weight)
        cell.bias_hh.copy_(m.gate_hidden.bias)
    a, h = torch.randn(5, 16), torch.randn(5, 8)
    assert torch.allclose(m.gru(a, h), cell(a, h), atol=1e-6)


def test_initialisation_is_uniform_within_one_over_sqrt_d() -> None:
    bound = 1 / np.sqrt(8)
    assert all(p.abs().max() <= bound for p in net().parameters())


def test_scores_ignore_padding_and_other_sequences_of_the_batch() -> None:
    m = net().eval()
    alone = m(graphs_of([[1, 2, 3]]), torch.tensor([0]))
    batched = m(graphs_of([[1, 2, 3], [4, 5, 6, 7, 8, 4, 5]]), torch.tensor([0, 1]))
    assert torch.allclose(alone[0], batched[0], atol=1e-5)
    assert batched.shape == (2, PAD)


def test_propagation_steps_share_weights_and_every_parameter_gets_a_gradient() -> None:
    assert sum(p.numel() for p in net(n_steps=1).parameters()) == sum(p.numel() for p in net(n_steps=3).parameters())
    m = net(n_steps=2)
    torch.nn.functional.cross_entropy(m(graphs_of([[1, 2, 3], [4, 5]]), torch.tensor([0, 2])), torch.tensor([4, 6])).backward()
    for name, p in m.named_parameters():
        assert p.grad is not None and p.grad.abs().sum() > 0, name


# --------------------------------------------------------------------------- recommender


def chain_data(n_users: int = 40, n_items: int = 12, length: int = 14) -> Interactions:
    """Every user walks the item cycle 0 -> 1 -> ... from a random start: the next item is
    fully determined by the last one."""
    rng = np.random.default_rng(0)
    starts = rng.integers(0, n_items, size=n_users)
    items = (starts[:, None] + np.arange(length)[None, :]) % n_items
    users = np.repeat(np.arange(n_users), length)
    ts = np.tile(np.arange(length), n_users)
    return Interactions(users, items.ravel(), n_users, n_items, timestamps=ts)


def test_srgnn_learns_a_deterministic_transition() -> None:
    data = chain_data()
    model = SRGNN(hidden=16, n_epochs=8, batch_size=32, lr_milestones=(), valid_fraction=0.0, seed=1).fit(data)
    assert model.history_.losses[-1] < model.history_.losses[0]
    samples = SequenceSamples.prefixes(data.sequences())
    assert model.sample_metrics(samples, ks=(1,))["recall@1"] > 0.9
    last = np.array([s[-1] for s in data.sequences()])
    assert (model.score(np.arange(data.n_users)).argmax(1).numpy() == (last + 1) % data.n_items).mean() > 0.9


def test_same_seed_same_scores_and_recommend_masks_seen_items() -> None:
    data = chain_data(n_users=20, length=6)
    a = SRGNN(hidden=8, n_epochs=2, user_mode="id", user_dim=4, seed=3).fit(data)
    b = SRGNN(hidden=8, n_epochs=2, user_mode="id", user_dim=4, seed=3).fit(data)
    assert torch.equal(a.score([0, 1]), b.score([0, 1]))
    recs = a.recommend(np.arange(5), k=3).numpy()
    seen = data.to_csr()
    assert all(seen[u, recs[u]].sum() == 0 for u in range(5))


def test_validation_metrics_grouped_by_length_equal_those_in_sample_order() -> None:
    rng = np.random.default_rng(4)
    data = Interactions(np.repeat(np.arange(10), 12), rng.integers(0, 9, size=120), 10, 9, timestamps=np.tile(np.arange(12), 10))
    model = SRGNN(hidden=8, n_epochs=1, user_mode="id", user_dim=4, max_len=5, seed=1).fit(data)
    samples = SequenceSamples.prefixes(data.sequences())
    assert not model.net_.scores_are_random()
    in_order = torch.cat([torch.topk(s, 5, dim=1).indices for s in model.score_samples(samples, batch_size=7)]).numpy()
    expected = ranking_metrics(in_order, samples.truth(9), (1, 5))
    assert model.sample_metrics(samples, ks=(1, 5)) == pytest.approx(expected, rel=1e-12)
    assert list(samples.by_length(5).input_lengths(5)) == sorted(samples.input_lengths(5))


def test_registry_builds_srgnn_and_bad_parameters_are_one_line_errors() -> None:
    assert isinstance(make_model("srgnn", hidden=8), SRGNN)
    for bad in ({"hidden": 0}, {"user_mode": "age"}, {"adjacency": "norm"}, {"valid_fraction": 1.0}):
        with pytest.raises(ConfigError):
            SRGNN(**bad)
    with pytest.raises(ConfigError, match="'eps1' is not a parameter"):  # feature LDP belongs to the defences
        make_model("srgnn", eps1=1.0)
    with pytest.raises(DataError, match="user features"):
        SRGNN(user_mode="features", n_epochs=1).fit(chain_data(n_users=5))
