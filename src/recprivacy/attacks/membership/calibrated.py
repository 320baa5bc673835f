"""Shadow-calibrated membership tests for ranked lists: LiRA and RMIA adapted to recommenders.

Both compare a statistic ``t_u`` (or several, added as independent tests) of the list the *target* serves user ``u`` (a
:mod:`.list_statistics` value, higher = more member-like) with the same statistic of the lists
``M`` reference ("shadow") recommenders of the target's algorithm serve ``u``. Reference ``j``
trains on a random half of a user pool; ``in[u, j]`` says whether ``u``'s training interactions
were in it. The pool is the adversary's own users plus the target users themselves (the
*online* setting of both papers: the adversary may retrain with the candidate's data), and
``reference_assignment`` puts every pool user in the same number of references, as the LiRA
code does, so every user has IN and OUT statistics. Decision: a reference trains on as many users
as the target did (``share`` = target members / pool users, not LiRA's one half), because a
recommender's lists change with the size of its training set (popularity bias), and a size
mismatch between target and references shifts every user's statistic the same way.

Decision: statistics are standardised by the references' pooled spread before RMIA (so
``exp(s)`` is on one scale whatever the statistic's unit), and which way each points is learned from the references (``direction``: the sign
of mean IN minus mean OUT over the pool), never from the target's labels; the offline test and
RMIA assume "higher = member".

**LiRA** (Carlini et al., S&P 2022, §IV, Gaussian fit with a global variance for few shadows)::

    μ_in(u) = mean_{j: in} s_j(u),  μ_out(u) = mean_{j: out} s_j(u)
    σ²_in, σ²_out = pooled variances of s_j(u) − μ(u) over all users (IN and OUT separately)
    Λ(u) = log N(t_u; μ_in(u), σ²_in) − log N(t_u; μ_out(u), σ²_out)            (online)
    Λ_off(u) = (t_u − μ_out(u)) / σ_out                                         (offline)

**RMIA** (Zarifzadeh et al., ICML 2024, Eq. 3-4), with the likelihood ``p(u | θ) = exp(s(u; θ))``
of the list a model ``θ`` serves::

    log LR(u) = t_u − log( (1/M) Σ_j exp(s_j(u)) )         (target over the reference average)
    score(u) = Pr_{z ∈ Z} [ log LR(u) − log LR(z) ≥ log γ ],   γ = 1

``Z`` is a population of users known not to train the target (the adversary's own users, served
by the target and by the same references). All functions are vectorised over users.
"""

from __future__ import annotations

import numpy as np
from scipy.special import expit, logsumexp

LOG_2PI = float(np.log(2 * np.pi))


def reference_assignment(n_users: int, n_refs: int, seed: int, share: float = 0.5) -> np.ndarray:
    """``[n_users, n_refs]`` bool: ``True`` where the user trains reference ``j``. Each user is IN
    exactly ``round(share · n_refs)`` references (at least one, at most ``n_refs − 1``), so each
    reference holds about ``share`` of the users."""
    if n_refs < 2:
        raise ValueError(f"n_refs: expected at least 2 references, got {n_refs}")
    n_in = int(np.clip(round(share * n_refs), 1, n_refs - 1))
    order = np.random.default_rng(seed).random((n_users, n_refs)).argsort(axis=1)
    return order < n_in


def direction(refs: np.ndarray, in_mask: np.ndarray) -> np.ndarray:
    """Per statistic, ``+1`` when references' IN values are on average above their OUT ones, else ``−1``."""
    refs = _three_d(refs)
    return np.where(refs[in_mask].mean(axis=0) >= refs[~in_mask].mean(axis=0), 1.0, -1.0)


def _three_d(x: np.ndarray) -> np.ndarray:
    """``[n, M]`` as ``[n, M, 1]`` (one statistic); ``[n, M, D]`` unchanged."""
    x = np.asarray(x, dtype=np.float64)
    return x[..., None] if x.ndim == 2 else x


