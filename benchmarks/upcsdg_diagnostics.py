"""Why UPC-SDG's utility differs from the paper's: two measurements on real data.

1. **What the learned selection removes.** The selection module (paper 003, Eqs. 3-7) keeps a
   user's highest-attention items, the attention being trained to rebuild the frozen BPR-MF user
   vector ``p_u`` from the attention-pooled item vectors (``L_D``, Eq. 6). For every user this
   script reports the within-user Spearman correlation of the attention logits with the items'
   training popularity and with the BPR-MF score ``p_uᵀq_i``, and the mean within-user percentile
   (0 = the user's lowest) of the BPR-MF score of the items selected for replacement, for the
   learned selection and for the random selection of the UPC-SDG_s ablation.
2. **What the authors' masking does to a release.** For the paper's two settings ("+": k = 0.2,
   γ = 0.9; "−": k = 0.8, γ = 0.1), releases generated with ``candidates="unconsumed"`` (ours,
   digest decision 8) and ``candidates="authors"`` (the released code's mask): distinct
   interactions of the release over the original's, the share of replacements that repeat an
   item the user already has, that are the replaced item itself, or that are one of the user's
   held-out test interactions, and how many distinct items the replacements use.

Usage::

    OMP_NUM_THREADS=1 python benchmarks/upcsdg_diagnostics.py --dataset ml-100k [--seed 0]

Prints a table and writes ``benchmarks/out/upcsdg-diagnostics-<dataset>.json``.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import scipy.sparse as sp
import torch
from scipy.stats import rankdata, spearmanr

from recprivacy.config import load_config, validate_options
from recprivacy.defenses.upcsdg import UPCSDG, FrozenEmbeddings, PrivacyPreferences, SyntheticRelease
from recprivacy.experiments.runner import new_results
from recprivacy.experiments.train import fit_model, prepare_data
from recprivacy.experiments.upcsdg.options import SETTINGS, UPCSDGOptions, generator_params
from recprivacy.io import write_text_atomic

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "benchmarks" / "out"


def user_rows(csr: sp.csr_matrix) -> list[np.ndarray]:
    """Each user's training items (sorted ids)."""
    csr.sort_indices()
    return [csr.indices[csr.indptr[u] : csr.indptr[u + 1]] for u in range(csr.shape[0])]


def selection_report(model: UPCSDG, release: SyntheticRelease, emb: FrozenEmbeddings, rows: list[np.ndarray],
                     popularity: np.ndarray) -> dict[str, float]:
    """Spearman of attention with popularity and BPR score (learned selection only), and the
    mean BPR-score percentile of the selected items within each user's items."""
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
                   "spearman_attention_bpr_score": float(np.nanmean(rho_score))}
    return report


def release_report(release: SyntheticRelease, train: sp.csr_matrix, test: sp.csr_matrix) -> dict[str, float]:
    """Size of the release and where its replacements land."""
    t = release.replacements
    users, new, old = (t[c].to_numpy(np.int64) for c in ("user", "replacement_item", "original_item"))
    return {
        "release_over_original": len(release.data) / train.nnz,
        "share_owned": float((np.asarray(train[users, new]).ravel() != 0).mean()),
        "share_identity": float((new == old).mean()),
        "share_heldout": float((np.asarray(test[users, new]).ravel() != 0).mean()),
        "distinct_replacement_items": int(len(np.unique(new))),
    }


def run(dataset: str, seed: int) -> dict[str, Any]:
    config = load_config(ROOT / "configs" / "upcsdg" / f"{dataset}.yaml").model_copy(update={"seed": seed})
    options = validate_options(UPCSDGOptions, config.study_options)
    results = new_results(config)
    data = prepare_data(config, results)
    emb = FrozenEmbeddings.from_model(fit_model(config, data, results))
    train, test = data.train.to_csr(), data.test.to_csr()
    rows, popularity = user_rows(train.copy()), np.diff(train.tocsc().indptr)
    out: dict[str, Any] = {"dataset": dataset, "seed": seed, "selection": {}, "releases": {}}
    for name, (k, gamma) in SETTINGS.items():
        prefs = PrivacyPreferences.uniform(data.train.n_users, k, gamma)
        for variant, extra in (("attention", {}), ("random", {"selection": "random"}),
                               ("authors", {"candidates": "authors"})):
            params = {**generator_params(options.generator), **extra, "seed": seed, "noise": config.noise}
            model = UPCSDG(**params).fit(data.train, emb, prefs)
            release = model.generate()
            if variant != "authors":
                out["selection"][f"{name} {variant}"] = selection_report(model, release, emb, rows, popularity)
            if variant != "random":
                out["releases"][f"{name} {'unconsumed' if variant == 'attention' else 'authors'}"] = \
                    release_report(release, train, test)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", default="ml-100k")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    torch.set_num_threads(1)
    out = run(args.dataset, args.seed)
    for section in ("selection", "releases"):
        for key, values in out[section].items():
            print(f"{args.dataset} {section:9s} {key:18s} " + "  ".join(f"{k} {v:.3f}" if isinstance(v, float)
                                                                       else f"{k} {v}" for k, v in values.items()))
    path = OUT / f"upcsdg-diagnostics-{args.dataset}.json"
    write_text_atomic(path, json.dumps(out, indent=2) + "\n")
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
