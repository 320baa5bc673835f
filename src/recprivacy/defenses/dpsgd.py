"""DP-SGD (Abadi et al., CCS 2016) as a privacy engine around a backbone and its optimizer: the
DPSGD baseline of paper 002 (Sec. 5.1.3, which names it but gives no clipping norm, accountant
or privacy unit) on the A-PGNN-style SR-GNN.

Decision: as in Opacus, the model and the privacy engine are separate. ``DPSGD`` takes the
backbone as an object (an ``SRGNN``, any adjacency or user mode; default raw counts and user
features) and trains a copy of it through its ``TrainingHooks`` (``defenses.private_srgnn``):
the backbone's own network and Adam optimizer are used unchanged, the engine replaces only how
an epoch becomes steps (Poisson sampling) and what a step feeds the optimizer (clipped,
noised gradient sums). Any network with SR-GNN's ``forward(graphs, users)`` is supported
through the ``torch.func`` path; the fast book-keeping path also needs the ``session`` /
``candidates`` split and its item table (``_bookkeeping_supported``).

Each step draws a Poisson sample of the training prefixes (every sample independently with
probability ``q = batch_size / N``), clips every sample's gradient of all parameters to L2
norm ``max_grad_norm`` (in padded graph batches, "chunks", below), sums them, adds
``N(0, (z max_grad_norm)² I)`` and divides by the expected batch size ``q N``; Adam then steps
as usual (post-processing). The noise multiplier ``z`` is the smallest that keeps
``n_epochs x round(1/q)`` steps within ``(eps2, delta)`` under dp-accounting's RDP accountant
(``privacy.accounting.dpsgd_noise_multiplier``).

Chunks: the step's sample is sorted by input length (stable) and cut into consecutive chunks,
each one padded graph batch as wide as its longest input (positions) and its largest node
count. The rule reads the width as ``W_c = max(length, 1)`` of the chunk's last sample: a node
count is at most the input length, and equal when the prefix repeats no item (MovieLens);
input lengths come with the samples, node counts need the graphs built. The book-keeping path
cuts where ``padded_partition`` says, minimising the modelled CPU of the step
``Σ_c K + P_c + P_c² / V``: ``P_c = size_c W_c`` the chunk's padded rows, ``K`` a chunk's fixed
cost (``BK_OVERHEAD_ROWS``: the per-call overhead of a forward and a backward pass) and ``V``
the padded rows at which a chunk's cost per row has doubled (``BK_DOUBLING_ROWS``: large
chunks fall out of the cache), both in units of the cost of one padded row. What a sample
costs whatever its width (its scores over every item) is the same under every cut and left
out. The dynamic programme is exact (``padded_partition``); the constants and their
measurement are in docs/decisions.md (DIPSGNN, the DP-SGD bullet). The ``vmap`` reference
cuts fixed chunks of ``CHUNK`` samples (its per-sample gradient tensors, not the padding, set
its cost and memory). Chunking only groups the computation: the clipped sum is the same sum
of the same clipped per-sample gradients whichever cut is taken (up to float rounding), and
nothing the privacy guarantee rests on (the Poisson sample, the clipping norm, the noise)
depends on it.

Per-sample clipping without per-sample gradients ("book-keeping", Bu et al. 2023): one
forward and one backward pass over a chunk give, for every linear layer, its inputs ``x`` and
the gradients ``g`` of the summed loss at its outputs; sample b's gradient of a weight is
``g_bᵀ x_b`` (summed over the node / position rows r of its graph), so its squared norm is
``Σ_{r,s} (x_br · x_bs)(g_br · g_bs)`` (a Gram product, used when it is cheaper than forming
``g_bᵀ x_b``) and the clipped sum is one matrix product ``(f ⊙ g)ᵀ x`` with the clipping factors
f. The item table is read twice: as node embeddings (rows ``I_b`` of sample b, gradient
``G_b``) and as the candidates of the output product (gradient ``δ_b z_bᵀ`` with ``δ_b`` the
softmax residual and ``z_b`` the session vector), so its squared norm adds the lookup Gram,
``2 Σ_r δ_b[I_br] (z_b · G_br)`` and ``|δ_b|² |z_b|²``. This computes exactly the clipped sum
of the ``torch.func`` per-sample gradients (kept as ``per_sample="vmap"``, the reference the
tests compare with, up to float rounding) without ``[B, n_items, d]`` per-sample table
gradients, at well under half the CPU of ``vmap`` per step (measured: docs/decisions.md, DIPSGNN,
the DP-SGD bullet).

Decision: per-sample clipping is written here (book-keeping, with ``torch.func``'s ``vmap`` of
``grad`` as the reference) rather than with Opacus. Opacus 1.6 would install without CUDA, but
its layer hooks do not see the output layer here (scores are ``z E_Vᵀ`` with the item embedding
table, not an ``nn.Linear``), so its per-sample gradients would be incomplete; the book-keeping
above adds that product's share by hand, and ``torch.func`` differentiates the whole function.

The Gaussian noise and the Poisson sampling both come from ``noise`` (operating-system entropy by
default, seeded by the backbone's seed only in ``"simulation"`` mode).

The privacy unit is one training sample (a prefix and its next item), not an edge: one
transition occurrence sits in up to ``edge_reuse()`` samples, so an edge-level or user-level
figure needs group privacy over that many samples (stated, not computed). User features are
perturbed as in DIPSGNN (eps1).
"""

