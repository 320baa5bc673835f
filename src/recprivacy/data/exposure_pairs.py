"""(B, E) pairs for the exposure leakage attack (paper 000, §3.1 and §5.1).

A pair holds a user's ``M`` most recent past clicks ``B = (b_M, ..., b_1)`` (most recent
first, the order the attack decodes them in) and the slate ``E = (e_1, ..., e_N)`` the system
showed next. Pairs are built from four sources, each by the rule below (for Zhihu and MIND the
authors' code, which the paper does not spell out):

* ``impression_pairs`` (any ``ExposureLog``, e.g. ``make_synthetic_exposure``): one pair per
  impression whose history has ``>= M`` clicks and whose slate has ``>= N`` items;
  ``B`` = the last ``M`` history clicks, ``E`` = the first ``N`` shown items.
* ``mind_pairs`` (MIND ``behaviors.tsv``, the authors' ``data/mind/DataProcess.py``): per user
  the history of the latest impression, reversed, and the concatenation of all the user's
  slates (labels stripped, clicked and unclicked alike); for offsets ``i = 0..4``,
  ``B = rev_hist[i:i+M]`` and ``E = exp[i:i+N]`` when both are long enough. Decision: the
  user's impressions are taken in time order (file order breaks ties); the code used file
  order, which in the original file is close to time order but in a sampled subset is not.
* ``zhihu_pairs`` (Zhihu-1M, ``data/zhihu-1M/DataProcess.py``): per user the impressions in
  show-time order and the clicked ones (``readTime != 0``); every stride-1 window of ``M``
  clicks is ``B`` and the first ``N`` impressions shown after the window's latest read time
  are ``E``; windows without ``N`` such impressions are skipped.
* ``simulate_exposure`` (a platform replaying its own recommender): for every user and time
  step ``t >= M`` with a real next item, the recommender's top-``N`` slate given the history
  ``s_1..s_{t-1}`` with those items excluded; ``B`` = the ``M`` interactions before ``t``
  and ``next_items`` = ``s_t`` (for the utility of a perturbed slate). Sequential models
  (``score_sequences``) score each prefix; other models score the user (their scores do not
  depend on ``t``, only the exclusions do). Slate generation is batched over many prefixes.

Every source also stores, per user, the items in the user's log (``user_log``: exposed or
clicked anywhere in the data, the authors' candidate set) and the clicked items
(``user_clicks``: the ground truth of Acc*, Eq. 18). Too-short users and windows are skipped
and counted in ``stats``, never an error; a source that yields no pair at all raises a
``DataError`` saying which length was too large.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Protocol

import numpy as np
import scipy.sparse as sp
import torch

from recprivacy.data.exposure import ExposureLog
from recprivacy.data.interactions import Interactions
from recprivacy.data.split import user_partition
from recprivacy.errors import ConfigError, DataError

#: dense ``rows x n_items`` score cells computed at once while simulating slates
SIMULATION_CELLS = 4_000_000
MIND_OFFSETS = 5


@dataclass(frozen=True, eq=False)
class ExposurePairs:
    """(past clicks, exposed slate) pairs with per-user item sets.

    ``users[p]`` is the internal user of pair ``p``; ``histories[p]`` its ``M`` past clicks,
    most recent first; ``slates[p]`` its ``N`` exposed items; ``next_items[p]`` (simulated
    exposure only) the user's real next interaction. ``user_log`` / ``user_clicks`` are
    binary ``n_users x n_items`` CSR matrices. ``stats`` counts what the builder kept and
    skipped.
    """

    users: np.ndarray
    histories: np.ndarray
    slates: np.ndarray
    user_log: sp.csr_matrix
    user_clicks: sp.csr_matrix
    n_users: int
    n_items: int
    item_ids: np.ndarray | None = None
    next_items: np.ndarray | None = None
    name: str = "exposure-pairs"
    stats: dict[str, int] = field(default_factory=dict)
    provenance: tuple[dict, ...] = field(default_factory=tuple)

    def __post_init__(self) -> None:
        if self.item_ids is None:
            object.__setattr__(self, "item_ids", np.arange(self.n_items))
        n = len(self.users)
        if self.histories.ndim != 2 or self.slates.ndim != 2 or len(self.histories) != n or len(self.slates) != n:
            raise DataError("exposure pairs: users, histories [P, M] and slates [P, N] disagree in length")
        if self.next_items is not None and len(self.next_items) != n:
            raise DataError("exposure pairs: next_items must have one entry per pair")
        for name in ("histories", "slates"):
            a = getattr(self, name)
            if a.size and (a.min() < 0 or a.max() >= self.n_items):
                raise DataError(f"exposure pairs: {name} must hold item ids in [0, {self.n_items})")

    def __len__(self) -> int:
        return len(self.users)

    @property
    def history_len(self) -> int:
        return self.histories.shape[1]

    @property
    def slate_size(self) -> int:
        return self.slates.shape[1]

    def subset(self, rows: np.ndarray) -> "ExposurePairs":
        """The pairs at ``rows`` (indices or a boolean mask); per-user sets are shared."""
        rows = np.asarray(rows)
        nxt = None if self.next_items is None else self.next_items[rows]
        return replace(self, users=self.users[rows], histories=self.histories[rows], slates=self.slates[rows], next_items=nxt)

    def for_users(self, users: np.ndarray) -> "ExposurePairs":
        """The pairs of the given internal users."""
        return self.subset(np.isin(self.users, users))

    def with_slates(self, slates: np.ndarray) -> "ExposurePairs":
        """The same pairs showing other slates (e.g. perturbed ones)."""
        return replace(self, slates=np.asarray(slates, dtype=np.int64))

    def truncate_slates(self, slate_size: int) -> "ExposurePairs":
        """Keep the first ``slate_size`` items of each slate. Exact for simulated exposure,
        whose slates are ranked top-N lists; log sources must be rebuilt for another N."""
        if not 1 <= slate_size <= self.slate_size:
            raise ConfigError(f"slate_size: expected 1..{self.slate_size} for these pairs, got {slate_size}")
        return self.with_slates(self.slates[:, :slate_size])

    def describe(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "pairs": len(self),
            "users": int(len(np.unique(self.users))),
            "items": self.n_items,
            "history_len": self.history_len,
            "slate_size": self.slate_size,
            **self.stats,
        }


class SlateScorer(Protocol):
    """What ``simulate_exposure`` needs from a fitted recommender: ``score(users)``, and
    optionally ``score_sequences(padded_histories)`` for sequential models."""

    def score(self, users: np.ndarray) -> torch.Tensor: ...


# ---------------------------------------------------------------------------- helpers


def ragged_index(starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """Flat indices ``starts[r] + 0..lengths[r]-1`` for every row ``r``, concatenated."""
    lengths = np.asarray(lengths, dtype=np.int64)
    total = int(lengths.sum())
    if total == 0:
        return np.zeros(0, dtype=np.int64)
    row_start = np.repeat(np.cumsum(lengths) - lengths, lengths)
    return np.repeat(np.asarray(starts, dtype=np.int64), lengths) + np.arange(total) - row_start


def _binary_csr(users: np.ndarray, items: np.ndarray, n_users: int, n_items: int) -> sp.csr_matrix:
    m = sp.csr_matrix((np.ones(len(users)), (users, items)), shape=(n_users, n_items))
    m.sum_duplicates()
    m.data[:] = 1.0
    return m


def _check_lengths(history_len: int, slate_size: int) -> None:
    for name, value in (("history_len", history_len), ("slate_size", slate_size)):
        if not isinstance(value, (int, np.integer)) or value < 1:
            raise ConfigError(f"{name}: expected a positive integer, got {value!r}")


def _no_pairs(source: str, history_len: int, slate_size: int, why: str) -> DataError:
    return DataError(f"{source}: no (B, E) pairs with history_len M={history_len} and slate_size N={slate_size}; {why}")


def _log_sets(log: ExposureLog) -> tuple[sp.csr_matrix, sp.csr_matrix]:
    """(items shown to or clicked by each user, items clicked by each user) of a log; the
    history columns count as clicks."""
    shown_users = np.repeat(log.users, np.diff(log.slate_offsets))
    hist_users = np.repeat(log.users, np.diff(log.history_offsets))
    logged = _binary_csr(
        np.r_[shown_users, hist_users], np.r_[log.slate_items, log.history_items], log.n_users, log.n_items
    )
    clicks = _binary_csr(
        np.r_[shown_users[log.clicked], hist_users],
        np.r_[log.slate_items[log.clicked], log.history_items],
        log.n_users,
        log.n_items,
    )
    return logged, clicks


def _from_log(log: ExposureLog, users: np.ndarray, hist: np.ndarray, slates: np.ndarray, rule: str, stats: dict) -> ExposurePairs:
    logged, clicks = _log_sets(log)
    order = np.lexsort((np.arange(len(users)), users))
    stats = {"pairs": int(len(users)), "pair_users": int(len(np.unique(users))), **stats}
    return ExposurePairs(
        users=users[order], histories=hist[order], slates=slates[order], user_log=logged, user_clicks=clicks,
        n_users=log.n_users, n_items=log.n_items, item_ids=log.item_ids, name=f"{log.name}-pairs", stats=stats,
        provenance=log.provenance + ({"step": "exposure_pairs", "rule": rule, "history_len": int(hist.shape[1]),
                                      "slate_size": int(slates.shape[1])},),
    )  # fmt: skip


# ---------------------------------------------------------------------------- logs


def impression_pairs(log: ExposureLog, history_len: int = 5, slate_size: int = 10) -> ExposurePairs:
    """One pair per impression: its last ``M`` history clicks (reversed) and first ``N`` shown
    items. Impressions with a shorter history or slate are skipped and counted."""
    _check_lengths(history_len, slate_size)
    hist_len = np.diff(log.history_offsets)
    slate_len = np.diff(log.slate_offsets)
    short_hist, short_slate = hist_len < history_len, slate_len < slate_size
    keep = np.flatnonzero(~short_hist & ~short_slate)
    stats = {"impressions": len(log), "skipped_short_history": int(short_hist.sum()),
             "skipped_short_slate": int((short_slate & ~short_hist).sum())}  # fmt: skip
    if not len(keep):
        raise _no_pairs(log.name, history_len, slate_size, f"longest history {hist_len.max(initial=0)}, longest slate {slate_len.max(initial=0)}")
    ends = log.history_offsets[keep + 1]
    hist = log.history_items[ends[:, None] - 1 - np.arange(history_len)]
    slates = log.slate_items[log.slate_offsets[keep][:, None] + np.arange(slate_size)]
    return _from_log(log, log.users[keep], hist, slates, "impression", stats)


def mind_pairs(log: ExposureLog, history_len: int = 5, slate_size: int = 10, offsets: int = MIND_OFFSETS) -> ExposurePairs:
    """The authors' MIND rule (module docstring): up to ``offsets`` overlapping pairs per user.

    Users with fewer than ``M`` history clicks or fewer than ``N`` impressions in total are
    skipped and counted.
    """
    _check_lengths(history_len, slate_size)
    order = np.lexsort((np.arange(len(log)), log.times, log.users))
    users_sorted = log.users[order]
    last = order[np.r_[users_sorted[1:] != users_sorted[:-1], True]]
    users = log.users[last]
    hist_start, hist_len = log.history_offsets[last], np.diff(log.history_offsets)[last]
    slate_len = np.diff(log.slate_offsets)[order]
    exp_items = log.slate_items[ragged_index(log.slate_offsets[order], slate_len)]
    exp_len = np.bincount(np.searchsorted(users, users_sorted), weights=slate_len, minlength=len(users)).astype(np.int64)
    exp_start = np.cumsum(exp_len) - exp_len
    short_hist, short_exp = hist_len < history_len, exp_len < slate_size
    stats = {"log_users": int(len(users)), "skipped_short_history": int(short_hist.sum()),
             "skipped_short_slate": int((short_exp & ~short_hist).sum())}  # fmt: skip
    i = np.arange(offsets)
    ok = (i[None] + history_len <= hist_len[:, None]) & (i[None] + slate_size <= exp_len[:, None])
    rows, offs = np.nonzero(ok)
    if not len(rows):
        raise _no_pairs(log.name, history_len, slate_size, f"longest history {hist_len.max(initial=0)}, most impressions per user {exp_len.max(initial=0)}")
    newest = hist_start[rows] + hist_len[rows] - 1 - offs
    hist = log.history_items[newest[:, None] - np.arange(history_len)]
    slates = exp_items[(exp_start[rows] + offs)[:, None] + np.arange(slate_size)]
    return _from_log(log, users[rows], hist, slates, "mind", stats)


def zhihu_pairs(log: ExposureLog, history_len: int = 5, slate_size: int = 10) -> ExposurePairs:
    """The authors' Zhihu rule (module docstring): stride-1 click windows, exposures shown
    strictly after the window's latest read time. Needs ``log.click_times`` (read times).

    Users with fewer than ``M`` clicks and windows with fewer than ``N`` later impressions
    are skipped and counted.
    """
    _check_lengths(history_len, slate_size)
    if log.click_times is None:
        raise DataError(f"{log.name}: the Zhihu rule needs click (read) times; load the log with load_exposure('zhihu')")
    users = np.repeat(log.users, np.diff(log.slate_offsets))
    show = np.repeat(log.times, np.diff(log.slate_offsets))
    order = np.lexsort((np.arange(len(users)), show, users))
    users, show, items = users[order], show[order], log.slate_items[order]
    clicked, read = log.clicked[order], log.click_times[order]
    c_users, c_items, c_read = users[clicked], items[clicked], read[clicked]
    n_clicks = np.bincount(c_users, minlength=log.n_users)
    stats = {"log_users": int(len(np.unique(users))), "skipped_short_history": int(((n_clicks < history_len) & (np.bincount(users, minlength=log.n_users) > 0)).sum())}
    if len(c_users) < history_len:
        raise _no_pairs(log.name, history_len, slate_size, f"the log has only {len(c_users)} clicks")
    windows = np.lib.stride_tricks.sliding_window_view(np.arange(len(c_users)), history_len)
    windows = windows[c_users[windows[:, 0]] == c_users[windows[:, -1]]]
    w_user = c_users[windows[:, 0]]
    latest = c_read[windows].max(axis=1)
    shows = np.unique(show)
    step = len(shows) + 1
    keys = users * step + np.searchsorted(shows, show, side="right")
    first = np.searchsorted(keys, w_user * step + np.searchsorted(shows, latest, side="right"), side="right")
    user_end = np.searchsorted(users, w_user, side="right")
    ok = first + slate_size <= user_end
    stats["windows"] = int(len(windows))
    stats["skipped_short_slate"] = int((~ok).sum())
    if not ok.any():
        raise _no_pairs(log.name, history_len, slate_size, "no click window is followed by that many impressions")
    hist = c_items[windows[ok][:, ::-1]]
    slates = items[first[ok][:, None] + np.arange(slate_size)]
    return _from_log(log, w_user[ok], hist, slates, "zhihu", stats)


# ---------------------------------------------------------------------------- simulated exposure


def simulation_steps(lengths: np.ndarray, history_len: int, max_pairs_per_user: int | None) -> tuple[np.ndarray, np.ndarray]:
    """(user, t) of every simulated pair: ``t`` (0-based position of the next item) runs over
    ``history_len .. n_u - 1``; with ``max_pairs_per_user = k`` only ``k`` steps evenly
    spaced back from the latest one are kept, ``t_j = n_u - 1 - floor(j S / k)`` for
    ``S = n_u - history_len`` eligible steps. Sorted by user, then ``t``."""
    steps = np.maximum(np.asarray(lengths, dtype=np.int64) - history_len, 0)
    keep = steps if max_pairs_per_user is None else np.minimum(steps, max_pairs_per_user)
    users = np.repeat(np.arange(len(lengths)), keep)
    j = ragged_index(np.zeros(len(keep), dtype=np.int64), keep)
    t = lengths[users] - 1 - (j * steps[users]) // np.maximum(keep[users], 1)
    order = np.lexsort((t, users))
    return users[order], t[order]


def simulate_exposure(
    model: SlateScorer,
    data: Interactions,
    history_len: int = 5,
    slate_size: int = 10,
    users: np.ndarray | None = None,
    max_pairs_per_user: int | None = None,
) -> ExposurePairs:
    """Slates a fitted recommender shows along each user's history (module docstring).

    Parameters
    ----------
    model:
        A fitted recommender over ``data``'s id spaces; ``score_sequences`` is used when
        present (scores per history prefix), else ``score(users)``.
    data:
        The interactions whose time order defines the steps (``Interactions.order``).
    users:
        Internal users to simulate (default all); users with at most ``M`` interactions are
        skipped and counted.
    max_pairs_per_user:
        Cap on steps per user (evenly spaced, latest included); None keeps every step.
    """
    _check_lengths(history_len, slate_size)
    if max_pairs_per_user is not None and max_pairs_per_user < 1:
        raise ConfigError(f"max_pairs_per_user: expected a positive integer or null, got {max_pairs_per_user}")
    order = data.order()
    seq_items = data.items[order]
    lengths = data.user_counts()
    starts = np.cumsum(lengths) - lengths
    chosen = np.zeros(data.n_users, dtype=bool)
    chosen[np.arange(data.n_users) if users is None else np.asarray(users, dtype=np.int64)] = True
    eligible = chosen & (lengths > history_len)
    if not eligible.any():
        raise _no_pairs(data.name, history_len, slate_size, f"no user has more than {history_len} interactions")
    seen_most = int(lengths[eligible].max())
    if slate_size > data.n_items - seen_most + 1:
        raise _no_pairs(data.name, history_len, slate_size, f"a user has seen {seen_most - 1} of {data.n_items} items before a step, leaving fewer than N unseen")
    pair_users, t = simulation_steps(np.where(eligible, lengths, 0), history_len, max_pairs_per_user)
    slates = _simulate_slates(model, seq_items, starts, pair_users, t, slate_size, data.n_items)
    hist = seq_items[(starts[pair_users] + t)[:, None] - 1 - np.arange(history_len)]
    logged = _binary_csr(
        np.r_[data.users, np.repeat(pair_users, slate_size)], np.r_[data.items, slates.ravel()], data.n_users, data.n_items
    )
    stats = {"pairs": int(len(pair_users)), "pair_users": int(eligible.sum()),
             "skipped_short_history": int((chosen & ~eligible).sum())}  # fmt: skip
    return ExposurePairs(
        users=pair_users, histories=hist, slates=slates, user_log=logged, user_clicks=data.to_csr(),
        n_users=data.n_users, n_items=data.n_items, item_ids=data.item_ids, next_items=seq_items[starts[pair_users] + t],
        name=f"{data.name}-simulated", stats=stats,
        provenance=data.provenance + ({"step": "simulated_exposure", "model": type(model).__name__,
                                       "history_len": history_len, "slate_size": slate_size,
                                       "max_pairs_per_user": max_pairs_per_user},),
    )  # fmt: skip


def _simulate_slates(
    model: SlateScorer, seq_items: np.ndarray, starts: np.ndarray, users: np.ndarray, t: np.ndarray, slate_size: int, n_items: int
) -> np.ndarray:
    """Top-``slate_size`` unseen items for every (user, t), scored in batches of prefixes."""
    batch = max(1, SIMULATION_CELLS // n_items)
    out = np.empty((len(users), slate_size), dtype=np.int64)
    sequential = hasattr(model, "score_sequences")
    for lo in range(0, len(users), batch):
        u, tt = users[lo : lo + batch], t[lo : lo + batch]
        if sequential:
            width = int(min(tt.max(), getattr(model, "max_len", tt.max())))
            scores = model.score_sequences(torch.as_tensor(_left_padded(seq_items, starts[u], tt, width, n_items)))
        else:
            scores = model.score(u)
        scores = torch.as_tensor(scores, dtype=torch.float32).clone()
        seen = ragged_index(starts[u], tt)
        rows = np.repeat(np.arange(len(u)), tt)
        scores[torch.as_tensor(rows), torch.as_tensor(seq_items[seen])] = -torch.inf
        out[lo : lo + batch] = torch.topk(scores, slate_size, dim=1).indices.numpy()
    return out


def _left_padded(seq_items: np.ndarray, starts: np.ndarray, t: np.ndarray, width: int, pad: int) -> np.ndarray:
    """``[len(t), width]`` windows of the ``width`` items before position ``t`` of each
    sequence (right-aligned, ``pad`` before shorter prefixes)."""
    pos = t[:, None] - width + np.arange(width)
    return np.where(pos >= 0, seq_items[starts[:, None] + np.maximum(pos, 0)], pad)


# ---------------------------------------------------------------------------- splits


SPLIT_FRACTIONS = {"train": 0.8, "valid": 0.1, "test": 0.1}


def user_groups(users: np.ndarray, n_users: int, seed: int = 0, fractions: dict[str, float] | None = None) -> dict[str, np.ndarray]:
    """User-disjoint random groups (default train/valid/test 8:1:1, seeded) of the distinct
    ``users`` given, through ``data.split.user_partition``."""
    users = np.asarray(users, dtype=np.int64)
    rows = Interactions(users=users, items=np.zeros(len(users), dtype=np.int64), n_users=n_users, n_items=1)
    return user_partition(rows, fractions or SPLIT_FRACTIONS, seed=seed)


def contiguous_split(pairs: ExposurePairs, fractions: dict[str, float] | None = None) -> dict[str, ExposurePairs]:
    """The authors' split (their code; the paper's split is random by user): the pairs in user
    order (a stable sort by internal user), cut into contiguous blocks of 80/10/10% of the
    pair indices (``floor`` of the cumulative fractions). Users are not sampled at random, and
    a user whose pairs straddle a block boundary lands in two parts."""
    fractions = fractions or SPLIT_FRACTIONS
    order = np.argsort(pairs.users, kind="stable")
    ends = np.floor(np.cumsum(list(fractions.values())) * len(pairs) + 1e-9).astype(np.int64)
    ends[-1] = len(pairs)
    starts = np.r_[0, ends[:-1]]
    return {name: pairs.subset(order[a:b]) for name, a, b in zip(fractions, starts, ends)}


def split_pairs(pairs: ExposurePairs, groups: dict[str, np.ndarray]) -> dict[str, ExposurePairs]:
    """The pairs of each user group; raises if two groups share a user."""
    names = list(groups)
    for a in range(len(names)):
        for b in range(a + 1, len(names)):
            if np.intersect1d(groups[names[a]], groups[names[b]]).size:
                raise DataError(f"user groups {names[a]!r} and {names[b]!r} share users; expected disjoint groups")
    return {name: pairs.for_users(members) for name, members in groups.items()}
