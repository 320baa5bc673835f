"""The federated protocol of paper 004 (Algorithm 1), written once for both engines.

One round ``t``: the server samples clients (``sample_clients``), each sampled client copies
the global model Θ, trains it locally (``local_update``: ``T_l`` epochs of minibatch SGD on
sum-reduced BCE, Eq. 8, with ``q`` fresh negatives per positive each epoch), randomises it
with the upload defence, if any (``perturb_uploads``), and uploads all shared parameters; the
server sets Θ to the unweighted mean of the uploads (``aggregate``; Algorithm 1 averages where
Eq. 9 sums). The honest-
but-curious server's view of client ``u`` is the pseudo-gradient
``ΔΘ_u = (Θ^{t-1} - Θ_u^t) / μ1`` (``pseudo_gradient``, §3.1).

``local_update`` trains any number of clients together: every client has its own copy of the
small parameters (leading batch dimension) and SGD step ``s`` of every client still training
runs as one batched forward/backward pass. Clients are sorted by their number of steps, so
step ``s`` touches the prefix of clients that have a step ``s``. The item table is never
updated densely per step: client ``a``'s table is ``T_a + 1[v in N(u_a)] S_a``, where ``T_a``
starts as ``E_V`` and receives the changes of the rows the client scored (scatter-added per
step) and ``S_a`` the
accumulated gradient step of the neighbourhood mean, which moves every row of ``N(u_a)`` by
the same vector; ``m_a``, the mean of those rows, is kept up to date from both. This is
exactly plain SGD on the full table, without a dense ``[n_items, d]`` update per step.

Randomness is per client: client ``u`` of round ``t`` draws its negatives and shuffles from
``numpy.random.default_rng([seed, t, u, stream])`` (``client_rng``) and the randomness that
protects it (upload noise, objective noise, feature reports) from its own stream of the run's
``NoiseSource`` (``client_noise``): fresh operating-system entropy in ``"secure"`` mode, or the
same ``default_rng([seed, t, u, stream])`` in ``"simulation"`` mode. So in simulation mode an
upload does not depend on which other clients were sampled or on the engine that ran it (the
Flower engine trains one client per call and reproduces the in-process simulator).

Two hooks carry the on-device privacy of the objective-perturbation baselines
(``recprivacy.defenses.federated_dp``: F-GERAI, F-GERAI-NL, F-DPMF), so they run in both
engines through this same code. The defences take arrays and generators only; the streams,
schedules and batching stay here (the protocol imports defences, never the reverse):

* ``FeaturePrivacy`` -- randomises the device's ``x_u`` once, before any training
  (``client_features`` hands it the rows and one generator per user: stream ``features`` of
  round 0, so it is the same in every round);
* ``LocalObjective`` -- replaces the local loss (``loss``; None keeps the BCE) and draws the
  objective's noise from the generator of the client's ``objective`` stream (``draw``, given
  the schedule's ``valid`` mask): per-sample noise of the loss (``slots``, same shape as the
  schedule) and/or a linear term ``Σ_v η_vᵀ q_v`` on the item table (``items``). The
  gradient of the linear term is the constant ``w_s η_v`` at step ``s`` (``w_s``: the step's
  share of the epoch's samples, so one epoch adds ``η`` once); it is carried like the
  neighbourhood shift, as a per-client scalar ``c`` with every row read as ``T_v - c η_v``, so
  the item table stays sparse during training.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np
import scipy.sparse as sp
import torch
import torch.nn.functional as F
from torch import Tensor

from recprivacy.defenses.federated_dp import ObjectiveNoise
from recprivacy.errors import ConfigError, RecPrivacyError
from recprivacy.federated.models import ITEM, FederatedModel
from recprivacy.models.training import NegativeSampler
from recprivacy.privacy.randomness import NoiseSource

STREAMS = {"train": 0, "noise": 1, "objective": 2, "features": 3}


@dataclass(frozen=True)
class LocalTraining:
    """Local training of Algorithm 1: SGD step ``lr`` (μ1), ``local_epochs``
    (T_l), ``batch_size`` and ``n_negatives`` (q) sampled per positive each epoch."""

    lr: float = 0.001
    local_epochs: int = 5
    batch_size: int = 32
    n_negatives: int = 4

    def __post_init__(self) -> None:
        if not (self.lr > 0 and math.isfinite(self.lr)):
            raise ConfigError(f"lr: expected a positive step size, got {self.lr}")
        for name in ("local_epochs", "batch_size"):
            if getattr(self, name) < 1:
                raise ConfigError(f"{name}: expected a positive integer, got {getattr(self, name)}")
        if self.n_negatives < 0:
            raise ConfigError(f"n_negatives: expected an integer >= 0, got {self.n_negatives}")


class UploadDefence(Protocol):
    """What a client applies to its parameters before upload (``recprivacy.defenses``)."""

    name: str

    def perturb(
        self, uploads: dict[str, Tensor], components: dict[str, str], rngs: Sequence[np.random.Generator]
    ) -> dict[str, Tensor]:
        """Randomised copies of ``uploads`` (``[B, ...]`` per parameter, client ``i`` drawing
        from ``rngs[i]``); the input is not modified."""


class LocalObjective(Protocol):
    """A perturbed local objective (``recprivacy.defenses.federated_dp``)."""

    name: str
    fixed_across_rounds: bool
    #: summed loss of one step ``[A, b]`` (``slots``: this step's per-sample noise); None keeps Eq. 8's BCE
    loss: Callable[[Tensor, Tensor, Tensor, Tensor | None], Tensor] | None

    def draw(self, valid: np.ndarray, n_items: int, dim: int, rng: np.random.Generator) -> ObjectiveNoise:
        """The client's noise for one round's schedule (``valid``: its ``[steps, batch_size]`` mask)."""


class FeaturePrivacy(Protocol):
    """A randomiser of the devices' feature vectors (``recprivacy.defenses.federated_dp``)."""

    name: str

    def perturb(self, x: np.ndarray, users: np.ndarray, rngs: Sequence[np.random.Generator]) -> np.ndarray:
        """Randomised copies of the rows ``x`` of ``users``, row ``i`` drawing from ``rngs[i]``."""