from __future__ import annotations

import math
from collections.abc import Iterator

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn
from torch.func import functional_call, grad_and_value, vmap

from recprivacy.defenses.private_srgnn import PrivateSRGNN
from recprivacy.errors import ConfigError
from recprivacy.models.srgnn import SRGNN, SequenceSamples, SessionGraphs
from recprivacy.privacy.accounting import (
    PrivacyStatement,
    StatementContext,
    check_positive,
    dpsgd_epsilon,
    dpsgd_noise_multiplier,
)

#: samples of similar input length whose per-sample gradients are computed together (vmap)
CHUNK = 25
#: ``K``: the fixed CPU cost of one book-keeping chunk, in padded rows (module docstring)
BK_OVERHEAD_ROWS = 190.0
#: ``V``: the padded rows at which a book-keeping chunk's cost per row has doubled (module docstring)
BK_DOUBLING_ROWS = 6700.0


class DPSGD(PrivateSRGNN):
    """DP-SGD engine around an SR-GNN backbone (module docstring).

    Parameters
    ----------
    backbone:
        The ``SRGNN`` to train (unchanged; a copy is trained); default
        ``SRGNN(adjacency="count", user_mode="features")``. Its ``batch_size`` sets the
        sampling rate ``q = batch_size / N`` and its ``n_epochs`` the number of steps.
    eps1:
        LDP budget of the user features (20).
    eps2, delta:
        Target (epsilon, delta) of the whole training run, per training sample (5, 2.5e-7).
    max_grad_norm:
        Per-sample clipping norm (1.0).
    accountant:
        ``"rdp"`` or ``"pld"`` (dp-accounting) for calibration and the statement.
    noise:
        ``"secure"`` (default) or ``"simulation"`` (seeded by the backbone's seed).
    """

    headline = "training samples, whole training run"

    def __init__(
        self,
        backbone: SRGNN | None = None,
        eps1: float = 20.0,
        eps2: float = 5.0,
        delta: float = 2.5e-7,
        max_grad_norm: float = 1.0,
        accountant: str = "rdp",
        noise: str = "secure",
    ) -> None:
        super().__init__(backbone, eps1, noise)
        name = type(self).__name__
        self.eps2 = check_positive(f"{name}.eps2", eps2)
        self.delta = delta
        self.max_grad_norm = check_positive(f"{name}.max_grad_norm", max_grad_norm)
        if accountant not in ("rdp", "pld"):
            raise ConfigError(f"{name}.accountant: expected 'rdp' or 'pld', got {accountant!r}")
        self.accountant = accountant
        #: "bookkeeping" (default, fast) or "vmap" (torch.func per-sample gradients, the reference)
        self.per_sample = "bookkeeping"
        #: book-keeping chunks: None (default) cuts by ``padded_partition``, an int into fixed
        #: chunks of that many samples (the rule before it, kept for comparison)
        self.chunk_size: int | None = None

    # ------------------------------------------------------------------ training hooks
    def start(self, model: SRGNN, samples: SequenceSamples) -> None:
        """Calibrate ``z`` for ``n_epochs x round(1/q)`` steps and open the noise streams."""
        self.n_train_samples_ = len(samples)
        self.sample_rate_ = min(1.0, model.batch_size / len(samples))
        self.steps_per_epoch_ = max(1, int(round(1.0 / self.sample_rate_)))
        self.noise_multiplier_ = dpsgd_noise_multiplier(self.eps2, self.delta, self.sample_rate_,
                                                        model.n_epochs * self.steps_per_epoch_, self.accountant)
        self.gradient_noise_ = self.noise_generator()
        self.sampling_ = self.noise_source().generator("poisson sampling")
        self.steps_ = 0

    def batches(self, model: SRGNN, samples: SequenceSamples, rng: np.random.Generator) -> Iterator[np.ndarray]:
        """Poisson sampling: each step keeps every sample with probability ``q``, drawn from the
        protection randomness (``noise``), not from the training ``rng``: the amplification by
        sampling in the accountant assumes nobody can tell which samples a step used."""
        for _ in range(self.steps_per_epoch_):
            yield np.flatnonzero(self.sampling_.random(len(samples)) < self.sample_rate_)

    def step(self, model: SRGNN, samples: SequenceSamples, idx: np.ndarray, optimizer: torch.optim.Optimizer) -> float:
        """Add Gaussian noise to the clipped gradient sum, divide by ``q N`` and let the
        backbone's optimizer step."""
        summed, loss = self.clipped_sum(model, samples, idx)
        expected = self.sample_rate_ * self.n_train_samples_
        std = self.noise_multiplier_ * self.max_grad_norm
        for name, p in model.net_.named_parameters():
            p.grad = (summed[name] + std * torch.randn(p.shape, generator=self.gradient_noise_)) / expected
        optimizer.step()
        self.steps_ += 1
        return loss

    def clipped_sum(self, model: SRGNN, samples: SequenceSamples, idx: np.ndarray) -> tuple[dict[str, torch.Tensor], float]:
        """Sum of the per-sample gradients of ``model.net_``, each clipped to ``max_grad_norm``,
        and the mean loss (``per_sample`` chooses book-keeping or ``torch.func``)."""
        if self.per_sample == "vmap" or not _bookkeeping_supported(model.net_):
            return self._clipped_sum_vmap(model, samples, idx)
        summed = {k: torch.zeros_like(v) for k, v in model.net_.named_parameters()}
        losses = []
        for chunk in _chunks(samples, idx, model.max_len, self.chunk_size):
            chunk_losses = _bookkeeping_step(model.net_, model.graphs(samples, chunk),
                                             torch.from_numpy(samples.users[chunk]),
                                             torch.from_numpy(samples.subset(chunk).targets()), self.max_grad_norm, summed)
            losses.append(chunk_losses)
        return summed, float(torch.cat(losses).mean()) if losses else 0.0

    def _clipped_sum_vmap(self, model: SRGNN, samples: SequenceSamples, idx: np.ndarray) -> tuple[dict[str, torch.Tensor], float]:
        """The clipped sum from ``torch.func`` per-sample gradients, in chunks of ``CHUNK``
        samples of similar length (the reference implementation)."""
        params = {k: v.detach() for k, v in model.net_.named_parameters()}
        summed = {k: torch.zeros_like(v) for k, v in params.items()}
        losses = []
        for chunk in _chunks(samples, idx, model.max_len, CHUNK):
            grads, chunk_losses = per_sample_grads(model, params, samples, chunk)
            norms = torch.sqrt(sum(g.flatten(1).pow(2).sum(1) for g in grads.values()))
            factor = (self.max_grad_norm / (norms + 1e-6)).clamp(max=1.0)
            for k, g in grads.items():
                summed[k] += torch.einsum("b,b...->...", factor, g)
            losses.append(chunk_losses)
        return summed, float(torch.cat(losses).mean()) if losses else 0.0

    # ------------------------------------------------------------------ privacy
    def privacy_statement(self, context: StatementContext | None = None) -> PrivacyStatement:
        """DP-SGD over the steps taken (headline, ``training samples, whole training run``), with
        the part ``user features`` (local); ``context`` is not read: the fitted run fixes it."""
        self._check_fitted()
        reuse = self.edge_reuse()
        return self._stated({
            "user features": self.feature_statement(),
            "training samples, whole training run": PrivacyStatement(
                epsilon=dpsgd_epsilon(self.noise_multiplier_, self.sample_rate_, self.steps_, self.delta, self.accountant),
                delta=self.delta,
                accountant=f"{self.accountant} (dp-accounting), Poisson sampling q = {self.sample_rate_:.3g}, "
                           f"noise multiplier {self.noise_multiplier_:.4g}",
                unit="one training sample (a prefix of a user's sequence and its next item)",
                scope=f"whole training run: {self.steps_} DP-SGD steps",
                notes=(f"one transition sits in up to {reuse} training samples: edge- or user-level privacy needs "
                       f"group privacy over {reuse} samples",
                       "epoch selection on held-out prefixes is not accounted"),
            ),
        })


