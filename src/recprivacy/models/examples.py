"""What a recommender hands a training-time privacy engine: its training as per-example losses
grouped by user (``ExampleTask``).

A torch recommender that can be trained privately implements ``private_task(train)``: it
prepares its network as ``fit`` would (the same initialisation), and returns

* ``module``: the ``nn.Module`` whose parameters training changes;
* ``users``: the users that own at least one training example (the population a step samples
  from);
* ``draw(users)``: the training examples of those users for one step, as aligned tensors, and
  the position in ``users`` of each example's owner. Negatives are drawn here from the
  model's own seeded generator, from the items the owner has not interacted with (so they
  depend on the owner's data only);
* ``losses(*examples)``: the loss of each example, ``Tensor[M]``, computed through ``module``
  (so a functional call with other parameter values differentiates it);
* ``finish()``: what ``fit`` does after training (e.g. cache the factors used for scoring);
* ``coupling``: what of other users' data enters every example's loss besides its parameters
  (LightGCN's graph), empty when nothing does;
* ``personal``: the names (in ``module``) of the user embedding tables whose row ``u`` only
  user ``u``'s examples read, and only user ``u``'s scores use;
* ``lookups``: when every parameter of ``module`` is an embedding table and each example's loss
  reads a table only at the rows its own columns name (a *row-local* loss, BPR-MF's), the table
  each example tensor indexes, one name per tensor (``""`` for a tensor that indexes none; BPR-MF:
  ``("user", "item", "item")``); empty otherwise. The engine then computes per-user gradients on the rows they touch alone.

The model layer imports nothing from ``privacy/``: the engine (``defenses.dp_engine``)
samples, clips, adds noise, steps and accounts. The plain ``fit`` does not use this.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import torch
from torch import nn

#: ``draw(users) -> (owner positions [M], example tensors each [M, ...])``
Draw = Callable[[np.ndarray], tuple[np.ndarray, tuple[torch.Tensor, ...]]]


@dataclass(frozen=True)
class ExampleTask:
    """A recommender's training as per-example losses owned by users (module docstring)."""

    module: nn.Module
    users: np.ndarray
    draw: Draw
    losses: Callable[..., torch.Tensor]
    finish: Callable[[], None]
    coupling: str = ""
    personal: tuple[str, ...] = ()
    lookups: tuple[str, ...] = ()


def rows_of(indptr: np.ndarray, users: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The rows ``indptr[u]:indptr[u + 1]`` of every user in ``users`` (a CSR layout), without a
    loop over users: ``(owner positions in users, row indices)``, both ``int64 [M]``."""
    users = np.asarray(users, dtype=np.int64)
    starts, counts = indptr[users].astype(np.int64), np.diff(indptr)[users].astype(np.int64)
    owners = np.repeat(np.arange(len(users)), counts)
    offsets = np.arange(counts.sum()) - np.repeat(np.cumsum(counts) - counts, counts)
    return owners, np.repeat(starts, counts) + offsets
