"""Two-stage exposure perturbation (paper 000, Section 4, Fig. 5): choose slate positions,
then replace their items, so exposure logs say less about what the user clicked.

For a slate of ``N`` items and replacement ratio ``L``, ``m = ceil(N * L)`` positions change
(``n_replaced``; a 1e-9 guard keeps 0.6 * 10 = 6.000000000000001 from becoming 7).

Stage 1, position selection:

* ``random``: ``m`` distinct positions uniformly at random;
* ``dissimilar`` / ``similar`` (Eqs. 15-16): the cosine ``cos_i = e_i . b / max(|e_i| |b|, w)``
  (``w = 1e-8``) between each slate item's embedding and a reference ``b``; ``mode="sample"``
  draws ``m`` positions without replacement with probability ``softmax(-cos)`` (dissimilar)
  or ``softmax(cos)`` (similar), ``mode="deterministic"`` takes the ``m`` least (most)
  similar. Reference ``b``: ``history`` = mean embedding of the pair's past clicks,
  ``user`` = of all the user's clicks (Eq. 15 as the authors' code computes it), ``slate`` =
  of the slate itself (the "slate centre" of the text, the code's choice for "similar").

Stage 2, replacement (Eqs. 17 and 19), ``m`` distinct items per slate drawn without
replacement: ``uniform`` over the catalogue; ``popularity`` with probability proportional to
the number of users whose log (exposed or clicked items) holds the item; ``batch_popularity``
the same counted over the users of the current batch of ``batch_size`` pairs only (the code,
``batch_pool="logs"``), or the occurrences of each item in the batch's own slates
(``batch_pool="slates"``: the items of the batch's exposure slates, a reading of the paper's
"in-batch popularity" that the code does not take).
Replacements may repeat an item already in the slate unless ``exclude_slate`` (the code).

Utility: ``slate_accuracy`` is Acc* (Eq. 18) against the user's click set, and
``next_item_recall`` the slate's Recall@N on the user's real next item (simulated exposure).

Decisions (docs/decisions.md, "Exposure leakage (paper 000)"): the reference defaults to
``history`` rather than ``user`` (the mean of the user's whole click set, which the paper's
Eq. 15 and the code use): the whole click set includes clicks made after the slate was shown,
which a platform cannot know when it serves the slate and which are also the ground truth of
Acc*, so ``user`` flatters the utility of dissimilar selection; ``user`` remains available.
Sampling (the paper) is the default mode; ``deterministic`` reproduces the code.
Sampling without replacement uses the Gumbel-top-k trick (top-m of log-weight + Gumbel noise).
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import ClassVar, Literal

import numpy as np
import scipy.sparse as sp

from recprivacy.data.exposure_pairs import ExposurePairs
from recprivacy.defenses.kinds import DefenceKind
from recprivacy.errors import ConfigError, NotFittedError
from recprivacy.metrics.ranking import hit_matrix
from recprivacy.privacy.accounting import PrivacyStatement, StatementContext
from recprivacy.privacy.randomness import NoiseMixin, check_mode

SELECTIONS = ("random", "dissimilar", "similar")
REPLACEMENTS = ("uniform", "popularity", "batch_popularity")
REFERENCES = ("history", "user", "slate")
MODES = ("sample", "deterministic")
BATCH_POOLS = ("logs", "slates")
OMEGA = 1e-8


def n_replaced(slate_size: int, ratio: float) -> int:
    """``m = ceil(N * L)`` positions to replace."""
    if not 0.0 <= ratio <= 1.0:
        raise ConfigError(f"ratio: expected a replacement ratio L in [0, 1], got {ratio}")
    return int(math.ceil(slate_size * ratio - 1e-9))


def gumbel_top_k(rng: np.random.Generator, log_weights: np.ndarray, m: int) -> np.ndarray:
    """Per row, ``m`` distinct column indices drawn without replacement with probabilities
    proportional to ``exp(log_weights)`` (``-inf`` = never drawn); ``[rows, m]``."""
    keys = log_weights + rng.gumbel(size=log_weights.shape)
    return np.argpartition(-keys, m - 1, axis=1)[:, :m] if m < keys.shape[1] else np.argsort(-keys, axis=1)


def select_random(rng: np.random.Generator, n_rows: int, slate_size: int, m: int) -> np.ndarray:
    """``[n_rows, m]`` distinct positions per slate, uniformly at random."""
    return gumbel_top_k(rng, np.zeros((n_rows, slate_size)), m)


def cosine_to_reference(slate_emb: np.ndarray, reference: np.ndarray, omega: float = OMEGA) -> np.ndarray:
    """``cos_i = e_i . b / max(|e_i| |b|, omega)`` for slate embeddings ``[P, N, d]`` and
    references ``[P, d]`` (the argument of the softmax in Eq. 16)."""
    dots = np.einsum("pnd,pd->pn", slate_emb, reference)
    norms = np.linalg.norm(slate_emb, axis=2) * np.linalg.norm(reference, axis=1)[:, None]
    return dots / np.maximum(norms, omega)


def select_by_similarity(
    rng: np.random.Generator, cosine: np.ndarray, m: int, direction: str, mode: str
) -> np.ndarray:
    """``[P, m]`` positions: the least (``dissimilar``) or most (``similar``) similar ones,
    sampled with probability ``softmax(-+cos)`` or taken deterministically."""
    signed = -cosine if direction == "dissimilar" else cosine
    if mode == "deterministic":
        return np.argsort(-signed, axis=1, kind="stable")[:, :m]
    return gumbel_top_k(rng, signed, m)


def replace_positions(slates: np.ndarray, positions: np.ndarray, items: np.ndarray) -> np.ndarray:
    """A copy of ``slates`` with ``slates[p, positions[p, j]] = items[p, j]``."""
    out = np.array(slates, copy=True)
    np.put_along_axis(out, positions, items, axis=1)
    return out


def slate_accuracy(pairs: ExposurePairs) -> np.ndarray:
    """Acc* of every pair (Eq. 18 with set semantics): ``|set(E) & C_u| / |set(E)|`` where
    ``C_u`` is the pair user's click set (``user_clicks``)."""
    hits, _ = hit_matrix(pairs.slates, pairs.user_clicks[pairs.users])
    order = np.argsort(pairs.slates, axis=1, kind="stable")
    ordered = np.take_along_axis(pairs.slates, order, axis=1)
    first = np.ones(pairs.slates.shape, dtype=bool)
    np.put_along_axis(first, order, np.c_[np.ones(len(pairs), dtype=bool), ordered[:, 1:] != ordered[:, :-1]], axis=1)
    return (hits & first).sum(axis=1) / first.sum(axis=1)


