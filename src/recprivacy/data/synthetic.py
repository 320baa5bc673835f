"""The built-in ``synthetic`` dataset: MovieLens-shaped interactions with a known ground truth.

A :class:`SyntheticWorld` holds the latent truth. Every user has a latent preference vector

    u = b_u + s * (g[gender_u] + a[age_u] + o[occupation_u])

where ``b_u`` is the user's own taste and the offsets ``g``, ``a``, ``o`` belong to the user's
gender, age code (ML-1M codes 1/18/25/35/45/50/56, with age offsets varying smoothly with age)
and occupation (0..20); ``s`` is ``demographic_strength``. Demographics therefore shape what a
user consumes, so attribute inference from interactions works above chance but is not trivial.
Every item has a latent vector ``v_i`` and a Zipf popularity prior ``pi_i ~ rank_i^(-alpha)``.
Factor entries have variance ``d^(-1/2)``, so ``u.v`` has roughly unit variance. The true
*affinity* is ``a_ui = c * u.v`` (``c`` = ``affinity_scale``) and the *choice logit* is
``a_ui + log pi_i``.

:func:`make_synthetic` draws the interaction table:

- each user's count ``k_u = k_min + x_u`` with ``x_u`` proportional to a log-normal weight,
  capped at ``max_user_fraction * n_items`` (water filling, largest-remainder rounding), so
  the counts are heavy tailed, at least ``k_min`` (20 by default, the membership attack's
  filter) and sum exactly to ``n_interactions``;
- items are drawn from ``softmax(a_ui + log pi_i)`` *without replacement* via the Gumbel-top-k
  trick (the top ``k_u`` of ``logit + Gumbel noise`` is an ordered sample without replacement).
  Exactly (``sampler="exact"``: every user against every item, cost users x items) or from
  candidates (``sampler="candidates"``, issue 33: cost and memory linear in the interactions,
  never users x items): each user draws ``CANDIDATE_DRAWS`` x (items to choose) + 16 candidates
  i.i.d. from the proposal ``q = (1 - UNIFORM_SHARE) pi + UNIFORM_SHARE / n_items`` (inverse
  CDF), and the Gumbel-top-k runs on the distinct candidates with the importance-corrected
  logit ``a_ui + log pi_i - log q_i + log n_ui`` (``n_ui`` = times drawn): sampling-importance-
  resampling without replacement, which tends to the exact draw as the draws grow. A user
  left with fewer distinct candidates than items to choose is drawn exactly. ``"auto"`` (the
  default) is exact up to ``EXACT_CELLS`` users x items (the default 943 x 1,682 data, whose
  measured properties below are those of the exact draw) and candidates above;
- interest drifts: a user's items are drawn in ``n_phases`` consecutive phases while the taste
  vector moves from ``u - drift d^(1/4) w_u`` to ``u + drift d^(1/4) w_u`` along a private unit
  direction ``w_u`` (each phase excludes the items already taken), and within a phase items
  are ordered by their cosine with ``w_u`` plus noise. Items close in time are therefore close
  in latent space, and a user's recent items predict the next one better than the whole
  history does (measured on the default data: docs/decisions.md, "Synthetic data"), so
  sequential models have something to learn;
- timestamps start in late 1997 (like MovieLens-100K) and grow by ``1 + Exp(mean_gap)`` seconds;
- ratings 1..5 cut a noisy static affinity ``a_ui`` (plus a per-user rating bias) at the
  quantiles that reproduce MovieLens-100K's rating shares.

:func:`make_synthetic_exposure` simulates a recommender serving slates to the users of a
synthetic dataset after its last interaction (see its docstring). :func:`synthetic_world`
rebuilds the world of any dataset derived from :func:`make_synthetic` (after preprocessing,
splits or user subsets) from the parameters recorded in its provenance, aligned with the
dataset's internal ids.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from scipy.special import expit, logsumexp

from recprivacy.data.exposure import ExposureLog
from recprivacy.data.interactions import Interactions
from recprivacy.errors import ConfigError, DataError

GENRES = (
    "Action", "Adventure", "Animation", "Children's", "Comedy", "Crime", "Documentary", "Drama",
    "Fantasy", "Film-Noir", "Horror", "Musical", "Mystery", "Romance", "Sci-Fi", "Thriller", "War",
    "Western",
)  # fmt: skip
#: ML-1M ``users.dat`` demographics: shares of gender, age codes and the 21 occupations.
MALE_SHARE = 4331 / 6040
AGE_CODES = np.array([1, 18, 25, 35, 45, 50, 56])
AGE_SHARES = np.array([222, 1103, 2096, 1193, 550, 496, 380]) / 6040
OCCUPATION_COUNTS = np.array(
    [711, 528, 267, 173, 759, 112, 236, 679, 17, 92, 195, 129, 388, 142, 302, 144, 241, 502, 70, 72, 281]
)
#: Shares of ratings 1..5 in MovieLens-100K ``u.data``.
RATING_SHARES = np.array([6110, 11370, 27145, 34174, 21201]) / 100_000
START_TIME = 874_724_710  # first timestamp of MovieLens-100K (1997-09-20)
START_SPAN = 215 * 86_400  # users join over about seven months, like MovieLens-100K
GENRE_THRESHOLD = 1.5  # standardised genre score above which an item gets a secondary genre
_BATCH_CELLS = 2_000_000  # users x items cells per vectorised batch
EXACT_CELLS = 20_000_000  # users x items up to which sampler="auto" draws exactly
CANDIDATE_DRAWS = 8  # candidate draws per item to choose (sampler="candidates")
UNIFORM_SHARE = 0.1  # share of the uniform distribution in the candidate proposal
SAMPLERS = ("auto", "exact", "candidates")


@dataclass(frozen=True, eq=False)
class SyntheticWorld:
    """The latent truth behind a synthetic dataset (rows aligned with its internal ids).

    ``user_factors`` (n_users x d) include the demographic offsets; ``item_factors`` (n_items
    x d); ``item_log_popularity`` is ``log pi_i`` (normalised over the generated items);
    ``user_drift`` (n_users x d) holds unit directions of interest drift; ``params`` are the
    arguments of :func:`make_world`.
    """

    user_factors: np.ndarray
    item_factors: np.ndarray
    item_log_popularity: np.ndarray
    user_drift: np.ndarray
    user_features: pd.DataFrame
    item_features: pd.DataFrame
    affinity_scale: float
    params: dict = field(default_factory=dict)

    @property
    def n_users(self) -> int:
        return len(self.user_factors)

    @property
    def n_items(self) -> int:
        return len(self.item_factors)

    def affinity(self, users: np.ndarray, items: np.ndarray | None = None, shift: float = 0.0) -> np.ndarray:
        """True preference ``a_ui = c (u + shift d^(1/4) w_u) . v_i`` for users x items (all items
        by default); ``shift`` moves users along their drift direction ``w_u`` in units of
        ``d^(1/4)``, the typical length of a user's taste vector."""
        v = self.item_factors if items is None else self.item_factors[items]
        u = self.user_factors[users]
        if shift:
            u = u + shift * u.shape[1] ** 0.25 * self.user_drift[users]
        return self.affinity_scale * (u @ v.T)

    def logits(self, users: np.ndarray, items: np.ndarray | None = None, shift: float = 0.0) -> np.ndarray:
        """Choice logits ``a_ui + log pi_i`` (users x items)."""
        pop = self.item_log_popularity if items is None else self.item_log_popularity[items]
        return self.affinity(users, items, shift) + pop

    def pair_logits(self, users: np.ndarray, items: np.ndarray, shift: float = 0.0) -> np.ndarray:
        """Choice logits of aligned ``(users[n], items[n])`` pairs, without forming users x items."""
        u = self.user_factors[users]
        if shift:
            u = u + shift * u.shape[1] ** 0.25 * self.user_drift[users]
        v = self.item_factors[items]
        return self.affinity_scale * np.einsum("ij,ij->i", u, v) + self.item_log_popularity[items]

    def take(self, users: np.ndarray, items: np.ndarray) -> "SyntheticWorld":
        """The world restricted to (and re-ordered by) the given user and item rows."""
        return SyntheticWorld(
            user_factors=self.user_factors[users],
            item_factors=self.item_factors[items],
            item_log_popularity=self.item_log_popularity[items],
            user_drift=self.user_drift[users],
            user_features=self.user_features.iloc[users].reset_index(drop=True),
            item_features=self.item_features.iloc[items].reset_index(drop=True),
            affinity_scale=self.affinity_scale,
            params=self.params,
        )


