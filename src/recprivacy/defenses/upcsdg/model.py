"""UPC-SDG: user privacy-controllable synthetic data generation (Liu et al., SIGIR 2022).

``UPCSDG(...).fit(train, embeddings, preferences).generate()`` returns a ``SyntheticRelease``
in which each user ``u`` keeps ``|I_u| − round(k_u |I_u|)`` of their training items (the
highest-attention ones) and every other item is replaced by a generated item the user never
interacted with, each distinct, whose similarity to the original is at most the user's cap
``γ_u``.

Decision (issue 29, the cap is a promise): the paper only *encourages* ``f_sim ≤ γ_u`` through
the hinge ``L_s``; here training keeps that hinge, and export also enforces the cap at the pick:
every candidate with ``f_sim(q_i, q_v) > γ_u`` is masked before the argmax (or the Gumbel draw),
so the best-scored candidate within the cap is chosen whenever one is left. When none is left
(every item within the cap is the user's own or already given to them), the selected
interaction is **dropped**: neither the original nor a replacement is released. Keeping the
original was rejected because the user asked for exactly that item to be hidden, and so was
the least similar candidate above the cap (it breaks the stated level). The cost is a user's
``|V_u| < |I_u|``; the drops are counted per user and in the summary (``release.py``).

Objective (Eqs. 13-16; batch means where the paper writes sums, so that λ_s and λ_g keep
their published meaning at any batch size)::

    L = L_D + λ_s L_s + λ_g L_g
    L_s = mean_(u,i,v) [f_sim(q_i, q_v) − γ_u]_+          (similarity hinge, Eq. 13)
    L_g = mean_(u,v)  −ln σ(p_uᵀ q_v)                     (utility, Eq. 14; softplus form)

``L_D`` trains the selection module (``selection.py``), ``L_s`` and ``L_g`` the generator
(``generation.py``); the two parameter sets are disjoint and the BPR-MF features are frozen.

Training (the paper gives no loop; the released code's interaction sampling is not followed;
docs/decisions.md, "UPC-SDG (paper 003)"): shuffled mini-batches of ``batch_users`` users; per step the
attention over every item of each user, the hard lowest-``k`` selection with the current
attention (no gradient), a straight-through Gumbel sample for every selected pair (at most
``max_pairs`` of them, drawn at random when a step selects more, to bound the ``pairs x items``
score matrix), one Adam step on ``L``. Training stops after ``n_epochs`` or ``patience`` epochs
without a lower mean training loss, and the best-loss weights are kept (``fit_epochs`` with the
negated loss as its score), with one PyTorch thread as the factor models: on a shared machine
a second thread waiting for a busy core slowed a tiny step by 30x.

Ablations of the paper's Table 3 (UPC-SDG_s, _r and _f, which the paper describes in a
sentence each) are options:

* ``selection="random"`` (UPC-SDG_s): a uniform random ``k``-share of each user's items, drawn
  afresh at every training step and once at export (from ``noise``); the generator is trained;
* ``replacement="random"`` (UPC-SDG_r): learned selection, replacements uniform among the items
  the user has not interacted with (no generator training);
* ``replacement="fixed"`` (UPC-SDG_f): learned selection, the replacement whose ``f_sim`` to the
  original is closest to ``fixed_similarity`` (0.9), with no utility term.

Only the modules a variant uses are trained.

Decision (issue 33, cost linear in the data): ``pool_size=C`` replaces the softmax over the
catalogue by one over ``C`` items. Training draws, per step, ``C`` items uniformly without
replacement (from the training seed) and takes the straight-through Gumbel sample over them
(a sampled softmax; with a uniform proposal the log-proposal correction is a constant, so
Gumbel-max over the sample draws from the softmax restricted to it); a pair whose sampled
items are all the user's own is left out of that step's loss. Export takes each user's
argmax over a candidate pool (``candidates.py``: the most frequent nearest neighbours of the
user's items plus uniform draws from the release's noise source) with the same hard cap and
no duplicates. The default ``"auto"`` uses ``C = AUTO_POOL`` (512) when the catalogue holds
more than 1,024 items and the variant is the generator with the unconsumed mask; otherwise,
and with ``pool_size=None``, every item is scored as in the paper (the reproduction configs
set ``pool_size: null``). A ``C`` at least the catalogue's size is the full softmax.

Decision (issue 33, training on a sample of users): ``train_users=N`` trains the selector and
the generator on a uniform sample of ``N`` of the users with training items, drawn without
replacement from the training seed before the first batch; the release still covers every
user (``generate`` applies the trained modules to all of them, whose frozen BPR-MF factors the
modules take as input). The modules hold about 25k parameters (d = 64) and a sample of 10,000
users gives them about 10,000 x 0.2 x 144 = 290k selected pairs per epoch at ML-20M's mean
history, so training no longer grows with the users: at ML-20M's 138k users it is 14x fewer
steps. The default ``"auto"`` samples ``AUTO_TRAIN_USERS`` (10,000) when more users have
training items and the candidate pool is in use (``pool_size`` resolved to a number: the large-data
path, which the reproduction configs leave with ``pool_size: null``); ``None`` trains on every user
(the paper). The sample's size is in the release's ``method`` (``train_users``).

Decision (training budget): Adam lr 1e-2 for 30 epochs, where the paper searched lr in
{1e-1, …, 1e-5} and the released code ran lr 1e-3 for up to 1000 epochs: on ml-100k lr 1e-2
reached in 30 epochs a lower training loss than 1e-3 in 100, BPR-MF on the two releases scored
alike, and 30 epochs keep a synthetic ml-100k within the study's time budget (the measurements:
docs/decisions.md, UPC-SDG, "Training budget").
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from recprivacy.data.interactions import Interactions
from recprivacy.defenses.kinds import DefenceKind
from recprivacy.defenses.upcsdg.candidates import CandidatePools, grouped_product
from recprivacy.defenses.upcsdg.embeddings import FrozenEmbeddings
from recprivacy.defenses.upcsdg.generation import (
    NO_CANDIDATE,
    GenerationModule,
    PairMask,
    assign_replacements,
    authors_replacements,
    gumbel_noise,
    gumbel_softmax,
    mask_consumed,
    zero_original,
)
from recprivacy.defenses.upcsdg.preferences import PrivacyPreferences
from recprivacy.defenses.upcsdg.release import SyntheticRelease, build_release
from recprivacy.defenses.upcsdg.selection import PairBatch, SelectionModule, replacement_counts, select_lowest
from recprivacy.defenses.upcsdg.similarity import SIM_MODES, ItemSimilarity
from recprivacy.errors import ConfigError, DataError, NotFittedError
from recprivacy.models.training import TrainingHistory, fit_epochs, minibatches
from recprivacy.privacy.accounting import PrivacyStatement, StatementContext
from recprivacy.privacy.randomness import DrawRecord, NoiseMixin, check_mode

SELECTIONS = ("attention", "random")
REPLACEMENTS = ("generator", "random", "fixed")
EXPORT_SAMPLING = ("argmax", "gumbel")
CANDIDATES = ("unconsumed", "authors")
AUTO_POOL = 512
"""Pool size of ``pool_size="auto"`` on a catalogue of more than ``2 * AUTO_POOL`` items."""
AUTO_TRAIN_USERS = 10_000
"""Users sampled for training by ``train_users="auto"`` when the pool is in use and more users have items."""
NO_DRAW = "none: no random draw; the same data, preferences, features and seed give the same release (noise {mode}: unused)"
"""The release's ``method["noise"]`` when its export drew nothing from the noise source (``generate``)."""