def next_item_recall(pairs: ExposurePairs) -> np.ndarray:
    """Recall@N of the slate on the user's real next item (simulated exposure): 1 if shown."""
    if pairs.next_items is None:
        raise ConfigError("next-item recall needs simulated exposure pairs (they record each user's next item)")
    return (pairs.slates == pairs.next_items[:, None]).any(axis=1).astype(np.float64)


class ExposurePerturbation(NoiseMixin):
    """Perturb exposed slates (module docstring). ``fit(pairs, item_embeddings)`` learns the
    popularity counts and the user references; ``perturb(pairs)`` returns perturbed pairs.

    Parameters
    ----------
    ratio:
        Replacement ratio ``L``.
    selection, replacement, reference, mode:
        Stage choices (module docstring).
    exclude_slate:
        Never draw a replacement already in the slate.
    batch_size, batch_pool:
        Pairs per batch for ``batch_popularity`` and what it counts (``logs`` of the batch's
        users, or the batch's ``slates``).
    seed:
        Seeds both stages in simulation mode (the same seed gives the same perturbed slates).
    noise:
        ``"secure"`` (operating-system entropy, the default: slates shown to real people) or
        ``"simulation"`` (seeded, for experiments; ``privacy.randomness.NoiseSource``).
    """

    kind: ClassVar[DefenceKind] = "transform"

    def __init__(
        self,
        ratio: float = 0.2,
        selection: Literal["random", "dissimilar", "similar"] = "random",
        replacement: Literal["uniform", "popularity", "batch_popularity"] = "uniform",
        reference: Literal["history", "user", "slate"] = "history",
        mode: Literal["sample", "deterministic"] = "sample",
        exclude_slate: bool = False,
        batch_size: int = 400,
        seed: int = 0,
        batch_pool: Literal["logs", "slates"] = "logs",
        noise: str = "secure",
    ) -> None:
        n_replaced(1, ratio)
        for name, value, allowed in (("selection", selection, SELECTIONS), ("replacement", replacement, REPLACEMENTS),
                                     ("reference", reference, REFERENCES), ("mode", mode, MODES),
                                     ("batch_pool", batch_pool, BATCH_POOLS)):  # fmt: skip
            if value not in allowed:
                raise ConfigError(f"exposure perturbation {name}: expected one of {list(allowed)}, got {value!r}")
        if batch_size < 1:
            raise ConfigError(f"exposure perturbation batch_size: expected a positive integer, got {batch_size}")
        self.ratio, self.selection, self.replacement = ratio, selection, replacement
        self.reference, self.mode, self.exclude_slate = reference, mode, exclude_slate
        self.batch_size, self.seed, self.batch_pool = batch_size, seed, batch_pool
        self.noise = check_mode(noise, "exposure perturbation noise")

    def fit(self, pairs: ExposurePairs, item_embeddings: np.ndarray | None = None) -> "ExposurePerturbation":
        """Popularity = per item, how many of the pairs' users have it in their log; the
        embeddings (``[n_items, d]`` in catalogue ids) are needed by similarity selection."""
        if self.selection != "random":
            if item_embeddings is None or len(item_embeddings) != pairs.n_items:
                raise ConfigError(
                    f"exposure perturbation: selection {self.selection!r} needs item_embeddings with {pairs.n_items} rows"
                )
            self.item_embeddings_ = np.asarray(item_embeddings, dtype=np.float64)
        users = np.unique(pairs.users)
        self.popularity_ = np.asarray(pairs.user_log[users].sum(axis=0)).ravel()
        self.n_items_ = pairs.n_items
        return self

    def perturb(self, pairs: ExposurePairs) -> ExposurePairs:
        """The same pairs with ``m = ceil(N L)`` positions of every slate replaced."""
        if not hasattr(self, "n_items_"):
            raise NotFittedError("ExposurePerturbation is not fitted yet: call fit(pairs) first")
        m = n_replaced(pairs.slate_size, self.ratio)
        if m == 0 or len(pairs) == 0:
            return pairs
        rng = self.noise_source().generator()
        positions = self._positions(rng, pairs, m)
        items = self._replacements(rng, pairs, m)
        return replace(pairs.with_slates(replace_positions(pairs.slates, positions, items)),
                       provenance=pairs.provenance + ({"step": "exposure_perturbation", **self.get_params()},))  # fmt: skip

    def _positions(self, rng: np.random.Generator, pairs: ExposurePairs, m: int) -> np.ndarray:
        if self.selection == "random":
            return select_random(rng, len(pairs), pairs.slate_size, m)
        emb = self.item_embeddings_
        cosine = cosine_to_reference(emb[pairs.slates], self._reference(pairs))
        return select_by_similarity(rng, cosine, m, self.selection, self.mode)

    def _reference(self, pairs: ExposurePairs) -> np.ndarray:
        """``b`` of Eq. 15 for every pair (see ``reference``)."""
        emb = self.item_embeddings_
        if self.reference == "history":
            return emb[pairs.histories].mean(axis=1)
        if self.reference == "slate":
            return emb[pairs.slates].mean(axis=1)
        clicks = sp.csr_matrix(pairs.user_clicks)
        means = sp.diags(1.0 / np.maximum(np.diff(clicks.indptr), 1)) @ clicks @ emb
        return np.asarray(means)[pairs.users]

    def _replacements(self, rng: np.random.Generator, pairs: ExposurePairs, m: int) -> np.ndarray:
        """``[P, m]`` distinct replacement items per slate."""
        out = np.empty((len(pairs), m), dtype=np.int64)
        for lo in range(0, len(pairs), self.batch_size):
            rows = slice(lo, lo + self.batch_size)
            weights = self._weights(pairs, rows)
            log_w = np.broadcast_to(np.log(weights, where=weights > 0, out=np.full(len(weights), -np.inf)),
                                    (len(pairs.users[rows]), len(weights))).copy()  # fmt: skip
            if self.exclude_slate:
                np.put_along_axis(log_w, pairs.slates[rows], -np.inf, axis=1)
            available = np.isfinite(log_w).sum(axis=1).min()
            if available < m:
                raise ConfigError(f"exposure perturbation: only {available} items can replace {m} positions of a slate")
            out[rows] = gumbel_top_k(rng, log_w, m)
        return out

    def _weights(self, pairs: ExposurePairs, rows: slice) -> np.ndarray:
        """Unnormalised replacement probabilities over the catalogue for the batch ``rows``."""
        if self.replacement == "uniform":
            return np.ones(self.n_items_)
        if self.replacement == "popularity":
            return self.popularity_.astype(np.float64)
        if self.batch_pool == "slates":
            return np.bincount(pairs.slates[rows].ravel(), minlength=self.n_items_).astype(np.float64)
        return np.asarray(pairs.user_log[np.unique(pairs.users[rows])].sum(axis=0), dtype=np.float64).ravel()

    def get_params(self) -> dict[str, object]:
        return {k: v for k, v in vars(self).items() if not k.endswith("_")}

    def privacy_statement(self, context: StatementContext | None = None) -> PrivacyStatement:
        """Exposure perturbation has no formal privacy guarantee (the paper claims none);
        ``context`` is not read."""
        return self.noise_source().stamp(PrivacyStatement.no_guarantee(
            unit="a user's recent clicks as revealed by one exposed slate",
            scope=f"{self.selection} selection, {self.replacement} replacement, L = {self.ratio}",
            reason="heuristic noise on the exposure; measured only against the exposure attack",
        ))
