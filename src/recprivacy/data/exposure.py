"""Exposure logs: what a system showed each user (slates) and what the user clicked.

One row per impression: the user, the impression time, the shown slate (item ids), which of
the shown items were clicked, and the click history the user had before the impression.
Slates and histories are ragged, stored as flat arrays with offsets (CSR style), so logs of
millions of impressions stay compact.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from recprivacy.errors import DataError


def _ragged(lists: list[np.ndarray] | list[list[int]]) -> tuple[np.ndarray, np.ndarray]:
    lengths = np.fromiter((len(x) for x in lists), dtype=np.int64, count=len(lists))
    offsets = np.concatenate([[0], np.cumsum(lengths)])
    flat = np.concatenate([np.asarray(x, dtype=np.int64) for x in lists]) if len(lists) else np.zeros(0, np.int64)
    return flat.astype(np.int64), offsets


@dataclass(frozen=True, eq=False)
class ExposureLog:
    """Impressions with shown slates, clicks and prior click histories.

    ``slate_items[slate_offsets[r]:slate_offsets[r+1]]`` is the slate of impression ``r``;
    ``clicked`` (same layout, bool) marks which were clicked; ``history_items`` /
    ``history_offsets`` give the user's earlier clicks, oldest first. Item ids are internal
    (``0..n_items-1``); ``item_ids`` maps them to the source's ids. ``click_times`` (optional,
    same layout as ``clicked``) holds when each shown item was clicked, for sources that log it
    (Zhihu's read time); its entries for unclicked items carry no meaning.
    """

    users: np.ndarray
    times: np.ndarray
    slate_items: np.ndarray
    slate_offsets: np.ndarray
    clicked: np.ndarray
    history_items: np.ndarray
    history_offsets: np.ndarray
    n_users: int
    n_items: int
    user_ids: np.ndarray | None = None
    item_ids: np.ndarray | None = None
    name: str = "exposure"
    provenance: tuple[dict, ...] = field(default_factory=tuple)
    click_times: np.ndarray | None = None

    def __post_init__(self) -> None:
        if self.user_ids is None:
            object.__setattr__(self, "user_ids", np.arange(self.n_users))
        if self.item_ids is None:
            object.__setattr__(self, "item_ids", np.arange(self.n_items))
        n = len(self.users)
        if len(self.times) != n or len(self.slate_offsets) != n + 1 or len(self.history_offsets) != n + 1:
            raise DataError("exposure log: users, times and offsets disagree in length")
        if len(self.clicked) != len(self.slate_items):
            raise DataError("exposure log: clicked must have one flag per shown item")
        if self.click_times is not None and len(self.click_times) != len(self.slate_items):
            raise DataError("exposure log: click_times must have one entry per shown item")
        for name in ("slate_items", "history_items"):
            a = getattr(self, name)
            if len(a) and (a.min() < 0 or a.max() >= self.n_items):
                raise DataError(f"exposure log: {name} must lie in [0, {self.n_items})")

    @classmethod
    def from_lists(
        cls,
        users: np.ndarray,
        times: np.ndarray,
        slates: list,
        clicks: list,
        histories: list,
        n_users: int,
        n_items: int,
        **kwargs: Any,
    ) -> "ExposureLog":
        """Build from per-impression lists (slate item ids, click flags, history item ids)."""
        slate_items, slate_offsets = _ragged(slates)
        clicked = np.concatenate([np.asarray(c, dtype=bool) for c in clicks]) if len(clicks) else np.zeros(0, bool)
        history_items, history_offsets = _ragged(histories)
        return cls(
            users=np.asarray(users, dtype=np.int64),
            times=np.asarray(times, dtype=np.int64),
            slate_items=slate_items,
            slate_offsets=slate_offsets,
            clicked=clicked,
            history_items=history_items,
            history_offsets=history_offsets,
            n_users=n_users,
            n_items=n_items,
            **kwargs,
        )

    def __len__(self) -> int:
        return len(self.users)

    def slate(self, r: int) -> np.ndarray:
        return self.slate_items[self.slate_offsets[r] : self.slate_offsets[r + 1]]

    def clicks(self, r: int) -> np.ndarray:
        """Item ids clicked in impression ``r``."""
        lo, hi = self.slate_offsets[r], self.slate_offsets[r + 1]
        return self.slate_items[lo:hi][self.clicked[lo:hi]]

    def history(self, r: int) -> np.ndarray:
        return self.history_items[self.history_offsets[r] : self.history_offsets[r + 1]]

    def describe(self) -> dict[str, Any]:
        sizes = np.diff(self.slate_offsets)
        return {
            "name": self.name,
            "impressions": len(self),
            "users": int(len(np.unique(self.users))),
            "items": self.n_items,
            "mean_slate": float(sizes.mean()) if len(sizes) else 0.0,
            "clicks": int(self.clicked.sum()),
        }
