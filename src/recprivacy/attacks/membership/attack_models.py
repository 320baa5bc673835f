"""Attack models: the paper's MLP, the K-Means baseline, and any scikit-learn classifier.

Every attack has ``fit(features, labels) -> self``, ``score(features) -> ndarray`` (higher =
more likely a member) and ``threshold_``, the score at which it decides "member", so
``metrics.attack.binary_attack_report(labels, score, threshold_)`` evaluates any of them.

* :class:`MLPAttack` (paper 001 §2.5): ``l → 32 → ReLU → 8 → ReLU → Linear(8, 2) → softmax``
  (the 8 → 2 layer the printed equation omits, as in the authors' code), cross-entropy on the
  logits (the paper's BCE on P(member), without the code's second softmax), SGD lr 0.01 with
  momentum 0.7 (the paper; the code uses 0.9), 20 epochs of batch size 1 (the code) shuffled
  every epoch with the seed. Member iff
  ``P(member) > P(non-member)``. The score is the logit margin ``o_member − o_non-member``
  (``log P(member) / P(non-member)``): it ranks users exactly as ``P(member)`` does but does
  not saturate at 1.0 in floating point, which would tie the most confident users and blur
  the low-FPR end of the ROC curve; the decision is at 0. ``code_compat=True`` reproduces
  the authors' code: momentum 0.9, no shuffling (members first), softmax fed to the
  cross-entropy (a double softmax).
* :class:`KMeansAttack` (Tables 6-7): K-Means with K = 2 on the *target* features,
  unsupervised. The member cluster is the one whose centre has the smaller L2 norm
  (members' interaction and recommendation centres are close, so their ``z`` is short;
  the paper does not say how clusters get labels). Score = distance to the non-member centre
  minus distance to the member
  centre, so the decision is at 0.
* :class:`SklearnAttack`: any scikit-learn classifier by class name (``LogisticRegression``,
  ``RandomForestClassifier``, ...), scored by ``predict_proba`` (or ``decision_function``).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from sklearn.cluster import KMeans
from sklearn.utils.discovery import all_estimators

from recprivacy.errors import ConfigError, NotFittedError

ATTACKS = ("mlp", "kmeans")


def _matrix(x: Any, name: str = "features") -> np.ndarray:
    x = np.asarray(x, dtype=np.float64)
    if x.ndim != 2 or len(x) == 0:
        raise ValueError(f"{name}: expected a non-empty [n_users, dim] matrix, got shape {x.shape}")
    if not np.isfinite(x).all():
        raise ValueError(f"{name}: non-finite value at row {int(np.argwhere(~np.isfinite(x))[0][0])}")
    return x


def _labels(y: Any, n: int) -> np.ndarray:
    y = np.asarray(y)
    if y.shape != (n,) or not np.isin(y, (0, 1)).all() or np.unique(y).size < 2:
        raise ValueError(f"labels: expected {n} values of 0 (non-member) and 1 (member), both present")
    return y.astype(np.int64)


class MLPAttack:
    """The paper's MLP attack model (module docstring).

    Decision: forward and backward passes are written out in numpy. The paper trains with one
    sample per SGD step, so training is ``20 × n_shadow_users`` strictly sequential steps on a
    network of about 3,500 weights; there PyTorch's per-call overhead dominates (measured:
    docs/decisions.md, "Attack MLP"). A unit test checks the gradients against ``torch.autograd``.
    Weights start as PyTorch's ``nn.Linear`` default, U(±1/sqrt(fan_in)).

    Decision: a network whose output is the same for every training row after training (a
    hidden layer entirely dead: the paper's unnormalised Origin features are about 0.05 in
    size, so the random initial biases decide which ReLUs ever fire) is retrained from fresh
    weights drawn from the same seeded stream, up to ``max_restarts`` times. Without this, some
    attacks on our benchmarks scored every user alike (ROC AUC 0.5; how often: docs/decisions.md,
    "Attack MLP"), which an audit would misread as "no leak". Runs that train normally are unchanged.

    Parameters
    ----------
    hidden:
        Hidden widths (32, 8).
    lr, momentum:
        SGD step (0.01) and momentum (0.7); the update is PyTorch's
        ``v ← μ v + g, θ ← θ − lr v``.
    n_epochs, batch_size, shuffle:
        20 epochs of single-sample steps, shuffled each epoch; a larger batch averages the
        per-sample gradients.
    code_compat:
        Reproduce the authors' code (momentum 0.9, batch 1, no shuffling, softmax before the
        cross-entropy).
    standardize:
        Scale features by the mean and standard deviation of the *training* (shadow) features
        (off by default: the paper does not normalise).
    max_restarts:
        Fresh initialisations allowed when training ends with a constant output (3).
    seed:
        Seeds the weights and the shuffling.
    """

    threshold_ = 0.0

    def __init__(
        self,
        hidden: tuple[int, ...] = (32, 8),
        lr: float = 0.01,
        momentum: float = 0.7,
        n_epochs: int = 20,
        batch_size: int = 1,
        shuffle: bool = True,
        code_compat: bool = False,
        standardize: bool = False,
        max_restarts: int = 3,
        seed: int = 0,
    ) -> None:
        for key, value in (("n_epochs", n_epochs), ("batch_size", batch_size)):
            if not isinstance(value, (int, np.integer)) or value < 1:
                raise ConfigError(f"MLPAttack.{key}: expected a positive integer, got {value!r}")
        if not isinstance(max_restarts, (int, np.integer)) or max_restarts < 0:
            raise ConfigError(f"MLPAttack.max_restarts: expected an integer >= 0, got {max_restarts!r}")
        if not lr > 0 or not 0 <= momentum < 1:
            raise ConfigError(f"MLPAttack: expected lr > 0 and 0 <= momentum < 1, got lr={lr!r}, momentum={momentum!r}")
        self.hidden = tuple(hidden)
        self.lr = lr
        self.momentum = 0.9 if code_compat else momentum
        self.n_epochs = n_epochs
        self.batch_size = 1 if code_compat else batch_size
        self.shuffle = False if code_compat else shuffle
        self.code_compat = code_compat
        self.standardize = standardize
        self.max_restarts = max_restarts
        self.seed = seed

    def init_weights(self, dim: int, rng: np.random.Generator) -> list[np.ndarray]:
        """``[W_1, b_1, ..., W_L, b_L]`` with ``W_j`` of shape ``[in, out]``, U(±1/sqrt(in))."""
        widths = (dim, *self.hidden, 2)
        weights = []
        for a, b in zip(widths[:-1], widths[1:]):
            bound = 1.0 / np.sqrt(a)
            weights += [rng.uniform(-bound, bound, size=(a, b)), rng.uniform(-bound, bound, size=b)]
        return weights

    @staticmethod
    def logits(weights: list[np.ndarray], x: np.ndarray) -> tuple[np.ndarray, list[np.ndarray]]:
        """Output logits ``[n, 2]`` and the input of every layer (for the backward pass)."""
        inputs = [x]
        for j in range(0, len(weights) - 2, 2):
            inputs.append(np.maximum(inputs[-1] @ weights[j] + weights[j + 1], 0.0))
        return inputs[-1] @ weights[-2] + weights[-1], inputs

    def loss_and_gradients(self, weights: list[np.ndarray], x: np.ndarray, y: np.ndarray) -> tuple[float, list[np.ndarray]]:
        """Mean cross-entropy of the batch and its gradient for every weight.

        ``L = −mean log softmax(o)_y``, so ``∂L/∂o = (softmax(o) − onehot(y)) / n``; with
        ``code_compat`` the loss reads ``softmax(o)`` as logits (``L = −log softmax(p)_y`` with
        ``p = softmax(o)``) and ``∂L/∂o = p ⊙ (g − g·p)`` for ``g = softmax(p) − onehot(y)``.
        """
        out, inputs = self.logits(weights, x)
        p = _softmax(out)
        onehot = np.eye(2)[y]
        if self.code_compat:
            q = _softmax(p)
            loss = -np.log(q[np.arange(len(y)), y]).mean()
            g = q - onehot
            delta = p * (g - (g * p).sum(axis=1, keepdims=True)) / len(y)
        else:
            loss = -np.log(np.maximum(p[np.arange(len(y)), y], 1e-300)).mean()
            delta = (p - onehot) / len(y)
        grads: list[np.ndarray] = [np.empty(0)] * len(weights)
        for j in range(len(weights) - 2, -1, -2):
            grads[j], grads[j + 1] = inputs[j // 2].T @ delta, delta.sum(axis=0)
            if j:
                delta = (delta @ weights[j].T) * (inputs[j // 2] > 0)
        return float(loss), grads

    def fit(self, features: Any, labels: Any) -> "MLPAttack":
        """Train on labelled (shadow) features; labels 1 = member. A network whose output ends
        up the same for every training row is retrained from fresh weights (see the class
        docstring); ``restarts_`` counts how often."""
        x = _matrix(features)
        y = _labels(labels, len(x))
        self.mean_ = x.mean(axis=0) if self.standardize else np.zeros(x.shape[1])
        scale = x.std(axis=0) if self.standardize else np.ones(x.shape[1])
        self.scale_ = np.where(scale > 0, scale, 1.0)
        x = (x - self.mean_) / self.scale_
        rng = np.random.default_rng(self.seed)
        for self.restarts_ in range(self.max_restarts + 1):
            self.weights_, self.losses_ = self._train(x, y, rng)
            out = self.logits(self.weights_, x)[0]
            if np.ptp(out[:, 1] - out[:, 0]) > 0:
                break
        return self

    def _train(self, x: np.ndarray, y: np.ndarray, rng: np.random.Generator) -> tuple[list[np.ndarray], list[float]]:
        """SGD with momentum from a fresh initialisation; returns the weights and epoch losses."""
        weights = self.init_weights(x.shape[1], rng)
        velocity = [np.zeros_like(w) for w in weights]
        losses = []
        for _ in range(self.n_epochs):
            order = rng.permutation(len(x)) if self.shuffle else np.arange(len(x))
            total = 0.0
            for lo in range(0, len(x), self.batch_size):
                idx = order[lo : lo + self.batch_size]
                loss, grads = self.loss_and_gradients(weights, x[idx], y[idx])
                for w, v, g in zip(weights, velocity, grads):
                    v *= self.momentum
                    v += g
                    w -= self.lr * v
                total += loss * len(idx)
            losses.append(total / len(x))
        return weights, losses

    def predict_proba(self, features: Any) -> np.ndarray:
        """``[n, 2]``: P(non-member), P(member)."""
        if not hasattr(self, "weights_"):
            raise NotFittedError("MLPAttack is not fitted yet: call fit(features, labels) first")
        return _softmax(self.logits(self.weights_, (_matrix(features) - self.mean_) / self.scale_)[0])

    def score(self, features: Any) -> np.ndarray:
        """Logit margin ``log P(member) − log P(non-member)`` of each row (member iff > 0)."""
        if not hasattr(self, "weights_"):
            raise NotFittedError("MLPAttack is not fitted yet: call fit(features, labels) first")
        logits = self.logits(self.weights_, (_matrix(features) - self.mean_) / self.scale_)[0]
        return logits[:, 1] - logits[:, 0]


def _softmax(z: np.ndarray) -> np.ndarray:
    e = np.exp(z - z.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


class KMeansAttack:
    """Unsupervised K-Means (K = 2) baseline on the target features (module docstring).

    ``fit(features)`` clusters the features it is given (labels, if passed, are ignored);
    ``n_init`` k-means++ restarts, seeded.
    """

    threshold_ = 0.0

    def __init__(self, n_init: int = 10, seed: int = 0) -> None:
        self.n_init = n_init
        self.seed = seed

    def fit(self, features: Any, labels: Any = None) -> "KMeansAttack":
        x = _matrix(features)
        km = KMeans(n_clusters=2, n_init=self.n_init, random_state=self.seed).fit(x)
        norms = np.linalg.norm(km.cluster_centers_, axis=1)
        self.member_cluster_ = int(np.argmin(norms))
        self.centers_ = km.cluster_centers_
        return self

    def score(self, features: Any) -> np.ndarray:
        """Distance to the non-member centre minus distance to the member centre."""
        if not hasattr(self, "centers_"):
            raise NotFittedError("KMeansAttack is not fitted yet: call fit(features) first")
        d = np.linalg.norm(_matrix(features)[:, None, :] - self.centers_[None], axis=2)
        return d[:, 1 - self.member_cluster_] - d[:, self.member_cluster_]


def sklearn_classifier(name: str) -> type:
    """The scikit-learn classifier class called ``name`` (ConfigError listing a few if unknown)."""
    classes = dict(all_estimators(type_filter="classifier"))
    if name not in classes:
        examples = ", ".join(n for n in ("LogisticRegression", "RandomForestClassifier", "SVC", "MLPClassifier"))
        raise ConfigError(f"unknown attack model {name!r}; expected 'mlp', 'kmeans' or a scikit-learn classifier such as {examples}")
    return classes[name]


class SklearnAttack:
    """A scikit-learn classifier as the attack model; ``params`` go to its constructor, and its
    ``random_state`` (when it has one) is set to ``seed`` unless given."""

    threshold_ = 0.5

    def __init__(self, name: str, params: dict[str, Any] | None = None, seed: int = 0) -> None:
        self.name = name
        self.params = dict(params or {})
        self.seed = seed
        cls = sklearn_classifier(name)
        if "random_state" in cls().get_params() and "random_state" not in self.params:
            self.params["random_state"] = seed
        try:
            self.model = cls(**self.params)
        except TypeError as err:
            raise ConfigError(f"attack {name}: {err}") from None

    def fit(self, features: Any, labels: Any) -> "SklearnAttack":
        x = _matrix(features)
        self.model.fit(x, _labels(labels, len(x)))
        if not hasattr(self.model, "predict_proba"):
            self.threshold_ = 0.0
        return self

    def score(self, features: Any) -> np.ndarray:
        x = _matrix(features)
        if hasattr(self.model, "predict_proba"):
            proba = self.model.predict_proba(x)
            return proba[:, list(self.model.classes_).index(1)]
        return self.model.decision_function(x)


def make_attack(name: str = "mlp", seed: int = 0, **params: Any) -> MLPAttack | KMeansAttack | SklearnAttack:
    """``"mlp"`` (:class:`MLPAttack`), ``"kmeans"`` (:class:`KMeansAttack`) or a scikit-learn
    classifier class name (:class:`SklearnAttack`), built with ``params``."""
    if name in ATTACKS:
        try:
            return (MLPAttack if name == "mlp" else KMeansAttack)(seed=seed, **params)
        except TypeError as err:
            raise ConfigError(f"attack {name}: {err}") from None
    return SklearnAttack(name, params, seed=seed)