def similarity_hinge(similarity: torch.Tensor, gamma: torch.Tensor) -> torch.Tensor:
    """Eq. 13 as a batch mean: ``mean [f_sim − γ_u]_+`` (zero when every pair is under its cap)."""
    return torch.relu(similarity - gamma).mean()


def utility_loss(p_u: torch.Tensor, q_v: torch.Tensor) -> torch.Tensor:
    """Eq. 14 as a batch mean: ``mean −ln σ(p_uᵀ q_v)``, written ``softplus(−p_uᵀ q_v)``."""
    return F.softplus(-(p_u * q_v).sum(dim=-1)).mean()


def _choice(name: str, value: str, allowed: tuple[str, ...]) -> str:
    if value not in allowed:
        raise ConfigError(f"UPCSDG.{name}: expected one of {allowed}, got {value!r}")
    return value


def _pool_size(value: Any, candidates: str, replacement: str) -> int | str | None:
    """``pool_size`` checked: ``"auto"``, None, or a positive integer with the generator and
    the unconsumed mask (the ablations and the authors' mask score every item)."""
    if value is None or value == "auto":
        return value
    _positive("pool_size", value, integer=True)
    if candidates != "unconsumed" or replacement != "generator":
        raise ConfigError(f"UPCSDG.pool_size: a pool needs replacement='generator' and candidates='unconsumed', "
                          f"got {replacement!r} and {candidates!r}; use pool_size=None or 'auto'")
    return int(value)


