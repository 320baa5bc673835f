"""The fast in-process engine: every round's sampled clients train together in batched tensor
operations (``protocol.local_update``), in chunks of ``chunk_size`` clients to bound memory
(each client in a chunk holds a ``[n_items, d]`` item-table delta).

``FederatedSimulator`` keeps the global model Θ, the private state of the devices (federated
MF's ``P_u``) and the round counter; ``run_round`` returns the round's uploads so the honest-
but-curious server (``recprivacy.attacks.attribute``) can attack them. ``recommender()`` wraps
the current global model as a ``Recommender`` so ``metrics.ranking.evaluate`` gives Hit@K /
NDCG@K with the full-ranking protocol (every item scored by the global model, as the paper
says; the user's training items masked and no noise at inference, which it does not say).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp
import torch
from torch import Tensor

from recprivacy.data.interactions import Interactions
from recprivacy.errors import ConfigError
from recprivacy.federated.models import ITEM, FederatedModel
from recprivacy.federated.protocol import (
    ClientBatch,
    FeaturePrivacy,
    LocalObjective,
    LocalTraining,
    UploadDefence,
    aggregate,
    by_workload,
    client_features,
    initial_state,
    local_update,
    perturb_uploads,
    pseudo_gradient,
    sample_clients,
)
from recprivacy.models.base import Recommender
from recprivacy.models.training import torch_threads
from recprivacy.privacy.randomness import NoiseSource, check_mode
from recprivacy.progress import progress


@dataclass(frozen=True)
class RoundUploads:
    """One round as the server saw it: sampled ``users`` (in training order, see
    ``protocol.by_workload``), the global model they started from and what each uploaded
    (``[B, ...]`` per shared parameter, rows in ``users`` order)."""

    round: int
    users: np.ndarray
    global_before: dict[str, Tensor]
    uploads: dict[str, Tensor]

    def pseudo_gradients(self, lr: float) -> dict[str, Tensor]:
        """``ΔΘ_u`` of every sampled client (protocol.pseudo_gradient)."""
        return pseudo_gradient(self.global_before, self.uploads, lr)


@dataclass
class FederatedHistory:
    """Evaluations during training: ``(round, metrics)`` pairs and seconds per round."""

    evaluations: list[tuple[int, dict[str, float]]] = field(default_factory=list)
    round_seconds: list[float] = field(default_factory=list)


class FederatedSimulator:
    """Algorithm 1 run in one process (see module docstring).

    Parameters
    ----------
    model:
        The federated recommender.
    train:
        Training interactions; user ``u``'s rows are what device ``u`` holds.
    features:
        ``x_u`` of every user ``[n_users, d1]`` (``features.user_features``).
    clients_per_round:
        A fraction in (0, 1] of the users, or a count >= 1 (paper 004: 0.5 on ml-100k, 0.1 on ml-1m).
    defence:
        What clients apply to their parameters before upload (None: Pure FedRec).
    init_std:
        Standard deviation of the N(0, std^2) initialisation (1.0 in the paper).
    objective:
        A perturbed local objective (F-GERAI's functional mechanism, F-DPMF's item term).
    feature_privacy:
        Randomises every device's ``x_u`` once, before training (F-GERAI); the randomised
        features are also what each user scores with at evaluation (``recommender``), and
        ``raw_features`` what the devices hold before (what a Flower engine hands them).
    noise:
        Where the defences' randomness comes from: ``"secure"`` (operating-system entropy, the
        default) or ``"simulation"`` (seeded by ``seed``, for experiments only); the
        ``NoiseSource`` is kept as ``self.noise``.
    """

    def __init__(
        self,
        model: FederatedModel,
        train: Interactions,
        features: np.ndarray,
        local: LocalTraining = LocalTraining(),
        clients_per_round: float = 0.5,
        seed: int = 0,
        defence: UploadDefence | None = None,
        init_std: float = 1.0,
        chunk_size: int = 512,
        threads: int | None = None,
        objective: LocalObjective | None = None,
        feature_privacy: FeaturePrivacy | None = None,
        noise: str = "secure",
    ) -> None:
        if train.n_items != model.n_items:
            raise ConfigError(f"model has {model.n_items} items but the training data have {train.n_items}")
        if model.uses_features and features.shape != (train.n_users, model.n_features):
            raise ConfigError(f"features: expected shape {(train.n_users, model.n_features)}, got {features.shape}")
        self.model = model
        self.noise = NoiseSource(check_mode(noise), seed)
        self.train_csr = train.to_csr()
        self.features = client_features(features, np.arange(len(features)), self.noise, feature_privacy) \
            if model.uses_features else np.asarray(features, dtype=np.float32)
        self.local = local
        self.n_clients = resolve_clients(clients_per_round, train.n_users)
        self.seed = seed
        self.defence = defence
        self.objective = objective
        self.chunk_size = chunk_size
        self.threads = threads
        self.params, self.private = initial_state(model, train.n_users, seed, init_std)
        self.init_std = init_std
        self.raw_features = np.asarray(features, dtype=np.float32)
        self.feature_privacy = feature_privacy
        self.round = 0

    def run_round(self, users: np.ndarray | None = None) -> RoundUploads:
        """One round: sample (or take ``users``), train locally, randomise, upload, average."""
        t = self.round + 1
        if users is None:
            users = sample_clients(self.train_csr.shape[0], self.n_clients, self.seed, t)
        users = by_workload(users, self.train_csr)
        chunks = []
        with torch_threads(self.threads):
            for lo in range(0, len(users), self.chunk_size):
                batch = ClientBatch.select(users[lo : lo + self.chunk_size], self.features, self.train_csr)
                private = {k: v[batch.users] for k, v in self.private.items()}
                trained = local_update(self.model, self.params, batch, self.local, self.seed, t, private, self.objective,
                                       self.noise)
                for name in self.private:
                    self.private[name][batch.users] = trained[name]
                chunks.append(perturb_uploads(trained, self.model, self.defence, batch.users, self.noise, t))
        uploads = chunks[0] if len(chunks) == 1 else {k: torch.cat([c[k] for c in chunks]) for k in chunks[0]}
        result = RoundUploads(t, np.asarray(users), self.params, uploads)
        self.params = aggregate(uploads, np.asarray(users), t)
        self.round = t
        return result

    def fit(
        self,
        rounds: int,
        evaluate: Callable[[Recommender], dict[str, float]] | None = None,
        eval_every: int = 5,
        desc: str = "federated rounds",
    ) -> FederatedHistory:
        """Run ``rounds`` rounds, calling ``evaluate(self.recommender())`` every ``eval_every``
        rounds and after the last."""
        import time

        history = FederatedHistory()
        for _ in progress(range(rounds), desc=desc, total=rounds, unit="round"):
            start = time.perf_counter()
            self.run_round()
            history.round_seconds.append(time.perf_counter() - start)
            if evaluate is not None and (self.round % eval_every == 0 or self.round == rounds):
                history.evaluations.append((self.round, evaluate(self.recommender())))
        return history

    def recommender(self) -> "GlobalRecommender":
        """The current global model as a fitted ``Recommender``."""
        return GlobalRecommender(self.model, self.params, self.features, self.train_csr, self.private)


def resolve_clients(clients_per_round: float, n_users: int) -> int:
    """Clients per round: a value in (0, 1] is a fraction of the users (rounded, at least one);
    a larger value is a whole count of at most ``n_users``. ConfigError otherwise."""
    v = float(clients_per_round)
    if 0 < v <= 1:
        return max(1, int(round(v * n_users)))
    if v > n_users or not v.is_integer():
        raise ConfigError(
            f"clients_per_round: expected a fraction in (0, 1] or a whole count of at most the {n_users} clients, "
            f"got {clients_per_round}"
        )
    return int(v)


class GlobalRecommender(Recommender):
    """Scores of a federated global model: each user scores every item with Θ, their own
    features and neighbourhood (and private vector, for federated MF)."""

    def __init__(self, model: FederatedModel, params: dict[str, Tensor], features: np.ndarray,
                 train_csr: sp.csr_matrix, private: dict[str, Tensor] | None = None, batch_size: int = 128) -> None:
        super().__init__(seed=0)
        self.model = model
        self.params_ = {k: v.float() for k, v in params.items()}
        self.private_ = {k: v.float() for k, v in (private or {}).items()}
        self.features_ = torch.as_tensor(np.asarray(features, dtype=np.float32))
        self.train_csr_ = train_csr
        self.n_users_, self.n_items_ = train_csr.shape
        self.batch_size = batch_size
        counts = np.maximum(np.diff(train_csr.indptr), 1)
        norm = sp.diags(1.0 / counts) @ train_csr
        self.neighbour_mean_ = torch.as_tensor((norm @ self.params_[ITEM].numpy()).astype(np.float32))

    def _score(self, users: torch.Tensor) -> torch.Tensor:
        out = []
        table = self.params_[ITEM]
        for lo in range(0, len(users), self.batch_size):
            u = users[lo : lo + self.batch_size]
            a = len(u)
            p = {k: v.expand(a, *v.shape) for k, v in self.params_.items() if k != ITEM}
            p.update({k: v[u] for k, v in self.private_.items()})
            x = self.features_[u] if self.model.uses_features else torch.zeros((a, 0))
            out.append(self.model.logits(p, x, self.neighbour_mean_[u], table.expand(a, *table.shape)))
        return torch.cat(out) if out else torch.zeros((0, self.n_items_))
