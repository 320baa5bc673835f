"""Attribute inference attacks (paper 004 §3; the choices it leaves open are in docs/decisions.md,
"Federated attribute inference and APM (paper 004)").

White-box, against federated uploads: the honest-but-curious server computes each client's
pseudo-gradient ``ΔΘ_u`` (``federated.protocol.pseudo_gradient``), knows the attribute of a
share ζ of the round's clients (𝒰_adv), trains a classifier on them and predicts the rest.
``component_matrix`` slices ``ΔΘ`` by component (full, user, item, mlp, mlp1, mlp2: Figure 4).

Black-box, against any centralised recommender: the same classifiers on the multi-hot vector
of the top-k list each user is recommended (``recommendation_matrix``), for the audit.

Attackers (``AttributeAttacker``):

* ``dnn`` -- Eq. 10: Linear(in, 100) - ReLU - Linear(100, 30) - ReLU - Linear(30, C), softmax
  cross-entropy, Adam (lr 1e-3, weight decay 1e-4), 200 full-batch epochs (the paper gives no
  training details; no early stopping, since the adversary's few users leave no validation set); Adam's
  update of the first layer is most of a fit on a large ΔΘ. ``fused_adam=True`` uses PyTorch's
  fused CPU Adam: faster, the same algorithm, but not bitwise equal, so it is opt-in (its cost
  and difference: docs/decisions.md, "Attack cost");
* ``tree``, ``svc``, ``knn`` -- scikit-learn defaults (``DecisionTreeClassifier``, ``SVC`` with
  RBF kernel and C = 1, ``KNeighborsClassifier(5)``), RQ4;
* ``random`` (uniform guess, the paper's "Random Attack"), ``stratified`` and ``majority``
  (scikit-learn ``DummyClassifier``), the blind baselines.

All learned attackers see the same z-scored input, with mean and standard deviation fitted on
the adversary's training users only; ``standardize=False`` feeds them the raw ΔΘ instead,
an ablation that shows how much of an attack's strength comes from the column scaling. The
tree is fitted on the raw rows either way (``SCALE_FREE``): each split compares one column
with a threshold halfway between two training values, and the z-score ``(x - m) / s`` with
``s > 0`` maps every column monotonically, so the tree of the z-scored rows is the tree of the
raw rows with every threshold mapped the same way, and every prediction is the same (up to
float rounding of values that nearly tie); computing the moments and the standardised copy
of a wide ΔΘ would buy nothing.

Sparse input (scipy CSR, such as ``recommendation_matrix``'s users x items lists) is never
densified: ``z = (x - m) / s`` is split into a sparse scaling and a dense shift,
``z = x S⁻¹ - m S⁻¹`` (``S = diag(s)``). The DNN's first layer computes
``W z + b = (x S⁻¹) Wᵀ + (b - W m S⁻¹)`` with a sparse-dense product, the same full-batch
algorithm (equal up to float rounding); ``tree``, ``svc`` and ``knn`` read ``x S⁻¹`` in
scikit-learn's sparse mode, since their decisions are invariant to a common shift of every
row (tree thresholds move with it, RBF kernels and Euclidean neighbours depend only on
differences). Cost and memory are linear in the non-zeros plus the first layer's weights.

``zero_column_attack`` is a trivial rule the paper's attackers do not use:
``ΔE_U = Σ g x_uᵀ`` has an exactly zero column wherever the one-hot ``x_u`` is 0, so the
column of the attribute block with the largest norm names the attribute (reported separately,
as a finding beyond the paper).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import scipy.sparse as sp
import torch
from sklearn.dummy import DummyClassifier
from sklearn.neighbors import KNeighborsClassifier
from sklearn.svm import SVC
from sklearn.tree import DecisionTreeClassifier
from torch import Tensor, nn

from recprivacy.errors import ConfigError, DataError
from recprivacy.metrics.attack import multiclass_attack_report
from recprivacy.models.training import torch_threads

ATTACKERS = ("dnn", "tree", "svc", "knn", "random", "stratified", "majority")
#: the blind guesses: they read the labels and the number of rows, never a feature
BLIND = ("random", "stratified", "majority")
#: attackers whose decisions a per-column positive affine map leaves unchanged (module docstring)
SCALE_FREE = ("tree",)
COMPONENT_SETS: dict[str, tuple[str, ...]] = {
    "all": ("user", "item", "mlp1", "mlp2"),
    "user": ("user",),
    "item": ("item",),
    "mlp": ("mlp1", "mlp2"),
    "mlp1": ("mlp1",),
    "mlp2": ("mlp2",),
}


def check_zeta(zeta: float) -> float:
    """ζ, the share of clients whose attribute the attacker knows, must lie in (0, 1)."""
    if not 0.0 < float(zeta) < 1.0:
        raise ConfigError(f"zeta: expected the attacker's known share of clients in (0, 1), got {zeta}")
    return float(zeta)


def zeta_split(n: int, zeta: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """(known, unknown) row indices: a seeded random ``round(ζ n)`` of the ``n`` clients form
    𝒰_adv (at least one, and at least one left to attack)."""
    check_zeta(zeta)
    if n < 2:
        raise DataError(f"attribute attack needs at least 2 clients, got {n}")
    k = min(max(1, int(round(zeta * n))), n - 1)
    perm = np.random.default_rng(seed).permutation(n)
    return np.sort(perm[:k]), np.sort(perm[k:])


def component_matrix(deltas: dict[str, Tensor], components: dict[str, str], which: str = "all") -> np.ndarray:
    """Flatten and concatenate the pseudo-gradients of the parameters in component set
    ``which`` (``COMPONENT_SETS``) into one row per client ``[B, P]`` (float32)."""
    if which not in COMPONENT_SETS:
        raise ConfigError(f"component: expected one of {list(COMPONENT_SETS)}, got {which!r}")
    names = [n for n in deltas if components[n] in COMPONENT_SETS[which]]
    if not names:
        raise ConfigError(f"component {which!r}: the model has no such parameters (it has {sorted(set(components.values()))})")
    return torch.cat([deltas[n].reshape(len(deltas[n]), -1).float() for n in names], dim=1).numpy()


Features = np.ndarray | sp.csr_matrix


def recommendation_matrix(topk: np.ndarray, n_items: int) -> sp.csr_matrix:
    """Multi-hot CSR rows ``[n_users, n_items]`` of each user's recommended items (black-box
    input): ``x_ui = 1`` iff item i is in u's list; ``n_users x k`` non-zeros, never dense."""
    topk = np.asarray(topk, dtype=np.int64)
    n, k = topk.shape
    out = sp.csr_matrix((np.ones(n * k, dtype=np.float32), topk.ravel(), np.arange(n + 1) * k), shape=(n, n_items))
    out.sum_duplicates()
    out.data[:] = 1.0
    return out