def _train_users(value: Any) -> int | str | None:
    """``train_users`` checked: ``"auto"``, None, or a positive integer."""
    if value is None or value == "auto":
        return value
    return int(_positive("train_users", value, integer=True))


def _positive(name: str, value: Any, integer: bool = False, zero: bool = False) -> Any:
    ok = isinstance(value, (int, np.integer)) if integer else isinstance(value, (int, float, np.number))
    if isinstance(value, bool) or not ok or value < 0 or (value == 0 and not zero):
        kind = "integer" if integer else "number"
        raise ConfigError(f"UPCSDG.{name}: expected a {'non-negative' if zero else 'positive'} {kind}, got {value!r}")
    return value


class UPCSDG(NoiseMixin):
    """Privacy-controllable synthetic interaction data (paper 003).

    Parameters
    ----------
    lambda_s, lambda_g:
        Weights of the similarity hinge and the utility term (3, 1: the paper's Office and
        Gowalla values; it used 5, 7 for Clothing; set them per config).
    beta, mean_pool, transform, dropout, hidden:
        Selection module (Eqs. 3-6): attention smoothing β (1), the 1/|I_u| factor (on), the
        form of ``f`` (``"mlp"`` with ``dropout`` 0.1, or the code's ``"code"``), hidden size
        (default d).
    tau:
        Gumbel-softmax temperature (1.0, as the released code).
    sim_mode:
        ``f_sim`` variant: ``"paper"`` (Eq. 2), ``"code"`` or ``"cosine"``.
    lr, n_epochs, patience, batch_users, max_pairs:
        Adam learning rate (1e-2), most epochs (30), epochs without a lower training loss
        before stopping (5), users per step (256), most generated pairs per step (4096).
    selection, replacement, fixed_similarity:
        ``"attention"`` / ``"random"`` selection; ``"generator"`` / ``"random"`` / ``"fixed"``
        replacement; the similarity the ``"fixed"`` ablation aims at (0.9).
    export_sampling:
        ``"argmax"`` (deterministic, default) or ``"gumbel"`` (a sample drawn from ``noise``).
    pool_size:
        ``"auto"`` (default), ``None`` (every item, the paper) or the number of candidate items
        per training step and per user at export (see "Decision (issue 33)" above).
    train_users:
        ``"auto"`` (default), ``None`` (every user, the paper) or the number of users the
        modules are trained on, a seeded sample; the release covers every user ("Decision
        (issue 33, training on a sample of users)" above).
    candidates:
        ``"unconsumed"`` (default, the paper's "not consumed by the user": every item of
        ``I_u`` is excluded and no user gets
        the same replacement twice) or ``"authors"`` (compatibility: the released code's mask,
        see ``generation.authors_replacements``; the release then holds fewer distinct items).
    min_replace:
        Least replacements per user (0: tiny users may keep every item).
    seed:
        Seeds parameter initialisation, batch order and the Gumbel noise of training.
    noise:
        Where the release's random choices come from (the random selection and replacement
        ablations, ``export_sampling="gumbel"``): ``"secure"`` (operating-system entropy, the
        default) or ``"simulation"`` (seeded by ``seed``; ``privacy.randomness.NoiseSource``).

    Attributes
    ----------
    selector_, generator_:
        The trained modules (None when the variant does not use them).
    counts_:
        Replacements per user, ``round(k_u |I_u|)``.
    trained_users_:
        Internal ids of the users the modules were trained on (sorted; every user with
        training items unless ``train_users`` sampled them).
    history_:
        ``TrainingHistory`` (mean training loss per epoch).
    drew_:
        Whether the last ``generate`` drew from the noise source (``privacy.randomness.DrawRecord``);
        its release's ``method["noise"]`` says ``NO_DRAW`` when it did not.
    """

    kind: ClassVar[DefenceKind] = "transform"

    def __init__(
        self,
        lambda_s: float = 3.0,
        lambda_g: float = 1.0,
        beta: float = 1.0,
        mean_pool: bool = True,
        transform: str = "mlp",
        dropout: float = 0.1,
        hidden: int | None = None,
        tau: float = 1.0,
        sim_mode: str = "paper",
        lr: float = 1e-2,
        n_epochs: int = 30,
        patience: int = 5,
        batch_users: int = 256,
        max_pairs: int = 4096,
        selection: str = "attention",
        replacement: str = "generator",
        fixed_similarity: float = 0.9,
        export_sampling: str = "argmax",
        candidates: str = "unconsumed",
        pool_size: int | str | None = "auto",
        train_users: int | str | None = "auto",
        min_replace: int = 0,
        seed: int = 0,
        noise: str = "secure",
    ) -> None:
        self.lambda_s = _positive("lambda_s", lambda_s, zero=True)
        self.lambda_g = _positive("lambda_g", lambda_g, zero=True)
        self.beta = beta
        self.mean_pool = mean_pool
        self.transform = transform
        self.dropout = dropout
        self.hidden = hidden
        self.tau = _positive("tau", tau)
        self.sim_mode = _choice("sim_mode", sim_mode, SIM_MODES)
        self.lr = _positive("lr", lr)
        self.n_epochs = _positive("n_epochs", n_epochs, integer=True)
        self.patience = _positive("patience", patience, integer=True)
        self.batch_users = _positive("batch_users", batch_users, integer=True)
        self.max_pairs = _positive("max_pairs", max_pairs, integer=True)
        self.selection = _choice("selection", selection, SELECTIONS)
        self.replacement = _choice("replacement", replacement, REPLACEMENTS)
        self.fixed_similarity = fixed_similarity
        self.export_sampling = _choice("export_sampling", export_sampling, EXPORT_SAMPLING)
        self.candidates = _choice("candidates", candidates, CANDIDATES)
        self.pool_size = _pool_size(pool_size, self.candidates, self.replacement)
        self.train_users = _train_users(train_users)
        self.min_replace = _positive("min_replace", min_replace, integer=True, zero=True)
        self.seed = seed
        self.noise = check_mode(noise, "UPCSDG.noise")

    # ------------------------------------------------------------------ public API
    def fit(self, train: Interactions, embeddings: FrozenEmbeddings, preferences: PrivacyPreferences) -> "UPCSDG":
        """Train the modules the variant uses on the training interactions ``train``."""
        self.embeddings_ = embeddings.check(train)
        if preferences.n_users != train.n_users:
            raise DataError(f"preferences cover {preferences.n_users} users but {train.name} has {train.n_users}")
        self.train_ = train
        self.preferences_ = preferences
        self.csr_ = train.to_csr()
        self.counts_ = self._counts()
        self.similarity_ = ItemSimilarity(embeddings.items, self.sim_mode)
        self.gamma_ = torch.tensor(preferences.gamma, dtype=torch.float32)
        self.pool_ = self._pool_width(train.n_items)
        torch.manual_seed(self.seed)
        dim = embeddings.dim
        self.selector_ = (SelectionModule(dim, self.hidden, self.beta, self.mean_pool, self.transform, self.dropout)
                          if self.selection == "attention" else None)
        self.generator_ = GenerationModule(dim) if self.replacement == "generator" else None
        self.history_ = self._train()
        return self

    def generate(self) -> SyntheticRelease:
        """The synthetic dataset: selection on every user's items, then replacements."""
        if not hasattr(self, "counts_"):
            raise NotFittedError("UPCSDG is not fitted yet: call fit(train, embeddings, preferences) first")
        noise = DrawRecord(self.noise_source())
        users, originals, order = self._select_all(noise)
        pools = self._export_pools(noise)
        scores, over_cap = self._export_scores(users, originals, pools, noise), self._over_cap(users, originals, pools)
        if self.candidates == "authors":
            exclude = "zero" if self.replacement == "generator" else "inf"
            replacements = authors_replacements(originals, scores, exclude, blocked=over_cap)
        else:
            replacements = assign_replacements(users, self.csr_, scores, blocked=over_cap, pools=pools)
        found = replacements != NO_CANDIDATE
        f_sim, cosine = np.full(len(users), np.nan), np.full(len(users), np.nan)
        o, r = torch.from_numpy(originals[found]), torch.from_numpy(replacements[found])
        f_sim[found] = self.similarity_.of_items(o, r).numpy()
        cosine[found] = self.similarity_.cosine(o, r).numpy()
        self.drew_ = noise.drawn
        return build_release(self.train_, users, originals, replacements, order, self.preferences_,
                             f_sim, cosine, self._method())

    def privacy_statement(self, context: StatementContext | None = None) -> PrivacyStatement:
        """UPC-SDG has no formal guarantee; the paper measures privacy only by k and γ;
        ``context`` is not read."""
        return self.noise_source().stamp(PrivacyStatement.no_guarantee(
            unit="a user's training interactions",
            scope="the released synthetic interactions",
            reason="a share k of each user's items is replaced by items whose similarity to the original is at "
                   "most gamma (a hard cap; an item with no candidate within gamma is dropped); the kept items "
                   "are released unchanged. "
                   "Measure what remains with the replaced-item recovery attack.",
        ))

    # ------------------------------------------------------------------ training
    def _counts(self) -> np.ndarray:
        sizes = np.diff(self.csr_.indptr)
        counts = replacement_counts(self.preferences_.k, sizes, self.min_replace)
        short = np.flatnonzero(counts > self.train_.n_items - sizes)
        if short.size:
            u = short[0]
            raise DataError(f"user {self.train_.user_ids[u]} has {sizes[u]} of {self.train_.n_items} items; "
                            f"replacing {counts[u]} needs that many items they have not interacted with")
        return counts

    def _modules(self) -> nn.ModuleDict:
        return nn.ModuleDict({name: m for name, m in (("selector", self.selector_), ("generator", self.generator_))
                              if m is not None})

    def _train(self) -> TrainingHistory:
        rng = np.random.default_rng(self.seed)
        active = self.trained_users_ = self._training_users(rng)
        modules = self._modules()
        if not list(modules.parameters()):
            return TrainingHistory()
        noise = torch.Generator().manual_seed(self.seed)
        optimizer = torch.optim.Adam(modules.parameters(), lr=self.lr)
        last: list[float] = []

        def run_epoch(epoch: int) -> float:
            total = 0.0
            for idx in minibatches(len(active), self.batch_users, rng):
                loss = self._step_loss(PairBatch.from_csr(self.csr_, active[idx]), rng, noise)
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
                total += loss.item() * len(idx)
            last.append(total / len(active))
            return last[-1]

        return fit_epochs(modules, run_epoch, self.n_epochs, validate=lambda: -last[-1],
                          patience=self.patience, desc="UPC-SDG")

    def _training_users(self, rng: np.random.Generator) -> np.ndarray:
        """The users with training items, or a sorted uniform sample of ``_sample_size`` of them
        drawn from ``rng`` (no draw when every user trains, so the paper path is unchanged)."""
        active = np.flatnonzero(np.diff(self.csr_.indptr) > 0)
        size = self._sample_size(len(active))
        return active if size is None else np.sort(rng.choice(active, size, replace=False))

    def _sample_size(self, n_active: int) -> int | None:
        """Users to train on out of ``n_active`` (None: all of them); see "Decision (issue 33,
        training on a sample of users)"."""
        if self.train_users == "auto":
            size = AUTO_TRAIN_USERS if self.pool_ is not None else None
        else:
            size = self.train_users
        return None if size is None or size >= n_active else int(size)

    def _step_loss(self, batch: PairBatch, rng: np.random.Generator, noise: torch.Generator) -> torch.Tensor:
        """``L_D + λ_s L_s + λ_g L_g`` of one batch of users."""
        emb = self.embeddings_
        loss = torch.zeros(())
        if self.selector_ is not None:
            loss_d, keys = self.selector_(emb.users, emb.items, batch)
            loss = loss + loss_d
        else:
            keys = torch.from_numpy(rng.random(len(batch.items)))
        if self.generator_ is not None:
            chosen = select_lowest(keys, batch, torch.from_numpy(self.counts_[batch.users.numpy()]))
            if len(chosen) > self.max_pairs:
                chosen = chosen[torch.from_numpy(np.sort(rng.choice(len(chosen), self.max_pairs, replace=False)))]
            if len(chosen):
                loss_s, loss_g = self._generator_losses(batch.pair_users[chosen], batch.items[chosen], noise)
                loss = loss + self.lambda_s * loss_s + self.lambda_g * loss_g
        return loss

    def _generator_losses(self, users: torch.Tensor, originals: torch.Tensor, noise: torch.Generator,
                          columns: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor]:
        """``(L_s, L_g)`` of the selected pairs (Eqs. 13-14) with straight-through samples over
        every item, or over the items ``columns`` (a sampled softmax; pairs with none of them
        available are left out)."""
        if columns is None and self.pool_ is not None:
            columns = torch.randperm(self.train_.n_items, generator=noise)[: self.pool_].sort().values
        items = self.embeddings_.items if columns is None else self.embeddings_.items[columns]
        p_u, gamma = self.embeddings_.users[users], self.gamma_[users]
        scores = self.generator_.scores(p_u, self.embeddings_.items[originals], gamma, items)
        if self.candidates == "authors":
            scores = zero_original(scores, originals)
        elif columns is None:
            scores = mask_consumed(scores, self.csr_, users)
        else:
            owned = self.csr_[users.numpy()][:, columns.numpy()].toarray() != 0
            scores = scores.masked_fill(torch.from_numpy(owned), -torch.inf)
            keep = ~torch.from_numpy(owned.all(axis=1))
            scores, p_u, gamma, originals = scores[keep], p_u[keep], gamma[keep], originals[keep]
        q_v = gumbel_softmax(scores, self.tau, noise, hard=True) @ items
        return similarity_hinge(self.similarity_.pairs(originals, q_v), gamma), utility_loss(p_u, q_v)

    # ------------------------------------------------------------------ export
    def _select_all(self, noise: DrawRecord) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Selected ``(users, originals, order)`` of every user, grouped by user, ascending
        attention (``order`` = position within the user)."""
        rng = noise.generator(1)
        active = np.flatnonzero(np.diff(self.csr_.indptr) > 0)
        users, originals = [], []
        block = max(self.batch_users, 1024)
        for lo in range(0, len(active), block):
            batch = PairBatch.from_csr(self.csr_, active[lo : lo + block])
            if self.selector_ is not None:
                self.selector_.eval()
                with torch.no_grad():
                    emb = self.embeddings_
                    keys = self.selector_.logits(emb.users[batch.pair_users], emb.items[batch.items])
            else:
                keys = torch.from_numpy(rng.random(len(batch.items)))
            chosen = select_lowest(keys, batch, torch.from_numpy(self.counts_[batch.users.numpy()]))
            users.append(batch.pair_users[chosen].numpy())
            originals.append(batch.items[chosen].numpy())
        users_arr = np.concatenate(users) if users else np.zeros(0, np.int64)
        first = np.searchsorted(users_arr, users_arr)
        return users_arr, np.concatenate(originals) if originals else users_arr.copy(), np.arange(len(users_arr)) - first

    def _pool_width(self, n_items: int) -> int | None:
        """Candidates per step and per user (None: every item); see "Decision (issue 33)"."""
        if self.pool_size == "auto":
            auto = self.candidates == "unconsumed" and self.replacement == "generator"
            return AUTO_POOL if auto and n_items > 2 * AUTO_POOL else None
        return None if self.pool_size is None or self.pool_size >= n_items else int(self.pool_size)

    def _export_pools(self, noise: DrawRecord) -> CandidatePools | None:
        """Each user's candidate pool at export (``candidates.py``), None to score every item."""
        if self.pool_ is None:
            return None
        return CandidatePools.build(self.csr_, self.embeddings_.items, self.pool_, noise.generator("pools"))

    def _export_scores(self, users: np.ndarray, originals: np.ndarray, pools: CandidatePools | None,
                       source: DrawRecord):
        """Candidate scores of selected pairs by index (over every item, or over each pair's
        user's pool), for ``assign_replacements``."""
        emb = self.embeddings_
        noise = source.torch_generator("export")
        users_t, originals_t = torch.from_numpy(users), torch.from_numpy(originals)

        def scores(pairs: torch.Tensor) -> torch.Tensor:
            u, i = users_t[pairs], originals_t[pairs]
            if self.replacement == "random":
                return torch.rand(len(pairs), self.train_.n_items, generator=noise)
            if self.replacement == "fixed":
                return -(self.similarity_.rows(i) - self.fixed_similarity).abs()
            self.generator_.eval()
            with torch.no_grad():
                if pools is None:
                    h = self.generator_.scores(emb.users[u], emb.items[i], self.gamma_[u], emb.items)
                else:
                    block, seg = torch.unique_consecutive(u, return_inverse=True)
                    h = grouped_product(self.generator_.query(emb.users[u], emb.items[i], self.gamma_[u]), seg,
                                        pools.embeddings(block, emb.items))
            if self.export_sampling == "gumbel":
                h = h + gumbel_noise(tuple(h.shape), noise, h.dtype)
            return h

        return scores

    def _over_cap(self, users: np.ndarray, originals: np.ndarray, pools: CandidatePools | None) -> PairMask:
        """Candidates of selected pairs by index that break the cap: ``f_sim(q_i, q_j) > γ_u``."""
        gamma = torch.tensor(self.preferences_.gamma, dtype=torch.float64)
        users_t, originals_t = torch.from_numpy(users), torch.from_numpy(originals)
        sim = self.similarity_

        def over(pairs: torch.Tensor) -> torch.Tensor:
            u, i = users_t[pairs], originals_t[pairs]
            if pools is None:
                f_sim = sim.rows(i)
            else:
                block, seg = torch.unique_consecutive(u, return_inverse=True)
                dots = grouped_product(sim.table[i], seg, pools.embeddings(block, sim.table))
                f_sim = sim.from_dots(i, dots, pools.items[u].clamp_min(0))
            return f_sim.double() > gamma[u, None]

        return over

    def _method(self) -> dict[str, Any]:
        keys = ("selection", "replacement", "sim_mode", "lambda_s", "lambda_g", "tau", "export_sampling", "candidates",
                "seed")
        method = {key: getattr(self, key) for key in keys}
        method["pool_size"] = self.pool_
        method["train_users"] = len(self.trained_users_)
        if self.replacement == "fixed":
            method["fixed_similarity"] = self.fixed_similarity
        method["epochs_trained"] = len(self.history_.losses)
        method["noise"] = self.noise_source().describe() if self.drew_ else NO_DRAW.format(mode=self.noise)
        return method