def make_world(
    n_users: int = 943,
    n_items: int = 1682,
    n_factors: int = 16,
    popularity_exponent: float = 1.0,
    demographic_strength: float = 0.5,
    affinity_scale: float = 2.0,
    seed: int = 0,
) -> SyntheticWorld:
    """Draw the latent factors, demographics, genres and popularity prior (see module doc)."""
    _check_positive(n_users=n_users, n_items=n_items, n_factors=n_factors, affinity_scale=affinity_scale)
    if popularity_exponent < 0 or demographic_strength < 0:
        raise ConfigError("popularity_exponent and demographic_strength must be >= 0")
    rng = np.random.default_rng(np.random.SeedSequence(seed).spawn(1)[0])
    scale = n_factors**-0.25
    users, user_offsets = _demographics(rng, n_users, n_factors, scale)
    base = rng.normal(0.0, scale, (n_users, n_factors))
    items = rng.normal(0.0, scale, (n_items, n_factors))
    log_pop = -popularity_exponent * np.log(rng.permutation(n_items) + 1.0)
    drift = rng.normal(size=(n_users, n_factors))
    return SyntheticWorld(
        user_factors=base + demographic_strength * user_offsets,
        item_factors=items,
        item_log_popularity=log_pop - logsumexp(log_pop),
        user_drift=drift / np.linalg.norm(drift, axis=1, keepdims=True),
        user_features=users,
        item_features=_genres(rng, items, scale),
        affinity_scale=float(affinity_scale),
        params=dict(
            n_users=n_users, n_items=n_items, n_factors=n_factors, popularity_exponent=popularity_exponent,
            demographic_strength=demographic_strength, affinity_scale=affinity_scale, seed=seed,
        ),  # fmt: skip
    )


