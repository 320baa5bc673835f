"""Neural Collaborative Filtering: GMF, MLP and NeuMF (He et al., WWW 2017, Section 3).

* GMF (Eq. 9-10):  y_ui = sigma(h^T (p_u ⊙ q_i)), with ``gmf_dim``-dimensional embeddings.
* MLP (Eq. 11):    z_1 = [p_u; q_i],  z_{l+1} = ReLU(W_l z_l + b_l) for the widths in
  ``mlp_layers``; y_ui = sigma(h^T z_L).
* NeuMF (Eq. 12):  the two towers keep separate embeddings, and the output layer reads the
  concatenation of their last layers, y_ui = sigma(h^T [p^G_u ⊙ q^G_i ; z_L]).

Training (Section 3.1.1, Eq. 7): binary cross-entropy on every observed pair (label 1) and
``n_neg`` uniformly sampled unobserved items per pair (label 0), negatives resampled every epoch.
Defaults follow the membership-inference paper's target NCF (seed 001 notes §3.3): Adam lr 1e-3,
GMF dim 8, MLP hidden widths 64-32-16, 4 negatives per positive, 20 epochs. Decision: batch size
1024 instead of the paper's 256: the same validation Recall@20 on ml-100k in a fraction of the
time (docs/decisions.md, "NCF batch size 1024"). Decision (001 notes
§3.3 [R]): ``mlp_layers`` are the hidden widths and each MLP embedding has ``mlp_layers[0] // 2``
dimensions, so the tower is 64 -> 64 -> 32 -> 16. No pretraining of NeuMF from GMF and MLP.

Scoring every item for a batch of users walks the user x item grid in chunks and never loops
over users in Python: the first MLP layer is split as W [p; q] = W_u p + W_i q, so each user and
item is projected once and only the sum, the deeper layers and the output run per pair.

A user not seen in training is served by fold-in (``models.foldin.gradient_fold_in``): the
user's GMF and MLP embedding rows start at zero and take Adam steps on the training loss above
(the history's items as positives, fresh negatives each step), everything else frozen.
"""

from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from recprivacy.data.interactions import Interactions
from recprivacy.errors import ConfigError
from recprivacy.metrics.ranking import evaluate
from recprivacy.models.base import Recommender
from recprivacy.models.examples import ExampleTask, rows_of
from recprivacy.models.foldin import check_fold_in, gradient_fold_in
from recprivacy.models.training import NegativeSampler, TrainingHistory, fit_epochs, minibatches

VARIANTS = ("neumf", "gmf", "mlp")