# --------------------------------------------------------------------------- per-sample gradients


def _chunks(samples: SequenceSamples, idx: np.ndarray, max_len: int, size: int | None) -> list[np.ndarray]:
    """``idx`` sorted by input length (stable: equal lengths keep their order in ``idx``) and cut
    into consecutive chunks, in that order: of ``size`` samples (the last one shorter), or, with
    ``size=None``, where ``padded_partition`` of the widths ``max(length, 1)`` cuts. Every sample
    is in exactly one chunk; no chunk is empty (an empty ``idx`` gives none)."""
    lengths = samples.subset(idx).input_lengths(max_len)
    order = np.argsort(lengths, kind="stable")
    ordered, widths = idx[order], np.maximum(lengths[order], 1)
    ends = padded_partition(widths) if size is None else fixed_partition(len(idx), size)
    return [ordered[lo:hi] for lo, hi in zip(np.concatenate([[0], ends[:-1]]), ends)]


def fixed_partition(n: int, size: int) -> np.ndarray:
    """End offsets (exclusive) of consecutive chunks of ``size`` of ``n`` samples, the last one
    shorter; ConfigError unless ``size`` is a positive integer."""
    if isinstance(size, bool) or not isinstance(size, (int, np.integer)) or size < 1:
        raise ConfigError(f"DPSGD.chunk_size: expected a positive integer or None, got {size!r}")
    return np.minimum(np.arange(size, n + size, size), n)