def zero_column_attack(delta_user_table: Tensor, block: np.ndarray) -> np.ndarray:
    """The zero-column rule: per client, the attribute column (of ``ΔE_U`` ``[B, d, d1]``) with the
    largest L2 norm; returns the index within ``block`` (the attribute's class). A client
    of ``zero_updates`` has no such column and gets class 0."""
    norms = delta_user_table[:, :, torch.as_tensor(block)].float().norm(dim=1)
    return norms.argmax(dim=1).numpy()


def zero_updates(delta_user_table: Tensor) -> np.ndarray:
    """Clients whose whole ``ΔE_U`` is exactly zero: no gradient reached the user table (in
    FedRec every unit of ``ReLU(W2 (z_u + z_u^N) + b)`` was inactive in all local steps),
    so the zero-column rule has nothing to read for them."""
    return (delta_user_table.flatten(1) == 0).all(dim=1).numpy()


def _column_moments(x: Features) -> tuple[np.ndarray, np.ndarray]:
    """Column mean ``m`` and (population) standard deviation ``s``; for sparse ``x`` from
    ``s² = mean(x²) - m²`` without densifying."""
    if not sp.issparse(x):
        return x.mean(axis=0), x.std(axis=0)
    mean = np.asarray(x.mean(axis=0), dtype=np.float64).ravel()
    square = np.asarray(x.multiply(x).mean(axis=0), dtype=np.float64).ravel()
    std = np.sqrt(np.maximum(square - mean**2, 0.0))
    return mean.astype(np.float32), std.astype(np.float32)