def bce_loss(logits: Tensor, labels: Tensor, valid: Tensor, slots: Tensor | None = None) -> Tensor:
    """Eq. 8: sum-reduced binary cross-entropy over the valid samples of a step."""
    return (F.binary_cross_entropy_with_logits(logits, labels, reduction="none") * valid).sum()


def client_features(x: np.ndarray, users: np.ndarray, noise: NoiseSource, privacy: FeaturePrivacy | None) -> np.ndarray:
    """The feature rows ``x`` of ``users`` as their devices hold them: unchanged, or randomised
    once by ``privacy`` (in simulation mode the same result in every round and engine)."""
    x = np.asarray(x, dtype=np.float32)
    if privacy is None:
        return x
    users = np.asarray(users, dtype=np.int64)
    rngs = [client_noise(noise, 0, u, "features") for u in users]
    return np.asarray(privacy.perturb(x, users, rngs), dtype=np.float32)


def initial_state(model: FederatedModel, n_users: int, seed: int, init_std: float) -> tuple[dict[str, Tensor], dict[str, Tensor]]:
    """The global model Θ at round 0 and every device's initial private parameters
    (``[n_users, ...]``), drawn N(0, init_std²) from one generator seeded by ``seed``: the
    same in every engine, so a device can draw its own row."""
    gen = torch.Generator().manual_seed(int(seed))
    params = model.init_params(gen, init_std)
    private = {s.name: torch.randn((n_users, *s.shape), generator=gen) * init_std for s in model.private_specs()}
    return params, private


def client_rng(seed: int, round_: int, user: int, stream: str) -> np.random.Generator:
    """The seeded generator of one client's ``train`` stream in one round."""
    return np.random.default_rng([int(seed), int(round_), int(user), STREAMS[stream]])


