"""SASRec: self-attentive sequential recommendation (Kang & McAuley, ICDM 2018, Section III).

Network, for a user's most recent ``max_len`` items s_1..s_n, left-padded to ``max_len``:

* input (III-B):   E_t = sqrt(d) * M_{s_t} + P_t, with a learned position embedding P over the
  ``max_len`` slots of the right-aligned window (the most recent item is always slot
  ``max_len - 1``), then dropout;
* blocks (III-C/D): ``n_blocks`` Transformer layers whose attention is causal (position t sees
  only positions <= t) and never reads padding. Decision: we use
  ``torch.nn.TransformerEncoderLayer`` in the **pre-LN** form (``norm_first=True``: x + Attn(LN(x)),
  x + FFN(LN(x))) plus a final LayerNorm, as the authors' released code normalises before the
  attention; the feed-forward width equals ``hidden`` and uses ReLU as in the paper;
* output (III-E):  r_{t,i} = F_t · M_i, the item embedding M shared between input and output
  (weight tying).

Training (III-E, Eq. 7): at every non-padded position t the next item s_{t+1} is the positive and
one item drawn uniformly from the items *not* in the user's training sequence is the negative,
loss = -sum [log sigma(r_{t,s_{t+1}}) + log(1 - sigma(r_{t,neg}))] averaged over positions; Adam
with the paper's beta_2 = 0.98. Only each user's last ``max_len + 1`` training items form
training positions, as in the paper.
Defaults follow the exposure paper's SASRec embedding provider (seed 000 notes, item 24): 2 blocks,
1 head, d = 64, max length 50, dropout 0.2, lr 1e-3, batch 128. Decision: 50 epochs, validated
every 5; on ml-100k (8:1:1 random split) validation Recall@20 peaks near epoch 20-25 and a full
50-epoch run takes under a minute on two CPU cores.

Padding: index ``n_items`` is reserved for padding inside the network and never scored.
``score(users)`` ranks all items after each user's last ``max_len`` *training* items;
``score_sequences(histories)`` does the same for arbitrary histories (e.g. a slate's prefix),
and ``score_histories`` for the time-ordered histories of users not seen in training.
"""

from __future__ import annotations

import math

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from recprivacy.data.interactions import Interactions
from recprivacy.errors import ConfigError, DataError
from recprivacy.metrics.ranking import evaluate
from recprivacy.models.base import Recommender
from recprivacy.models.examples import ExampleTask
from recprivacy.models.training import NegativeSampler, TrainingHistory, fit_epochs, minibatches


def left_pad(seqs: list[np.ndarray], width: int, pad: int) -> np.ndarray:
    """``[len(seqs), width]`` int64 matrix holding the last ``width`` items of each sequence,
    right-aligned, with ``pad`` before them (vectorised over all sequences at once). Item ids
    must lie in ``[0, pad)``."""
    n = len(seqs)
    out = np.full((n, width), pad, dtype=np.int64)
    lens = np.fromiter((len(s) for s in seqs), dtype=np.int64, count=n)
    if lens.sum() == 0:
        return out
    flat = np.concatenate([np.asarray(s, dtype=np.int64) for s in seqs])
    if flat.min() < 0 or flat.max() >= pad:
        raise DataError(f"history item ids must lie in [0, {pad}); got ids {flat.min()}..{flat.max()}")
    row = np.repeat(np.arange(n), lens)
    from_end = np.cumsum(lens)[row] - 1 - np.arange(len(flat))
    keep = from_end < width
    out[row[keep], width - 1 - from_end[keep]] = flat[keep]
    return out


def sample_negatives(has_target: np.ndarray, sampler: NegativeSampler, pad: int,
                     users: np.ndarray | None = None) -> np.ndarray:  # fmt: skip
    """One negative item for every True slot of ``has_target`` (row ``r`` is user ``users[r]``,
    user ``r`` without ``users``), drawn uniformly from the items outside that user's training
    sequence; ``pad`` in the other slots."""
    negatives = np.full(has_target.shape, pad, dtype=np.int64)
    rows, cols = np.nonzero(has_target)
    negatives[rows, cols] = sampler.sample(rows if users is None else users[rows], 1)[:, 0]
    return negatives