class NeuMFNet(nn.Module):
    """The GMF, MLP and NeuMF networks of He et al. (2017); ``forward`` returns logits."""

    def __init__(
        self, n_users: int, n_items: int, variant: str, gmf_dim: int, mlp_layers: tuple[int, ...]
    ) -> None:
        super().__init__()
        self.use_gmf = variant in ("neumf", "gmf")
        self.use_mlp = variant in ("neumf", "mlp")
        out_dim = 0
        if self.use_gmf:
            self.user_gmf = nn.Embedding(n_users, gmf_dim)
            self.item_gmf = nn.Embedding(n_items, gmf_dim)
            out_dim += gmf_dim
        if self.use_mlp:
            emb = mlp_layers[0] // 2
            self.user_mlp = nn.Embedding(n_users, emb)
            self.item_mlp = nn.Embedding(n_items, emb)
            widths = (2 * emb, *mlp_layers)
            self.tower = nn.ModuleList(nn.Linear(a, b) for a, b in zip(widths[:-1], widths[1:]))
            out_dim += mlp_layers[-1]
        self.out = nn.Linear(out_dim, 1)
        self._init_weights()

    def _init_weights(self) -> None:
        """He et al.: embeddings ~ N(0, 0.01^2); Xavier-uniform dense layers (Glorot)."""
        for module in self.modules():
            if isinstance(module, nn.Embedding):
                nn.init.normal_(module.weight, std=0.01)
            elif isinstance(module, nn.Linear):
                nn.init.xavier_uniform_(module.weight)
                nn.init.zeros_(module.bias)

    def user_sizes(self) -> list[int]:
        """Widths of a user's embedding rows: GMF, then MLP (those the variant has)."""
        return [emb.embedding_dim for emb in self._user_tables()]

    def user_rows(self, users: torch.Tensor) -> list[torch.Tensor]:
        """The users' embedding rows, in the order of ``user_sizes``."""
        return [emb(users) for emb in self._user_tables()]

    def _user_tables(self) -> list[nn.Embedding]:
        return ([self.user_gmf] if self.use_gmf else []) + ([self.user_mlp] if self.use_mlp else [])

    def forward(self, users: torch.Tensor, items: torch.Tensor) -> torch.Tensor:
        """Logit of y_ui for aligned 1-d tensors of users and items."""
        return self.logits(self.user_rows(users), items)

    def logits(self, rows: list[torch.Tensor], items: torch.Tensor) -> torch.Tensor:
        """Logit of y_ui for user embedding rows (``user_rows`` layout) aligned with ``items``."""
        parts = []
        if self.use_gmf:
            parts.append(rows[0] * self.item_gmf(items))
        if self.use_mlp:
            z = torch.cat([rows[-1], self.item_mlp(items)], dim=-1)
            for layer in self.tower:
                z = torch.relu(layer(z))
            parts.append(z)
        return self.out(torch.cat(parts, dim=-1)).squeeze(-1)

    def score_grid(self, users: torch.Tensor, chunk_pairs: int = 1 << 19) -> torch.Tensor:
        """Logits for every (user, item) pair: ``[len(users), n_items]``, in user chunks of about
        ``chunk_pairs`` pairs. Equal to ``forward`` on the flattened grid."""
        return self.grid(self.user_rows(users), chunk_pairs)

    def grid(self, rows: list[torch.Tensor], chunk_pairs: int = 1 << 19) -> torch.Tensor:
        """``score_grid`` for user embedding rows (``user_rows`` layout) instead of user ids."""
        n_items = (self.item_gmf if self.use_gmf else self.item_mlp).num_embeddings
        step = max(1, chunk_pairs // max(n_items, 1))
        n = len(rows[0])
        return torch.cat([self._grid_chunk([r[lo : lo + step] for r in rows]) for lo in range(0, n, step)])

    def _grid_chunk(self, rows: list[torch.Tensor]) -> torch.Tensor:
        total = torch.zeros(len(rows[0]), 1) + self.out.bias
        width = 0
        if self.use_gmf:
            h = self.out.weight[0, : self.item_gmf.embedding_dim]
            total = total + (rows[0] * h) @ self.item_gmf.weight.T
            width = self.item_gmf.embedding_dim
        if self.use_mlp:
            first, rest = self.tower[0], self.tower[1:]
            emb = self.user_mlp.embedding_dim
            u = rows[-1] @ first.weight[:, :emb].T + first.bias
            i = self.item_mlp.weight @ first.weight[:, emb:].T
            z = torch.relu(u[:, None, :] + i[None, :, :])
            for layer in rest:
                z = torch.relu(layer(z))
            total = total + z @ self.out.weight[0, width:]
        return total


class NCF(Recommender):
    """Neural Collaborative Filtering recommender (GMF, MLP or NeuMF) for implicit feedback.

    Parameters
    ----------
    variant:
        ``"neumf"`` (default), ``"gmf"`` or ``"mlp"``.
    gmf_dim:
        GMF embedding size (predictive factors of the GMF tower).
    mlp_layers:
        Hidden widths of the MLP tower; the MLP embeddings have ``mlp_layers[0] // 2`` dims.
    lr:
        Adam learning rate.
    n_neg:
        Sampled negatives per observed pair, resampled each epoch.
    n_epochs, batch_size:
        Training length and mini-batch size (pairs, positives and negatives together).
    patience, eval_every:
        Early stopping on validation Recall@20 when ``fit`` is given ``valid``.
    fold_in_steps, fold_in_lr:
        Adam steps (50) and learning rate (0.05) that fit the embedding rows of a user not
        seen in training (``score_histories``), the network and item side frozen.
    seed:
        Seeds the weights, the negatives and the batch order.
    """

    def __init__(
        self,
        variant: str = "neumf",
        gmf_dim: int = 8,
        mlp_layers: tuple[int, ...] = (64, 32, 16),
        lr: float = 1e-3,
        n_neg: int = 4,
        n_epochs: int = 20,
        batch_size: int = 1024,
        patience: int = 3,
        eval_every: int = 1,
        fold_in_steps: int = 50,
        fold_in_lr: float = 0.05,
        seed: int = 0,
    ) -> None:
        super().__init__(seed=seed)
        self.fold_in_steps = check_fold_in("NCF", fold_in_steps, fold_in_lr)
        self.fold_in_lr = fold_in_lr
        self.variant = variant
        self.gmf_dim = gmf_dim
        self.mlp_layers = tuple(mlp_layers)
        self.lr = lr
        self.n_neg = n_neg
        self.n_epochs = n_epochs
        self.batch_size = batch_size
        self.patience = patience
        self.eval_every = eval_every
        self._check_params()

    def _check_params(self) -> None:
        if self.variant not in VARIANTS:
            raise ConfigError(f"NCF variant: expected one of {VARIANTS}, got {self.variant!r}")
        if self.variant != "gmf" and (not self.mlp_layers or self.mlp_layers[0] < 2):
            raise ConfigError(f"NCF mlp_layers: expected widths with the first >= 2, got {self.mlp_layers}")
        for name in ("gmf_dim", "n_epochs", "batch_size", "patience", "eval_every"):
            if getattr(self, name) < 1:
                raise ConfigError(f"NCF {name}: expected a positive integer, got {getattr(self, name)}")
        if self.n_neg < 0:
            raise ConfigError(f"NCF n_neg: expected >= 0, got {self.n_neg}")

    def _fit(self, train: Interactions, valid: Interactions | None) -> None:
        rng = np.random.default_rng(self.seed)
        self.net_ = NeuMFNet(self.n_users_, self.n_items_, self.variant, self.gmf_dim, self.mlp_layers)
        optimizer = torch.optim.Adam(self.net_.parameters(), lr=self.lr)
        coo = self.train_csr_.tocoo()
        pos_u, pos_i = coo.row.astype(np.int64), coo.col.astype(np.int64)
        sampler = NegativeSampler(self.train_csr_, rng)
        loss_fn = nn.BCEWithLogitsLoss()

        def run_epoch(epoch: int) -> float:
            neg = sampler.sample(pos_u, self.n_neg)
            users = torch.as_tensor(np.concatenate([pos_u, np.repeat(pos_u, self.n_neg)]))
            items = torch.as_tensor(np.concatenate([pos_i, neg.ravel()]))
            labels = torch.cat([torch.ones(len(pos_u)), torch.zeros(neg.size)])
            total = 0.0
            for idx in minibatches(len(users), self.batch_size, rng):
                b = torch.as_tensor(idx)
                loss = loss_fn(self.net_(users[b], items[b]), labels[b])
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
                total += loss.item() * len(idx)
            return total / len(users)

        validate = None if valid is None else (lambda: evaluate(self, valid, ks=(20,))["recall@20"])
        self.history_: TrainingHistory = fit_epochs(
            self.net_, run_epoch, self.n_epochs, validate, self.eval_every, self.patience, desc="NCF"
        )

    def private_task(self, train: Interactions) -> ExampleTask:
        """NCF's labelled pairs grouped by user (``models.examples``): each drawn user's training
        pairs (label 1) and ``n_neg`` fresh negatives per pair (label 0), with the binary
        cross-entropy of each pair as its loss."""
        self._start_fit(train)
        self.net_ = NeuMFNet(self.n_users_, self.n_items_, self.variant, self.gmf_dim, self.mlp_layers)
        csr = self.train_csr_
        sampler = NegativeSampler(csr, np.random.default_rng(self.seed))

        def draw(users: np.ndarray) -> tuple[np.ndarray, tuple[torch.Tensor, ...]]:
            owners, rows = rows_of(csr.indptr, users)
            negatives = sampler.sample(users[owners], self.n_neg)
            owners = np.concatenate([owners, np.repeat(owners, self.n_neg)])
            items = np.concatenate([csr.indices[rows].astype(np.int64), negatives.ravel()])
            labels = np.concatenate([np.ones(len(rows), np.float32), np.zeros(negatives.size, np.float32)])
            return owners, (torch.from_numpy(users[owners]), torch.from_numpy(items), torch.from_numpy(labels))

        def losses(users: torch.Tensor, items: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
            return F.binary_cross_entropy_with_logits(self.net_(users, items), labels, reduction="none")

        personal = tuple(name for name, _ in self.net_.named_parameters() if name.startswith("user_"))
        return ExampleTask(self.net_, np.flatnonzero(np.diff(csr.indptr)), draw, losses, self.net_.eval, personal=personal)

    def _score(self, users: torch.Tensor) -> torch.Tensor:
        return self.net_.score_grid(users)

    def _score_histories(self, histories: Interactions) -> torch.Tensor:
        """New users' rows fitted by ``fold_in_steps`` Adam steps on the training loss (BCE
        with ``n_neg`` fresh negatives per history item), network and items frozen."""
        rows = gradient_fold_in(self.net_.user_sizes(), histories.to_csr(), self._fold_in_loss, self.n_neg,
                                self.fold_in_steps, self.fold_in_lr, self.seed)
        return self.net_.grid(rows)

    def _fold_in_loss(self, rows: list[torch.Tensor], users: torch.Tensor, items: torch.Tensor,
                      negatives: torch.Tensor) -> torch.Tensor:
        """Summed binary cross-entropy: label 1 on each history pair, 0 on its negatives."""
        users = torch.cat([users, users.repeat_interleave(negatives.shape[1])])
        labels = torch.cat([torch.ones(len(items)), torch.zeros(negatives.numel())])
        logits = self.net_.logits([r[users] for r in rows], torch.cat([items, negatives.reshape(-1)]))
        return F.binary_cross_entropy_with_logits(logits, labels, reduction="sum")