def client_noise(noise: NoiseSource, round_: int, user: int, stream: str) -> np.random.Generator:
    """The protection generator of one client's ``stream`` (``noise``, ``objective``,
    ``features``) in one round: ``noise.generator(round_, user, STREAMS[stream])``."""
    return noise.generator(int(round_), int(user), STREAMS[stream])


def sample_clients(n_users: int, n_clients: int, seed: int, round_: int) -> np.ndarray:
    """Sorted ids of the ``n_clients`` users sampled without replacement in round ``round_``."""
    if not 1 <= n_clients <= n_users:
        raise ConfigError(f"clients per round: expected between 1 and the {n_users} clients, got {n_clients}")
    rng = np.random.default_rng([int(seed), int(round_), 2**31 - 1])
    return np.sort(rng.choice(n_users, size=n_clients, replace=False))


@dataclass(frozen=True)
class ClientBatch:
    """What sampled devices hold: user ids ``[B]``, features ``x`` ``[B, d1]`` and each
    user's training items (``csr`` rows, ``[B, n_items]``)."""

    users: np.ndarray
    x: np.ndarray
    csr: sp.csr_matrix

    @classmethod
    def select(cls, users: np.ndarray, x: np.ndarray, train_csr: sp.csr_matrix) -> "ClientBatch":
        users = np.asarray(users, dtype=np.int64)
        return cls(users, np.asarray(x)[users], sp.csr_matrix(train_csr[users]))

    def __len__(self) -> int:
        return len(self.users)

    def positives(self, i: int) -> np.ndarray:
        return self.csr.indices[self.csr.indptr[i] : self.csr.indptr[i + 1]].astype(np.int64)


@dataclass(frozen=True)
class Schedule:
    """One client's minibatches over all local epochs: ``items`` / ``labels`` / ``valid``
    ``[steps, batch_size]`` (padding slots have ``valid = False``)."""

    items: np.ndarray
    labels: np.ndarray
    valid: np.ndarray


def by_workload(users: np.ndarray, train_csr: sp.csr_matrix) -> np.ndarray:
    """``users`` reordered by decreasing number of training items (stable), the order in which
    ``local_update`` trains them (clients with more SGD steps first)."""
    counts = np.diff(train_csr.indptr)[users]
    return np.asarray(users)[np.argsort(-counts, kind="stable")]


def client_schedule(positives: np.ndarray, n_items: int, cfg: LocalTraining, rng: np.random.Generator) -> Schedule:
    """Algorithm 1's local minibatches for one client: each epoch holds every positive and
    ``q`` fresh negatives per positive (never a training positive), shuffled and cut
    into batches of ``batch_size`` (the last one of an epoch may be short)."""
    n, q, epochs, bs = len(positives), cfg.n_negatives, cfg.local_epochs, cfg.batch_size
    if n == 0:
        return Schedule(np.zeros((0, bs), np.int64), np.zeros((0, bs), np.float32), np.zeros((0, bs), bool))
    own = sp.csr_matrix((np.ones(n), (np.zeros(n, np.int64), positives)), shape=(1, n_items))
    negatives = NegativeSampler(own, rng).sample(np.zeros(epochs * n, np.int64), q).reshape(epochs, n * q)
    items = np.concatenate([np.broadcast_to(positives, (epochs, n)), negatives], axis=1)
    labels = np.concatenate([np.ones((epochs, n)), np.zeros((epochs, n * q))], axis=1)
    order = np.argsort(rng.random(items.shape), axis=1)
    per_epoch = math.ceil(items.shape[1] / bs)
    pad = per_epoch * bs - items.shape[1]

    def cut(a: np.ndarray, fill: float) -> np.ndarray:
        a = np.take_along_axis(a, order, axis=1)
        return np.pad(a, ((0, 0), (0, pad)), constant_values=fill).reshape(epochs * per_epoch, bs)

    valid = cut(np.ones(items.shape, bool), False)
    return Schedule(cut(items, 0), cut(labels, 0.0).astype(np.float32), valid)


