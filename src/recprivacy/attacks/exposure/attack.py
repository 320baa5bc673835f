"""The exposure leakage attack as an estimator: ``fit(train, valid)``, then ``evaluate(pairs)``.

Training (paper 000 Section 5.3; the paper gives no epoch count): Adam with a constant learning rate
1e-3, batches of 400 pairs, dropout 0.1, d = 128; the point-wise decoder minimises Eq. 10
with the label-smoothed target of Eq. 9, sequence decoders the teacher-forced cross-entropy
of Eq. 14 (plus ``[EOS]``). Every epoch the validation pairs are decoded and training keeps
the weights of the best validation Recall@10 over the whole catalogue, stopping after
``patience`` epochs without improvement (``models.training.fit_epochs``). The test split is
never read during training.

Evaluation (``metrics.py``): greedy decoding gives one ranked list per step; candidates
are the whole item vocabulary (``candidates="all"``, the default) or the items in the pair's
user log (``"user_log"``, what the authors' code did and what produced the paper's tables).
Pairs with an item outside the training vocabulary are dropped (``vocab="train"``) and
counted in ``n_dropped``; perturbed slates are evaluated with ``oov="token"`` instead.

Options from the authors' code, off by default:

* ``schedule="warmup"``: Adam(0.9, 0.98, eps 1e-9) with the code's ``ScheduledOptim`` rate
  ``lr * min(t^-0.5, t * w^-1.5)`` at step ``t`` (``w = warmup_steps``); the code used
  ``lr = 1e-4`` and ``w = 4000``, a peak of 1.6e-6 at step 4000.
* ``skip="code"``: the code's sequence metrics skip a pair whose true items repeat, or whose
  decoding ends early (the att encoder's greedy step picks ``[EOS]`` among all tokens before
  M items; mean/max encoders took the second best token instead, so they never end early).
  Skipped pairs are counted in ``n_skipped``. The default decodes exactly M steps and treats
  the truth as a set, so no pair is skipped.

Decision (issue 33, a sampled softmax for large catalogues): the sequence decoders' training
cross-entropy costs ``pairs x (M+1) x V x d`` per epoch, the audit's largest exposure cost at
ML-20M's 26,744 items. ``softmax_sample=S`` computes it, per training step, over ``S`` item tokens
drawn uniformly without replacement (a seeded generator), the step's own target tokens and the
special tokens (``networks.sampled_columns``), with no log-proposal correction: the drawn items
share one inclusion probability, so the correction is a constant for them, and the batch's
targets act as in-batch negatives for the other rows. Validation (early stopping) and
evaluation still rank every token. ``"auto"`` uses ``S = AUTO_SOFTMAX_SAMPLE`` (2,048) when a
sequence decoder's vocabulary holds more than twice that many items and every token otherwise;
``None`` (the default, the paper) every token. The point-wise decoder's label-smoothed target
spreads mass over every item, so it always uses the full softmax.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any, Literal

import numpy as np
import scipy.sparse as sp
import torch
from torch import nn

from recprivacy.attacks.exposure.metrics import KS, average_metrics, best_ranks, distinct_truth, per_pair_metrics
from recprivacy.attacks.exposure.networks import (
    DECODERS,
    ENCODERS,
    TIES,
    ExposureAttackNet,
    sampled_columns,
    smoothed_targets,
    teacher_forcing,
)
from recprivacy.attacks.exposure.vocab import Vocabulary, VocabMode
from recprivacy.data.exposure_pairs import ExposurePairs
from recprivacy.errors import ConfigError, DataError, NotFittedError
from recprivacy.models.training import TrainingHistory, fit_epochs, minibatches

Candidates = Literal["all", "user_log"]
OOVPolicy = Literal["drop", "token"]
StepScores = Callable[[torch.Tensor], torch.Tensor]
EVAL_BATCH = 512
AUTO_SOFTMAX_SAMPLE = 2048
"""Items per training step of ``softmax_sample="auto"`` on vocabularies of more than twice as many."""


class EncodedPairs:
    """Pairs in token form: ``slates`` [P, N], ``truth`` [P, M] (distinct vocabulary columns,
    -1 for repeats), the kept pairs' ``users`` and ``rows`` (indices into the input pairs)."""

    def __init__(self, vocab: Vocabulary, pairs: ExposurePairs, oov: OOVPolicy) -> None:
        keep = vocab.known_rows(pairs) if oov == "drop" else np.ones(len(pairs), dtype=bool)
        truth_known = (vocab.index[pairs.histories] >= 0).all(axis=1)
        keep &= truth_known
        self.rows = np.flatnonzero(keep)
        self.n_dropped = int(len(pairs) - len(self.rows))
        self.users = pairs.users[self.rows]
        self.slates = torch.as_tensor(vocab.tokens(pairs.slates[self.rows]))
        self.history = torch.as_tensor(vocab.tokens(pairs.histories[self.rows]))
        self.truth = torch.as_tensor(distinct_truth(self.history.numpy()))

    def __len__(self) -> int:
        return len(self.rows)