class SASRecNet(nn.Module):
    """Embedding + causal pre-LN self-attention blocks; ``forward`` gives F_t for every slot."""

    def __init__(self, n_items: int, hidden: int, n_blocks: int, n_heads: int, max_len: int, dropout: float) -> None:
        super().__init__()
        self.pad = n_items
        self.n_heads = n_heads
        self.item_emb = nn.Embedding(n_items + 1, hidden, padding_idx=n_items)
        self.pos_emb = nn.Embedding(max_len, hidden)
        self.dropout = nn.Dropout(dropout)
        self.blocks = nn.ModuleList(
            nn.TransformerEncoderLayer(
                hidden, n_heads, dim_feedforward=hidden, dropout=dropout, batch_first=True, norm_first=True
            )
            for _ in range(n_blocks)
        )
        self.final_norm = nn.LayerNorm(hidden)
        nn.init.xavier_normal_(self.item_emb.weight)
        nn.init.xavier_normal_(self.pos_emb.weight)
        with torch.no_grad():
            self.item_emb.weight[n_items].zero_()

    def attention_mask(self, seqs: torch.Tensor) -> torch.Tensor:
        """Boolean ``[B * n_heads, L, L]`` mask, True = may not attend: later slots and padded
        keys. Each slot may attend to itself, so all-padding rows stay finite."""
        length = seqs.shape[1]
        later = torch.triu(torch.ones(length, length, dtype=torch.bool), diagonal=1)
        blocked = later[None] | (seqs == self.pad)[:, None, :]
        blocked &= ~torch.eye(length, dtype=torch.bool)[None]
        return blocked.repeat_interleave(self.n_heads, dim=0)

    def forward(self, seqs: torch.Tensor) -> torch.Tensor:
        """Hidden states ``[B, max_len, hidden]`` of left-padded item sequences ``[B, max_len]``."""
        x = self.item_emb(seqs) * math.sqrt(self.item_emb.embedding_dim) + self.pos_emb.weight
        x = self.dropout(x)
        mask = self.attention_mask(seqs)
        for block in self.blocks:
            x = block(x, src_mask=mask)
        return self.final_norm(x)

    def item_logits(self, hidden: torch.Tensor) -> torch.Tensor:
        """r_{t,i} = F_t · M_i for every real item (the padding row excluded)."""
        return hidden @ self.item_emb.weight[: self.pad].T