def chunk_cost(sizes: np.ndarray, widths: np.ndarray, overhead: float = BK_OVERHEAD_ROWS,
               doubling: float = BK_DOUBLING_ROWS) -> np.ndarray:
    """Modelled CPU of a book-keeping chunk of ``sizes`` samples padded to ``widths``, in padded
    rows: ``K + P + P² / V`` with ``P = size x width`` (module docstring; broadcasts)."""
    rows = sizes * widths
    return overhead + rows + rows * rows / doubling


def longest_useful_chunk(narrowest: float, overhead: float = BK_OVERHEAD_ROWS, doubling: float = BK_DOUBLING_ROWS) -> float:
    """``sqrt(2 K V / narrowest² + 1)``: no chunk of more samples is optimal when every width is
    at least ``narrowest``. Halving a chunk of s samples of width W into parts of s_1 + s_2 = s
    adds one ``K`` and saves at least ``2 s_1 s_2 W² / V >= (s² - 1) W² / (2 V)`` (the parts are
    no wider), which exceeds ``K`` beyond that size (inf for ``V = inf``)."""
    return math.sqrt(2 * overhead * doubling / narrowest**2 + 1)


def padded_partition(widths: np.ndarray, overhead: float = BK_OVERHEAD_ROWS, doubling: float = BK_DOUBLING_ROWS) -> np.ndarray:
    """End offsets (exclusive, increasing, the last ``len(widths)``) of the consecutive chunks of
    ``widths`` (sorted ascending) that minimise ``Σ_c chunk_cost(size_c, widths[end_c - 1])``.

    Dynamic programme: ``best[j] = min_s best[j - s] + chunk_cost(s, widths[j - 1])`` over chunk
    sizes ``1 <= s <= min(j, longest_useful_chunk(widths[0]))``, ``best[0] = 0``, ties to the
    smallest last chunk; O(n x that bound). Exact over all partitions of the sample, not only
    the consecutive ones: given the chunk sizes, handing the sorted samples out in order of the
    chunks' widths widens no chunk, and the cost grows with the width."""
    n = len(widths)
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    span = int(min(n, longest_useful_chunk(widths[0], overhead, doubling)))
    sizes = np.arange(1, span + 1)
    cost = chunk_cost(sizes[None, :], np.asarray(widths, dtype=np.float64)[:, None], overhead, doubling)  # [last, size]
    best = np.zeros(n + 1)
    last = np.zeros(n + 1, dtype=np.int64)
    for j in range(1, n + 1):
        k = min(j, span)
        total = best[j - k : j][::-1] + cost[j - 1, :k]  # a last chunk of 1, 2, ..., k samples
        last[j] = int(np.argmin(total)) + 1
        best[j] = total[last[j] - 1]
    ends = [n]
    while ends[-1] - last[ends[-1]] > 0:
        ends.append(ends[-1] - last[ends[-1]])
    return np.array(ends[::-1], dtype=np.int64)