def _demographics(rng: np.random.Generator, n: int, d: int, scale: float) -> tuple[pd.DataFrame, np.ndarray]:
    """ML-1M-distributed gender/age/occupation and the summed offset vector of each user.

    Gender offsets are ``+-g/2``; the age offset is ``t a1 + (t^2 - 1/2) a2`` with ``t`` the age
    code's position rescaled to [-1, 1] (smooth in age); occupation offsets are ``o_j / 2``.
    """
    male = rng.random(n) < MALE_SHARE
    age_idx = rng.choice(len(AGE_CODES), size=n, p=AGE_SHARES)
    occupation = rng.choice(len(OCCUPATION_COUNTS), size=n, p=OCCUPATION_COUNTS / OCCUPATION_COUNTS.sum())
    g, a1, a2 = rng.normal(0.0, scale, (3, d))
    occ = rng.normal(0.0, scale / 2, (len(OCCUPATION_COUNTS), d))
    t = np.linspace(-1.0, 1.0, len(AGE_CODES))[age_idx, None]
    offsets = np.where(male[:, None], g / 2, -g / 2) + t * a1 + (t**2 - 0.5) * a2 + occ[occupation]
    table = pd.DataFrame(
        {"gender": np.where(male, "M", "F"), "age": AGE_CODES[age_idx], "occupation": occupation}
    )
    return table, offsets


def _genres(rng: np.random.Generator, items: np.ndarray, scale: float) -> pd.DataFrame:
    """One 0/1 column per genre: the best-matching genre prototype, plus every genre whose
    standardised score ``v_i . p_g`` (with Gumbel noise) exceeds ``GENRE_THRESHOLD``."""
    prototypes = rng.normal(0.0, scale, (len(GENRES), items.shape[1]))
    score = items @ prototypes.T + 0.5 * rng.gumbel(size=(len(items), len(GENRES)))
    z = (score - score.mean(0)) / score.std(0)
    flags = z > GENRE_THRESHOLD
    flags[np.arange(len(items)), z.argmax(1)] = True
    return pd.DataFrame(flags.astype(np.int64), columns=list(GENRES))


