"""Encoder-decoder networks of the exposure leakage attack (paper 000, Section 3.2).

Encoders (no position embeddings: a slate is a set):

* ``mean``: c = (1/N) sum_j e_j (Eq. 2); ``max``: c(i) = max_j e_j(i) (Eq. 3);
* ``att``: one self-attention block (Eqs. 4-7) with a learnable ``[CLS]`` token whose output
  is the slate vector c; for the transformer decoder the memory is the N item outputs
  instead (no CLS). Pooled encoders give the transformer decoder a 1 x d memory.

Decoders:

* ``point``: multi-label classification q = softmax(W_d c + b) (Eq. 8, sigma = identity,
  as in the code: a saturating sigma would cripple the softmax), trained on the
  label-smoothed target of Eq. 9 (``smoothed_targets``);
* ``lstm`` / ``gru`` (Eqs. 12-13): one layer of hidden size d with h_0 = c (LSTM also
  c_0 = c) and step input [b_{t-1}; c] (the code);
* ``transformer``: one causal self-attention block with sinusoidal position embeddings and
  cross-attention to the encoder memory.

Sequence decoders read the reversed history with teacher forcing: input
``[SOS], b_M, ..., b_1`` and target ``b_M, ..., b_1, [EOS]`` (``teacher_forcing``), loss =
cross-entropy over all M+1 positions (Eq. 14 plus ``[EOS]``, as the code; harmless since
``[EOS]`` is masked at inference). Inference is greedy for exactly M steps with the special
tokens masked (the paper does not name a decoding rule).

Decisions (docs/decisions.md, "Exposure leakage (paper 000)"): pre-LN blocks as in Eqs. 6-7
(``norm_first``) with a final
LayerNorm, 2 heads, FFN width d, 1 layer; token embeddings are multiplied by sqrt(d) (the
authors' code); dropout on the embedded inputs and inside the attention blocks; Xavier-normal
initialisation of every matrix. Weight tying (paper and code differ): ``paper`` shares one table between
the encoder, the decoder input and the output softmax (plus an output bias); ``code`` gives
the encoder its own table and ties only the RNN decoder's input table to its output layer;
``none`` unties everything.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Literal

import torch
from torch import nn

ENCODERS = ("mean", "max", "att")
DECODERS = ("point", "lstm", "gru", "transformer")
TIES = ("paper", "code", "none")
Tie = Literal["paper", "code", "none"]


def pool(x: torch.Tensor, mode: str) -> torch.Tensor:
    """Mean (Eq. 2) or element-wise max (Eq. 3) over the slate axis of ``[B, N, d]``."""
    return x.mean(dim=1) if mode == "mean" else x.max(dim=1).values


def sinusoidal_positions(length: int, dim: int) -> torch.Tensor:
    """``[length, dim]`` sinusoidal position embeddings (Vaswani et al. 2017)."""
    pos = torch.arange(length, dtype=torch.float32)[:, None]
    freq = torch.exp(torch.arange(0, dim, 2, dtype=torch.float32) * (-math.log(10000.0) / dim))
    out = torch.zeros(length, dim)
    out[:, 0::2] = torch.sin(pos * freq)
    out[:, 1::2] = torch.cos(pos * freq)[:, : dim // 2]
    return out


def causal_mask(length: int) -> torch.Tensor:
    """Boolean ``[length, length]`` mask, True where position i may not see position j > i."""
    return torch.triu(torch.ones(length, length, dtype=torch.bool), diagonal=1)


def teacher_forcing(history: torch.Tensor, sos: int, eos: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Decoder input ``[SOS], b_M..b_1`` and target ``b_M..b_1, [EOS]`` from histories
    ``[B, M]`` stored most recent first (each ``[B, M+1]``)."""
    column = torch.full((history.shape[0], 1), 0, dtype=torch.long)
    return torch.cat([column + sos, history], dim=1), torch.cat([history, column + eos], dim=1)


