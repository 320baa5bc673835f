"""Popularity Randomization (paper 001, §4 and Appendix A.1): the defence against user-level
membership inference.

Non-members of a recommender all receive the same top-k popular list, so their attack
features cluster tightly and are easy to tell from members'. The defence keeps the lists
popular but random:

1. sort the items by popularity (the recommender's own non-personalised ranking,
   ``S_sorted``);
2. keep the ``N_cand = k / α`` most popular as candidates (``α = N_rec / N_cand``, 0.1 by
   default, so 1000 candidates for k = 100);
3. give each non-member ``k`` distinct candidates drawn uniformly at random, independently per
   user (without replacement, kept in the random draw order; the paper does not say how the
   list is ordered).

Members' personalised lists are not touched. When ``k / α`` exceeds the catalogue, every
item is a candidate (``n_candidates`` reports the number used).

``fit(train)`` learns ``S_sorted`` from the members' training interactions (most interacted-with
first, ties by item id) and ``lists(None, n_users, k)`` draws from it; a caller that holds the
recommender's own ranking passes it to ``lists`` instead.

The defence has no formal privacy guarantee; ``privacy_statement()`` says so.
"""

from __future__ import annotations

import math
from typing import ClassVar

import numpy as np

from recprivacy.data.interactions import Interactions
from recprivacy.defenses.kinds import DefenceKind
from recprivacy.errors import ConfigError, NotFittedError
from recprivacy.privacy.accounting import PrivacyStatement, StatementContext
from recprivacy.privacy.randomness import NoiseMixin, check_mode


class PopularityRandomization(NoiseMixin):
    """Random k-subsets of the ``k / alpha`` most popular items for non-members.

    Parameters
    ----------
    alpha:
        ``α_PR = N_rec / N_cand`` in (0, 1] (0.1). ``alpha = 1`` gives every non-member the
        top-k popular items in a random order.
    seed:
        Seeds the draws in simulation mode (the same seed gives the same lists).
    noise:
        ``"secure"`` (operating-system entropy, the default: lists served to real people) or
        ``"simulation"`` (seeded, for experiments; ``privacy.randomness.NoiseSource``).
    """

    kind: ClassVar[DefenceKind] = "transform"

    def __init__(self, alpha: float = 0.1, seed: int = 0, noise: str = "secure") -> None:
        if not isinstance(alpha, (int, float)) or isinstance(alpha, bool) or not 0 < alpha <= 1:
            raise ConfigError(f"PopularityRandomization.alpha: expected a number in (0, 1], got {alpha!r}")
        self.alpha = float(alpha)
        self.seed = seed
        self.noise = check_mode(noise, "PopularityRandomization.noise")

    def n_candidates(self, k: int, n_items: int) -> int:
        """``min(ceil(k / α), n_items)`` (with a guard against round-off in ``k / α``)."""
        return min(int(math.ceil(k / self.alpha - 1e-9)), n_items)

    def fit(self, train: Interactions) -> "PopularityRandomization":
        """``ranking_``: every item of ``train``, most interacted-with first, ties by item id."""
        counts = train.item_counts()
        self.ranking_ = np.lexsort((np.arange(len(counts)), -counts))
        return self

    def lists(self, ranking: np.ndarray | None, n_users: int, k: int) -> np.ndarray:
        """``[n_users, k]`` item ids: for each user, ``k`` distinct items drawn uniformly from the
        first ``N_cand`` entries of ``ranking`` (items, most popular first; ``None``: the fitted
        ``ranking_``)."""
        if ranking is None and not hasattr(self, "ranking_"):
            raise NotFittedError("PopularityRandomization is not fitted: call fit(train) or pass a ranking")
        ranking = np.asarray(self.ranking_ if ranking is None else ranking, dtype=np.int64)
        if not isinstance(k, (int, np.integer)) or not 1 <= k <= len(ranking):
            raise ConfigError(f"k={k!r}: expected a list length between 1 and the catalogue size {len(ranking)}")
        candidates = ranking[: self.n_candidates(k, len(ranking))]
        keys = self.noise_source().generator().random((n_users, len(candidates)))
        picks = np.argpartition(keys, k - 1, axis=1)[:, :k] if k < len(candidates) else np.arange(k)[None].repeat(n_users, 0)
        order = np.argsort(np.take_along_axis(keys, picks, axis=1), axis=1)
        return candidates[np.take_along_axis(picks, order, axis=1)]

    def privacy_statement(self, context: StatementContext | None = None) -> PrivacyStatement:
        """No differential-privacy guarantee: the defence is a heuristic against one attack;
        ``context`` is not read."""
        return self.noise_source().stamp(PrivacyStatement.no_guarantee(
            unit="a user's membership in the recommender's training set",
            scope="the top-k lists served to users without training data (non-members)",
            reason=(
                "Popularity Randomization blurs the one signal the paper-001 attack uses (every non-member "
                "receiving the same popular list); it bounds no adversary and members' lists are unchanged."
            ),
        ))