def rank_pairs(
    step_scores: StepScores,
    encoded: EncodedPairs,
    candidates: sp.csr_matrix | None,
    batch_size: int = EVAL_BATCH,
    depth: int | None = None,
) -> np.ndarray:
    """Best ranks ``[P, M]`` (see ``metrics.best_ranks``) of every pair's true items under a
    step-score function ``slates [B, N] -> [B, S, V]``; ``candidates`` (users x V, optional)
    restricts each pair's lists to its user's row; ranks of ``depth`` or more (the deepest
    cut-off read) come back as ``inf``."""
    out = []
    for lo in range(0, len(encoded), batch_size):
        scores = step_scores(encoded.slates[lo : lo + batch_size])
        if candidates is not None:
            allowed = torch.as_tensor(candidates[encoded.users[lo : lo + batch_size]].toarray() > 0)
            scores = scores.masked_fill(~allowed[:, None, :], -torch.inf)
        out.append(best_ranks(scores, encoded.truth[lo : lo + batch_size], depth))
    return torch.cat(out).numpy() if out else np.zeros((0, encoded.truth.shape[1]))


def leakage_report(
    ranks: np.ndarray, users: np.ndarray, ks: Sequence[int] = KS, cutoff_factor: int = 1, n_dropped: int = 0
) -> dict[str, float]:
    """Pair- and user-averaged Recall/NDCG/MRR at ``ks`` plus the pair counts."""
    out = average_metrics(per_pair_metrics(ranks, ks, cutoff_factor), users)
    out.update(n_pairs=float(len(ranks)), n_dropped=float(n_dropped))
    return out