class SASRec(Recommender):
    """Self-attentive sequential recommender (next-item prediction over time-ordered histories).

    Parameters
    ----------
    hidden, n_blocks, n_heads, max_len, dropout:
        Embedding size d, number of attention blocks, heads per block, history window length,
        dropout rate.
    lr:
        Adam learning rate.
    n_epochs, batch_size:
        Training length and sequences per mini-batch.
    patience, eval_every:
        Early stopping on validation Recall@20 (evaluated every ``eval_every`` epochs) when
        ``fit`` is given ``valid``.
    seed:
        Seeds the weights, dropout, the negatives and the batch order.
    """

    sequential = True

    def __init__(
        self,
        hidden: int = 64,
        n_blocks: int = 2,
        n_heads: int = 1,
        max_len: int = 50,
        dropout: float = 0.2,
        lr: float = 1e-3,
        n_epochs: int = 50,
        batch_size: int = 128,
        patience: int = 3,
        eval_every: int = 5,
        seed: int = 0,
    ) -> None:
        super().__init__(seed=seed)
        self.hidden = hidden
        self.n_blocks = n_blocks
        self.n_heads = n_heads
        self.max_len = max_len
        self.dropout = dropout
        self.lr = lr
        self.n_epochs = n_epochs
        self.batch_size = batch_size
        self.patience = patience
        self.eval_every = eval_every
        self._check_params()

    def _check_params(self) -> None:
        for name in ("hidden", "n_blocks", "n_heads", "max_len", "n_epochs", "batch_size", "patience", "eval_every"):
            if getattr(self, name) < 1:
                raise ConfigError(f"SASRec {name}: expected a positive integer, got {getattr(self, name)}")
        if self.hidden % self.n_heads:
            raise ConfigError(f"SASRec hidden: expected a multiple of n_heads={self.n_heads}, got {self.hidden}")
        if not 0.0 <= self.dropout < 1.0:
            raise ConfigError(f"SASRec dropout: expected a value in [0, 1), got {self.dropout}")

    # ------------------------------------------------------------------ training
    def _windows(self, train: Interactions) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Build ``net_`` and ``recent_``; return the training windows ``[n_users, max_len]``: the
        inputs, the next items and whether a position has both."""
        pad = self.n_items_
        self.net_ = SASRecNet(pad, self.hidden, self.n_blocks, self.n_heads, self.max_len, self.dropout)
        seqs = train.sequences()
        self.recent_ = torch.as_tensor(left_pad(seqs, self.max_len, pad))
        window = left_pad(seqs, self.max_len + 1, pad)
        inputs, targets = window[:, :-1], window[:, 1:]
        return inputs, targets, (inputs != pad) & (targets != pad)

    def _fit(self, train: Interactions, valid: Interactions | None) -> None:
        rng = np.random.default_rng(self.seed)
        pad = self.n_items_
        inputs, targets, has_target = self._windows(train)
        rows = np.flatnonzero(has_target.any(axis=1))
        sampler = NegativeSampler(self.train_csr_, rng)
        optimizer = torch.optim.Adam(self.net_.parameters(), lr=self.lr, betas=(0.9, 0.98))
        loss_fn = nn.BCEWithLogitsLoss()

        def run_epoch(epoch: int) -> float:
            negatives = sample_negatives(has_target, sampler, pad)
            total = 0.0
            for idx in minibatches(len(rows), self.batch_size, rng):
                batch = rows[idx]
                where = torch.as_tensor(has_target[batch])
                h = self.net_(torch.as_tensor(inputs[batch]))[where]
                emb = self.net_.item_emb
                pos = (h * emb(torch.as_tensor(targets[batch])[where])).sum(-1)
                neg = (h * emb(torch.as_tensor(negatives[batch])[where])).sum(-1)
                loss = loss_fn(torch.cat([pos, neg]), torch.cat([torch.ones_like(pos), torch.zeros_like(neg)]))
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
                total += loss.item() * len(batch)
            return total / max(len(rows), 1)

        validate = None if valid is None else (lambda: evaluate(self, valid, ks=(20,))["recall@20"])
        self.history_: TrainingHistory = fit_epochs(
            self.net_, run_epoch, self.n_epochs, validate, self.eval_every, self.patience, desc="SASRec",
            threads=None,  # attention blocks are large enough to gain from every core
        )

    def private_task(self, train: Interactions) -> ExampleTask:
        """One example per user, the user's training window (``models.examples``): its loss is
        the sum over the window's positions of ``−ln σ(r_pos) − ln(1 − σ(r_neg))`` (Eq. 7 before
        the mean over positions), one fresh negative per position."""
        self._start_fit(train)
        pad = self.n_items_
        inputs, targets, has_target = self._windows(train)
        sampler = NegativeSampler(self.train_csr_, np.random.default_rng(self.seed))

        def draw(users: np.ndarray) -> tuple[np.ndarray, tuple[torch.Tensor, ...]]:
            negatives = sample_negatives(has_target[users], sampler, pad, users)
            parts = (inputs[users], targets[users], negatives, has_target[users].astype(np.float32))
            return np.arange(len(users)), tuple(torch.from_numpy(a) for a in parts)

        def losses(seq: torch.Tensor, pos: torch.Tensor, neg: torch.Tensor, where: torch.Tensor) -> torch.Tensor:
            hidden = self.net_(seq)
            emb = self.net_.item_emb
            bce = F.softplus(-(hidden * emb(pos)).sum(-1)) + F.softplus((hidden * emb(neg)).sum(-1))
            return (bce * where).sum(-1)

        return ExampleTask(self.net_, np.flatnonzero(has_target.any(axis=1)), draw, losses, self.net_.eval)

    # ------------------------------------------------------------------ scoring
    def _score(self, users: torch.Tensor) -> torch.Tensor:
        return self._score_padded(self.recent_[users])

    def _score_histories(self, histories: Interactions) -> torch.Tensor:
        return self._score_padded(torch.as_tensor(left_pad(histories.sequences(), self.max_len, self.n_items_)))

    def _score_padded(self, padded: torch.Tensor, chunk: int = 1024) -> torch.Tensor:
        out = [self.net_.item_logits(self.net_(padded[lo : lo + chunk])[:, -1]) for lo in range(0, len(padded), chunk)]
        return torch.cat(out) if out else torch.zeros((0, self.n_items_))

    def score_sequences(self, seqs: list[np.ndarray] | torch.Tensor) -> torch.Tensor:
        """Scores ``[n, n_items]`` of every item as the next one after each given history.

        ``seqs`` is a list of time-ordered item-id arrays (oldest first), or a left-padded
        ``[n, L]`` tensor using ``n_items`` as the padding id. Only the last ``max_len`` items
        of each history are read.
        """
        self._check_fitted()
        pad = self.n_items_
        if isinstance(seqs, torch.Tensor):
            padded = seqs.long()[:, -self.max_len :]
            if padded.numel() and (padded.min() < 0 or padded.max() > pad):
                raise DataError(f"score_sequences: padded histories must hold ids in [0, {pad}] ({pad} = padding)")
            fill = torch.full((len(padded), self.max_len - padded.shape[1]), pad, dtype=torch.long)
            padded = torch.cat([fill, padded], dim=1)
        else:
            padded = torch.as_tensor(left_pad(seqs, self.max_len, pad))
        with torch.no_grad():
            return self._score_padded(padded)

    def item_embeddings(self) -> torch.Tensor:
        """The learned item embedding table M, ``[n_items, hidden]`` (padding row dropped)."""
        self._check_fitted()
        return self.net_.item_emb.weight[: self.n_items_].detach().clone()
