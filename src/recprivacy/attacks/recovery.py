"""Replaced-item recovery: a privacy test of synthetic releases that paper 003 lacks.

UPC-SDG (``defenses.upcsdg``) releases, for each user, the items it kept and the items it
generated in place of the others. The attacker holds the release and item embeddings ``q``
(public ones, or ones learned from the release itself) and tries to name each user's *replaced
original* items. It scores every item ``j`` the user does not have in the release::

    s_u(j) = w · max_{v ∈ R_u} cos(q_j, q_v) + (1 − w) · cos(q_j, c_u),
    c_u = mean_{v ∈ K_u} q_v / ‖q_v‖

The first term follows a replacement back to the items it resembles (a replacement kept close
to its original by a loose similarity cap γ gives the original away); the second ranks items
that fit the rest of the user's profile. Two threat models:

* *blind* (default): the release does not say which items are synthetic, so ``R_u = K_u = V_u``
  (all released items of the user);
* *informed*: the attacker knows which released items are replacements (``R_u``) and which
  were kept (``K_u``), e.g. because synthetic rows are flagged; a worst case.

``PopularityGuess`` is the baseline that knows nothing of the user: it ranks the items the user
does not have by their popularity in the release. ``recovery_metrics`` reports Recall@K (share
of a user's replaced originals in the top K, averaged over users with a replaced item) and
the other ranking metrics of ``metrics.ranking`` for any of them. Both follow the attack
interface: ``fit(knowledge) -> self``, ``score(users) -> ndarray`` (higher = more likely a
replaced original; the user's released items score ``-inf``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import scipy.sparse as sp
import torch
import torch.nn.functional as F

from recprivacy.data.interactions import Interactions
from recprivacy.errors import ConfigError, DataError, NotFittedError
from recprivacy.metrics.ranking import mask_items, ranking_metrics


class ReplacementRecoveryAttack:
    """Rank candidate originals by similarity to a user's replacements and kept items.

    Parameters
    ----------
    item_embeddings:
        ``[n_items, d]`` item vectors the attacker holds.
    informed:
        Whether the attacker knows which released items are replacements (see module docstring).
    weight:
        ``w`` in [0, 1], the share of the replacement-similarity term (0.5).
    batch_size:
        Users scored at once.
    """

    def __init__(self, item_embeddings: Any, informed: bool = False, weight: float = 0.5, batch_size: int = 256) -> None:
        if not 0.0 <= weight <= 1.0:
            raise ConfigError(f"ReplacementRecoveryAttack.weight: expected a number in [0, 1], got {weight!r}")
        self.item_embeddings = item_embeddings
        self.informed = informed
        self.weight = weight
        self.batch_size = batch_size

    def fit(self, release: Interactions, replacements: sp.spmatrix | None = None) -> "ReplacementRecoveryAttack":
        """Learn from the released interactions and, for an informed attacker, the user x item
        matrix of the released items that are replacements."""
        unit = F.normalize(torch.as_tensor(np.asarray(self.item_embeddings), dtype=torch.float32), dim=1)
        if unit.shape[0] != release.n_items:
            raise DataError(f"item_embeddings have {unit.shape[0]} rows but the release has {release.n_items} items")
        released = release.to_csr()
        if self.informed:
            if replacements is None:
                raise ConfigError("an informed attacker needs the replacements matrix")
            synthetic = sp.csr_matrix(replacements, dtype=bool).astype(np.float64)
            self.replaced_ = released.multiply(synthetic).tocsr()
            self.kept_ = (released - self.replaced_).tocsr()
        else:
            self.replaced_ = self.kept_ = released
        self.released_ = released
        self.unit_ = unit
        return self

    def score(self, users: Sequence[int] | np.ndarray) -> np.ndarray:
        """``s_u(j)`` for every item, ``[len(users), n_items]``; released items are ``-inf``."""
        if not hasattr(self, "unit_"):
            raise NotFittedError("ReplacementRecoveryAttack is not fitted yet: call fit(release) first")
        users = np.asarray(users, dtype=np.int64)
        out = [self._score_batch(users[lo : lo + self.batch_size]) for lo in range(0, len(users), self.batch_size)]
        return torch.cat(out).numpy() if out else np.zeros((0, self.unit_.shape[0]))

    def _score_batch(self, users: np.ndarray) -> torch.Tensor:
        kept = self.kept_[users]
        profile = torch.from_numpy(np.asarray(kept @ self.unit_.numpy(), dtype=np.float32))
        profile = F.normalize(profile / torch.from_numpy(np.maximum(kept.getnnz(axis=1), 1)).float()[:, None], dim=1)
        score = (1.0 - self.weight) * (profile @ self.unit_.T)
        if self.weight > 0:
            score = score + self.weight * self._max_similarity(self.replaced_[users])
        return mask_items(score, self.released_, users)

    def _max_similarity(self, rows: sp.csr_matrix) -> torch.Tensor:
        """``max_{v in row} cos(q_j, q_v)`` per row (0 for an empty row)."""
        seg = torch.from_numpy(np.repeat(np.arange(rows.shape[0]), np.diff(rows.indptr)))
        sims = self.unit_[torch.from_numpy(rows.indices.astype(np.int64))] @ self.unit_.T
        top = torch.full((rows.shape[0], sims.shape[1]), -torch.inf)
        top = top.scatter_reduce_(0, seg[:, None].expand_as(sims), sims, "amax")
        return torch.where(torch.isinf(top), torch.zeros(()), top)


class PopularityGuess:
    """Baseline: rank the items a user does not have by their popularity in the release."""

    def fit(self, release: Interactions) -> "PopularityGuess":
        self.released_ = release.to_csr()
        self.popularity_ = torch.from_numpy(np.asarray(self.released_.sum(axis=0), dtype=np.float64).ravel())
        return self

    def score(self, users: Sequence[int] | np.ndarray) -> np.ndarray:
        """Item counts in the release, ``[len(users), n_items]``; released items are ``-inf``."""
        if not hasattr(self, "popularity_"):
            raise NotFittedError("PopularityGuess is not fitted yet: call fit(release) first")
        users = np.asarray(users, dtype=np.int64)
        return mask_items(self.popularity_.repeat(len(users), 1), self.released_, users).numpy()


def recovery_metrics(attack: Any, truth: sp.spmatrix, ks: Sequence[int] = (10,), batch_size: int = 1024,
                     per_user: bool = False) -> dict[str, Any]:  # fmt: skip
    """Ranking metrics of ``attack.score`` against the replaced originals ``truth`` (a user x
    item matrix), over the users with at least one replaced item (``per_user``: arrays over
    them, in id order, as ``metrics.ranking.ranking_metrics`` gives them)."""
    truth = sp.csr_matrix(truth)
    users = np.flatnonzero(np.diff(truth.indptr) > 0)
    k = min(max(ks), truth.shape[1])
    tops = [torch.topk(torch.from_numpy(attack.score(users[lo : lo + batch_size])), k, dim=1).indices.numpy()
            for lo in range(0, len(users), batch_size)]
    topk = np.concatenate(tops) if tops else np.zeros((0, k), dtype=np.int64)
    return ranking_metrics(topk, truth[users], ks, per_user=per_user)
