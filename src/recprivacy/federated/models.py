"""Federated recommenders of paper 004, written batched over clients.

Every parameter is global and shared (Algorithm 1) except the private user vector of federated
MF. A model declares its parameters (``ParamSpec``: name, shape, component) and computes logits
for a batch of ``A`` clients at once; each client has its own copy of every parameter (leading
dimension ``A``), so one call trains many clients with batched matrix products:

``logits(p, x, m, z_v) -> [A, b]`` with ``p[name]`` ``[A, *shape]``, ``x`` the user features
``[A, d1]``, ``m`` the mean item embedding of the user's training items ``[A, d]`` (the
one-hop neighbourhood 𝒩(u)) and ``z_v`` the embeddings of ``b`` scored items ``[A, b, d]``.

The item table ``item`` ``[n_items, d]`` is special: it is the one large parameter, and
``protocol.local_update`` keeps each client's changes to it sparse. With one-hot item inputs
(the paper says only that x_v is "initialized using randomized values"), ``z_v = E_V x_v`` is
row ``v`` of the table.

Models (§3.1 for FedRec; the paper gives no architecture for the others under this protocol, so
they share FedRec's feature user tower and every parameter is uploaded):

* ``FedRec`` -- Eq. 4-7: ``z_u = E_U x_u``; ``z_u^N = W1 mean_{v in N(u)} z_v`` (W1 is linear,
  so applying it to the mean equals the mean of ``W1 z_v``); ``z_u* = ReLU(W2 (z_u + z_u^N) + b)``;
  ``r = sigma(MLP2(ReLU(MLP1([z_u*; z_v]))))`` with hidden width 64. Components: user
  {E_U, W1, W2, b}, item {E_V}, mlp1, mlp2. MLP1's weight on the concatenation is stored as
  its two halves ``mlp1.user`` and ``mlp1.item`` (``[W_u | W_v] [a; b] = W_u a + W_v b``), so
  the user half is applied once per client instead of once per scored item.
* ``FedLightGCN`` -- ``z_u* = (z_u + mean_{v in N(u)} z_v) / 2``, score ``z_u* . z_v``;
  components user {E_U}, item {E_V}.
* ``FedNCF`` -- NeuMF on the feature user tower: GMF ``z_u ⊙ z_v`` and an MLP tower
  ``[2d -> d -> d/2]`` joined by a prediction layer (stored as its GMF and MLP halves, and
  the first MLP layer as its user and item halves, as for FedRec). The first MLP layer is
  component mlp1, the second layer and the prediction layer mlp2.
* ``FedMF`` -- F-DPMF's base: private ``p_u`` that never leaves the device, shared item table;
  score ``p_u . q_v``. Only the item table is uploaded.
"""

from __future__ import annotations

import abc
import math
from dataclasses import dataclass

import torch
from torch import Tensor

from recprivacy.errors import ConfigError

COMPONENTS = ("user", "item", "mlp1", "mlp2")
ITEM = "item"
PRIVATE = "private"


@dataclass(frozen=True)
class ParamSpec:
    """One parameter: its name, shape and component (``user``, ``item``, ``mlp1``, ``mlp2``,
    or ``private`` for state that stays on the device)."""

    name: str
    shape: tuple[int, ...]
    component: str

    @property
    def size(self) -> int:
        return math.prod(self.shape)


class FederatedModel(abc.ABC):
    """A recommender trained by federated clients (see module docstring)."""

    name: str = ""
    uses_neighbours: bool = False
    uses_features: bool = True

    def __init__(self, n_items: int, n_features: int, dim: int = 64) -> None:
        if dim < 2 or n_items < 1:
            raise ConfigError(f"{type(self).__name__}: need dim >= 2 and n_items >= 1, got dim={dim}, n_items={n_items}")
        self.n_items = n_items
        self.n_features = n_features
        self.dim = dim

    @abc.abstractmethod
    def specs(self) -> list[ParamSpec]:
        """Every parameter; exactly one has the name ``item`` (the item table)."""

    @abc.abstractmethod
    def logits(self, p: dict[str, Tensor], x: Tensor, m: Tensor | None, z_v: Tensor) -> Tensor:
        """Logits ``[A, b]`` of ``b`` items for ``A`` clients (module docstring)."""

    def shared_specs(self) -> list[ParamSpec]:
        """The parameters a client uploads (all but the private ones)."""
        return [s for s in self.specs() if s.component != PRIVATE]

    def private_specs(self) -> list[ParamSpec]:
        return [s for s in self.specs() if s.component == PRIVATE]

    def init_params(self, generator: torch.Generator, std: float = 1.0) -> dict[str, Tensor]:
        """Shared parameters drawn i.i.d. N(0, std^2) in spec order (the paper initialises
        every parameter with N(0, 1))."""
        return {s.name: torch.randn(s.shape, generator=generator) * std for s in self.shared_specs()}

    def components(self) -> dict[str, str]:
        """Component of each shared parameter."""
        return {s.name: s.component for s in self.shared_specs()}


def _bmv(w: Tensor, v: Tensor) -> Tensor:
    """Per-client matrix-vector product: ``w`` ``[A, o, i]`` times ``v`` ``[A, i]`` -> ``[A, o]``."""
    return torch.bmm(w, v[:, :, None])[:, :, 0]


def _bmm_items(w: Tensor, z: Tensor) -> Tensor:
    """Per-client linear map of item rows: ``w`` ``[A, o, i]``, ``z`` ``[A, b, i]`` -> ``[A, b, o]``."""
    return torch.bmm(z, w.transpose(1, 2))