def _torch_sparse(x: sp.csr_matrix) -> Tensor:
    coo = x.tocoo()
    index = torch.from_numpy(np.vstack([coo.row, coo.col]).astype(np.int64))
    return torch.sparse_coo_tensor(index, torch.from_numpy(coo.data.astype(np.float32)), coo.shape,
                                   check_invariants=False).coalesce()  # fmt: skip


class _DNN(nn.Module):
    """Eq. 10; ``forward(x, shift)`` with sparse ``x`` computes the first layer as
    ``x Wᵀ + b - W shift`` (the z-scored input ``x - shift`` without densifying it)."""

    def __init__(self, n_in: int, n_classes: int) -> None:
        super().__init__()
        self.net = nn.Sequential(nn.Linear(n_in, 100), nn.ReLU(), nn.Linear(100, 30), nn.ReLU(), nn.Linear(30, n_classes))

    def forward(self, x: Tensor, shift: Tensor | None = None) -> Tensor:
        if not x.is_sparse:
            return self.net(x)
        first = self.net[0]
        hidden = torch.sparse.mm(x, first.weight.T) + (first.bias - first.weight @ shift)
        return self.net[1:](hidden)


@dataclass
class AttributeAttacker:
    """One attacker of ``ATTACKERS`` (module docstring) for ``n_classes`` classes;
    ``fit(X, y)`` on the known users, ``score(X)`` -> class probabilities ``[n, C]``."""

    kind: str = "dnn"
    n_classes: int = 2
    seed: int = 0
    epochs: int = 200
    lr: float = 1e-3
    weight_decay: float = 1e-4
    fused_adam: bool = False
    standardize: bool = True
    fitted_rows_: int = field(default=0, init=False)

    def __post_init__(self) -> None:
        if self.kind not in ATTACKERS:
            raise ConfigError(f"attacker: expected one of {list(ATTACKERS)}, got {self.kind!r}")

    def fit(self, x: Features, y: np.ndarray) -> "AttributeAttacker":
        """Fit on dense rows or scipy sparse rows (module docstring) with labels ``y``."""
        x = _as_features(x)
        y = np.asarray(y, dtype=np.int64)
        if x.shape[0] != len(y) or len(y) == 0:
            raise DataError(f"attacker: {x.shape[0]} feature rows but {len(y)} labels; expected the same, at least one")
        self.fitted_rows_ = len(y)
        self.classes_ = np.unique(y)
        if self.kind in BLIND + SCALE_FREE:  # no column moments, no standardised copy (module docstring)
            self.model_ = self._sklearn().fit(self._input(x), y)
            return self
        moments = _column_moments(x)
        if self.standardize:
            self.mean_, self.std_ = moments[0].copy(), moments[1].copy()
        else:
            self.mean_, self.std_ = np.zeros(x.shape[1], dtype=np.float32), np.ones(x.shape[1], dtype=np.float32)
        self.std_[self.std_ == 0] = 1.0
        self.gamma_ = self._rbf_gamma(*moments) if sp.issparse(x) else "scale"
        z = self._standard(x)
        if self.kind == "dnn":
            self.model_ = self._fit_dnn(z, y)
        else:
            self.model_ = self._sklearn().fit(z, y)
        return self

    def score(self, x: Features) -> np.ndarray:
        """Probabilities ``[n, n_classes]`` (classes the training users lacked get 0; ``svc``
        gives its hard decision as a one-hot row, since SVC has no native probabilities)."""
        x = _as_features(x)
        z = self._input(x)
        n = z.shape[0]
        if self.kind == "dnn":
            with torch.no_grad():
                return torch.softmax(self.model_(*self._tensors(z)), dim=1).numpy()
        proba = np.zeros((n, self.n_classes))
        if self.kind == "svc":
            proba[np.arange(n), self.model_.predict(z)] = 1.0
        else:
            proba[:, self.classes_] = self.model_.predict_proba(z)
        return proba

    def _input(self, x: Features) -> Features:
        """What the fitted attacker reads: nothing for a blind guess (one zero column), the raw
        rows for ``SCALE_FREE`` attackers, the standardised rows otherwise."""
        if self.kind in BLIND:
            return np.zeros((x.shape[0], 1), np.float32)
        return x if self.kind in SCALE_FREE else self._standard(x)

    def _standard(self, x: Features) -> Features:
        """``(x - m) / s`` for dense rows; ``x S⁻¹`` for sparse rows (the shift ``m S⁻¹`` is
        applied by the DNN's first layer and cancels in the other attackers)."""
        if sp.issparse(x):
            return sp.csr_matrix(x.multiply(1.0 / self.std_), dtype=np.float32)
        return (x - self.mean_) / self.std_

    def _rbf_gamma(self, mean: np.ndarray, std: np.ndarray) -> float:
        """scikit-learn's ``gamma="scale"`` of the dense z-scored input, ``1 / (P Var(z))``,
        from column moments (``Var(z)`` over all entries = mean column variance + variance of
        the column means): the sparse rows ``x S⁻¹`` lack the shift, which would change it."""
        centred = (mean - self.mean_) / self.std_
        var = float(np.mean((std / self.std_) ** 2) + np.var(centred))
        return 1.0 / (len(mean) * var) if var > 0 else 1.0

    def _tensors(self, z: Features) -> tuple[Tensor, Tensor | None]:
        """The DNN's input and first-layer shift (None for dense, already centred rows)."""
        if sp.issparse(z):
            return _torch_sparse(z), torch.from_numpy(self.mean_ / self.std_)
        return torch.from_numpy(z), None

    def _sklearn(self) -> Any:
        return {
            "tree": lambda: DecisionTreeClassifier(random_state=self.seed),
            "svc": lambda: SVC(random_state=self.seed, gamma=self.gamma_),
            "knn": lambda: KNeighborsClassifier(min(5, self.fitted_rows_)),
            "random": lambda: DummyClassifier(strategy="uniform", random_state=self.seed),
            "stratified": lambda: DummyClassifier(strategy="stratified", random_state=self.seed),
            "majority": lambda: DummyClassifier(strategy="most_frequent"),
        }[self.kind]()

    def _fit_dnn(self, z: Features, y: np.ndarray) -> _DNN:
        torch.manual_seed(self.seed)
        model = _DNN(z.shape[1], self.n_classes)
        # foreach: the same arithmetic as the default loop (bitwise, checked), faster; fused is
        # faster still but changes weights in the last bit (opt-in, module docstring)
        fast = {"fused": True} if self.fused_adam else {"foreach": True}
        opt = torch.optim.Adam(model.parameters(), lr=self.lr, weight_decay=self.weight_decay, **fast)
        (xt, shift), yt = self._tensors(z), torch.from_numpy(y)
        with torch_threads(1):
            for _ in range(self.epochs):
                opt.zero_grad()
                nn.functional.cross_entropy(model(xt, shift), yt).backward()
                opt.step()
        return model.eval()