def smoothed_targets(history: torch.Tensor, n_items: int, eps: float | None = None) -> torch.Tensor:
    """Label-smoothed multi-label target of Eq. 9, ``[B, n_items]``.

    ``y_j = (1 - eps) / k`` on the ``k`` distinct items of the row's history and
    ``eps / (n_items - k)`` elsewhere, ``eps = 1 / n_items`` by default (Section 5.3); each
    row sums to 1. Duplicated history items count once.
    """
    eps = 1.0 / n_items if eps is None else eps
    hit = torch.zeros(history.shape[0], n_items, dtype=torch.bool)
    hit.scatter_(1, history, True)
    k = hit.sum(dim=1, keepdim=True).float()
    return torch.where(hit, (1.0 - eps) / k, eps / (n_items - k))


#: rows of logits computed at once by ``TiedSoftmaxCrossEntropy`` (256 x 3,705 floats fit in L2)
CE_CHUNK = 256


class TiedSoftmaxCrossEntropy(torch.autograd.Function):
    """Mean cross-entropy ``mean_r [logsumexp(z_r) - <y_r, z_r>]`` of the output layer's
    logits ``z = h W^T + b`` against ``y`` = class indices ``[R]`` (one-hot rows) or rows of a
    distribution ``[R, V]`` (each summing to 1, e.g. the Eq. 9 target).

    The same loss and gradients as ``cross_entropy(h @ W.T + b, y)`` up to float rounding,
    computed ``CE_CHUNK`` rows at a time: the ``R x V`` logits (2,400 x 3,705 floats per
    ml-1m batch, the bulk of a training step) are never held whole. When a gradient is
    needed, the forward pass also turns each chunk's logits into ``softmax - y`` in place
    while they are still in cache and accumulates the (unscaled) gradients
    ``dL/dh = (softmax - y) W``, ``dL/dW = (softmax - y)^T h``, ``dL/db = sum (softmax - y)``;
    the backward pass only scales them by ``grad / R``. Three ``R x V x d`` matrix products
    per step instead of the four of a recomputing backward, and none of the memory passes
    over a fresh logit matrix that make ``cross_entropy`` slower (measured: docs/decisions.md,
    exposure leakage, "Speed without changing the computation").
    """

    @staticmethod
    def forward(ctx, hidden: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        grads_needed = any(ctx.needs_input_grad[:3])
        lse, picked = hidden.new_empty(len(hidden)), hidden.new_empty(len(hidden))
        if grads_needed:
            grad_hidden, grad_weight, grad_bias = torch.empty_like(hidden), torch.zeros_like(weight), torch.zeros_like(bias)
        for lo, z in _logit_chunks(hidden, weight, bias):
            rows = slice(lo, lo + len(z))
            if target.dtype == torch.long:
                picked[rows] = z.gather(1, target[rows, None])[:, 0]
            else:
                picked[rows] = torch.linalg.vecdot(z, target[rows])
            lse[rows] = torch.logsumexp(z, dim=1)
            if grads_needed:
                _softmax_minus_target_(z, lse[rows], target[rows])
                torch.mm(z, weight, out=grad_hidden[rows])
                grad_weight.addmm_(z.T, hidden[rows])
                grad_bias += z.sum(dim=0)
        if grads_needed:
            ctx.save_for_backward(grad_hidden, grad_weight, grad_bias)
        return (lse - picked).mean()

    @staticmethod
    def backward(ctx, grad: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, None]:
        grad_hidden, grad_weight, grad_bias = ctx.saved_tensors
        scale = grad / len(grad_hidden)
        return grad_hidden * scale, grad_weight * scale, grad_bias * scale, None


def sampled_columns(target: torch.Tensor, n_items: int, size: int, n_sampled: int, generator: torch.Generator) -> torch.Tensor:
    """Sorted token columns of one sampled-softmax step: ``n_sampled`` item tokens drawn
    uniformly without replacement, every token of ``target``, and every special token
    (``n_items .. size - 1``)."""
    drawn = torch.randperm(n_items, generator=generator)[:n_sampled]
    return torch.unique(torch.cat([drawn, target, torch.arange(n_items, size)]))


def _softmax_minus_target_(z: torch.Tensor, lse: torch.Tensor, target: torch.Tensor) -> None:
    """Overwrite logits ``z`` with ``softmax(z) - y`` given their log-normalisers ``lse``."""
    z.sub_(lse[:, None]).exp_()
    if target.dtype == torch.long:
        z[torch.arange(len(z)), target] -= 1.0
    else:
        z.sub_(target)


def _logit_chunks(hidden: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor) -> Iterator[tuple[int, torch.Tensor]]:
    """``(first row, logits of rows first..first+CE_CHUNK-1)``, written into one reused buffer."""
    buffer = hidden.new_empty(min(CE_CHUNK, len(hidden)), len(weight))
    for lo in range(0, len(hidden), CE_CHUNK):
        z = buffer[: min(CE_CHUNK, len(hidden) - lo)]
        torch.addmm(bias, hidden[lo : lo + len(z)], weight.T, out=z)
        yield lo, z


class AttentionEncoder(nn.Module):
    """One self-attention block (Eqs. 4-7) plus a final LayerNorm; no position embedding."""

    def __init__(self, dim: int, n_heads: int, dropout: float, norm_first: bool) -> None:
        super().__init__()
        self.block = nn.TransformerEncoderLayer(
            dim, n_heads, dim_feedforward=dim, dropout=dropout, batch_first=True, norm_first=norm_first
        )
        self.norm = nn.LayerNorm(dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.norm(self.block(x))


class TransformerSeqDecoder(nn.Module):
    """Causal self-attention + cross-attention block with a final LayerNorm."""

    def __init__(self, dim: int, n_heads: int, dropout: float, norm_first: bool, max_len: int) -> None:
        super().__init__()
        self.block = nn.TransformerDecoderLayer(
            dim, n_heads, dim_feedforward=dim, dropout=dropout, batch_first=True, norm_first=norm_first
        )
        self.norm = nn.LayerNorm(dim)
        self.register_buffer("positions", sinusoidal_positions(max_len, dim), persistent=False)

    def forward(self, x: torch.Tensor, memory: torch.Tensor) -> torch.Tensor:
        """Hidden states ``[B, T, d]`` of embedded inputs ``[B, T, d]`` (positions added here)."""
        length = x.shape[1]
        return self.norm(self.block(x + self.positions[:length], memory, tgt_mask=causal_mask(length), tgt_is_causal=True))


class ExposureAttackNet(nn.Module):
    """Slate encoder + history decoder over a vocabulary of ``n_items`` items followed by the
    special tokens (``pad``, ``sos``, ``eos``, ``cls`` ids given; ``size`` tokens in all)."""

    def __init__(
        self,
        n_items: int,
        size: int,
        specials: dict[str, int],
        history_len: int,
        encoder: str = "att",
        decoder: str = "transformer",
        dim: int = 128,
        n_heads: int = 2,
        dropout: float = 0.1,
        tie: Tie = "paper",
        norm_first: bool = True,
        cls_in_pool: bool = False,
    ) -> None:
        super().__init__()
        self.n_items, self.size, self.history_len = n_items, size, history_len
        self.pad, self.sos, self.eos, self.cls = (specials[k] for k in ("pad", "sos", "eos", "cls"))
        self.encoder_kind, self.decoder_kind, self.tie = encoder, decoder, tie
        self.cls_in_pool = cls_in_pool
        self.scale = math.sqrt(dim)
        self.drop = nn.Dropout(dropout)
        self.enc_emb = nn.Embedding(size, dim)
        self.attention = AttentionEncoder(dim, n_heads, dropout, norm_first) if encoder == "att" else None
        self.dec_emb = self._decoder_embedding(dim, size)
        self.rnn = self._rnn(dim)
        self.seq_decoder = (
            TransformerSeqDecoder(dim, n_heads, dropout, norm_first, history_len + 1) if decoder == "transformer" else None
        )
        self.out = None if self._output_tied() else nn.Linear(dim, size, bias=False)
        self.out_bias = nn.Parameter(torch.zeros(size))
        for p in self.parameters():
            if p.dim() > 1:
                nn.init.xavier_normal_(p)

    def _decoder_embedding(self, dim: int, size: int) -> nn.Embedding | None:
        if self.decoder_kind == "point":
            return None
        return self.enc_emb if self.tie == "paper" else nn.Embedding(size, dim)

    def _rnn(self, dim: int) -> nn.Module | None:
        if self.decoder_kind == "lstm":
            return nn.LSTM(2 * dim, dim, batch_first=True)
        if self.decoder_kind == "gru":
            return nn.GRU(2 * dim, dim, batch_first=True)
        return None

    def _output_tied(self) -> bool:
        return self.tie == "paper" or (self.tie == "code" and self.rnn is not None)

    @property
    def output_weight(self) -> torch.Tensor:
        """The output softmax's item matrix (the tied embedding table when tied)."""
        if self.out is not None:
            return self.out.weight
        return self.enc_emb.weight if self.tie == "paper" else self.dec_emb.weight

    @property
    def sequential(self) -> bool:
        return self.decoder_kind != "point"

    # ------------------------------------------------------------------ encoder
    def encode(self, slates: torch.Tensor) -> torch.Tensor:
        """Slate vector c ``[B, d]`` for point / RNN decoders, memory ``[B, L, d]`` for the
        transformer decoder (see the module docstring for the routing)."""
        x = self.drop(self.enc_emb(slates) * self.scale)
        to_memory = self.decoder_kind == "transformer"
        if self.attention is not None:
            if to_memory:
                return self.attention(x)
            return self.attention(torch.cat([self._cls(len(slates)), x], dim=1))[:, 0]
        if self.cls_in_pool and not to_memory:
            x = torch.cat([self._cls(len(slates)), x], dim=1)
        c = pool(x, self.encoder_kind)
        return c[:, None] if to_memory else c

    def _cls(self, batch: int) -> torch.Tensor:
        return self.drop(self.enc_emb.weight[self.cls] * self.scale).expand(batch, 1, -1)

    # ------------------------------------------------------------------ decoders
    def logits(self, hidden: torch.Tensor) -> torch.Tensor:
        """Scores of every token (items and specials) from hidden states ``[..., d]``."""
        return nn.functional.linear(hidden, self.output_weight, self.out_bias)

    def point_hidden(self, slates: torch.Tensor) -> torch.Tensor:
        """The point-wise decoder's input ``[B, d]`` (the slate vector after dropout)."""
        return self.drop(self.encode(slates))

    def point_logits(self, slates: torch.Tensor) -> torch.Tensor:
        """Item logits ``[B, n_items]`` of the point-wise decoder (Eq. 8 before the softmax)."""
        return self.logits(self.point_hidden(slates))[:, : self.n_items]

    def cross_entropy(self, hidden: torch.Tensor, target: torch.Tensor, items_only: bool = False) -> torch.Tensor:
        """Mean cross-entropy of the output softmax at hidden states ``[R, d]`` against token
        ids ``[R]`` or target distributions ``[R, V]``; ``items_only`` restricts the softmax to
        the item tokens (the point-wise decoder's Eq. 8)."""
        rows = self.n_items if items_only else self.size
        return TiedSoftmaxCrossEntropy.apply(hidden, self.output_weight[:rows], self.out_bias[:rows], target)

    def sampled_cross_entropy(self, hidden: torch.Tensor, target: torch.Tensor, columns: torch.Tensor) -> torch.Tensor:
        """Mean cross-entropy of the softmax restricted to the sorted token ``columns`` (which
        hold every token of ``target [R]``; ``sampled_columns``) at hidden states ``[R, d]``."""
        position = torch.searchsorted(columns, target)
        return TiedSoftmaxCrossEntropy.apply(hidden, self.output_weight[columns], self.out_bias[columns], position)

    def _embed_inputs(self, tokens: torch.Tensor) -> torch.Tensor:
        return self.drop(self.dec_emb(tokens) * self.scale)

    def _rnn_state(self, c: torch.Tensor) -> torch.Tensor | tuple[torch.Tensor, torch.Tensor]:
        h0 = c[None].contiguous()
        return (h0, h0) if isinstance(self.rnn, nn.LSTM) else h0

    def decode(
        self, latent: torch.Tensor, inputs: torch.Tensor, state: object = None
    ) -> tuple[torch.Tensor, object]:
        """Hidden states ``[B, T, d]`` for decoder input tokens ``[B, T]``; for RNNs also the
        state after the last input (``state=None`` starts from h_0 = c)."""
        x = self._embed_inputs(inputs)
        if self.rnn is None:
            return self.seq_decoder(x, latent), None
        step_in = torch.cat([x, latent[:, None].expand(-1, x.shape[1], -1)], dim=2)
        return self.rnn(step_in, self._rnn_state(latent) if state is None else state)

    def sequence_logits(self, slates: torch.Tensor, inputs: torch.Tensor) -> torch.Tensor:
        """Teacher-forced token logits ``[B, T, size]`` (Eq. 11)."""
        hidden, _ = self.decode(self.encode(slates), inputs)
        return self.logits(hidden)

    @torch.no_grad()
    def ends_early(self, slates: torch.Tensor) -> torch.Tensor:
        """Bool ``[B]``: would greedy decoding over every token (items and specials, as the
        authors' code decoded) pick ``[EOS]`` before M items? Steps feed back the best item,
        as ``greedy_item_logits`` does (the code would feed back any other special token that
        won, which a trained decoder practically never ranks first)."""
        return self._greedy(slates, track_eos=True)[1]

    def _next_hidden(self, latent: torch.Tensor, tokens: torch.Tensor, state: object) -> tuple[torch.Tensor, object]:
        """The decoder's hidden state ``[B, d]`` after the last of ``tokens`` (RNNs carry
        ``state`` and read only the last token; the transformer rereads the prefix)."""
        if self.rnn is None:
            hidden, _ = self.decode(latent, tokens)
            return hidden[:, -1], None
        hidden, state = self.decode(latent, tokens[:, -1:], state)
        return hidden[:, -1], state

    @torch.no_grad()
    def greedy_item_logits(self, slates: torch.Tensor) -> torch.Tensor:
        """Item logits ``[B, M, n_items]`` of M greedy decoding steps; each step's input is the
        previous step's best item (special tokens never chosen). Point-wise: ``[B, 1, n_items]``."""
        if not self.sequential:
            return self.point_logits(slates)[:, None]
        return self._greedy(slates)[0]

    def _greedy(self, slates: torch.Tensor, track_eos: bool = False) -> tuple[torch.Tensor, torch.Tensor]:
        """(item logits ``[B, M, n_items]`` of the M greedy steps, whether ``[EOS]`` was the
        best token of some step; computed only with ``track_eos``)."""
        latent = self.encode(slates)
        tokens = torch.full((len(slates), 1), self.sos, dtype=torch.long)
        state, steps, ended = None, [], torch.zeros(len(slates), dtype=torch.bool)
        for _ in range(self.history_len):
            hidden, state = self._next_hidden(latent, tokens, state)
            scores = self.logits(hidden)
            if track_eos:
                ended |= scores.argmax(dim=1) == self.eos
            items = scores[:, : self.n_items]
            steps.append(items)
            tokens = torch.cat([tokens, items.argmax(dim=1, keepdim=True)], dim=1)
        return torch.stack(steps, dim=1), ended
