"""Interaction-level membership inference: which of a member's (user, item) pairs trained the target?

For a member ``u`` the candidates are pairs ``(u, i)`` labelled 1 when ``i`` is one of ``u``'s training
items, 0 otherwise. Non-members come in two kinds, measured side by side (:func:`candidate_pairs`):
**hard** ones are items ``u`` really interacted with but that were held out of training (validation /
test rows), **easy** ones items ``u`` never interacted with (the non-members of MINER, CIKM 2024).

The adversary sees ``u``'s served top-k list ``L_u`` and knows item popularity and item-item similarity
from its own data (users who never trained the target): ``pop(i)`` is an item's share of the most
popular item's count, ``S`` the cosine similarity of item columns. Scores (higher = trained):

* attack ``seen_filter``: ``(1 - [i in L_u]) * pop(i)``: a target that excludes seen items never shows
  a trained item, so a popular item missing from the list was probably seen;
* attack ``list_neighbourhood``: ``(1 - [i in L_u]) * mean_{j in L_u} S(i, j)``: a trained item is
  filtered out of the list while its neighbours fill it;
* attack ``reference_filter`` (when reference recommenders ran, :func:`reference_expectation`):
  ``(1 - [i in L_u]) * E_ref(u, i)``, where ``E_ref(u, i)`` is how high recommenders of the target's
  kind that never trained on the pair rank ``i`` for ``u`` (the mean over references of
  ``(K - rank) / K`` in their top-``K``, 0 outside it, with ``K`` as long as every user's list can
  be, so nearly every item is ranked): the seen-item filter calibrated per user, since
  an item the references would show and the target does not was filtered out as seen;
* baseline ``item_popularity``: ``pop(i)``;
* baseline ``user_history``: ``mean_{j in H_u, j != i} S(i, j)`` over the user's known history ``H_u``
  (training and held-out items alike): how well ``i`` fits the user, from the data alone;
* baseline ``reference_fit`` (with the references): ``E_ref(u, i)`` alone, how well ``i`` fits ``u``
  by the adversary's own recommenders, without the target's list: the reference-calibrated filter
  must beat it, or the signal is the data, not the target.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import sparse

from recprivacy.data.interactions import Interactions

ATTACKS = ("seen_filter", "list_neighbourhood", "reference_filter")
BASELINES = ("item_popularity", "user_history", "reference_fit")
KINDS = ("hard", "easy")
#: report names of the attacks, baselines and the blind guess
NAMES = {"seen_filter": "seen-item filter", "list_neighbourhood": "list neighbourhood",
         "reference_filter": "reference-calibrated filter",
         "item_popularity": "item popularity", "user_history": "user's history similarity",
         "reference_fit": "references' ranking without the target",
         "reference_fit_defended": "references' ranking under the defence, without the target", "blind": "blind guess"}


def name(key: str) -> str:
    """The report name of an attack or baseline key (the key itself when it has none)."""
    return NAMES.get(key, key)


@dataclass(frozen=True)
class Pairs:
    """Candidate pairs: ``row`` indexes the attacked users (their lists), ``users`` / ``items`` are
    internal ids, ``labels`` 1 for a training pair, ``kind`` ``member``, ``hard`` or ``easy``."""

    row: np.ndarray
    users: np.ndarray
    items: np.ndarray
    labels: np.ndarray
    kind: np.ndarray


def _sample_rows(csr: sparse.csr_matrix, users: np.ndarray, per_user: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Up to ``per_user`` of each user's items in ``csr``, uniformly: (index into ``users``, item)."""
    rows, items = [], []
    for r, u in enumerate(users):  # per attacked user, a few draws: not a hot path
        own = csr.indices[csr.indptr[u] : csr.indptr[u + 1]]
        pick = rng.choice(own, size=min(per_user, len(own)), replace=False)
        rows.append(np.full(len(pick), r)), items.append(pick)
    return np.concatenate(rows).astype(np.int64), np.concatenate(items).astype(np.int64)