def _as_features(x: Any) -> Features:
    """float32 CSR for scipy sparse input, float32 ndarray otherwise."""
    return sp.csr_matrix(x, dtype=np.float32) if sp.issparse(x) else np.asarray(x, dtype=np.float32)


def attack_report(
    x: Features, y: np.ndarray, class_names: tuple[str, ...], zeta: float, seed: int, kind: str = "dnn",
    fused_adam: bool = False, standardize: bool = True,
) -> dict[str, Any]:
    """Train ``kind`` on the ζ share (seeded split) and report on the other clients
    (``metrics.attack.multiclass_attack_report``: weighted / macro F1, accuracy, baselines).
    DataError if the clients attacked all have one class, where F1 and AUC are undefined."""
    known, unknown = zeta_split(len(y), zeta, seed)
    if len(np.unique(y[unknown])) < 2:
        raise DataError(f"attribute attack: the {len(unknown)} clients attacked (zeta {zeta:g}, split seed {seed}) all have "
                        f"class {class_names[int(y[unknown][0])]!r}; expected two classes or more: use more users or "
                        "another zeta")
    attacker = AttributeAttacker(kind, len(class_names), seed, fused_adam=fused_adam, standardize=standardize)
    attacker.fit(x[known], y[known])
    report = multiclass_attack_report(y[unknown], attacker.score(x[unknown]), np.arange(len(class_names)))
    report.update({"n_known": len(known), "n_attacked": len(unknown)})
    return report
