"""The one small training loop shared by the learned recommenders.

* ``NegativeSampler`` draws items a user has not interacted with, vectorised: candidates are
  drawn uniformly and the collisions are redrawn until none remain. A collision is looked up in
  a dense boolean matrix of the positive cells when it has at most ``dense_cells`` cells (2²⁶,
  64 MB; ml-1m has 2.2·10⁷), else by binary search in the sorted keys ``user * n_items + item``,
  which is much slower (docs/decisions.md, "Speed and start-up").
* ``fit_epochs`` runs epochs of mini-batches, evaluates a validation metric every
  ``eval_every`` epochs, keeps the best weights and stops after ``patience`` evaluations
  without improvement (early stopping on the validation split, never on test).
* ``use_threads`` sets the process's thread budget for a run (CLI ``--threads``, config
  ``threads``; default ``available_cores()``, the cores of the affinity mask) and applies it
  to PyTorch; ``thread_budget()`` reads it (ALS passes it to implicit).
* ``torch_threads`` bounds PyTorch's intra-op threads while training, within the budget.
  Models that take many small optimiser steps (MF, BPR, LightGCN, NCF) train with one thread:
  on shared cores a second thread that waits for a busy core makes a step far slower
  (docs/decisions.md, "Training threads"). ``RECPRIVACY_TRAIN_THREADS`` overrides the count for
  every model.
"""

from __future__ import annotations

import copy
import os
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp
import torch

from recprivacy.progress import progress


class NegativeSampler:
    """Uniform negatives for each user, excluding the user's positives in ``csr``."""

    def __init__(self, csr: sp.csr_matrix, rng: np.random.Generator, max_rounds: int = 50,
                 dense_cells: int = 1 << 26) -> None:  # fmt: skip
        csr = csr.tocsr()
        self.n_items = csr.shape[1]
        rows = np.repeat(np.arange(csr.shape[0], dtype=np.int64), np.diff(csr.indptr))
        self._keys = np.sort(rows * self.n_items + csr.indices.astype(np.int64))
        self._dense = None
        if csr.shape[0] * self.n_items <= dense_cells:
            self._dense = np.zeros(csr.shape[0] * self.n_items, dtype=bool)
            self._dense[self._keys] = True
        self._full = np.diff(csr.indptr) >= self.n_items
        self.rng = rng
        self.max_rounds = max_rounds

    def is_positive(self, users: np.ndarray, items: np.ndarray) -> np.ndarray:
        """Whether each ``(users[k], items[k])`` is a positive cell."""
        keys = users.astype(np.int64) * self.n_items + items
        if self._dense is not None:
            return self._dense[keys]
        pos = np.searchsorted(self._keys, keys)
        pos = np.minimum(pos, len(self._keys) - 1)
        return self._keys[pos] == keys if len(self._keys) else np.zeros(len(keys), bool)

    def sample(self, users: np.ndarray, n_neg: int = 1) -> np.ndarray:
        """``[len(users), n_neg]`` item ids, none of them a positive of its user."""
        users = np.asarray(users, dtype=np.int64)
        if self._full[users].any():
            raise ValueError("a user has interacted with every item; no negative exists")
        u = np.repeat(users, n_neg)
        items = self.rng.integers(0, self.n_items, size=len(u))
        bad = np.flatnonzero(self.is_positive(u, items))
        for _ in range(self.max_rounds):
            if len(bad) == 0:
                break
            items[bad] = self.rng.integers(0, self.n_items, size=len(bad))
            bad = bad[self.is_positive(u[bad], items[bad])]
        for j in bad:  # pathological near-full users only
            free = np.setdiff1d(np.arange(self.n_items), self._keys_of(u[j]))
            items[j] = self.rng.choice(free)
        return items.reshape(len(users), n_neg)

    def _keys_of(self, user: int) -> np.ndarray:
        lo = np.searchsorted(self._keys, user * self.n_items)
        hi = np.searchsorted(self._keys, (user + 1) * self.n_items)
        return self._keys[lo:hi] - user * self.n_items


_BUDGET: list[int] = []  # the innermost ``use_threads`` budget, if any


def available_cores() -> int:
    """Cores this process may run on: its CPU affinity mask, else ``os.cpu_count()``."""
    if hasattr(os, "sched_getaffinity"):
        return max(len(os.sched_getaffinity(0)), 1)
    return os.cpu_count() or 1


