"""Why UPC-SDG's utility differs from the paper's: two measurements of one seed's releases
(``benchmarks/upcsdg_diagnostics.py`` prints them and writes the record).

1. **What the learned selection removes** (``selection_report``). The selection module (paper
   003, Eqs. 3-7) keeps a user's highest-attention items, the attention being trained to rebuild
   the frozen user vector ``p_u`` from the attention-pooled item vectors (``L_D``, Eq. 6). Per
   user with at least 3 training items: the Spearman correlation of the attention logits with the
   items' training popularity and with the feature model's score ``p_uᵀq_i`` (learned selection
   only), and the within-user percentile (0 = the user's lowest) of that score of the items
   selected for replacement or drop, averaged over users (percentiles over the selected items).
2. **What the authors' masking does to a release** (``release_report``): distinct interactions
   of the release over the original's, the share of replacements that repeat an item the user
   already has, that are the replaced item itself, or that are one of the user's held-out test
   interactions, and how many distinct items the replacements use.

``run_diagnostics`` measures both for the paper's two settings (``options.SETTINGS``) with three
generators: the study's (``attention``: learned selection, ``candidates="unconsumed"``, every
item of the user masked), the random selection of the UPC-SDG_s ablation (``random``), and the released
code's candidate mask (``authors``). The seed's features and data are the study's (``SeedLab``).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import scipy.sparse as sp
import torch
from scipy.stats import rankdata, spearmanr

from recprivacy.config import Config
from recprivacy.defenses.upcsdg import UPCSDG, FrozenEmbeddings, SyntheticRelease
from recprivacy.experiments.runner import new_results
from recprivacy.experiments.train import prepare_data
from recprivacy.experiments.upcsdg.lab import SeedLab
from recprivacy.experiments.upcsdg.options import SETTINGS, UPCSDGOptions
from recprivacy.experiments.upcsdg.release import fit_generator

#: the generators compared: name -> generator parameters over the study's own
GENERATORS = {"attention": {}, "random": {"selection": "random"}, "authors": {"candidates": "authors"}}


def user_rows(csr: sp.csr_matrix) -> list[np.ndarray]:
    """Each user's training items (sorted ids)."""
    csr.sort_indices()
    return [csr.indices[csr.indptr[u] : csr.indptr[u + 1]] for u in range(csr.shape[0])]


def selection_report(model: UPCSDG, release: SyntheticRelease, emb: FrozenEmbeddings, rows: list[np.ndarray],
                     popularity: np.ndarray) -> dict[str, float]:  # fmt: skip
    """Spearman of attention with popularity and score (learned selection only), and the mean
    score percentile of the selected items within each user's items (module docstring, 1)."""
    table = pd.concat([release.replacements, release.dropped])  # every selected item, replaced or dropped
    chosen = table.groupby("user")["original_item"].apply(np.asarray)
    rho_pop, rho_score, percentile = [], [], []
    for u, items in enumerate(rows):
        if len(items) < 3:
            continue
        score = (emb.items[items] @ emb.users[u]).numpy()
        if u in chosen.index:
            ranks = (rankdata(score) - 1) / (len(items) - 1)
            percentile.extend(ranks[np.searchsorted(items, chosen[u])])
        if model.selector_ is not None:
            with torch.no_grad():
                logits = model.selector_.logits(emb.users[np.full(len(items), u)], emb.items[items]).numpy()
            rho_pop.append(spearmanr(logits, popularity[items])[0])
            rho_score.append(spearmanr(logits, score)[0])
    report = {"selected_score_percentile": float(np.mean(percentile))}
    if rho_pop:
        report |= {"spearman_attention_popularity": float(np.nanmean(rho_pop)),
                   "spearman_attention_bpr_score": float(np.nanmean(rho_score))}  # fmt: skip
    return report


def release_report(release: SyntheticRelease, train: sp.csr_matrix, test: sp.csr_matrix) -> dict[str, float]:
    """Size of the release and where its replacements land (module docstring, 2)."""
    t = release.replacements
    users, new, old = (t[c].to_numpy(np.int64) for c in ("user", "replacement_item", "original_item"))
    return {
        "release_over_original": len(release.data) / train.nnz,
        "share_owned": float((np.asarray(train[users, new]).ravel() != 0).mean()),
        "share_identity": float((new == old).mean()),
        "share_heldout": float((np.asarray(test[users, new]).ravel() != 0).mean()),
        "distinct_replacement_items": int(len(np.unique(new))),
    }


def run_diagnostics(config: Config, options: UPCSDGOptions) -> dict[str, Any]:
    """Both measurements at ``config.seed`` (module docstring): ``{"selection": {"<setting>
    <generator>": selection_report}, "releases": {"<setting> unconsumed|authors": release_report}}``."""
    log = new_results(config)
    lab = SeedLab(config, options, prepare_data(config, log), log)
    emb = lab.features
    train, test = lab.data.train.to_csr(), lab.data.test.to_csr()
    rows, popularity = user_rows(train.copy()), np.diff(train.tocsc().indptr)
    out: dict[str, Any] = {"selection": {}, "releases": {}}
    for name, (k, gamma) in SETTINGS.items():
        for variant, extra in GENERATORS.items():
            model = fit_generator(lab.data.train, emb, k, gamma, {**options.generator, **extra}, lab.seed, config.noise)
            release = model.generate()
            if variant != "authors":
                out["selection"][f"{name} {variant}"] = selection_report(model, release, emb, rows, popularity)
            if variant != "random":
                out["releases"][f"{name} {'unconsumed' if variant == 'attention' else 'authors'}"] = release_report(release, train, test)
    return out