def make_synthetic(
    n_users: int = 943,
    n_items: int = 1682,
    n_interactions: int = 100_000,
    n_factors: int = 16,
    popularity_exponent: float = 1.0,
    seed: int = 0,
    *,
    demographic_strength: float = 0.5,
    affinity_scale: float = 2.0,
    min_user_interactions: int = 20,
    max_user_fraction: float = 0.4,
    count_sigma: float = 1.0,
    drift: float = 0.5,
    n_phases: int = 4,
    order_noise: float = 1.0,
    mean_gap: float = 6 * 3600.0,
    rating_noise: float = 0.7,
    sampler: str = "auto",
    name: str = "synthetic",
) -> Interactions:
    """The embedded ``synthetic`` dataset (MovieLens-100K sized by default).

    Parameters
    ----------
    n_users, n_items, n_interactions:
        Table size; original ids are ``1..n_users`` and ``1..n_items``.
    n_factors, popularity_exponent, demographic_strength, affinity_scale, seed:
        World parameters (:func:`make_world`).
    min_user_interactions, max_user_fraction, count_sigma:
        Per-user counts: at least the minimum, at most ``max_user_fraction * n_items``,
        log-normal tail with shape ``count_sigma``.
    drift, n_phases:
        Interest drift: each user's items are drawn in ``n_phases`` consecutive phases while the
        user's taste moves from ``-drift`` to ``+drift`` along a private direction.
    order_noise:
        Noise on the drift projection that orders each user's items within a phase.
    mean_gap:
        Mean gap in seconds between a user's consecutive interactions.
    rating_noise:
        Standard deviation of the noise added to the standardised affinity before rating.
    sampler:
        ``"auto"``, ``"exact"`` or ``"candidates"``: how items are drawn (module docstring).

    Returns
    -------
    Interactions (rows sorted by user, then time) with integer ratings 1..5, timestamps
    strictly increasing per user, ``user_features`` (gender M/F, age code, occupation 0..20)
    and ``item_features`` (one 0/1 column per genre); provenance holds one ``synthetic`` step
    with every parameter.
    """
    cap = int(max_user_fraction * n_items)
    if sampler not in SAMPLERS:
        raise ConfigError(f"sampler: expected one of {SAMPLERS}, got {sampler!r}")
    if not 1 <= n_phases <= min_user_interactions:
        raise ConfigError(f"n_phases={n_phases} must lie in [1, min_user_interactions={min_user_interactions}]")
    if not 0 < min_user_interactions <= cap:
        raise ConfigError(
            f"min_user_interactions={min_user_interactions} must lie in [1, max_user_fraction * n_items = {cap}]"
        )
    if not n_users * min_user_interactions <= n_interactions <= n_users * cap:
        raise ConfigError(
            f"n_interactions={n_interactions} must lie in [{n_users * min_user_interactions}, {n_users * cap}] "
            f"(n_users x min_user_interactions, n_users x max_user_fraction x n_items)"
        )
    world = make_world(n_users, n_items, n_factors, popularity_exponent, demographic_strength, affinity_scale, seed)
    streams = [np.random.default_rng(s) for s in np.random.SeedSequence(seed).spawn(6)[1:]]
    counts = _user_counts(streams[0], n_users, n_interactions, min_user_interactions, cap, count_sigma)
    exact = sampler == "exact" or (sampler == "auto" and n_users * n_items <= EXACT_CELLS)
    choose = _choose_items if exact else _choose_candidates
    users, items, phases = choose(streams[1], world, counts, drift, n_phases)
    users, items = _order_in_time(streams[2], world, users, items, phases, order_noise)
    timestamps = _timestamps(streams[3], users, n_users, mean_gap)
    ratings = _ratings(streams[4], world, users, items, rating_noise)
    params = dict(
        world.params, n_interactions=n_interactions, min_user_interactions=min_user_interactions,
        max_user_fraction=max_user_fraction, count_sigma=count_sigma, drift=drift, n_phases=n_phases,
        order_noise=order_noise, mean_gap=mean_gap, rating_noise=rating_noise,
        sampler="exact" if exact else "candidates",
    )  # fmt: skip
    return Interactions(
        users=users,
        items=items,
        n_users=n_users,
        n_items=n_items,
        ratings=ratings,
        timestamps=timestamps,
        user_ids=np.arange(1, n_users + 1),
        item_ids=np.arange(1, n_items + 1),
        user_features=world.user_features,
        item_features=world.item_features,
        name=name,
        provenance=({"step": "synthetic", **params},),
    )