def _bdot(u: Tensor, z: Tensor) -> Tensor:
    """Per-client dot products: ``u`` ``[A, i]`` with each row of ``z`` ``[A, b, i]`` -> ``[A, b]``."""
    return torch.bmm(z, u[:, :, None])[:, :, 0]


class FedRec(FederatedModel):
    """Paper 004's GCN recommender (Eq. 4-7, module docstring)."""

    name = "fedrec"
    uses_neighbours = True

    def __init__(self, n_items: int, n_features: int, dim: int = 64, hidden: int = 64) -> None:
        super().__init__(n_items, n_features, dim)
        self.hidden = hidden

    def specs(self) -> list[ParamSpec]:
        d, h = self.dim, self.hidden
        return [
            ParamSpec("E_U", (d, self.n_features), "user"),
            ParamSpec("W1", (d, d), "user"),
            ParamSpec("W2", (d, d), "user"),
            ParamSpec("b", (d,), "user"),
            ParamSpec(ITEM, (self.n_items, d), "item"),
            ParamSpec("mlp1.user", (h, d), "mlp1"),
            ParamSpec("mlp1.item", (h, d), "mlp1"),
            ParamSpec("mlp1.bias", (h,), "mlp1"),
            ParamSpec("mlp2.weight", (1, h), "mlp2"),
            ParamSpec("mlp2.bias", (1,), "mlp2"),
        ]

    def logits(self, p: dict[str, Tensor], x: Tensor, m: Tensor | None, z_v: Tensor) -> Tensor:
        z_u = _bmv(p["E_U"], x)
        z_n = _bmv(p["W1"], m)
        z_star = torch.relu(_bmv(p["W2"], z_u + z_n) + p["b"])
        user_part = _bmv(p["mlp1.user"], z_star) + p["mlp1.bias"]
        hidden = torch.relu(_bmm_items(p["mlp1.item"], z_v) + user_part[:, None, :])
        return _bdot(p["mlp2.weight"][:, 0], hidden) + p["mlp2.bias"]


class FedLightGCN(FederatedModel):
    """LightGCN under the protocol: feature user tower, one mean aggregation."""

    name = "fedlightgcn"
    uses_neighbours = True

    def specs(self) -> list[ParamSpec]:
        return [ParamSpec("E_U", (self.dim, self.n_features), "user"), ParamSpec(ITEM, (self.n_items, self.dim), "item")]

    def logits(self, p: dict[str, Tensor], x: Tensor, m: Tensor | None, z_v: Tensor) -> Tensor:
        z_star = 0.5 * (_bmv(p["E_U"], x) + m)
        return _bdot(z_star, z_v)


class FedNCF(FederatedModel):
    """NeuMF under the protocol: GMF and MLP branches on shared embeddings."""

    name = "fedncf"

    def specs(self) -> list[ParamSpec]:
        d, half = self.dim, self.dim // 2
        return [
            ParamSpec("E_U", (d, self.n_features), "user"),
            ParamSpec(ITEM, (self.n_items, d), "item"),
            ParamSpec("mlp1.user", (d, d), "mlp1"),
            ParamSpec("mlp1.item", (d, d), "mlp1"),
            ParamSpec("mlp1.bias", (d,), "mlp1"),
            ParamSpec("mlp2.weight", (half, d), "mlp2"),
            ParamSpec("mlp2.bias", (half,), "mlp2"),
            ParamSpec("predict.gmf", (1, d), "mlp2"),
            ParamSpec("predict.mlp", (1, half), "mlp2"),
            ParamSpec("predict.bias", (1,), "mlp2"),
        ]

    def logits(self, p: dict[str, Tensor], x: Tensor, m: Tensor | None, z_v: Tensor) -> Tensor:
        z_u = _bmv(p["E_U"], x)
        h1 = torch.relu(_bmm_items(p["mlp1.item"], z_v) + (_bmv(p["mlp1.user"], z_u) + p["mlp1.bias"])[:, None, :])
        h2 = torch.relu(_bmm_items(p["mlp2.weight"], h1) + p["mlp2.bias"][:, None, :])
        gmf = _bdot(p["predict.gmf"][:, 0] * z_u, z_v)
        return gmf + _bdot(p["predict.mlp"][:, 0], h2) + p["predict.bias"]


class FedMF(FederatedModel):
    """Federated MF (F-DPMF's base): private ``p_u``, uploaded item table."""

    name = "fedmf"
    uses_features = False

    def specs(self) -> list[ParamSpec]:
        return [ParamSpec("P_u", (self.dim,), PRIVATE), ParamSpec(ITEM, (self.n_items, self.dim), "item")]

    def logits(self, p: dict[str, Tensor], x: Tensor, m: Tensor | None, z_v: Tensor) -> Tensor:
        return _bdot(p["P_u"], z_v)


FEDERATED_MODELS: dict[str, type[FederatedModel]] = {
    cls.name: cls for cls in (FedRec, FedLightGCN, FedNCF, FedMF)
}


def make_federated_model(name: str, n_items: int, n_features: int, dim: int = 64) -> FederatedModel:
    """The federated model registered as ``name`` (ConfigError lists the names)."""
    if name not in FEDERATED_MODELS:
        raise ConfigError(f"federated model {name!r} is unknown; expected one of {sorted(FEDERATED_MODELS)}")
    return FEDERATED_MODELS[name](n_items, n_features, dim)