def _stack_schedules(schedules: list[Schedule], bs: int) -> tuple[Tensor, Tensor, Tensor, np.ndarray]:
    """Pad the schedules (already sorted by decreasing length) to ``[B, S_max, bs]`` and
    return ``active[s]``, the number of clients that have a step ``s``."""
    steps = np.array([len(s.items) for s in schedules])
    s_max = int(steps.max(initial=0))
    items = np.zeros((len(schedules), s_max, bs), np.int64)
    labels = np.zeros((len(schedules), s_max, bs), np.float32)
    valid = np.zeros((len(schedules), s_max, bs), bool)
    for i, s in enumerate(schedules):
        items[i, : steps[i]], labels[i, : steps[i]], valid[i, : steps[i]] = s.items, s.labels, s.valid
    active = (steps[None, :] > np.arange(s_max)[:, None]).sum(axis=1)
    return torch.from_numpy(items), torch.from_numpy(labels), torch.from_numpy(valid), active


def _stack_slots(slots: list[np.ndarray], shape: tuple[int, int, int]) -> Tensor:
    """Per-sample objective noise padded like ``_stack_schedules``: ``[B, S_max, bs]``."""
    out = np.zeros(shape, np.float64)
    for i, a in enumerate(slots):
        out[i, : len(a)] = a
    return torch.from_numpy(out)


class _LocalState:
    """Per-client parameters during local training (see the module docstring)."""

    def __init__(self, model: FederatedModel, global_params: dict[str, Tensor], batch: ClientBatch,
                 private: dict[str, Tensor], item_noise: Tensor | None = None) -> None:
        table = global_params[ITEM]
        n = len(batch)
        dtype = table.dtype
        self.params = {s.name: global_params[s.name].expand(n, *s.shape).clone()
                       for s in model.shared_specs() if s.name != ITEM}
        self.params.update({k: v.clone().to(dtype) for k, v in private.items()})
        self.tables = table.expand(n, *table.shape).clone()
        self.member = torch.from_numpy(batch.csr.toarray() != 0).to(dtype)
        self.inv_n = 1.0 / self.member.sum(dim=1).clamp(min=1.0)
        self.shift = torch.zeros((n, table.shape[1]), dtype=dtype)
        self.mean = (self.member @ table) * self.inv_n[:, None] if model.uses_neighbours else None
        self.item_noise = item_noise
        self.noise_shift = torch.zeros(n, dtype=dtype) if item_noise is not None else None

    def rows(self, a: int, items: Tensor) -> tuple[Tensor, Tensor]:
        """Current embeddings ``[a, b, d]`` of the scored items of the first ``a`` clients and
        whether each item is in the client's neighbourhood ``[a, b]``."""
        flat = torch.arange(a)[:, None] * self.tables.shape[1] + items
        inside = self.member.view(-1)[flat]
        z = self.tables.view(-1, self.tables.shape[2]).index_select(0, flat.view(-1)).view(*items.shape, -1)
        z = z + inside[..., None] * self.shift[:a, None, :]
        if self.item_noise is not None:
            eta = self.item_noise.view(-1, self.tables.shape[2]).index_select(0, flat.view(-1)).view(*items.shape, -1)
            z = z - self.noise_shift[:a, None, None] * eta
        return z, inside

    def apply(self, a: int, items: Tensor, inside: Tensor, grads: dict[str, Tensor], g_rows: Tensor,
              g_mean: Tensor | None, lr: float) -> None:
        """One SGD step of the first ``a`` clients from gradients of their summed losses."""
        for name, g in grads.items():
            self.params[name][:a].sub_(g, alpha=lr)
        n_items, d = self.tables.shape[1:]
        flat = (torch.arange(a)[:, None] * n_items + items).reshape(-1)
        self.tables.view(-1, d).index_add_(0, flat, g_rows.reshape(-1, d), alpha=-lr)
        if g_mean is not None:
            move = g_mean + torch.bmm(inside[:, None, :], g_rows)[:, 0]
            move.mul_(-lr * self.inv_n[:a, None])
            self.shift[:a].add_(g_mean * self.inv_n[:a, None], alpha=-lr)
            self.mean[:a] += move

    def add_noise_step(self, a: int, weight: Tensor, lr: float) -> None:
        """The linear objective term's SGD step ``-lr w_s η`` of the first ``a`` clients."""
        if self.noise_shift is not None:
            self.noise_shift[:a] += lr * weight

    def final(self, model: FederatedModel) -> dict[str, Tensor]:
        if model.uses_neighbours:
            # add each client's shift to its neighbourhood rows only (the same sums as a dense
            # ``tables += member * shift``, without a [B, n_items, d] temporary)
            rows, cols = torch.nonzero(self.member, as_tuple=True)
            self.tables.view(-1, self.tables.shape[2]).index_add_(0, rows * self.tables.shape[1] + cols, self.shift[rows])
        if self.item_noise is not None:
            self.tables -= self.noise_shift[:, None, None] * self.item_noise
        return {ITEM: self.tables, **self.params}