def _check_positive(**values: float) -> None:
    for key, value in values.items():
        if not value > 0:
            raise ConfigError(f"{key} must be > 0, got {value!r}")


def _user_counts(
    rng: np.random.Generator, n_users: int, total: int, k_min: int, cap: int, sigma: float
) -> np.ndarray:
    """Heavy-tailed counts in ``[k_min, cap]`` summing to ``total``.

    ``k_u = k_min + min(s w_u, cap - k_min)`` with ``w_u ~ LogNormal(0, sigma)`` and ``s``
    found by bisection so the sum is ``total``; rounded by largest remainder.
    """
    room = cap - k_min
    extra = total - n_users * k_min
    w = rng.lognormal(0.0, sigma, n_users)
    lo, hi = 0.0, room / w.min()
    for _ in range(100):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if np.minimum(mid * w, room).sum() < extra else (lo, mid)
    x = np.minimum(hi * w, room)
    whole = np.floor(x).astype(np.int64)
    frac = np.where(whole < room, x - whole, -1.0)
    whole[np.argsort(-frac, kind="stable")[: extra - whole.sum()]] += 1
    return k_min + whole


def _choose_items(
    rng: np.random.Generator, world: SyntheticWorld, counts: np.ndarray, drift: float, n_phases: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Gumbel-top-k in phases: in phase ``p`` the user sits at ``shift = drift * t_p`` along
    their drift direction (``t_p`` evenly spaced in [-1, 1]) and takes their share of ``k_u``
    new items, without replacement, from ``softmax(logits)``. Returns users, items, phases."""
    out: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
    batch = max(1, _BATCH_CELLS // world.n_items)
    for lo in range(0, world.n_users, batch):
        rows = np.arange(lo, min(lo + batch, world.n_users))
        taken = np.zeros((len(rows), world.n_items), dtype=bool)
        for phase, shift in enumerate(_shifts(drift, n_phases)):
            r, chosen = _top_exact(rng, world, rows, _phase_counts(counts[rows], phase, n_phases), shift, taken)
            out.append((rows[r], chosen, np.full(len(r), phase)))
    users, items, phases = (np.concatenate(x) for x in zip(*out))
    return users, items, phases


def _shifts(drift: float, n_phases: int) -> np.ndarray:
    """Position along the drift direction in each phase: ``drift * t_p``, ``t_p`` evenly in [-1, 1]."""
    return drift * np.linspace(-1.0, 1.0, n_phases) if n_phases > 1 else np.zeros(1)


def _phase_counts(counts: np.ndarray, phase: int, n_phases: int) -> np.ndarray:
    """Items each user takes in ``phase`` (the remainder goes to the first phases)."""
    return counts // n_phases + (phase < counts % n_phases)


def _top_exact(rng: np.random.Generator, world: SyntheticWorld, rows: np.ndarray, k: np.ndarray, shift: float,
               taken: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Gumbel-top-``k[r]`` of every item not ``taken[r]`` for the users ``rows``; marks the
    chosen items taken and returns ``(row index, item)`` of each, in order of choice."""
    perturbed = world.logits(rows, shift=shift) + rng.gumbel(size=taken.shape)
    perturbed[taken] = -np.inf
    top = np.argpartition(-perturbed, k.max() - 1, axis=1)[:, : k.max()]
    top = np.take_along_axis(top, np.argsort(-np.take_along_axis(perturbed, top, 1), axis=1), 1)
    r, c = np.nonzero(np.arange(top.shape[1]) < k[:, None])
    taken[r, top[r, c]] = True
    return r, top[r, c]


def _choose_candidates(
    rng: np.random.Generator, world: SyntheticWorld, counts: np.ndarray, drift: float, n_phases: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``_choose_items`` on candidates drawn from the proposal ``q`` (module docstring): memory
    and time linear in the candidates, ``CANDIDATE_DRAWS`` x the interactions."""
    n_items = world.n_items
    q = (1 - UNIFORM_SHARE) * np.exp(world.item_log_popularity) + UNIFORM_SHARE / n_items
    cdf, log_q = np.cumsum(q / q.sum()), np.log(q / q.sum())
    out: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
    batch = max(1, _BATCH_CELLS // (CANDIDATE_DRAWS * max(int(counts.mean()), 1) + 16))
    for lo in range(0, world.n_users, batch):
        rows = np.arange(lo, min(lo + batch, world.n_users))
        taken = np.zeros(0, dtype=np.int64)
        for phase, shift in enumerate(_shifts(drift, n_phases)):
            k = _phase_counts(counts[rows], phase, n_phases)
            draws = np.repeat(np.arange(len(rows)), CANDIDATE_DRAWS * k + 16)
            items = np.minimum(np.searchsorted(cdf, rng.random(len(draws)), side="right"), n_items - 1)
            keys, times = np.unique(draws * n_items + items, return_counts=True)
            fresh = ~np.isin(keys, taken)
            keys, times = keys[fresh], times[fresh]
            r, i = keys // n_items, keys % n_items
            logit = world.pair_logits(rows[r], i, shift) - log_q[i] + np.log(times)
            order = np.lexsort((-(logit + rng.gumbel(size=len(logit))), r))
            rank = np.arange(len(order)) - np.searchsorted(r[order], r[order])
            short = np.flatnonzero(np.bincount(r, minlength=len(rows)) < k)
            pick = order[(rank < k[r[order]]) & ~np.isin(r[order], short)]
            r_all, i_all = [r[pick]], [i[pick]]
            if len(short):
                mask = np.zeros((len(short), n_items), dtype=bool)
                mine = taken[np.isin(taken // n_items, short)]
                mask[np.searchsorted(short, mine // n_items), mine % n_items] = True
                rs, chosen = _top_exact(rng, world, rows[short], k[short], shift, mask)
                r_all.append(short[rs])
                i_all.append(chosen)
            r_new, i_new = np.concatenate(r_all), np.concatenate(i_all)
            taken = np.union1d(taken, r_new * n_items + i_new)
            out.append((rows[r_new], i_new, np.full(len(r_new), phase)))
    users, items, phases = (np.concatenate(x) for x in zip(*out))
    return users, items, phases


def _order_in_time(
    rng: np.random.Generator,
    world: SyntheticWorld,
    users: np.ndarray,
    items: np.ndarray,
    phases: np.ndarray,
    noise: float,
) -> tuple[np.ndarray, np.ndarray]:
    """Sort rows by user, phase, then ``sqrt(d) v_i . w_u / |v_i| + noise`` (the cosine along
    the drift direction, scaled to unit variance): interest moves slowly within a phase too."""
    v = world.item_factors
    cosine = _pair_dots(v, items, world.user_drift, users) / np.linalg.norm(v, axis=1)[items]
    key = np.sqrt(v.shape[1]) * cosine + noise * rng.normal(size=len(items))
    idx = np.lexsort((key, phases, users))
    return users[idx], items[idx]


def _pair_dots(a: np.ndarray, a_rows: np.ndarray, b: np.ndarray, b_rows: np.ndarray, chunk: int = 1 << 20) -> np.ndarray:
    """``a[a_rows[n]] . b[b_rows[n]]`` for every ``n``, gathered ``chunk`` rows at a time (the
    gathered factors of 20M interactions would take 2.6 GB per side)."""
    out = np.empty(len(a_rows))
    for lo in range(0, len(a_rows), chunk):
        out[lo : lo + chunk] = np.einsum("ij,ij->i", a[a_rows[lo : lo + chunk]], b[b_rows[lo : lo + chunk]])
    return out


def _timestamps(rng: np.random.Generator, users: np.ndarray, n_users: int, mean_gap: float) -> np.ndarray:
    """Per-user start time plus cumulative gaps of ``1 + floor(Exp(mean_gap))`` seconds
    (rows are sorted by user, so the per-user cumulative sum is a global one minus an offset)."""
    start = START_TIME + rng.integers(0, START_SPAN, n_users)
    gaps = 1 + np.floor(rng.exponential(mean_gap, len(users))).astype(np.int64)
    csum = np.cumsum(gaps)
    first = np.searchsorted(users, users)
    return start[users] + csum - csum[first] + gaps[first]


def _ratings(
    rng: np.random.Generator, world: SyntheticWorld, users: np.ndarray, items: np.ndarray, noise: float
) -> np.ndarray:
    """Integer ratings: standardised affinity + per-user bias + noise, cut at the quantiles
    that give MovieLens-100K's shares of 1..5 stars."""
    aff = world.affinity_scale * _pair_dots(world.user_factors, users, world.item_factors, items)
    bias = rng.normal(0.0, 0.5, world.n_users)
    score = (aff - aff.mean()) / aff.std() + bias[users] + noise * rng.normal(size=len(aff))
    cuts = np.quantile(score, np.cumsum(RATING_SHARES)[:-1])
    return 1.0 + np.searchsorted(cuts, score).astype(np.float64)


_WORLD_PARAMS = (
    "n_users", "n_items", "n_factors", "popularity_exponent", "demographic_strength", "affinity_scale", "seed"
)  # fmt: skip


def synthetic_world(data: Interactions) -> SyntheticWorld:
    """Rebuild the world of a dataset derived from :func:`make_synthetic`, with rows aligned to
    ``data``'s internal user and item ids (original ids ``k`` are world rows ``k - 1``)."""
    step = next((p for p in data.provenance if p.get("step") == "synthetic"), None)
    if step is None:
        raise DataError(f"{data.name}: no 'synthetic' step in provenance; expected data from make_synthetic()")
    world = make_world(**{key: step[key] for key in _WORLD_PARAMS})
    users = np.asarray(data.user_ids, dtype=np.int64) - 1
    items = np.asarray(data.item_ids, dtype=np.int64) - 1
    if users.min(initial=0) < 0 or users.max(initial=0) >= world.n_users or items.min(initial=0) < 0 or (
        items.max(initial=0) >= world.n_items
    ):
        raise DataError(f"{data.name}: user_ids/item_ids do not match the synthetic world's ids 1..n")
    return world.take(users, items)


def make_synthetic_exposure(
    data: Interactions | None = None,
    slate_size: int = 10,
    history_len: int = 5,
    n_steps: int = 20,
    seed: int = 0,
    *,
    scorer_noise: float = 1.0,
    history_weight: float = 1.0,
    click_scale: float = 1.5,
    click_bias: float = -3.5,
    interval: int = 3600,
) -> ExposureLog:
    """Exposure log of a recommender serving the users of a synthetic dataset.

    The log continues ``data`` (default: :func:`make_synthetic`): each user present in it gets
    ``n_steps`` impressions, one every ``interval`` seconds after their last interaction. At
    each step the system scores items with a noisy model of the user,

        score_ui = a_ui + log pi_i + history_weight * c * (mean_{j in H_u} v_j) . v_i + scorer_noise * eps,

    (``H_u`` the user's ``history_len`` most recent clicks, ``eps ~ N(0, 1)`` redrawn per step)
    and shows the ``slate_size`` best items the user has not interacted with yet (neither in
    ``data`` nor clicked in an earlier impression), best first. The user clicks each shown item
    independently with ``p = sigmoid(click_scale * z_ui + click_bias)``, ``z_ui`` the affinity
    standardised over the user's items. An impression's history is the user's ``history_len``
    most recent clicks before it, oldest first, where the interactions of ``data`` count as
    earlier clicks. Vectorised over users; one Python step per impression round.
    """
    data = make_synthetic() if data is None else data
    _check_positive(slate_size=slate_size, history_len=history_len, n_steps=n_steps, interval=interval)
    world = synthetic_world(data)
    active = np.unique(data.users)
    seen_most = int(data.user_counts().max(initial=0))
    if seen_most + n_steps * slate_size > data.n_items:
        raise ConfigError(
            f"n_steps x slate_size = {n_steps * slate_size} plus a user's {seen_most} interactions exceed "
            f"n_items={data.n_items}; lower n_steps or slate_size"
        )
    rng = np.random.default_rng(seed)
    history = _last_items(data, history_len)
    last_time = np.zeros(data.n_users, dtype=np.int64)
    if data.timestamps is not None:
        np.maximum.at(last_time, data.users, data.timestamps)
    seen = data.to_csr()
    knobs = (slate_size, n_steps, scorer_noise, history_weight, click_scale, click_bias)
    batch = max(1, _BATCH_CELLS // data.n_items)
    parts = [
        _serve(rng, world, seen[rows].toarray() > 0, history[rows], rows, *knobs)
        for rows in np.array_split(active, max(1, -(-len(active) // batch)))
    ]
    slates, clicks, hists = (np.concatenate(x) for x in zip(*parts))
    valid = hists >= 0
    n_rows = len(active) * n_steps
    params = dict(
        slate_size=slate_size, history_len=history_len, n_steps=n_steps, seed=seed, scorer_noise=scorer_noise,
        history_weight=history_weight, click_scale=click_scale, click_bias=click_bias, interval=interval,
    )  # fmt: skip
    return ExposureLog(
        users=np.repeat(active, n_steps),
        times=(last_time[active][:, None] + interval * np.arange(1, n_steps + 1)).ravel(),
        slate_items=slates.ravel(),
        slate_offsets=np.arange(n_rows + 1, dtype=np.int64) * slate_size,
        clicked=clicks.ravel(),
        history_items=hists[valid],
        history_offsets=np.concatenate([[0], np.cumsum(valid.sum(axis=2).ravel())]),
        n_users=data.n_users,
        n_items=data.n_items,
        user_ids=data.user_ids,
        item_ids=data.item_ids,
        name=f"{data.name}-exposure",
        provenance=data.provenance + ({"step": "synthetic_exposure", **params},),
    )


def _last_items(data: Interactions, m: int) -> np.ndarray:
    """(n_users x m) matrix of each user's ``m`` latest items, oldest first, left-padded with -1."""
    idx = data.order()
    users, items = data.users[idx], data.items[idx]
    end = np.searchsorted(users, users, side="right")
    col = m - (end - np.arange(len(users)))
    out = np.full((data.n_users, m), -1, dtype=np.int64)
    keep = col >= 0
    out[users[keep], col[keep]] = items[keep]
    return out


def _serve(
    rng: np.random.Generator,
    world: SyntheticWorld,
    seen: np.ndarray,
    history: np.ndarray,
    rows: np.ndarray,
    slate_size: int,
    n_steps: int,
    scorer_noise: float,
    history_weight: float,
    click_scale: float,
    click_bias: float,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Run ``n_steps`` impression rounds for a batch of users; returns slates and clicks
    (batch x steps x slate_size) and histories (batch x steps x history_len, -1 padded)."""
    affinity = world.affinity(rows)
    z = (affinity - affinity.mean(1, keepdims=True)) / affinity.std(1, keepdims=True)
    p_click = expit(click_scale * z + click_bias)
    base = (affinity + world.item_log_popularity).astype(np.float32)
    v = world.item_factors.astype(np.float32)
    weight = np.float32(history_weight * world.affinity_scale)
    first = world.n_items - slate_size
    slates, clicks, hists = [], [], []
    for _ in range(n_steps):
        valid = history >= 0
        n_valid = np.maximum(valid.sum(1, keepdims=True), 1).astype(np.float32)
        centre = (v[np.maximum(history, 0)] * valid[..., None]).sum(1) / n_valid
        score = centre @ v.T
        score *= weight
        score += base
        score += np.float32(scorer_noise) * rng.standard_normal(score.shape, dtype=np.float32)
        np.putmask(score, seen, -np.inf)
        top = np.argpartition(score, first, axis=1)[:, first:]
        slate = np.take_along_axis(top, np.argsort(-np.take_along_axis(score, top, 1), axis=1), 1)
        click = rng.random(slate.shape) < np.take_along_axis(p_click, slate, 1)
        slates.append(slate)
        clicks.append(click)
        hists.append(history)
        r, c = np.nonzero(click)
        seen[r, slate[r, c]] = True
        history = _append_clicks(history, np.where(click, slate, -1))
    return np.stack(slates, 1), np.stack(clicks, 1), np.stack(hists, 1)


def _append_clicks(history: np.ndarray, new: np.ndarray) -> np.ndarray:
    """Append each row's non-negative ``new`` entries to its history, keeping the latest
    ``history.shape[1]`` (padding -1 stays at the front)."""
    both = np.concatenate([history, new], axis=1)
    order = np.argsort(both >= 0, axis=1, kind="stable")
    return np.take_along_axis(both, order, 1)[:, -history.shape[1] :]