class ExposureAttack:
    """Infer a user's M most recent clicks from one exposed slate (paper 000).

    Parameters
    ----------
    encoder, decoder:
        ``mean`` / ``max`` / ``att`` and ``point`` / ``lstm`` / ``gru`` / ``transformer``.
    dim, n_heads, dropout, tie, norm_first, cls_in_pool:
        Network shape (``networks.ExposureAttackNet``).
    lr, batch_size, n_epochs, patience:
        Adam learning rate, pairs per batch, maximum epochs, epochs without a better
        validation Recall@10 before stopping.
    vocab:
        ``train`` (items of the training pairs; unseen items drop a test pair) or ``full``.
    point_list:
        Point-wise ranked list of ``k`` items (the code) or ``kM`` items (footnote 5).
    seed:
        Seeds the weights, dropout and batch order.
    schedule, warmup_steps, skip:
        The code's warm-up learning rate and pair skipping (module docstring).
    softmax_sample:
        ``None`` (every token, the paper), ``"auto"`` or the number of items drawn per training
        step for a sampled softmax of a sequence decoder (module docstring, "Decision (issue 33)").
    """

    def __init__(
        self,
        encoder: str = "att",
        decoder: str = "transformer",
        dim: int = 128,
        n_heads: int = 2,
        dropout: float = 0.1,
        tie: str = "paper",
        norm_first: bool = True,
        cls_in_pool: bool = False,
        lr: float = 1e-3,
        batch_size: int = 400,
        n_epochs: int = 50,
        patience: int = 5,
        vocab: VocabMode = "train",
        point_list: Literal["k", "kM"] = "k",
        seed: int = 0,
        schedule: Literal["constant", "warmup"] = "constant",
        warmup_steps: int = 4000,
        skip: Literal["none", "code"] = "none",
        softmax_sample: int | Literal["auto"] | None = None,
    ) -> None:
        for name, value, allowed in (("encoder", encoder, ENCODERS), ("decoder", decoder, DECODERS), ("tie", tie, TIES),
                                     ("vocab", vocab, ("train", "full")), ("point_list", point_list, ("k", "kM")),
                                     ("schedule", schedule, ("constant", "warmup")), ("skip", skip, ("none", "code"))):  # fmt: skip
            if value not in allowed:
                raise ConfigError(f"exposure attack {name}: expected one of {list(allowed)}, got {value!r}")
        for name in ("dim", "n_heads", "batch_size", "n_epochs", "patience", "warmup_steps"):
            if int(locals()[name]) < 1:
                raise ConfigError(f"exposure attack {name}: expected a positive integer, got {locals()[name]}")
        if dim % n_heads:
            raise ConfigError(f"exposure attack dim: expected a multiple of n_heads={n_heads}, got {dim}")
        self.encoder, self.decoder, self.dim, self.n_heads, self.dropout = encoder, decoder, dim, n_heads, dropout
        self.tie, self.norm_first, self.cls_in_pool = tie, norm_first, cls_in_pool
        self.lr, self.batch_size, self.n_epochs, self.patience = lr, batch_size, n_epochs, patience
        self.vocab, self.point_list, self.seed = vocab, point_list, seed
        self.schedule, self.warmup_steps, self.skip = schedule, warmup_steps, skip
        self.softmax_sample = _softmax_sample(softmax_sample, decoder)

    @property
    def name(self) -> str:
        return f"{self.encoder}+{self.decoder}"

    # ------------------------------------------------------------------ training
    def fit(self, train: ExposurePairs, valid: ExposurePairs | None = None) -> "ExposureAttack":
        """Train on ``train`` pairs; ``valid`` drives early stopping (Recall@10, all items)."""
        if len(train) == 0:
            raise DataError("exposure attack: no training pairs")
        torch.manual_seed(self.seed)
        rng = np.random.default_rng(self.seed)
        self.vocab_ = Vocabulary.from_pairs(train, self.vocab)
        v = self.vocab_
        specials = {"pad": v.pad, "sos": v.sos, "eos": v.eos, "cls": v.cls}
        self.net_ = ExposureAttackNet(v.n_items, v.size, specials, train.history_len, self.encoder, self.decoder,
                                      self.dim, self.n_heads, self.dropout, self.tie, self.norm_first, self.cls_in_pool)  # fmt: skip
        self.history_len_ = train.history_len
        data = EncodedPairs(v, train, "drop")
        self.sample_ = self._sample_width(v.n_items)
        self.draws_ = torch.Generator().manual_seed(self.seed)
        optimizer, scheduler = make_optimizer(self.net_.parameters(), self.lr, self.schedule, self.warmup_steps)

        def run_epoch(epoch: int) -> float:
            total = 0.0
            for idx in minibatches(len(data), self.batch_size, rng):
                loss = self._loss(data.slates[idx], data.history[idx])
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
                if scheduler is not None:
                    scheduler.step()
                total += loss.item() * len(idx)
            return total / len(data)

        validate = None
        if valid is not None and len(valid):
            held = EncodedPairs(v, valid, "drop")
            depth = 10 * self._cutoff_factor()
            validate = lambda: leakage_report(rank_pairs(self._step_scores, held, None, depth=depth), held.users, (10,),
                                              self._cutoff_factor())["recall@10"]  # fmt: skip
        self.history_: TrainingHistory = fit_epochs(self.net_, run_epoch, self.n_epochs, validate, 1, self.patience,
                                                    desc=f"exposure attack {self.name}")  # fmt: skip
        return self

    def _loss(self, slates: torch.Tensor, history: torch.Tensor) -> torch.Tensor:
        """Eq. 10 with the Eq. 9 target (point-wise) or Eq. 14 over M+1 positions, through the
        fused output cross-entropy (``networks.TiedSoftmaxCrossEntropy``)."""
        net = self.net_
        if not net.sequential:
            return net.cross_entropy(net.point_hidden(slates), smoothed_targets(history, net.n_items), items_only=True)
        inputs, targets = teacher_forcing(history, net.sos, net.eos)
        hidden, _ = net.decode(net.encode(slates), inputs)
        hidden, targets = hidden.reshape(-1, hidden.shape[-1]), targets.reshape(-1)
        if self.sample_ is None:
            return net.cross_entropy(hidden, targets)
        return net.sampled_cross_entropy(hidden, targets, sampled_columns(targets, net.n_items, net.size, self.sample_,
                                                                          self.draws_))  # fmt: skip

    def _sample_width(self, n_items: int) -> int | None:
        """Items per step of the sampled softmax (None: every token); module docstring."""
        if self.softmax_sample == "auto":
            return AUTO_SOFTMAX_SAMPLE if n_items > 2 * AUTO_SOFTMAX_SAMPLE else None
        return None if self.softmax_sample is None or self.softmax_sample >= n_items else self.softmax_sample

    # ------------------------------------------------------------------ inference
    def _check_fitted(self) -> None:
        if not hasattr(self, "net_"):
            raise NotFittedError("ExposureAttack is not fitted yet: call fit(train_pairs) first")

    def _cutoff_factor(self) -> int:
        return self.history_len_ if self.decoder == "point" and self.point_list == "kM" else 1

    def _step_scores(self, slates: torch.Tensor) -> torch.Tensor:
        self.net_.eval()
        return self.net_.greedy_item_logits(slates)

    def score(self, slates: np.ndarray) -> np.ndarray:
        """The attack's score of every catalogue item as one of the user's recent clicks, per slate.

        ``slates``: ``[P, N]`` catalogue item ids (an item outside the vocabulary reads as
        ``[OOV]``). Returns ``[P, n_catalogue_items]`` float32: for a vocabulary item, its best
        log-probability over the decoder's steps (``max_m log softmax(logits_m)``; the point
        decoder has one step), the quantity whose order ``evaluate`` ranks; ``-inf`` for items
        the attack can never name (outside its vocabulary)."""
        self._check_fitted()
        tokens = torch.as_tensor(self.vocab_.tokens(np.asarray(slates).reshape(len(slates), -1)))
        out = np.full((len(tokens), self.vocab_.n_catalogue), -np.inf, dtype=np.float32)
        with torch.no_grad():
            for lo in range(0, len(tokens), EVAL_BATCH):
                steps = torch.log_softmax(self._step_scores(tokens[lo : lo + EVAL_BATCH]), dim=-1)
                out[lo : lo + EVAL_BATCH, self.vocab_.items] = steps.max(dim=1).values.numpy()
        return out

    def encode(self, pairs: ExposurePairs, oov: OOVPolicy = "drop") -> EncodedPairs:
        """Pairs in the attack's token space (``oov``: drop pairs with unseen items, or map
        unseen slate items to ``[OOV]``; a history item outside the vocabulary always drops
        the pair, as the attack could never name it)."""
        self._check_fitted()
        if pairs.history_len != self.history_len_:
            raise DataError(f"exposure attack: trained on histories of {self.history_len_} items, got {pairs.history_len}")
        return EncodedPairs(self.vocab_, pairs, oov)

    def evaluate(
        self, pairs: ExposurePairs, ks: Sequence[int] = KS, candidates: Candidates = "all", oov: OOVPolicy = "drop"
    ) -> dict[str, float]:
        """Recall/NDCG/MRR at ``ks`` (pair and user averages) over ``candidates``."""
        encoded = self.encode(pairs, oov)
        ranks = self.pair_ranks(encoded, candidate_matrix(self.vocab_, pairs, candidates), max(ks))
        kept = ~self.code_skipped(encoded)
        out = leakage_report(ranks[kept], encoded.users[kept], ks, self._cutoff_factor(), encoded.n_dropped)
        out["n_skipped"] = float((~kept).sum())
        return out

    def pair_ranks(self, encoded: EncodedPairs, candidates: sp.csr_matrix | None, k: int) -> np.ndarray:
        """Best ranks ``[P, M]`` of each encoded pair's true items (``rank_pairs``), read to
        cut-off ``k`` (times the point decoder's list factor)."""
        return rank_pairs(self._step_scores, encoded, candidates, depth=k * self._cutoff_factor())

    def code_skipped(self, encoded: EncodedPairs) -> np.ndarray:
        """Pairs the authors' sequence metrics skip (``skip="code"``, module docstring):
        repeated true items, or (att encoder) an ``[EOS]`` chosen before M decoded items."""
        skipped = np.zeros(len(encoded), dtype=bool)
        if self.skip == "none" or not self.net_.sequential:
            return skipped
        skipped |= (encoded.truth.numpy() < 0).any(axis=1)
        if self.encoder == "att":
            self.net_.eval()
            for lo in range(0, len(encoded), EVAL_BATCH):
                skipped[lo : lo + EVAL_BATCH] |= self.net_.ends_early(encoded.slates[lo : lo + EVAL_BATCH]).numpy()
        return skipped

    def get_params(self) -> dict[str, Any]:
        return {k: v for k, v in vars(self).items() if not k.endswith("_")}