def local_update(
    model: FederatedModel,
    global_params: dict[str, Tensor],
    batch: ClientBatch,
    cfg: LocalTraining,
    seed: int,
    round_: int,
    private: dict[str, Tensor] | None = None,
    objective: LocalObjective | None = None,
    noise: NoiseSource = NoiseSource(),
) -> dict[str, Tensor]:
    """Every client of ``batch`` trains its copy of the global model (Algorithm 1, lines 3-7).

    Parameters
    ----------
    global_params:
        Θ, the shared parameters without batch dimension (their dtype is the training dtype).
    private:
        Initial private parameters ``[B, ...]`` (federated MF's ``P_u``), if the model has any.
    objective:
        A perturbed local objective (module docstring); None trains on Eq. 8's BCE.
    noise:
        Where the objective's noise comes from (secure by default).

    Returns
    -------
    dict
        Each client's trained parameters ``[B, ...]`` (shared and private), in batch order.
        A batch already sorted by decreasing number of training items (``by_workload``) is
        trained without reordering copies.
    """
    rngs = [client_rng(seed, round_, u, "train") for u in batch.users]
    schedules = [client_schedule(batch.positives(i), model.n_items, cfg, rng) for i, rng in enumerate(rngs)]
    order = np.argsort([-len(s.items) for s in schedules], kind="stable")
    identity = bool(np.all(order == np.arange(len(order))))
    sorted_batch = batch if identity else ClientBatch(batch.users[order], batch.x[order], batch.csr[order])
    dtype = global_params[ITEM].dtype
    noises = _objective_noise(objective, model, schedules, batch.users, noise, round_)
    item_noise = None
    if noises is not None and noises[0].items is not None:
        if model.uses_neighbours:
            raise ConfigError(f"{objective.name}: a linear item-table term is implemented for models without neighbourhood "
                              f"aggregation only, not {model.name}")
        item_noise = torch.as_tensor(np.stack([noises[i].items for i in order]), dtype=dtype)
    state = _LocalState(model, global_params, sorted_batch, {k: v[order] for k, v in (private or {}).items()}, item_noise)
    items, labels, valid, active = _stack_schedules([schedules[i] for i in order], cfg.batch_size)
    slots = None
    if noises is not None and noises[0].slots is not None:
        slots = _stack_slots([noises[i].slots for i in order], tuple(items.shape)).to(dtype)
    step_weight = None
    if item_noise is not None:
        per_epoch = valid.sum(dim=(1, 2)).to(dtype) / cfg.local_epochs
        step_weight = valid.sum(dim=2).to(dtype) / per_epoch.clamp(min=1.0)[:, None]
    x = torch.as_tensor(sorted_batch.x, dtype=dtype)
    labels, valid = labels.to(dtype), valid.to(dtype)
    loss_fn = bce_loss if objective is None or objective.loss is None else objective.loss
    for s, a in enumerate(active):
        a = int(a)
        it = items[:a, s]
        z, inside = state.rows(a, it)
        z.requires_grad_(True)
        leaves = {k: v[:a].detach().requires_grad_(True) for k, v in state.params.items()}
        mean = state.mean[:a].detach().requires_grad_(True) if state.mean is not None else None
        logits = model.logits(leaves, x[:a], mean, z)
        loss = loss_fn(logits, labels[:a, s], valid[:a, s], None if slots is None else slots[:a, s])
        inputs = [*leaves.values(), z] + ([mean] if mean is not None else [])
        grads = torch.autograd.grad(loss, inputs)
        with torch.no_grad():
            named = dict(zip(leaves, grads[: len(leaves)]))
            state.apply(a, it, inside, named, grads[len(leaves)], grads[-1] if mean is not None else None, cfg.lr)
            if step_weight is not None:
                state.add_noise_step(a, step_weight[:a, s], cfg.lr)
    final = state.final(model)
    if identity:
        return final
    inverse = torch.as_tensor(np.argsort(order))
    return {k: v[inverse] for k, v in final.items()}


