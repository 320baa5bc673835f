"""The frozen user and item features UPC-SDG works on (paper 003, footnote 8).

The paper pre-trains BPR-MF (d = 64) on the training split and uses its embeddings as fixed
features; the generator never updates them. They come from

* ``pretrain_bpr``: the project's BPR-MF (``models.make_model("bpr")``: d = 64,
  BPR with one uniform negative, early stopping on validation Recall@20; trained by LearnBPR's
  SGD rather than Adam, see ``models.bpr``), or any fitted factor model (``FrozenEmbeddings.from_model``);
* ``FrozenEmbeddings.load``: an external PyTorch state dict with the keys
  ``embedding_user.weight`` and ``embedding_item.weight`` (the LightGCN code base's ``PureMF``,
  the format of the authors' ``mf-{dataset}-64.pth.tar``), checked against the dataset's sizes.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from recprivacy.data.interactions import Interactions
from recprivacy.errors import DataError
from recprivacy.models import make_model
from recprivacy.models.base import Recommender

STATE_KEYS = ("embedding_user.weight", "embedding_item.weight")


@dataclass(frozen=True)
class FrozenEmbeddings:
    """User features ``users [n_users, d]`` and item features ``items [n_items, d]`` (float32,
    detached copies), and where they came from."""

    users: torch.Tensor
    items: torch.Tensor
    source: str

    def __post_init__(self) -> None:
        users = self.users.detach().to(torch.float32).clone()
        items = self.items.detach().to(torch.float32).clone()
        if users.ndim != 2 or items.ndim != 2 or users.shape[1] != items.shape[1]:
            raise DataError(f"{self.source}: expected user [n_users, d] and item [n_items, d] embeddings with one d, "
                            f"got {tuple(users.shape)} and {tuple(items.shape)}")
        object.__setattr__(self, "users", users)
        object.__setattr__(self, "items", items)

    @property
    def dim(self) -> int:
        return int(self.users.shape[1])

    def check(self, data: Interactions) -> "FrozenEmbeddings":
        """Self, after checking one row per user and item of ``data``."""
        if self.users.shape[0] != data.n_users or self.items.shape[0] != data.n_items:
            raise DataError(f"{self.source}: embeddings cover {self.users.shape[0]} users x {self.items.shape[0]} items, "
                            f"but {data.name} has {data.n_users} x {data.n_items}")
        return self

    @classmethod
    def from_model(cls, model: Recommender) -> "FrozenEmbeddings":
        """The learned factors of a fitted factor model (BPR-MF, LightGCN, LFM)."""
        if not hasattr(model, "user_factors_"):
            raise DataError(f"{type(model).__name__} has no user_factors_/item_factors_; use a fitted factor model such as bpr")
        return cls(model.user_factors_, model.item_factors_, f"{type(model).__name__} factors")

    @classmethod
    def load(cls, path: str | Path) -> "FrozenEmbeddings":
        """A state dict holding ``embedding_user.weight`` and ``embedding_item.weight``."""
        path = Path(path)
        if not path.is_file():
            raise DataError("embedding file not found", path)
        try:
            state = torch.load(path, map_location="cpu", weights_only=True)
        except Exception as err:  # noqa: BLE001  (torch raises many types for a bad file)
            raise DataError(f"not a readable PyTorch state dict: {' '.join(str(err).split())[:200]}", path) from None
        missing = [key for key in STATE_KEYS if not isinstance(state, dict) or key not in state]
        if missing:
            found = list(state)[:10] if isinstance(state, dict) else type(state).__name__
            raise DataError(f"missing key(s) {missing}; found {found}", path)
        return cls(state[STATE_KEYS[0]], state[STATE_KEYS[1]], str(path))


def pretrain_bpr(train: Interactions, valid: Interactions | None = None, seed: int = 0, **params: Any) -> FrozenEmbeddings:
    """Fit the project's BPR-MF on ``train`` (early stopping on ``valid``) and freeze its factors."""
    model = make_model("bpr", **{"seed": seed, **params}).fit(train, valid)
    return FrozenEmbeddings.from_model(model)
