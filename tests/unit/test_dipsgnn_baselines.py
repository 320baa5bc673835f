"""The private baselines of paper 002: EdgeRand, DP-SGD on SR-GNN and DPMF (exp / imp)."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest
import torch
import torch.nn.functional as F

from recprivacy.data.interactions import Interactions
from recprivacy.defenses.dpmf import SENSITIVITY, DPMF, objective_noise
from recprivacy.defenses.dpsgd import DPSGD, _chunks, chunk_cost, fixed_partition, longest_useful_chunk, padded_partition, per_sample_grads
from recprivacy.defenses.edgerand import EdgeRand, NoisyAdjacencyNet
from recprivacy.errors import ConfigError, DataError
from recprivacy.models.srgnn import SRGNN, SequenceSamples, SRGNNNet, batch_inputs, session_graphs
from recprivacy.privacy import dpsgd_epsilon

DELTA = 2.5e-7


def sequences_data(n_users: int = 12, n_items: int = 15, length: int = 8, ratings: bool = False) -> Interactions:
    rng = np.random.default_rng(1)
    items = np.stack([rng.choice(n_items, size=length, replace=False) for _ in range(n_users)]).ravel()
    stars = rng.integers(4, 6, size=len(items)).astype(float) if ratings else None
    return Interactions(np.repeat(np.arange(n_users), length), items, n_users, n_items, ratings=stars,
                        timestamps=np.tile(np.arange(length), n_users))


SMALL = {"hidden": 8, "user_mode": "id", "user_dim": 4, "n_epochs": 2, "batch_size": 16}


# --------------------------------------------------------------------------- EdgeRand


def test_edgerand_sigma_and_noise_only_on_the_real_node_block() -> None:
    assert EdgeRand.from_params().sigma_ == pytest.approx(1.187033, abs=1e-6)
    samples = SequenceSamples.whole([np.array([1, 2, 3]), np.array([4, 5, 6, 7, 8, 4])], np.arange(2))
    graphs = session_graphs(*batch_inputs(samples, np.arange(2), 100, 10), 10)
    net = NoisyAdjacencyNet(10, 6, 1, None, 1.0, True, torch.Generator().manual_seed(0)).train()
    a_in, a_out = net.adjacencies(graphs)
    noise = a_out - graphs.adjacency
    assert (noise[0, 3:, :] == 0).all() and (noise[0, :, 3:] == 0).all()  # 3 real nodes in row 0
    assert (noise[0, :3, :3] != 0).all() and (noise[1] != 0).all()
    assert torch.equal(a_in, a_out.transpose(1, 2))  # A_in is post-processing of the noisy A_out
    assert net.scores_are_random() and not NoisyAdjacencyNet(10, 6, 1, None, 1.0, False, torch.Generator()).scores_are_random()


def test_edgerand_without_noise_is_the_non_private_count_model() -> None:
    data = sequences_data()
    a = EdgeRand.from_params(eps1=math.inf, eps2=math.inf, seed=2, **SMALL).fit(data)
    b = SRGNN(adjacency="count", seed=2, **SMALL).fit(data)
    assert torch.equal(a.score(np.arange(4)), b.score(np.arange(4)))
    assert not a.privacy_statement().part("edges, whole training run").formal


def test_edgerand_statement_composes_one_release_per_forward_pass() -> None:
    model = EdgeRand.from_params(**SMALL).fit(sequences_data())
    s = model.privacy_statement()
    assert s.part("edges, one forward pass (paper)").epsilon == 5.0
    assert s.part("edges, whole training run").epsilon > 5.0
    assert s == replace(s.part("edges, whole training run"), parts=s.parts)  # the headline: the whole run
    assert "6 prefix(es) x 2 epoch(s)" in s.scope


# --------------------------------------------------------------------------- DP-SGD


def test_per_sample_gradients_equal_single_sample_autograd() -> None:
    data = sequences_data()
    model = DPSGD.from_params(**{**SMALL, "n_epochs": 1}).fit(data)
    samples = SequenceSamples.prefixes(data.sequences())
    idx = np.array([0, 5, 9])
    params = {k: v.detach() for k, v in model.net_.named_parameters()}
    grads, losses = per_sample_grads(model.model_, params, samples, idx)
    for row, i in enumerate(idx):
        model.net_.zero_grad()
        one = np.array([i])
        loss = F.cross_entropy(model.net_(model.graphs(samples, one), torch.from_numpy(samples.users[one])),
                               torch.from_numpy(samples.subset(one).targets()))
        loss.backward()
        assert losses[row].item() == pytest.approx(loss.item(), rel=1e-5)
        for name, p in model.net_.named_parameters():
            assert torch.allclose(grads[name][row], p.grad, atol=1e-6), name


def test_clipped_sum_is_bounded_by_batch_size_times_clip_norm() -> None:
    data = sequences_data()
    model = DPSGD.from_params(max_grad_norm=0.01, **{**SMALL, "n_epochs": 1}).fit(data)
    samples = SequenceSamples.prefixes(data.sequences())
    summed, _ = model.clipped_sum(model.model_, samples, np.arange(30))
    total = math.sqrt(sum(float(g.pow(2).sum()) for g in summed.values()))
    assert total <= 30 * 0.01 + 1e-6


def features_data() -> Interactions:
    data = sequences_data()
    rng = np.random.default_rng(2)
    frame = pd.DataFrame({"gender": rng.choice(["F", "M"], size=data.n_users), "age": rng.choice([1, 18, 25], size=data.n_users)})
    return data.with_changes(user_features=frame)


@pytest.mark.parametrize("params", [{}, {"n_steps": 2}, {"user_mode": "none"}, {"max_grad_norm": 0.05},
                                    {"user_mode": "features", "user_categorical": ["gender", "age"], "eps1": math.inf}])
def test_bookkeeping_clipping_equals_the_per_sample_gradient_reference(params: dict) -> None:
    data = features_data() if params.get("user_mode") == "features" else sequences_data()
    model = DPSGD.from_params(**{**SMALL, "n_epochs": 1, **params}).fit(data)
    samples = SequenceSamples.prefixes(data.sequences())
    idx = np.arange(0, 60, 2)  # several chunks, several input lengths
    model.per_sample = "vmap"
    reference, reference_loss = model.clipped_sum(model.model_, samples, idx)
    model.per_sample = "bookkeeping"
    fast, loss = model.clipped_sum(model.model_, samples, idx)
    assert loss == pytest.approx(reference_loss, rel=1e-6)
    assert fast.keys() == reference.keys()
    for name in reference:
        torch.testing.assert_close(fast[name], reference[name], rtol=1e-5, atol=1e-6, msg=name)


def test_dpsgd_training_is_the_same_with_either_per_sample_method() -> None:
    data = sequences_data()
    reference = DPSGD.from_params(seed=3, noise="simulation", **SMALL)
    reference.per_sample = "vmap"
    reference.fit(data)
    fast = DPSGD.from_params(seed=3, noise="simulation", **SMALL).fit(data)
    assert fast.history_.losses == pytest.approx(reference.history_.losses, rel=1e-5)
    torch.testing.assert_close(fast.score(np.arange(6)), reference.score(np.arange(6)), rtol=1e-4, atol=1e-5)


def test_dpsgd_noise_is_calibrated_to_the_target_and_the_statement_uses_steps_taken() -> None:
    model = DPSGD.from_params(eps2=3.0, **SMALL).fit(sequences_data())
    assert model.noise_multiplier_ > 0 and model.steps_ == 2 * model.steps_per_epoch_
    eps = dpsgd_epsilon(model.noise_multiplier_, model.sample_rate_, model.steps_, DELTA)
    assert eps <= 3.0 + 1e-9
    statement = model.privacy_statement()
    assert statement == replace(statement.part("training samples, whole training run"), parts=statement.parts)
    assert statement.epsilon == pytest.approx(eps) and "group privacy" in statement.notes[0]
    with pytest.raises(ConfigError, match="max_grad_norm"):
        DPSGD.from_params(max_grad_norm=0)


# --------------------------------------------------------------------------- DP-SGD chunks


@pytest.mark.parametrize(("widths", "overhead", "doubling", "ends"), [
    ([1, 1, 1, 10], 5, math.inf, [3, 4]),      # 8 + 15 = 23; one chunk 45, all apart 33, [1, 1] [1, 10] 32
    ([1, 2, 3, 4], 2, math.inf, [2, 4]),       # 6 + 10 = 16; every other cut 17 or 18
    ([5, 5, 5], 1, math.inf, [3]),             # equal widths, linear cost: one chunk
    ([2, 2, 2, 2], 3, 4.0, [2, 4]),            # 2 x (3 + 4 + 16/4) = 22; one chunk 27, apart 24, [1, 1, 2] 23
    ([2, 2, 2, 2], 1, 4.0, [1, 2, 3, 4]),      # 4 x (1 + 2 + 4/4) = 16; two of two 18, [1, 1, 2] 17
    ([7], 190, 6700, [1]),                     # one sample
    ([], 190, 6700, []),                       # empty sample: no chunk
])  # fmt: skip
def test_dpsgd_partition_hand_computed(widths: list[int], overhead: float, doubling: float, ends: list[int]) -> None:
    got = padded_partition(np.array(widths, dtype=np.int64), overhead, doubling)
    assert got.tolist() == ends


def test_dpsgd_chunk_cost_is_overhead_plus_padded_rows_plus_their_square_over_v() -> None:
    assert chunk_cost(4, 2, 3.0, 4.0) == 3 + 8 + 64 / 4
    assert chunk_cost(np.array([1, 4]), np.array([5, 5]), 1.0, math.inf).tolist() == [6, 21]
    assert longest_useful_chunk(2, 3.0, 4.0) == pytest.approx(math.sqrt(7))  # (s² - 1) 4 > 24 beyond


def set_partitions(items: list[int]):
    """Every partition of ``items`` into non-empty groups."""
    if not items:
        yield []
        return
    first, rest = items[0], items[1:]
    for part in set_partitions(rest):
        yield [[first]] + part
        for k in range(len(part)):
            yield part[:k] + [[first] + part[k]] + part[k + 1 :]


def test_dpsgd_partition_is_optimal_over_every_partition_of_the_sample() -> None:
    rng = np.random.default_rng(0)
    for _ in range(40):
        widths = np.sort(rng.integers(1, 12, size=rng.integers(1, 8)))
        overhead, doubling = float(rng.choice([0.5, 3, 10, 40])), float(rng.choice([2, 10, 100, math.inf]))
        ends = padded_partition(widths, overhead, doubling)
        assert ends[-1] == len(widths) and (np.diff(ends, prepend=0) > 0).all()
        sizes = np.diff(ends, prepend=0)
        got = chunk_cost(sizes, widths[ends - 1], overhead, doubling).sum()
        best = min(sum(chunk_cost(len(g), widths[g].max(), overhead, doubling) for g in part)
                   for part in set_partitions(list(range(len(widths)))))  # fmt: skip
        assert got == pytest.approx(best), (widths.tolist(), overhead, doubling)
        assert sizes.max() <= longest_useful_chunk(widths[0], overhead, doubling)


def test_dpsgd_partition_splits_long_equal_widths_into_near_equal_chunks() -> None:
    ends = padded_partition(np.full(100, 79))  # one chunk would be 7,900 padded rows
    sizes = np.diff(ends, prepend=0)
    assert len(sizes) > 1 and sizes.max() - sizes.min() <= 1
    assert padded_partition(np.full(100, 1)).tolist() == [100]  # 100 rows: one chunk


def long_prefixes() -> SequenceSamples:
    rng = np.random.default_rng(3)
    return SequenceSamples.prefixes([rng.integers(0, 50, size=130), rng.integers(0, 50, size=40)])


@pytest.mark.parametrize("size", [None, 25, 7])
def test_dpsgd_chunks_hold_every_sample_once_in_stable_length_order(size: int | None) -> None:
    samples = long_prefixes()
    idx = np.random.default_rng(4).permutation(len(samples))[:90]
    chunks = _chunks(samples, idx, 100, size)
    lengths = samples.input_lengths(100)
    assert np.array_equal(np.concatenate(chunks), idx[np.argsort(lengths[idx], kind="stable")])
    sizes = [len(c) for c in chunks]
    widths = np.sort(np.maximum(lengths[idx], 1))
    expected = np.diff(padded_partition(widths), prepend=0) if size is None else [size] * (90 // size) + [90 % size] * (90 % size > 0)
    assert sizes == list(expected) and len(chunks) > 1
    assert _chunks(samples, idx[:0], 100, size) == []


@pytest.mark.parametrize("size", [0, -3, 2.5, True, "25"])
def test_dpsgd_fixed_chunks_refuse_a_size_that_is_not_a_positive_integer(size) -> None:
    with pytest.raises(ConfigError, match="DPSGD.chunk_size: expected a positive integer or None"):
        fixed_partition(10, size)
    assert fixed_partition(10, 4).tolist() == [4, 8, 10] and fixed_partition(0, 4).tolist() == []


def test_dpsgd_clipped_sum_does_not_depend_on_the_chunks() -> None:
    data = sequences_data()
    model = DPSGD.from_params(**{**SMALL, "n_epochs": 1}).fit(data)
    samples = SequenceSamples.prefixes(data.sequences())
    idx = np.arange(0, 80, 3)
    sums = {}
    for size in (None, 25, 1):
        model.chunk_size = size
        sums[size] = model.clipped_sum(model.model_, samples, idx)
    assert len(_chunks(samples, idx, model.max_len, None)) == 1 and len(_chunks(samples, idx, model.max_len, 25)) == 2
    for size in (25, 1):
        assert sums[size][1] == pytest.approx(sums[None][1], rel=1e-6)
        for name, summed in sums[None][0].items():
            torch.testing.assert_close(sums[size][0][name], summed, rtol=1e-5, atol=1e-6, msg=name)


# --------------------------------------------------------------------------- DPMF


def test_objective_noise_has_gamma_norms_and_uniform_directions() -> None:
    eta = objective_noise(20_000, 8, 4.0, SENSITIVITY, np.random.default_rng(0))
    norms = np.linalg.norm(eta, axis=1)
    assert norms.mean() == pytest.approx(8 * SENSITIVITY / 4.0, rel=0.02)  # Gamma(d, Δ/ε) mean
    assert norms.var() == pytest.approx(8 * (SENSITIVITY / 4.0) ** 2, rel=0.05)
    assert np.abs((eta / norms[:, None]).mean(0)).max() < 0.02


@pytest.mark.parametrize("feedback", ["implicit", "explicit"])
def test_dpmf_trains_with_user_factors_in_the_unit_ball(feedback: str) -> None:
    model = DPMF(feedback=feedback, n_factors=4, n_epochs=3, batch_size=32).fit(sequences_data(ratings=True))
    assert model.user_factors_.norm(dim=1).max() <= 1.0 + 1e-6
    statement = model.privacy_statement()
    assert statement.epsilon == 5.0 and statement.delta == 0.0
    assert any("BPR" in n for n in statement.notes) == (feedback == "implicit")


def test_dpmf_explicit_needs_bounded_ratings() -> None:
    with pytest.raises(DataError, match="needs ratings"):
        DPMF(feedback="explicit", n_epochs=1).fit(sequences_data())
    bad = sequences_data(ratings=True)
    bad = bad.with_changes(ratings=bad.ratings * 2)
    with pytest.raises(DataError, match=r"\[0, 5\]"):
        DPMF(feedback="explicit", n_epochs=1).fit(bad)
    with pytest.raises(ConfigError, match="feedback"):
        DPMF(feedback="ratings")


# --------------------------------------------------------------------------- the backbone as an object


def test_dpsgd_engine_trains_a_copy_of_any_srgnn_backbone_with_its_own_network() -> None:
    data = sequences_data()
    backbone = SRGNN(adjacency="degree", seed=4, **SMALL)
    engine = DPSGD(backbone, noise="simulation").fit(data)
    assert not hasattr(backbone, "net_") and backbone.hooks is not engine  # the backbone passed in is untouched
    assert type(engine.net_) is SRGNNNet  # the backbone's own network: the engine changes only the steps
    assert engine.net_.adjacency_mode == "degree" and engine.steps_ == 2 * engine.steps_per_epoch_
    assert engine.privacy_statement().part("training samples, whole training run").epsilon == pytest.approx(5.0, rel=0.05)
    flat = DPSGD.from_params(adjacency="degree", seed=4, noise="simulation", **SMALL).fit(data)
    assert torch.equal(flat.score(np.arange(4)), engine.score(np.arange(4)))


def test_wrapped_backbones_are_checked_and_their_parameters_stay_on_the_backbone() -> None:
    with pytest.raises(ConfigError, match="adjacency must be 'count'"):
        EdgeRand(SRGNN())  # EdgeRand perturbs raw transition counts
    with pytest.raises(ConfigError, match="expected an SRGNN, got dict"):
        DPSGD({"hidden": 8})
    model = EdgeRand(SRGNN(adjacency="count", hidden=8))
    assert model.hidden == 8 and model.seed == 0
    with pytest.raises(ConfigError, match="n_epochs is a backbone parameter"):
        model.n_epochs = 1