def _objective_noise(objective: LocalObjective | None, model: FederatedModel, schedules: list[Schedule],
                     users: np.ndarray, noise: NoiseSource, round_: int) -> list[ObjectiveNoise] | None:
    """Each client's objective noise from its ``objective`` stream (of round 0 when the
    objective is drawn once for the whole training), in batch order."""
    if objective is None:
        return None
    t = 0 if objective.fixed_across_rounds else round_
    return [objective.draw(sched.valid, model.n_items, model.dim, client_noise(noise, t, u, "objective"))
            for sched, u in zip(schedules, users)]


def perturb_uploads(
    uploads: dict[str, Tensor], model: FederatedModel, defence: UploadDefence | None, users: np.ndarray,
    noise: NoiseSource, round_: int,
) -> dict[str, Tensor]:
    """The shared parameters each client sends: its trained ones, randomised by ``defence``
    with the client's own ``noise`` stream of ``noise`` (unchanged without a defence)."""
    shared = {s.name: uploads[s.name] for s in model.shared_specs()}
    if defence is None:
        return shared
    rngs = [client_noise(noise, round_, u, "noise") for u in users]
    return defence.perturb(shared, model.components(), rngs)


def aggregate(uploads: dict[str, Tensor], users: np.ndarray | None = None, round_: int | None = None) -> dict[str, Tensor]:
    """FedAvg with equal weights: the mean over clients (dimension 0) of every parameter.

    A non-finite upload (a client's local SGD diverged) would spread NaN to every client
    through the mean, so it raises ``RecPrivacyError`` naming the round, the parameter and the
    first such client (``users[i]`` is the client of row ``i``). The uploads are searched only
    when a mean is not finite: a sum with a NaN or an infinite term is never finite, so a
    finite mean proves every upload finite."""
    means = {name: u.mean(dim=0) for name, u in uploads.items()}
    for name, u in uploads.items():
        if bool(torch.isfinite(means[name]).all()):
            continue
        bad = np.flatnonzero((~torch.isfinite(u.reshape(len(u), -1))).any(dim=1).numpy())
        if len(bad):
            who = bad[0] if users is None else users[bad[0]]
            raise RecPrivacyError(
                f"round {round_ if round_ is not None else '?'}: {len(bad)} client(s) uploaded non-finite '{name}' "
                f"(first: client {who}); local training diverged -- lower the local learning rate "
                "or bound the updates with a clipping defence")
    return means


def pseudo_gradient(global_params: dict[str, Tensor], uploads: dict[str, Tensor], lr: float) -> dict[str, Tensor]:
    """What the server attacks (§3.1): ``ΔΘ_u = (Θ^{t-1} - Θ_u^t) / μ1`` per client."""
    return {name: (global_params[name] - u) / lr for name, u in uploads.items()}
