"""Training-free statistics of a served top-k list, and of a user's own history.

Statistics of the *list* are computed from the target's output, so they are attacks (reports run
them beside the MLP, LiRA and RMIA, and one of them may be the best attack); the calibrated
attacks (:mod:`.calibrated`) test them per user. Statistics of the user's *history* need no
target: they are the baselines a membership verdict is judged against, and they measure how the
given members and non-members differ in the data alone (e.g. when a member list is not a random
sample of the population):

* ``history_length``: ``|I_u|``, the number of the user's interactions the adversary holds;
* ``history_popularity``: ``(1/|I_u|) Σ_{i ∈ I_u} c(i)``, the mean adversary count of the
  user's items.

Each function returns one number per user, higher = "more like a member" under the
``paper`` protocol, where members get personalised, less popular lists than the non-members'
popular list. The adversary's popularity comes from its own data (``counts``, interactions per
item), never from the target's:

* ``popular_overlap``: ``−|L_u ∩ P_n|``, minus the number of the list's items among the
  adversary's ``n`` most popular items ``P_n`` (``n = k`` by default);
* ``mean_popularity``: ``−(1/k) Σ_j c(r_j)``, minus the mean adversary count of the listed items;
* ``feature_norm``: ``−‖z_u‖₂`` with ``z_u`` the paper's Origin feature (``features.origin_features``):
  members' interaction centre and recommendation centre are close.

Which way a statistic points can differ under the ``served`` protocol, so reports orient each
one on the adversary's labelled shadow users (``orientation``), never on the target's labels.
"""

from __future__ import annotations

import numpy as np

from recprivacy.data.interactions import Interactions
from recprivacy.metrics.attack import _binary_inputs
from recprivacy.metrics.intervals import auc_interval

TRIVIAL = ("popular_overlap", "mean_popularity", "feature_norm")
HISTORY = ("history_length", "history_popularity")


def popularity_order(counts: np.ndarray) -> np.ndarray:
    """Item ids, most counted first, ties broken by item id."""
    counts = np.asarray(counts)
    return np.lexsort((np.arange(len(counts)), -counts))


def popular_overlap(lists: np.ndarray, counts: np.ndarray, n: int | None = None) -> np.ndarray:
    """``−|L_u ∩ P_n|`` per row of ``lists`` (``P_n``: top ``n`` of ``counts``, ``n = k`` by default)."""
    n = lists.shape[1] if n is None else n
    top = np.zeros(len(counts), dtype=bool)
    top[popularity_order(counts)[:n]] = True
    return -top[lists].sum(axis=1).astype(np.float64)


def mean_popularity(lists: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """``−mean_j c(r_j)``: minus the mean adversary count of each list's items."""
    return -np.asarray(counts, dtype=np.float64)[lists].mean(axis=1)


def history_length(data: Interactions, users: np.ndarray) -> np.ndarray:
    """``|I_u|``: each of ``users``' interactions in ``data``."""
    return data.user_counts()[users].astype(np.float64)


def history_popularity(data: Interactions, users: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """``mean_{i in I_u} c(i)``: the mean adversary count of each of ``users``' items (0 without items)."""
    csr = data.to_csr()[users]
    return np.asarray(csr.sign() @ np.asarray(counts, dtype=np.float64)).ravel() / np.maximum(np.diff(csr.indptr), 1)


def feature_norm(features: np.ndarray) -> np.ndarray:
    """``−‖z_u‖₂`` of each row of the Origin feature matrix."""
    return -np.linalg.norm(np.asarray(features, dtype=np.float64), axis=1)


def orientation(scores: np.ndarray, labels: np.ndarray) -> float:
    """``+1`` when ``scores`` rank members above non-members on labelled data (ROC AUC >= 0.5),
    else ``−1``: the sign an adversary learns from its own shadow users."""
    y, s = _binary_inputs(labels, scores)
    return 1.0 if auc_interval(y, s, n_boot=1).value >= 0.5 else -1.0