def _softmax_sample(value: Any, decoder: str) -> int | str | None:
    """``softmax_sample`` checked: None, ``"auto"`` (every token for the point decoder) or a
    positive integer with a sequence decoder."""
    if value is None:
        return None
    if value == "auto":
        return None if decoder == "point" else value
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ConfigError(f"exposure attack softmax_sample: expected None, 'auto' or a positive integer, got {value!r}")
    if decoder == "point":
        raise ConfigError("exposure attack softmax_sample: the point decoder's label-smoothed target needs every item; "
                          "expected None or 'auto'")  # fmt: skip
    return int(value)


def make_optimizer(
    params: Iterator[nn.Parameter], lr: float, schedule: str = "constant", warmup_steps: int = 4000
) -> tuple[torch.optim.Adam, torch.optim.lr_scheduler.LambdaLR | None]:
    """Adam with a constant ``lr`` (the paper), or the code's warm-up schedule: Adam(0.9,
    0.98, eps 1e-9) at rate ``lr * min(t^-0.5, t * warmup_steps^-1.5)`` for the ``t``-th step
    (``t = 1, 2, ...``; step the scheduler after every optimiser step)."""
    if schedule == "constant":
        return torch.optim.Adam(params, lr=lr), None
    optimizer = torch.optim.Adam(params, lr=lr, betas=(0.9, 0.98), eps=1e-9)
    rate = lambda done: min((done + 1) ** -0.5, (done + 1) * warmup_steps**-1.5)
    return optimizer, torch.optim.lr_scheduler.LambdaLR(optimizer, rate)


def candidate_matrix(vocab: Vocabulary, pairs: ExposurePairs, candidates: Candidates) -> sp.csr_matrix | None:
    """Users x vocabulary matrix of allowed items (``user_log``), or None for all items."""
    if candidates == "all":
        return None
    if candidates != "user_log":
        raise ConfigError(f"candidates: expected 'all' or 'user_log', got {candidates!r}")
    return vocab.columns(pairs.user_log)