def per_sample_grads(model: SRGNN, params: dict[str, torch.Tensor], samples: SequenceSamples,
                     idx: np.ndarray) -> tuple[dict[str, torch.Tensor], torch.Tensor]:
    """Per-sample gradients ``{name: [B, *shape]}`` and losses ``[B]`` of ``model.net_`` at
    ``params`` on ``samples[idx]`` (``torch.func``: ``vmap`` of ``grad``)."""
    graphs = model.graphs(samples, idx)
    net = model.net_
    buffers = dict(net.named_buffers())

    def sample_loss(p: dict[str, torch.Tensor], user: torch.Tensor, target: torch.Tensor,
                    *tensors: torch.Tensor) -> torch.Tensor:
        one = SessionGraphs(*(t[None] for t in tensors))
        return F.cross_entropy(functional_call(net, (p, buffers), (one, user[None])), target[None])

    users = torch.from_numpy(samples.users[idx])
    targets = torch.from_numpy(samples.subset(idx).targets())
    n_graph = len(graphs.tensors())
    batched = vmap(grad_and_value(sample_loss), in_dims=(None, 0, 0) + (0,) * n_graph)
    return batched(params, users, targets, *graphs.tensors())


# --------------------------------------------------------------------------- book-keeping


def _bookkeeping_supported(net: nn.Module) -> bool:
    """Every parameter sits in an ``nn.Linear`` or ``nn.Embedding`` (the layers whose
    per-sample norms ``_bookkeeping_step`` knows)."""
    covered = {id(p) for m in net.modules() if isinstance(m, (nn.Linear, nn.Embedding)) for p in m.parameters(recurse=False)}
    return hasattr(net, "session") and all(id(p) in covered for p in net.parameters())


def _rows(parts: list[torch.Tensor]) -> torch.Tensor:
    """The calls of one layer side by side along the row axis (one call: as is)."""
    return parts[0] if len(parts) == 1 else torch.cat(parts, 1)


def _gram_norms(x: torch.Tensor, g: torch.Tensor) -> torch.Tensor:
    """Squared norms ``|g_bᵀ x_b|²_F`` for ``x [B, R, i]``, ``g [B, R, o]``: through the Gram
    matrices when ``R (i + o) <= i o``, else by forming ``g_bᵀ x_b``."""
    rows, d_in, d_out = x.shape[1], x.shape[2], g.shape[2]
    if rows == 1:
        return x[:, 0].pow(2).sum(1) * g[:, 0].pow(2).sum(1)
    if rows * (d_in + d_out) <= d_in * d_out:
        return (torch.bmm(x, x.transpose(1, 2)) * torch.bmm(g, g.transpose(1, 2))).sum((1, 2))
    return torch.bmm(g.transpose(1, 2), x).pow(2).sum((1, 2))


