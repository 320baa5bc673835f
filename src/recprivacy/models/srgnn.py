"""SR-GNN: gated graph neural network on per-sequence item graphs (Wu et al., AAAI 2019), with
the optional user embedding of A-PGNN (Zhang et al. 2020) that DIPSGNN (paper 002) builds on.

Graph of one input sequence s_1..s_n (paper 002, Sec. 4.2, Eq. 4): the nodes are its distinct
items, ``A_out[i, j] = #(v_i followed immediately by v_j)`` and ``A_in = A_outᵀ``. With
``adjacency="degree"`` (SR-GNN) both are divided by the node's out- / in-degree; with
``"count"`` (A-PGNN style, DIPSGNN) the raw counts are used.

One propagation step t = 1..T (weights shared over steps; paper 002, Eqs. 7-9):

    H      = E ⊕ e_u                          node item states joined with the user vector
    M_in   = A_in H,  M_out = A_out H         (DIPSGNN normalises H and adds noise here)
    a      = [M_in W_in + b_in ; M_out W_out + b_out]
    E'     = GRU(a, E)                        r = σ(..), z = σ(..), n = tanh(.. + r ⊙ ..),
                                              E' = n + z ⊙ (E − n)   (SR-GNN / torch GRUCell)

Readout (paper 002, Eqs. 10-12): with e_s the final state of position s and z_l = e_n,

    α_s = qᵀ σ(W_1 z_l + W_2 e_s + c)   (no softmax, padding masked)
    z_g = Σ_s α_s e_s,    z = W_3 [z_g ; z_l ; e_u],    score_i = zᵀ E_V[i]   for every item i

trained with softmax cross-entropy over all items (the reference code's loss, in place of the
BCE-style sum of DIPSGNN's Eq. 13). Candidate vectors are the initial item embeddings (as in
the SR-GNN code; only the items of the input get GNN states).

Decisions (paper 002 where it is silent, and the SR-GNN code; docs/decisions.md, "DIPSGNN (paper 002)"):

* the linear map follows the aggregation, ``(A H) W + b``, in every variant (SR-GNN computes
  ``A (H W + b)``, which differs only in how the bias is weighted by the degree);
* user vector ``e_u``: ``user_mode="none"`` (SR-GNN), ``"id"`` (a learned table; the paper's
  "-U" variants) or ``"features"`` (``x_u E_U`` without bias, x_u the encoded user features,
  ``data.features.encode_features``);
* every parameter starts U(-1/sqrt(d), 1/sqrt(d)) (SR-GNN); Adam (lr 0.01, weight decay 1e-5),
  learning rate x0.1 after epochs 2, 5 and 8 (the reference code's effective schedule; the
  paper only says the rate was tuned), batch 100, 10 epochs, the epoch with the best validation Recall@20 kept;
* training samples are all prefixes of each user's training sequence (n - 1 per sequence);
  without ``valid``, a random ``valid_fraction`` of them is held out for epoch selection
  (the SR-GNN/DIPSGNN protocol); with ``valid`` (the generic ``train``/``audit`` protocol)
  validation is full-ranking Recall@20 of the next items after each training sequence.

Layering: the model imports nothing from ``privacy/``. A defence that wraps it (DIPSGNN,
EdgeRand, the DP-SGD engine in ``defenses/``) gives a copy of it its ``TrainingHooks``: the
user features it reads (DIPSGNN Algorithm 3 perturbs them), the network it trains (noisy
aggregation or adjacency, with the defence's own noise generator), and how an epoch becomes
optimizer steps (Poisson sampling, clipped and noised gradients). The plain model uses the
defaults, so its numbers do not depend on any defence.

Batching: a mini-batch of prefixes becomes padded tensors (nodes ``[B, N]``, alias ``[B, L]``,
adjacency ``[B, N, N]``) built with one sort and one scatter-add for the whole batch, so no
Python loop runs over sequences. Item ids are ``0..n_items-1``; ``n_items`` is padding.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
import scipy.sparse as sp
import torch
import torch.nn.functional as F
from torch import nn

from recprivacy.data.features import encode_features
from recprivacy.data.interactions import Interactions
from recprivacy.errors import ConfigError, DataError
from recprivacy.metrics.ranking import evaluate, ranking_metrics
from recprivacy.models.base import Recommender
from recprivacy.models.training import TrainingHistory, fit_epochs

USER_MODES = ("none", "id", "features")
ADJACENCY = ("degree", "count")

# --------------------------------------------------------------------------- samples


@dataclass(frozen=True)
class SequenceSamples:
    """Next-item samples over flat sequences.

    Sample ``k`` reads sequence ``r = rows[k]``, ``items[offsets[r]:offsets[r + 1]]``: its input
    is positions ``starts[k]..ends[k]-1`` and its target position ``ends[k]`` (no target when
    ``ends[k]`` is the sequence length, as for ``Recommender.score``); ``users[k]`` is the
    internal user whose vector the model uses.
    """

    items: np.ndarray
    offsets: np.ndarray
    rows: np.ndarray
    starts: np.ndarray
    ends: np.ndarray
    users: np.ndarray

    def __len__(self) -> int:
        return len(self.rows)

    @classmethod
    def prefixes(
        cls,
        sequences: Sequence[np.ndarray],
        first_target: np.ndarray | int = 1,
        context_start: np.ndarray | int = 0,
    ) -> "SequenceSamples":
        """One sample per target position ``p >= first_target[u]`` of every user's sequence,
        with input positions ``context_start[u]..p-1`` (paper 002, Sec. 4.2 sample generation:
        ``[1, 2, 3, 4]`` gives ``([1], 2), ([1, 2], 3), ([1, 2, 3], 4)``)."""
        items, offsets = flatten_sequences(sequences)
        lengths = np.diff(offsets)
        first = np.broadcast_to(np.asarray(first_target, dtype=np.int64), lengths.shape)
        start = np.broadcast_to(np.asarray(context_start, dtype=np.int64), lengths.shape)
        if (first <= start).any():
            raise DataError("prefix samples: every first target must come after the context start")
        counts = np.maximum(lengths - first, 0)
        rows = np.repeat(np.arange(len(lengths)), counts)
        rank = np.arange(counts.sum()) - np.repeat(np.cumsum(counts) - counts, counts)
        return cls(items, offsets, rows, start[rows].copy(), first[rows] + rank, rows)

    @classmethod
    def whole(cls, sequences: Sequence[np.ndarray], users: np.ndarray) -> "SequenceSamples":
        """One target-less sample per sequence, its whole length as input, for ``users``."""
        items, offsets = flatten_sequences(sequences)
        users = np.asarray(users, dtype=np.int64)
        if len(users) != len(sequences):
            raise DataError(f"got {len(sequences)} histories but {len(users)} users")
        rows = np.arange(len(sequences))
        return cls(items, offsets, rows, np.zeros(len(rows), np.int64), np.diff(offsets), users)

    def input_lengths(self, max_len: int) -> np.ndarray:
        """Length of each sample's input once cut to its last ``max_len`` items."""
        return np.minimum(self.ends - self.starts, max_len)

    def by_length(self, max_len: int) -> "SequenceSamples":
        """The same samples ordered by input length (stable), for batches that pad little."""
        return self.subset(np.argsort(self.input_lengths(max_len), kind="stable"))

    def subset(self, idx: np.ndarray) -> "SequenceSamples":
        """The samples at ``idx`` (same sequences)."""
        return SequenceSamples(self.items, self.offsets, self.rows[idx], self.starts[idx], self.ends[idx], self.users[idx])

    def targets(self) -> np.ndarray:
        """Target item of every sample (DataError if some sample has none)."""
        if len(self) and (self.ends >= np.diff(self.offsets)[self.rows]).any():
            raise DataError("some samples have no target (their input is the whole sequence)")
        return self.items[self.offsets[self.rows] + self.ends]

    def truth(self, n_items: int) -> sp.csr_matrix:
        """``[n_samples, n_items]`` one-hot matrix of the targets (for ``ranking_metrics``)."""
        n = len(self)
        return sp.csr_matrix((np.ones(n), (np.arange(n), self.targets())), shape=(n, n_items))


