"""DP-SGD (Abadi et al., CCS 2016) on the A-PGNN-style SR-GNN backbone: the DPSGD baseline of
paper 002 (Sec. 5.1.3, digest decision 25).

Each step draws a Poisson sample of the training prefixes (every sample independently with
probability ``q = batch_size / N``), computes every sample's gradient of all parameters with
``torch.func`` (``vmap`` of ``grad`` over padded graph batches of ``CHUNK`` samples of similar
input length, which halves the padding), clips each to
L2 norm ``max_grad_norm``, sums them, adds ``N(0, (z max_grad_norm)² I)`` and divides by the
expected batch size ``q N``; Adam then steps as usual (post-processing). The noise multiplier
``z`` is the smallest that keeps ``n_epochs x round(1/q)`` steps within ``(eps2, delta)``
under dp-accounting's RDP accountant (``privacy.accounting.dpsgd_noise_multiplier``).

Decision: per-sample clipping is written with ``torch.func`` rather than Opacus. Opacus 1.6
would install without CUDA, but its layer hooks do not see the output layer here (scores are
``z E_Vᵀ`` with the item embedding table, not an ``nn.Linear``), so its per-sample gradients
would be incomplete; ``torch.func`` differentiates the whole function.

The privacy unit is one training sample (a prefix and its next item), not an edge: one
transition occurrence sits in up to ``edge_reuse()`` samples, so an edge-level or user-level
figure needs group privacy over that many samples (stated, not computed). User features are
perturbed as in DIPSGNN (eps1).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F
from torch.func import functional_call, grad_and_value, vmap

from recprivacy.errors import ConfigError
from recprivacy.models.srgnn import SRGNN, SequenceSamples, SessionGraphs
from recprivacy.privacy.accounting import PrivacyStatement, check_positive, dpsgd_epsilon, dpsgd_noise_multiplier

#: samples of similar input length whose per-sample gradients are computed together
CHUNK = 25


class DPSGDSRGNN(SRGNN):
    """SR-GNN trained with DP-SGD (module docstring).

    Parameters
    ----------
    eps1:
        LDP budget of the user features (20).
    eps2, delta:
        Target (epsilon, delta) of the whole training run, per training sample (5, 2.5e-7).
    max_grad_norm:
        Per-sample clipping norm (1.0).
    accountant:
        ``"rdp"`` or ``"pld"`` (dp-accounting) for calibration and the statement.
    user_mode, backbone:
        ``SRGNN`` parameters (``adjacency`` is fixed to raw counts).
    """

    fixed_params = {"adjacency": "count"}

    def __init__(
        self,
        eps1: float = 20.0,
        eps2: float = 5.0,
        delta: float = 2.5e-7,
        max_grad_norm: float = 1.0,
        accountant: str = "rdp",
        user_mode: str = "features",
        **backbone: Any,
    ) -> None:
        super().__init__(user_mode=user_mode, eps1=eps1, **self._backbone(backbone))
        name = type(self).__name__
        self.eps2 = check_positive(f"{name}.eps2", eps2)
        self.delta = delta
        self.max_grad_norm = check_positive(f"{name}.max_grad_norm", max_grad_norm)
        if accountant not in ("rdp", "pld"):
            raise ConfigError(f"{name}.accountant: expected 'rdp' or 'pld', got {accountant!r}")
        self.accountant = accountant

    # ------------------------------------------------------------------ training
    def _start_training(self, samples: SequenceSamples) -> None:
        super()._start_training(samples)
        self.sample_rate_ = min(1.0, self.batch_size / len(samples))
        self.steps_per_epoch_ = max(1, int(round(1.0 / self.sample_rate_)))
        self.noise_multiplier_ = dpsgd_noise_multiplier(self.eps2, self.delta, self.sample_rate_,
                                                        self.n_epochs * self.steps_per_epoch_, self.accountant)
        self.steps_ = 0

    def _epoch_batches(self, samples: SequenceSamples, rng: np.random.Generator) -> Iterator[np.ndarray]:
        """Poisson sampling: each step keeps every sample with probability ``q``."""
        for _ in range(self.steps_per_epoch_):
            yield np.flatnonzero(rng.random(len(samples)) < self.sample_rate_)

    def _train_step(self, samples: SequenceSamples, idx: np.ndarray, optimizer: torch.optim.Optimizer) -> float:
        """Add Gaussian noise to the clipped gradient sum, divide by ``q N`` and step."""
        summed, loss = self._clipped_sum(samples, idx)
        expected = self.sample_rate_ * self.n_train_samples_
        std = self.noise_multiplier_ * self.max_grad_norm
        for name, p in self.net_.named_parameters():
            p.grad = (summed[name] + std * torch.randn(p.shape, generator=self.noise_)) / expected
        optimizer.step()
        self.steps_ += 1
        return loss

    def _clipped_sum(self, samples: SequenceSamples, idx: np.ndarray) -> tuple[dict[str, torch.Tensor], float]:
        """Sum of the per-sample gradients, each clipped to ``max_grad_norm``, and the mean
        loss, computed in chunks of ``CHUNK`` samples of similar length."""
        params = {k: v.detach() for k, v in self.net_.named_parameters()}
        summed = {k: torch.zeros_like(v) for k, v in params.items()}
        ordered = idx[np.argsort(np.minimum(samples.ends[idx] - samples.starts[idx], self.max_len), kind="stable")]
        losses = []
        for chunk in (ordered[lo : lo + CHUNK] for lo in range(0, len(ordered), CHUNK)):
            grads, chunk_losses = self._per_sample_grads(params, samples, chunk)
            norms = torch.sqrt(sum(g.flatten(1).pow(2).sum(1) for g in grads.values()))
            factor = (self.max_grad_norm / (norms + 1e-6)).clamp(max=1.0)
            for k, g in grads.items():
                summed[k] += torch.einsum("b,b...->...", factor, g)
            losses.append(chunk_losses)
        return summed, float(torch.cat(losses).mean()) if losses else 0.0

    def _per_sample_grads(self, params: dict[str, torch.Tensor], samples: SequenceSamples,
                          idx: np.ndarray) -> tuple[dict[str, torch.Tensor], torch.Tensor]:
        """Per-sample gradients ``{name: [B, *shape]}`` and losses ``[B]`` of the batch."""
        graphs = self._graphs(samples, idx)
        buffers = dict(self.net_.named_buffers())
        net = self.net_

        def sample_loss(p: dict[str, torch.Tensor], user: torch.Tensor, target: torch.Tensor,
                        *tensors: torch.Tensor) -> torch.Tensor:
            one = SessionGraphs(*(t[None] for t in tensors))
            return F.cross_entropy(functional_call(net, (p, buffers), (one, user[None])), target[None])

        users = torch.from_numpy(samples.users[idx])
        targets = torch.from_numpy(samples.subset(idx).targets())
        n_graph = len(graphs.tensors())
        batched = vmap(grad_and_value(sample_loss), in_dims=(None, 0, 0) + (0,) * n_graph)
        return batched(params, users, targets, *graphs.tensors())

    # ------------------------------------------------------------------ privacy
    def privacy_statement(self) -> Mapping[str, PrivacyStatement]:
        """Labelled guarantees: user features (local) and DP-SGD over the steps taken."""
        self._check_fitted()
        reuse = self.edge_reuse()
        return {
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
        }