def _gaussian_fit(stats: np.ndarray, mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per-user means ``[n, D]`` of ``stats`` ``[n, M, D]`` where ``mask`` and the pooled
    (global) standard deviation of each statistic ``[D]``."""
    count = mask.sum(axis=1)
    if (count == 0).any():
        raise ValueError("every user needs at least one reference on each side (IN and OUT)")
    m = mask[..., None]
    mean = np.where(m, stats, 0.0).sum(axis=1) / count[:, None]
    resid = np.where(m, stats - mean[:, None, :], 0.0)
    dof = max(int(mask.sum()) - len(stats), 1)
    return mean, np.maximum(np.sqrt((resid**2).sum(axis=(0, 1)) / dof), 1e-12)


def _log_normal(x: np.ndarray, mean: np.ndarray, sd: np.ndarray) -> np.ndarray:
    return -0.5 * (LOG_2PI + 2 * np.log(sd) + ((x - mean) / sd) ** 2)


def lira_scores(target: np.ndarray, refs: np.ndarray, in_mask: np.ndarray) -> np.ndarray:
    """Online LiRA ``Λ(u)`` (module docstring): ``target`` ``[n]`` or ``[n, D]``, ``refs``
    ``[n, M]`` or ``[n, M, D]``, ``in_mask`` ``[n, M]``; several statistics add their
    log-likelihood ratios (independent Gaussians, as LiRA does for several queries)."""
    refs, t = _three_d(refs), np.asarray(target, dtype=np.float64).reshape(len(refs), -1)
    mu_in, sd_in = _gaussian_fit(refs, in_mask)
    mu_out, sd_out = _gaussian_fit(refs, ~in_mask)
    return (_log_normal(t, mu_in, sd_in) - _log_normal(t, mu_out, sd_out)).sum(axis=1)


def lira_offline_scores(target: np.ndarray, refs: np.ndarray, in_mask: np.ndarray) -> np.ndarray:
    """Offline LiRA: ``Σ_d (t_u − μ_out(u)) / σ_out`` from the OUT references only."""
    refs, t = _three_d(refs), np.asarray(target, dtype=np.float64).reshape(len(refs), -1)
    mu_out, sd_out = _gaussian_fit(refs, ~in_mask)
    return ((t - mu_out) / sd_out).sum(axis=1)


def rmia_log_ratio(target: np.ndarray, refs: np.ndarray) -> np.ndarray:
    """``log LR(u) = Σ_d [t_u − log mean_j exp(s_j(u))]`` (statistics standardised by the caller)."""
    refs, t = _three_d(refs), np.asarray(target, dtype=np.float64).reshape(len(refs), -1)
    return (t - (logsumexp(refs, axis=1) - np.log(refs.shape[1]))).sum(axis=1)


def rmia_scores(target: np.ndarray, refs: np.ndarray, population_target: np.ndarray,
                population_refs: np.ndarray, gamma: float = 1.0, break_ties: bool = True) -> np.ndarray:  # fmt: skip
    """RMIA ``score(u)``: the share of population users ``z`` with ``LR(u) / LR(z) >= gamma``.

    The share is a step function of ``LR(u)`` with steps of ``1 / |Z|``; with a small population
    many targets share the top step, so no threshold reaches a low FPR (seen on ml-100k:
    docs/decisions.md, "LiRA/RMIA").
    ``break_ties`` orders targets inside a step by ``LR(u)`` itself: it adds
    ``expit(log LR(u) - median) / (2 |Z|)``, less than half a step, so it never reorders two
    targets whose shares differ and refines the ROC without changing the score's meaning."""
    x = rmia_log_ratio(target, refs)
    z = np.sort(rmia_log_ratio(population_target, population_refs))
    share = np.searchsorted(z, x - np.log(gamma), side="right") / len(z)
    return share + expit(x - np.median(x)) / (2 * len(z)) if break_ties else share
