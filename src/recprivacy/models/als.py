"""Alternating least squares for implicit feedback (Hu, Koren and Volinsky, ICDM 2008), trained
by the ``implicit`` library (``implicit.cpu.als.AlternatingLeastSquares``).

With the binary training matrix ``P`` (``p_ui = 1`` for a training pair), confidences
``c_ui = α p_ui`` on the pairs and ``c_ui = 1`` elsewhere (implicit's convention), ALS minimises::

    Σ_(u,i) c_ui (p_ui − x_uᵀ y_i)² + λ (Σ_u ‖x_u‖² + Σ_i ‖y_i‖²)

alternating closed-form solves for all user factors ``X`` and all item factors ``Y``, and scores
``s_ui = x_uᵀ y_i``. implicit solves by a few conjugate-gradient steps per row in training.

A user not seen in training (``score_histories``) gets the exact minimiser of the same objective
with ``Y`` frozen, from the history ``S`` (implicit's ``recalculate_user``, a Cholesky solve)::

    x_u = (YᵀY + λ I + Σ_{i∈S} (c_ui − 1) y_i y_iᵀ)⁻¹ Σ_{i∈S} c_ui y_i

Defaults: d = 64 (the embedding size of the other factor models here), 15 iterations
(implicit's), λ = 20 and α = 2, chosen on the validation split of ml-100k (random 8:1:1, seed
0) over d ∈ {32, 64, 100}, λ ∈ {0.01, 0.1, 1, 5, 10, 20, 50}, α ∈ {1, 2, 3, 5, 10, 20, 40}.
implicit's own λ = 0.01, α = 1 give positives the weight of unobserved cells and rank worse
there (BENCHMARKS.md). Threads: implicit parallelises the row solves over
``threads`` (default: the process's thread budget, ``training.thread_budget``); BLAS is held
to one thread while it runs, as implicit recommends.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
import torch

from recprivacy.data.interactions import Interactions
from recprivacy.errors import ConfigError
from recprivacy.models.base import Recommender
from recprivacy.models.training import thread_budget


def _check_number(name: str, value: object, low: float, strict: bool) -> None:
    ok = isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool)
    if not ok or (value <= low if strict else value < low):
        raise ConfigError(f"ALS.{name}: expected a number {'>' if strict else '>='} {low}, got {value!r}")


def _check_count(name: str, value: object, allow_none: bool = False) -> None:
    if value is None and allow_none:
        return
    if not isinstance(value, (int, np.integer)) or isinstance(value, bool) or value < 1:
        raise ConfigError(f"ALS.{name}: expected a positive integer{' or null' if allow_none else ''}, got {value!r}")


class ALS(Recommender):
    """Implicit-feedback matrix factorisation by alternating least squares (``implicit``).

    Parameters
    ----------
    factors:
        Latent dimension d (64).
    regularization:
        L2 coefficient λ (20.0).
    alpha:
        Confidence scaling α: a training pair weighs ``c_ui = α`` against 1 for an unobserved
        cell (2.0).
    iterations:
        Alternating sweeps over users and items (15).
    threads:
        Threads of the row solves (None: the process's thread budget,
        ``training.thread_budget()``).
    seed:
        Seeds the initial factors (implicit's ``random_state``).

    Attributes
    ----------
    user_factors_, item_factors_:
        ``X`` and ``Y`` (``FloatTensor[n_users, d]``, ``[n_items, d]``).
    model_:
        The fitted ``implicit.cpu.als.AlternatingLeastSquares``.
    """

    def __init__(
        self,
        factors: int = 64,
        regularization: float = 20.0,
        alpha: float = 2.0,
        iterations: int = 15,
        threads: int | None = None,
        seed: int = 0,
    ) -> None:
        super().__init__(seed=seed)
        _check_count("factors", factors)
        _check_count("iterations", iterations)
        _check_count("threads", threads, allow_none=True)
        _check_number("regularization", regularization, 0.0, strict=False)
        _check_number("alpha", alpha, 0.0, strict=True)
        self.factors = factors
        self.regularization = regularization
        self.alpha = alpha
        self.iterations = iterations
        self.threads = threads

    def _fit(self, train: Interactions, valid: Interactions | None) -> None:
        try:
            from implicit.cpu.als import AlternatingLeastSquares
        except ImportError:
            raise ConfigError("model 'als' needs the implicit library: pip install 'recprivacy[als]'") from None
        from threadpoolctl import threadpool_limits

        with threadpool_limits(1, "blas"):
            self.model_ = AlternatingLeastSquares(
                factors=self.factors, regularization=self.regularization, alpha=self.alpha,
                iterations=self.iterations, num_threads=self._threads(), random_state=self.seed,
            )  # fmt: skip
            self.model_.fit(self._confidence_input(self.train_csr_), show_progress=False)
        self.user_factors_ = torch.from_numpy(np.array(self.model_.user_factors, dtype=np.float32))
        self.item_factors_ = torch.from_numpy(np.array(self.model_.item_factors, dtype=np.float32))

    def _score(self, users: torch.Tensor) -> torch.Tensor:
        return self.user_factors_[users] @ self.item_factors_.T

    def _score_histories(self, histories: Interactions) -> torch.Tensor:
        return self._fold_in(histories.to_csr()) @ self.item_factors_.T

    def _fold_in(self, history: sp.csr_matrix) -> torch.Tensor:
        """``x_u`` of each history row by implicit's exact solve (module docstring)."""
        from threadpoolctl import threadpool_limits

        self.model_.num_threads = self._threads()
        with threadpool_limits(1, "blas"):
            rows = self.model_.recalculate_user(np.arange(history.shape[0]), self._confidence_input(history))
        return torch.from_numpy(np.asarray(rows, dtype=np.float32).reshape(history.shape[0], self.factors))

    def _threads(self) -> int:
        return self.threads if self.threads is not None else thread_budget()

    @staticmethod
    def _confidence_input(binary: sp.csr_matrix) -> sp.csr_matrix:
        """``P`` as the float32 CSR implicit takes (it scales it by α itself)."""
        return sp.csr_matrix(binary, dtype=np.float32)
