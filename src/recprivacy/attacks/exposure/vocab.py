"""The attack's token vocabulary (paper 000; the paper does not define one, this is the authors' code's).

Items get tokens ``0..V-1`` (sorted item ids), followed by five special tokens
``[PAD] [OOV] [SOS] [EOS] [CLS]``; items come first so the item logits are the first ``V``
columns of every output. ``mode="train"`` (the authors' code) indexes only the items seen in
the training pairs (histories or slates); validation and test pairs holding an unseen item
are dropped and counted (``oov="drop"``), while perturbed slates map unseen items to
``[OOV]`` (``oov="token"``) so that a defence never changes which pairs are evaluated.
``mode="full"`` indexes the whole catalogue and keeps every pair. Decision: ``[CLS]`` is its
own learnable token rather than the code's reuse of ``[SOS]``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

import numpy as np
import scipy.sparse as sp

from recprivacy.data.exposure_pairs import ExposurePairs
from recprivacy.errors import ConfigError

SPECIALS = ("[PAD]", "[OOV]", "[SOS]", "[EOS]", "[CLS]")
VocabMode = Literal["train", "full"]


@dataclass(frozen=True, eq=False)
class Vocabulary:
    """Item tokens ``0..n_items-1`` (``items[token]`` = catalogue item id) and the specials."""

    items: np.ndarray
    n_catalogue: int
    index: np.ndarray = field(init=False, repr=False)

    def __post_init__(self) -> None:
        index = np.full(self.n_catalogue, -1, dtype=np.int64)
        index[self.items] = np.arange(len(self.items))
        object.__setattr__(self, "index", index)

    @classmethod
    def from_pairs(cls, pairs: ExposurePairs, mode: VocabMode = "train") -> "Vocabulary":
        """Items of the (training) pairs, or the whole catalogue with ``mode="full"``."""
        if mode == "full":
            return cls(np.arange(pairs.n_items), pairs.n_items)
        if mode != "train":
            raise ConfigError(f"vocab: expected 'train' or 'full', got {mode!r}")
        return cls(np.unique(np.concatenate([pairs.histories.ravel(), pairs.slates.ravel()])), pairs.n_items)

    @property
    def n_items(self) -> int:
        return len(self.items)

    @property
    def pad(self) -> int:
        return self.n_items

    @property
    def oov(self) -> int:
        return self.n_items + 1

    @property
    def sos(self) -> int:
        return self.n_items + 2

    @property
    def eos(self) -> int:
        return self.n_items + 3

    @property
    def cls(self) -> int:
        return self.n_items + 4

    @property
    def size(self) -> int:
        return self.n_items + len(SPECIALS)

    def tokens(self, item_ids: np.ndarray) -> np.ndarray:
        """Tokens of catalogue item ids, ``[OOV]`` for items outside the vocabulary."""
        tok = self.index[np.asarray(item_ids, dtype=np.int64)]
        return np.where(tok >= 0, tok, self.oov)

    def known_rows(self, pairs: ExposurePairs) -> np.ndarray:
        """Boolean mask of the pairs whose history and slate items are all in the vocabulary."""
        return (self.index[pairs.histories] >= 0).all(axis=1) & (self.index[pairs.slates] >= 0).all(axis=1)

    def columns(self, matrix: sp.csr_matrix) -> sp.csr_matrix:
        """A ``users x catalogue`` matrix restricted to the vocabulary's item columns."""
        return sp.csr_matrix(matrix)[:, self.items]