def thread_budget() -> int:
    """Threads training may use: the current ``use_threads`` budget, else every available core."""
    return _BUDGET[-1] if _BUDGET else available_cores()


@contextmanager
def use_threads(n: int | None) -> Iterator[int]:
    """Run the block with a budget of ``n`` threads (``None``: every available core), applied
    to PyTorch; yields the budget and restores the previous one after."""
    budget = n if n is not None else available_cores()
    before = torch.get_num_threads()
    _BUDGET.append(budget)
    torch.set_num_threads(budget)
    try:
        yield budget
    finally:
        _BUDGET.pop()
        torch.set_num_threads(before)


@contextmanager
def torch_threads(n: int | None) -> Iterator[None]:
    """Run the block with ``min(n, thread_budget())`` PyTorch intra-op threads (``None``: the
    budget; ``RECPRIVACY_TRAIN_THREADS`` overrides ``n``), then restore the previous count."""
    env = os.environ.get("RECPRIVACY_TRAIN_THREADS")
    if env:
        n = int(env)
    before = torch.get_num_threads()
    torch.set_num_threads(min(n, thread_budget()) if n is not None else thread_budget())
    try:
        yield
    finally:
        torch.set_num_threads(before)


def minibatches(n: int, batch_size: int, rng: np.random.Generator) -> Iterator[np.ndarray]:
    """Shuffled index batches covering ``range(n)`` once."""
    perm = rng.permutation(n)
    for lo in range(0, n, batch_size):
        yield perm[lo : lo + batch_size]


def shuffled_batches(tensors: Sequence[torch.Tensor], batch_size: int, rng: np.random.Generator) -> Iterator[list[torch.Tensor]]:
    """The batches of ``minibatches(n, batch_size, rng)`` over the rows of ``tensors`` (each of
    length ``n``): the rows are gathered in the shuffled order once, and each batch is a slice
    of that copy rather than a gather of its own."""
    n = len(tensors[0])
    order = torch.from_numpy(rng.permutation(n))
    shuffled = [t.index_select(0, order) for t in tensors]
    for lo in range(0, n, batch_size):
        yield [t[lo : lo + batch_size] for t in shuffled]


@dataclass
class TrainingHistory:
    """What happened during training: losses per epoch and validation scores."""

    losses: list[float] = field(default_factory=list)
    valid: list[tuple[int, float]] = field(default_factory=list)
    best_epoch: int = -1
    best_score: float = -float("inf")
    stopped_early: bool = False


def fit_epochs(
    module: torch.nn.Module,
    run_epoch: Callable[[int], float],
    n_epochs: int,
    validate: Callable[[], float] | None = None,
    eval_every: int = 1,
    patience: int = 5,
    desc: str = "training",
    threads: int | None = 1,
) -> TrainingHistory:
    """Run ``run_epoch(epoch) -> mean loss`` up to ``n_epochs`` times with early stopping.

    With ``validate`` (higher is better), the weights of the best evaluation are restored at
    the end; training stops after ``patience`` evaluations without improvement. ``threads``
    bounds PyTorch's threads while training (see ``torch_threads``).
    """
    with torch_threads(threads):
        return _fit_epochs(module, run_epoch, n_epochs, validate, eval_every, patience, desc)


def _fit_epochs(
    module: torch.nn.Module,
    run_epoch: Callable[[int], float],
    n_epochs: int,
    validate: Callable[[], float] | None,
    eval_every: int,
    patience: int,
    desc: str,
) -> TrainingHistory:
    history = TrainingHistory()
    best_state = None
    bad = 0
    for epoch in progress(range(n_epochs), desc=desc, total=n_epochs, unit="epoch"):
        module.train()
        history.losses.append(float(run_epoch(epoch)))
        if validate is None or (epoch + 1) % eval_every and epoch + 1 != n_epochs:
            continue
        module.eval()
        with torch.no_grad():
            score = float(validate())
        history.valid.append((epoch, score))
        if score > history.best_score:
            history.best_score, history.best_epoch, bad = score, epoch, 0
            best_state = copy.deepcopy(module.state_dict())
        else:
            bad += 1
            if bad >= patience:
                history.stopped_early = True
                break
    if best_state is not None:
        module.load_state_dict(best_state)
    module.eval()
    return history