def flatten_sequences(sequences: Sequence[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """Concatenated int64 items and the ``n + 1`` offsets of each sequence."""
    lengths = np.fromiter((len(s) for s in sequences), dtype=np.int64, count=len(sequences))
    offsets = np.concatenate([[0], np.cumsum(lengths)])
    items = np.concatenate([np.asarray(s, dtype=np.int64) for s in sequences]) if lengths.sum() else np.zeros(0, np.int64)
    return items, offsets


def length_pooled_batches(lengths: np.ndarray, batch_size: int, rng: np.random.Generator, pool: int = 50) -> Iterator[np.ndarray]:
    """Shuffled batches of similar input length: the samples are shuffled, cut into pools of
    ``pool`` batches, each pool sorted by length and cut into batches, and the batch order
    shuffled. Every sample appears once; padding (and so compute) drops to about half of that
    of plain shuffled batches on prefix samples."""
    perm = rng.permutation(len(lengths))
    size = batch_size * pool
    batches = []
    for lo in range(0, len(perm), size):
        chunk = perm[lo : lo + size]
        chunk = chunk[np.argsort(lengths[chunk], kind="stable")]
        batches += [chunk[i : i + batch_size] for i in range(0, len(chunk), batch_size)]
    for b in rng.permutation(len(batches)):
        yield batches[b]


def batch_inputs(samples: SequenceSamples, idx: np.ndarray, max_len: int, pad: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Right-padded inputs ``[B, L]`` (the last ``max_len`` items of each sample's context)
    and their lengths; an empty context becomes one padding item."""
    ends = samples.ends[idx]
    starts = np.maximum(samples.starts[idx], ends - max_len)
    lengths = ends - starts
    width = max(int(lengths.max()) if len(idx) else 1, 1)
    pos = np.arange(width)
    valid = pos[None, :] < lengths[:, None]
    flat = samples.offsets[samples.rows[idx]][:, None] + starts[:, None] + pos[None, :]
    items = samples.items[np.where(valid, flat, 0)] if len(samples.items) else np.zeros(valid.shape, np.int64)
    seqs = np.where(valid, items, pad)
    return torch.from_numpy(seqs), torch.from_numpy(np.maximum(lengths, 1))


# --------------------------------------------------------------------------- graphs


@dataclass(frozen=True)
class SessionGraphs:
    """A batch of per-sequence item graphs as padded tensors.

    ``nodes[b, i]``: item of node i (padding id on padded nodes); ``alias[b, s]``: node of
    position s; ``adjacency[b, i, j]``: transition count i -> j (A_out); ``position_mask`` and
    ``node_mask`` mark real positions / nodes; ``last[b]``: index of the last position.
    """

    nodes: torch.Tensor
    alias: torch.Tensor
    adjacency: torch.Tensor
    position_mask: torch.Tensor
    node_mask: torch.Tensor
    last: torch.Tensor

    def tensors(self) -> tuple[torch.Tensor, ...]:
        return (self.nodes, self.alias, self.adjacency, self.position_mask, self.node_mask, self.last)


def session_graphs(seqs: torch.Tensor, lengths: torch.Tensor, pad: int) -> SessionGraphs:
    """Graphs of right-padded sequences ``[B, L]`` (padding id ``pad`` is larger than every
    item), vectorised over the batch: a row-wise sort finds the distinct items, a cumulative
    sum numbers them, and one ``index_put_`` with accumulation counts the transitions."""
    batch, width = seqs.shape
    sorted_items, order = torch.sort(seqs, dim=1, stable=True)
    first = torch.ones_like(sorted_items, dtype=torch.bool)
    first[:, 1:] = sorted_items[:, 1:] != sorted_items[:, :-1]
    rank = first.long().cumsum(1) - 1
    n_nodes = (first & (sorted_items != pad)).sum(1)
    n_max = max(int(n_nodes.max()), 1)
    nodes = torch.full((batch, width + 1), pad, dtype=torch.long).scatter_(1, rank, sorted_items)[:, :n_max]
    position_mask = torch.arange(width)[None, :] < lengths[:, None]
    alias = torch.empty_like(rank).scatter_(1, order, rank)
    alias = torch.where(position_mask, alias, torch.zeros_like(alias))
    adjacency = torch.zeros(batch, n_max, n_max)
    step = position_mask[:, 1:]
    rows = torch.arange(batch)[:, None].expand(-1, width - 1)
    adjacency.index_put_((rows[step], alias[:, :-1][step], alias[:, 1:][step]), torch.ones(int(step.sum())), accumulate=True)
    node_mask = torch.arange(n_max)[None, :] < n_nodes[:, None]
    return SessionGraphs(nodes, alias, adjacency, position_mask, node_mask, lengths - 1)


def degree_normalised(adjacency: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """SR-GNN's ``(A_in, A_out)``: counts divided by in-degree / out-degree (0 stays 0)."""
    out_deg = adjacency.sum(2, keepdim=True).clamp(min=1.0)
    in_deg = adjacency.sum(1, keepdim=True).clamp(min=1.0)
    return (adjacency / in_deg).transpose(1, 2), adjacency / out_deg


# --------------------------------------------------------------------------- network


class UserEncoder(nn.Module):
    """``e_u``: rows of a learned table (``features=None``) or ``x_u E_U`` (no bias)."""

    def __init__(self, n_users: int, dim: int, features: torch.Tensor | None) -> None:
        super().__init__()
        self.dim = dim
        if features is None:
            self.table = nn.Embedding(n_users, dim)
        else:
            self.register_buffer("features", features.float())
            self.project = nn.Linear(features.shape[1], dim, bias=False)

    def forward(self, users: torch.Tensor) -> torch.Tensor:
        if hasattr(self, "table"):
            return self.table(users)
        return self.project(self.features[users])


class SRGNNNet(nn.Module):
    """Gated GNN + attention readout (module docstring). Subclasses change ``adjacencies``
    (EdgeRand) or ``aggregate`` (DIPSGNN)."""

    def __init__(self, n_items: int, hidden: int, n_steps: int, adjacency: str, user: UserEncoder | None) -> None:
        super().__init__()
        self.n_items = n_items
        self.hidden = hidden
        self.n_steps = n_steps
        self.adjacency_mode = adjacency
        self.user = user
        width = hidden + (user.dim if user is not None else 0)
        self.item_emb = nn.Embedding(n_items + 1, hidden)
        self.edge_in = nn.Linear(width, hidden)
        self.edge_out = nn.Linear(width, hidden)
        self.gate_input = nn.Linear(2 * hidden, 3 * hidden)
        self.gate_hidden = nn.Linear(hidden, 3 * hidden)
        self.linear_one = nn.Linear(hidden, hidden)
        self.linear_two = nn.Linear(hidden, hidden)
        self.linear_three = nn.Linear(hidden, 1, bias=False)
        self.transform = nn.Linear(width + hidden, hidden)
        bound = 1.0 / math.sqrt(hidden)
        for p in self.parameters():
            nn.init.uniform_(p, -bound, bound)

    def scores_are_random(self) -> bool:
        """Whether scoring (eval mode) draws noise, so that regrouping samples into other
        batches would change the draws (subclasses with inference noise say so)."""
        return False

    def adjacencies(self, graphs: SessionGraphs) -> tuple[torch.Tensor, torch.Tensor]:
        """``(A_in, A_out)`` used by every propagation step of one forward pass."""
        if self.adjacency_mode == "degree":
            return degree_normalised(graphs.adjacency)
        return graphs.adjacency.transpose(1, 2), graphs.adjacency

    def aggregate(self, joint: torch.Tensor, a_in: torch.Tensor, a_out: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """``(A_in H, A_out H, GRU hidden state)`` for the joint node states ``H``."""
        return a_in @ joint, a_out @ joint, joint[..., : self.hidden]

    def gru(self, a: torch.Tensor, h: torch.Tensor) -> torch.Tensor:
        """SR-GNN's gated update (equal to ``torch.nn.GRUCell`` with the same weights)."""
        i_r, i_z, i_n = self.gate_input(a).chunk(3, -1)
        h_r, h_z, h_n = self.gate_hidden(h).chunk(3, -1)
        reset = torch.sigmoid(i_r + h_r)
        update = torch.sigmoid(i_z + h_z)
        new = torch.tanh(i_n + reset * h_n)
        return new + update * (h - new)

    def node_states(self, graphs: SessionGraphs, user_vec: torch.Tensor | None) -> torch.Tensor:
        """Node states ``[B, N, hidden]`` after ``n_steps`` propagation steps."""
        states = self.item_emb(graphs.nodes)
        a_in, a_out = self.adjacencies(graphs)
        for _ in range(self.n_steps):
            joint = states if user_vec is None else torch.cat([states, user_vec[:, None].expand(-1, states.shape[1], -1)], -1)
            m_in, m_out, hidden = self.aggregate(joint, a_in, a_out)
            states = self.gru(torch.cat([self.edge_in(m_in), self.edge_out(m_out)], -1), hidden)
        return states

    def session(self, graphs: SessionGraphs, users: torch.Tensor) -> torch.Tensor:
        """Session vectors ``z = W_3 [z_g ; z_l ; e_u]``, ``[B, hidden]``."""
        user_vec = self.user(users) if self.user is not None else None
        states = self.node_states(graphs, user_vec)
        seq = torch.gather(states, 1, graphs.alias[..., None].expand(-1, -1, self.hidden))
        local = torch.gather(seq, 1, graphs.last[:, None, None].expand(-1, 1, self.hidden))[:, 0]
        alpha = self.linear_three(torch.sigmoid(self.linear_one(local)[:, None] + self.linear_two(seq)))
        glob = (alpha * seq * graphs.position_mask[..., None]).sum(1)
        parts = [glob, local] + ([user_vec] if user_vec is not None else [])
        return self.transform(torch.cat(parts, -1))

    def candidates(self) -> torch.Tensor:
        """Item vectors the session vector is scored against: the initial embeddings of
        every item (as the SR-GNN code, not their GNN states), ``[n_items, hidden]``."""
        return self.item_emb.weight[: self.n_items]

    def forward(self, graphs: SessionGraphs, users: torch.Tensor) -> torch.Tensor:
        """Scores ``[B, n_items]`` of every item as the next one."""
        return self.session(graphs, users) @ self.candidates().T


# --------------------------------------------------------------------------- recommender


class TrainingHooks:
    """What a defence wrapping SR-GNN may change in its training (module docstring, "Layering");
    these defaults are the plain model."""

    def label(self, model: "SRGNN") -> str:
        """What progress messages call the model being trained."""
        return type(model).__name__

    def user_features(self, model: "SRGNN", table: pd.DataFrame) -> pd.DataFrame:
        """Encoded user features ``x_u``, one row per user (clean)."""
        return encode_features(table, model.user_numeric, model.user_categorical, bounds=model.user_bounds,
                               categories=model.user_categories)

    def network(self, model: "SRGNN", user: UserEncoder | None) -> SRGNNNet:
        """The network to train (called once ``model.n_items_`` is known)."""
        return SRGNNNet(model.n_items_, model.hidden, model.n_steps, model.adjacency, user)

    def start(self, model: "SRGNN", samples: SequenceSamples) -> None:
        """Called once the training samples are fixed."""

    def batches(self, model: "SRGNN", samples: SequenceSamples, rng: np.random.Generator) -> Iterator[np.ndarray]:
        """Sample indices of each step of one epoch: length-pooled shuffled batches."""
        return length_pooled_batches(samples.input_lengths(model.max_len), model.batch_size, rng)

    def step(self, model: "SRGNN", samples: SequenceSamples, idx: np.ndarray, optimizer: torch.optim.Optimizer) -> float:
        """One optimizer step on the mean softmax cross-entropy of the batch; returns the loss."""
        loss = F.cross_entropy(model.net_(model.graphs(samples, idx), torch.from_numpy(samples.users[idx])),
                               torch.from_numpy(samples.subset(idx).targets()))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        return loss.item()


PLAIN = TrainingHooks()


class SRGNN(Recommender):
    """Session-graph GNN recommender (module docstring for the model and the protocol).

    Parameters
    ----------
    hidden:
        Item embedding size d (100).
    n_steps:
        Propagation steps T (1).
    user_mode, user_dim:
        User vector: ``"none"`` (SR-GNN), ``"id"`` or ``"features"``; its size d' (50).
    user_numeric, user_categorical, user_categories, user_bounds:
        Feature columns of ``train.user_features`` (``"features"`` mode), the declared
        categories of categorical ones and public (low, high) bounds of numeric ones
        (``data.features.encode_features``).
    adjacency:
        ``"degree"`` (SR-GNN normalisation) or ``"count"`` (raw transition counts).
    max_len:
        Inputs keep their last ``max_len`` items.
    lr, weight_decay, lr_milestones, lr_gamma:
        Adam and the per-epoch step schedule.
    batch_size, n_epochs, patience, valid_fraction:
        Training length, early stopping and the held-out share of training samples.
    seed:
        Seeds weights, batch order and the validation hold-out.
    """

    sequential = True

    def __init__(
        self,
        hidden: int = 100,
        n_steps: int = 1,
        user_mode: str = "none",
        user_dim: int = 50,
        user_numeric: Sequence[str] = (),
        user_categorical: Sequence[str] = ("gender", "age", "occupation"),
        user_categories: Mapping[str, Sequence] | None = None,
        user_bounds: Mapping[str, Sequence[float]] | None = None,
        adjacency: str = "degree",
        max_len: int = 100,
        lr: float = 0.01,
        weight_decay: float = 1e-5,
        lr_milestones: Sequence[int] = (2, 5, 8),
        lr_gamma: float = 0.1,
        batch_size: int = 100,
        n_epochs: int = 10,
        patience: int = 5,
        valid_fraction: float = 0.1,
        seed: int = 0,
    ) -> None:
        super().__init__(seed=seed)
        #: set by a wrapping defence on its own copy (module docstring, "Layering")
        self.hooks: TrainingHooks = PLAIN
        self.hidden = hidden
        self.n_steps = n_steps
        self.user_mode = user_mode
        self.user_dim = user_dim
        self.user_numeric = tuple(user_numeric)
        self.user_categorical = tuple(user_categorical)
        self.user_categories = None if user_categories is None else {k: list(v) for k, v in user_categories.items()}
        self.user_bounds = None if user_bounds is None else {k: tuple(v) for k, v in user_bounds.items()}
        self.adjacency = adjacency
        self.max_len = max_len
        self.lr = lr
        self.weight_decay = weight_decay
        self.lr_milestones = tuple(lr_milestones)
        self.lr_gamma = lr_gamma
        self.batch_size = batch_size
        self.n_epochs = n_epochs
        self.patience = patience
        self.valid_fraction = valid_fraction
        self._check_params()

    def edge_reuse(self) -> int:
        """Most forward passes per epoch that contain one transition occurrence: the training
        prefixes whose input window holds it (held-out validation prefixes included, as they
        are scored every epoch), ``max_u min(n_u - 2, max_len - 1)`` for training lengths
        ``n_u`` (the first transition of the longest sequence), plus one when validation scores
        each whole training sequence (``fit`` given ``valid``)."""
        self._check_fitted()
        lengths = np.fromiter((len(s) for s in self.sequences_), dtype=np.int64, count=len(self.sequences_))
        prefixes = int(np.minimum(lengths - 2, self.max_len - 1).max(initial=1))
        return max(1, prefixes + int(self.validates_whole_sequences_))

    def _check_params(self) -> None:
        name = type(self).__name__
        for key in ("hidden", "n_steps", "user_dim", "max_len", "batch_size", "n_epochs", "patience"):
            value = getattr(self, key)
            if not isinstance(value, (int, np.integer)) or isinstance(value, bool) or value < 1:
                raise ConfigError(f"{name}.{key}: expected a positive integer, got {value!r}")
        if self.user_mode not in USER_MODES:
            raise ConfigError(f"{name}.user_mode: expected one of {USER_MODES}, got {self.user_mode!r}")
        if self.adjacency not in ADJACENCY:
            raise ConfigError(f"{name}.adjacency: expected one of {ADJACENCY}, got {self.adjacency!r}")
        if self.user_mode == "features" and not (self.user_numeric or self.user_categorical):
            raise ConfigError(f"{name}: user_mode 'features' needs user_numeric or user_categorical columns")
        for key in ("lr", "lr_gamma"):
            if not isinstance(getattr(self, key), (int, float)) or not getattr(self, key) > 0:
                raise ConfigError(f"{name}.{key}: expected a positive number, got {getattr(self, key)!r}")
        if not isinstance(self.weight_decay, (int, float)) or self.weight_decay < 0:
            raise ConfigError(f"{name}.weight_decay: expected a number >= 0, got {self.weight_decay!r}")
        if not 0.0 <= self.valid_fraction < 1.0:
            raise ConfigError(f"{name}.valid_fraction: expected a value in [0, 1), got {self.valid_fraction!r}")

    # ------------------------------------------------------------------ building
    def _user_encoder(self, train: Interactions) -> UserEncoder | None:
        if self.user_mode == "none":
            return None
        if self.user_mode == "id":
            return UserEncoder(train.n_users, self.user_dim, None)
        if train.user_features is None:
            raise DataError(f"{train.name}: SR-GNN user_mode 'features' needs user features; this dataset has none")
        self.user_features_ = self.hooks.user_features(self, train.user_features)
        return UserEncoder(train.n_users, self.user_dim, torch.tensor(self.user_features_.to_numpy(), dtype=torch.float32))

    # ------------------------------------------------------------------ training
    def _fit(self, train: Interactions, valid: Interactions | None) -> None:
        rng = np.random.default_rng(self.seed)
        self.sequences_ = train.sequences()
        self.net_ = self.hooks.network(self, self._user_encoder(train))
        samples = SequenceSamples.prefixes(self.sequences_)
        if not len(samples):
            raise DataError(f"{train.name}: no training samples (every training sequence has fewer than 2 items)")
        self.validates_whole_sequences_ = valid is not None
        if valid is None:
            perm = rng.permutation(len(samples))
            n_valid = int(round(self.valid_fraction * len(samples)))
            held = samples.subset(np.sort(perm[:n_valid]))
            samples = samples.subset(np.sort(perm[n_valid:]))
            validate = (lambda: self.sample_metrics(held, ks=(20,))["recall@20"]) if n_valid else None
        else:
            validate = lambda: evaluate(self, valid, ks=(20,))["recall@20"]  # noqa: E731
        self.n_train_samples_ = len(samples)
        self.hooks.start(self, samples)
        optimizer = torch.optim.Adam(self.net_.parameters(), lr=self.lr, weight_decay=self.weight_decay)
        schedule = torch.optim.lr_scheduler.MultiStepLR(optimizer, list(self.lr_milestones), self.lr_gamma)

        def run_epoch(epoch: int) -> float:
            total = 0.0
            for idx in self.hooks.batches(self, samples, rng):
                total += self.hooks.step(self, samples, idx, optimizer) * len(idx)
            schedule.step()
            return total / len(samples)

        self.history_: TrainingHistory = fit_epochs(self.net_, run_epoch, self.n_epochs, validate, 1, self.patience,
                                                    desc=self.hooks.label(self))

    def graphs(self, samples: SequenceSamples, idx: np.ndarray) -> SessionGraphs:
        """The padded session graphs of ``samples[idx]`` (inputs cut to ``max_len``)."""
        seqs, lengths = batch_inputs(samples, idx, self.max_len, self.n_items_)
        return session_graphs(seqs, lengths, self.n_items_)

    # ------------------------------------------------------------------ scoring
    def score_samples(self, samples: SequenceSamples, batch_size: int = 500) -> Iterator[torch.Tensor]:
        """Scores ``[b, n_items]`` of successive batches of samples, in order."""
        self._check_fitted()
        self.net_.eval()
        with torch.no_grad():
            for lo in range(0, len(samples), batch_size):
                idx = np.arange(lo, min(lo + batch_size, len(samples)))
                yield self.net_(self.graphs(samples, idx), torch.from_numpy(samples.users[idx]))

    def sample_metrics(self, samples: SequenceSamples, ks: Sequence[int] = (10, 20)) -> dict[str, float]:
        """Full-ranking metrics of the targets of ``samples`` (one relevant item per sample,
        seen items not masked: the SR-GNN/DIPSGNN protocol)."""
        k = min(max(ks), self.n_items_)
        if not self.net_.scores_are_random():
            # metrics are means over samples: scoring them grouped by input length gives the
            # same values with about half the padded work (inputs in index order mix lengths
            # 1..max_len in every batch). Noisy scoring keeps the order, so its draws are unchanged.
            samples = samples.by_length(self.max_len)
        topk = torch.cat([torch.topk(s, k, dim=1).indices for s in self.score_samples(samples)]).numpy()
        return ranking_metrics(topk, samples.truth(self.n_items_), ks)

    def score_sequences(self, sequences: Sequence[np.ndarray], users: np.ndarray) -> torch.Tensor:
        """Scores ``[n, n_items]`` of the next item after each given history (oldest first),
        each read with the vector of the matching internal user."""
        out = list(self.score_samples(SequenceSamples.whole(sequences, users)))
        return torch.cat(out) if out else torch.zeros((0, self.n_items_))

    @property
    def serves_new_users(self) -> bool:
        """Only without user vectors: a user not seen in training has no learned row."""
        return self.user_mode == "none"

    def _score_histories(self, histories: Interactions) -> torch.Tensor:
        """The time-ordered history of each new user through the trained network (no user
        vector exists for a user not seen in training, so only ``user_mode="none"`` serves)."""
        if self.user_mode != "none":
            raise ConfigError(f"{type(self).__name__} with user_mode={self.user_mode!r} has no user vector for users "
                              "not seen in training; serving histories needs user_mode='none'")
        return self.score_sequences(histories.sequences(), np.zeros(histories.n_users, dtype=np.int64))

    def _score(self, users: torch.Tensor) -> torch.Tensor:
        users = users.numpy()
        return self.score_sequences([self.sequences_[u] for u in users], users)
