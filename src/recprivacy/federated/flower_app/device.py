"""``Device``: what one user's phone holds, and nothing else: its user id, its feature
vector ``x_u`` and the items it interacted with (𝒩(u)). A deployment gives each SuperNode one
``.npz`` file (``save`` / ``load``; node config ``data=PATH``); ``devices`` cuts a training set
into them."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import scipy.sparse as sp

from recprivacy.errors import DataError

if TYPE_CHECKING:  # the protocol imports torch: a ClientApp that only answers the query does without it
    from recprivacy.federated.protocol import ClientBatch


@dataclass(frozen=True)
class Device:
    """One user's local data (module docstring)."""

    user: int
    x: np.ndarray
    items: np.ndarray

    def batch(self, n_items: int, x: np.ndarray | None = None) -> ClientBatch:
        """The device as a batch of one for ``protocol.local_update`` (``x``: its features
        as randomised on the device, if they are)."""
        from recprivacy.federated.protocol import ClientBatch

        n = len(self.items)
        csr = sp.csr_matrix((np.ones(n, np.float32), self.items, np.array([0, n])), shape=(1, n_items))
        own = self.x if x is None else x
        return ClientBatch(np.array([self.user]), np.asarray(own, np.float32).reshape(1, -1), csr)

    def save(self, path: Path) -> None:
        np.savez(path, user=self.user, x=self.x, items=self.items)

    @classmethod
    def load(cls, path: str | Path) -> "Device":
        """The device saved at ``path``; DataError names the file and what it lacks."""
        try:
            with np.load(path) as f:
                return cls(int(f["user"]), np.asarray(f["x"], np.float32), np.asarray(f["items"], np.int64))
        except (OSError, KeyError, ValueError) as err:
            raise DataError(f"{path}: expected a device file with arrays user, x, items ({err})") from None


def devices(x: np.ndarray, train_csr: sp.csr_matrix) -> list[Device]:
    """One device per user of ``train_csr`` (row ``u`` of ``x`` and of ``train_csr``)."""
    return [Device(u, np.asarray(x[u], np.float32), train_csr.indices[train_csr.indptr[u]:train_csr.indptr[u + 1]].astype(np.int64))
            for u in range(train_csr.shape[0])]