def candidate_pairs(train: Interactions, heldout: Interactions, full: Interactions, users: np.ndarray, per_user: int,
                    seed: int) -> Pairs:  # fmt: skip
    """For each of ``users``: up to ``per_user`` training items (label 1), up to ``per_user`` held-out
    items (``heldout``: hard, label 0) and ``per_user`` items absent from ``full`` (easy, label 0)."""
    rng = np.random.default_rng(seed)
    users = np.asarray(users, dtype=np.int64)
    pos = _sample_rows(train.to_csr(), users, per_user, rng)
    hard = _sample_rows(heldout.to_csr(), users, per_user, rng)
    known = full.to_csr()
    easy_rows = np.repeat(np.arange(len(users)), per_user)
    easy_items = rng.integers(0, full.n_items, size=len(easy_rows))
    clash = np.asarray(known[users[easy_rows], easy_items]).ravel() > 0
    while clash.any():  # redraw items the user has: a few rounds on a sparse matrix
        easy_items[clash] = rng.integers(0, full.n_items, size=int(clash.sum()))
        clash = np.asarray(known[users[easy_rows], easy_items]).ravel() > 0
    parts = [(pos, 1, "member"), (hard, 0, "hard"), ((easy_rows, easy_items), 0, "easy")]
    row = np.concatenate([p[0][0] for p in parts])
    return Pairs(row, users[row], np.concatenate([p[0][1] for p in parts]),
                 np.concatenate([np.full(len(p[0][0]), p[1]) for p in parts]),
                 np.concatenate([np.full(len(p[0][0]), p[2]) for p in parts]))  # fmt: skip


def item_knowledge(adversary: Interactions) -> tuple[np.ndarray, np.ndarray]:
    """``pop`` (``[n_items]``, count / largest count) and ``S`` (``[n_items, n_items]`` cosine of item
    columns, zero diagonal) from the adversary's own interactions."""
    x = adversary.to_csr().astype(np.float64)
    x.data[:] = 1.0
    counts = np.asarray(x.sum(axis=0)).ravel()
    pop = counts / max(counts.max(initial=0.0), 1.0)
    norms = np.sqrt(counts).clip(1e-12)
    s = (x.T @ x).toarray() / norms[:, None] / norms[None, :]
    np.fill_diagonal(s, 0.0)
    return pop, s


def without_candidates(known: Interactions, pairs: Pairs) -> Interactions:
    """``known`` without the rows that are candidate pairs (either label): what a reference trains
    on so that it has seen none of the pairs it is asked about."""
    rows = known.users.astype(np.int64) * known.n_items + known.items
    return known.select(~np.isin(rows, pairs.users * known.n_items + pairs.items))


def reference_expectation(pairs: Pairs, reference_lists: np.ndarray) -> np.ndarray:
    """``E_ref(u, i)`` of every pair (module docstring) from ``reference_lists``
    (``[n_refs, n_users, K]``, rows as ``pairs.row``, best first): the mean over references of
    ``(K - rank) / K`` where ``i`` is at 0-based ``rank`` in the top-``K``, else 0."""
    n_refs, n_users, length = reference_lists.shape
    total = np.zeros(len(pairs.row))
    rows = np.arange(n_users)[:, None]
    for ranking in reference_lists:  # one [n_users, n_items + 1] rank table at a time (memory)
        rank = np.full((n_users, max(int(ranking.max(initial=0)), int(pairs.items.max(initial=0))) + 1), length)
        rank[rows, ranking] = np.arange(length)
        total += (length - rank[pairs.row, pairs.items]) / length
    return total / n_refs


def interaction_scores(pairs: Pairs, lists: np.ndarray, history: Interactions, pop: np.ndarray,
                       s: np.ndarray, expectation: np.ndarray | None = None) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:  # fmt: skip
    """Each attack's and baseline's score of every pair (module docstring). ``lists``: ``[n_users, k]``
    served to the attacked users (rows as ``pairs.row``); ``history``: what the adversary knows of them;
    ``expectation``: ``reference_expectation`` of the pairs (no ``reference_filter`` attack without it)."""
    in_list = (lists[pairs.row] == pairs.items[:, None]).any(axis=1)
    absent = (~in_list).astype(np.float64)
    neighbourhood = s[pairs.items[:, None], lists[pairs.row]].mean(axis=1)
    h = history.to_csr().astype(np.float64)
    h.data[:] = 1.0
    attacked, at = np.unique(pairs.users, return_inverse=True)
    fit = np.asarray(h[attacked] @ s)[at, pairs.items]  # S has a zero diagonal: i itself adds nothing
    sizes = np.asarray(h.sum(axis=1)).ravel()[pairs.users]
    attacks = {"seen_filter": absent * pop[pairs.items], "list_neighbourhood": absent * neighbourhood}
    baselines = {"item_popularity": pop[pairs.items].copy(), "user_history": fit / np.maximum(sizes - 1, 1)}
    if expectation is not None:
        attacks["reference_filter"] = absent * expectation
        baselines["reference_fit"] = expectation
    return attacks, baselines
