"""``Device``: what one user's phone holds, and nothing else: its user id, its feature
vector ``x_u`` and the items it interacted with (𝒩(u)). A deployment gives each SuperNode one
``.npz`` file (``save`` / ``load``; node config ``data=PATH``), readable by its owner only;
``devices`` cuts a training set into them.

Every device also carries its federation's tag (``federation_tag``: a hash of all the
devices' data, the same on each). The run's spec carries the tag of the data the study trains
on, and the server refuses a device with another (``server._identify_nodes``): a device file
written from another config, split or dataset would otherwise train silently on the wrong
data. The tag says nothing about any one user (it is a hash of everyone's data)."""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, replace
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
    federation: str = ""

    def batch(self, n_items: int, x: np.ndarray | None = None) -> ClientBatch:
        """The device as a batch of one for ``protocol.local_update`` (``x``: its features
        as randomised on the device, if they are)."""
        from recprivacy.federated.protocol import ClientBatch

        n = len(self.items)
        csr = sp.csr_matrix((np.ones(n, np.float32), self.items, np.array([0, n])), shape=(1, n_items))
        own = self.x if x is None else x
        return ClientBatch(np.array([self.user]), np.asarray(own, np.float32).reshape(1, -1), csr)

    def save(self, path: Path) -> None:
        """Write the device file at ``path``, a new file only its owner can read (mode 0600)."""
        with os.fdopen(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "wb") as handle:
            np.savez(handle, user=self.user, x=self.x, items=self.items, federation=self.federation)

    @classmethod
    def load(cls, path: str | Path) -> "Device":
        """The device saved at ``path``; DataError names the file and what it lacks."""
        try:
            with np.load(path) as f:
                return cls(int(f["user"]), np.asarray(f["x"], np.float32), np.asarray(f["items"], np.int64),
                           str(f["federation"]))
        except (OSError, KeyError, ValueError) as err:
            raise DataError(f"{path}: expected a device file with arrays user, x, items, federation ({err})") from None


def federation_tag(devices: list[Device]) -> str:
    """A hash of every device's user id, features and items (16 hex digits of SHA-256):
    equal for the same data, different when any user's data differ."""
    sha = hashlib.sha256()
    for d in devices:
        for part in (np.int64(d.user), np.ascontiguousarray(d.x, np.float32), np.ascontiguousarray(d.items, np.int64)):
            sha.update(part.tobytes())
    return sha.hexdigest()[:16]


def devices(x: np.ndarray, train_csr: sp.csr_matrix) -> list[Device]:
    """One device per user of ``train_csr`` (row ``u`` of ``x`` and of ``train_csr``), each
    with the tag of them all."""
    plain = [Device(u, np.asarray(x[u], np.float32), train_csr.indices[train_csr.indptr[u]:train_csr.indptr[u + 1]].astype(np.int64))
             for u in range(train_csr.shape[0])]
    tag = federation_tag(plain)
    return [replace(d, federation=tag) for d in plain]