def _bookkeeping_step(net: nn.Module, graphs: SessionGraphs, users: torch.Tensor, targets: torch.Tensor,
                      max_norm: float, summed: dict[str, torch.Tensor]) -> torch.Tensor:
    """Add the clipped per-sample gradients of one chunk to ``summed``; return the losses
    (module docstring: one forward, one backward, no per-sample gradient tensors)."""
    calls: dict[nn.Module, list[tuple[torch.Tensor, torch.Tensor]]] = {}

    def hook(module: nn.Module, inputs: tuple[torch.Tensor, ...], output: torch.Tensor) -> None:
        calls.setdefault(module, []).append((inputs[0].detach(), output))

    layers = [m for m in net.modules() if isinstance(m, (nn.Linear, nn.Embedding))]
    handles = [m.register_forward_hook(hook) for m in layers]
    try:
        with torch.enable_grad():
            z = net.session(graphs, users)
            scores = z @ net.candidates().T
            losses = F.cross_entropy(scores, targets, reduction="none")
            outputs = [out for m in calls for _, out in calls[m]]
            grads = torch.autograd.grad(losses.sum(), [scores] + outputs, allow_unused=True, materialize_grads=True)
    finally:
        for h in handles:
            h.remove()
    batch = len(targets)
    delta, z = grads[0], z.detach()
    out_grads = iter(grads[1:])
    per_layer = {m: [(x, next(out_grads)) for x, _ in calls[m]] for m in calls}

    # squared per-sample norms, layer by layer
    sq = delta.pow(2).sum(1) * z.pow(2).sum(1)  # output use of the item table: |δ_b|² |z_b|²
    stacked = {}
    for m, pairs in per_layer.items():
        if isinstance(m, nn.Linear):
            x = _rows([x.reshape(batch, -1, x.shape[-1]) for x, _ in pairs])
            g = _rows([g.reshape(batch, -1, g.shape[-1]) for _, g in pairs])
            sq = sq + _gram_norms(x, g)
            if m.bias is not None:
                sq = sq + g.sum(1).pow(2).sum(1)
        else:
            x = _rows([x.reshape(batch, -1) for x, _ in pairs])  # row indices [B, R]
            g = _rows([g.reshape(batch, -1, g.shape[-1]) for _, g in pairs])
            same = x[:, :, None] == x[:, None, :]
            sq = sq + (torch.bmm(g, g.transpose(1, 2)) * same).sum((1, 2))
            if m is net.item_emb:
                n_items = delta.shape[1]
                real = x < n_items
                d_at = torch.gather(delta, 1, x.clamp(max=n_items - 1)) * real
                sq = sq + 2 * (d_at * torch.bmm(g, z[:, :, None])[..., 0]).sum(1)
        stacked[m] = (x, g)
    factor = (max_norm / (sq.clamp(min=0).sqrt() + 1e-6)).clamp(max=1.0)

    # clipped sums: one matrix product (or index_add) per parameter
    names = {id(p): n for n, p in net.named_parameters()}
    for m, (x, g) in stacked.items():
        gf = g * factor[:, None, None]
        weight = summed[names[id(m.weight)]]
        if isinstance(m, nn.Linear):
            weight += gf.reshape(-1, gf.shape[-1]).T @ x.reshape(-1, x.shape[-1])
            if m.bias is not None:
                summed[names[id(m.bias)]] += gf.sum((0, 1))
        else:
            weight.index_add_(0, x.reshape(-1), gf.reshape(-1, gf.shape[-1]))
    item = summed[names[id(net.item_emb.weight)]]
    item[: delta.shape[1]] += (delta * factor[:, None]).T @ z
    return losses.detach()
