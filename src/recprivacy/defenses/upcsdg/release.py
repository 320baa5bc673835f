"""The released synthetic dataset, its privacy summary, and its files.

A ``SyntheticRelease`` holds

* ``data``: the synthetic interactions ``{V_u}`` as an ``Interactions`` with the original id
  spaces, one row per (user, item), binary. Decision: ratings, timestamps and user features are
  *not* released (a kept timestamp or a demographic row would tie the synthetic user back to
  other sources); public item features are kept.
* ``replacements``: one row per replaced interaction — the user, the original item, its
  replacement, the order of choice (0 = lowest attention), the user's γ, ``f_sim`` of the pair
  (the trained ``sim_mode``), plain cosine, and whether ``f_sim ≤ γ`` (digest decision 19).
* ``per_user``: for every user, how many items they have and how many were replaced, the
  realised share against their ``k``, the mean and largest ``f_sim`` against their ``γ``, and
  whether their preferences came from the file or the global default.
* ``summary``: the same aggregated (decision 19 and the checklist's privacy report).

``write_release`` writes a folder: ``NAME.inter`` (+ ``NAME.item``) RecBole atomic files
(``data.loaders.recbole.write_recbole``), LightGCN's ``train.txt`` (``uid i1 i2 …`` with
0-based internal ids) with its ``user_list.txt`` / ``item_list.txt`` (``org_id remap_id``),
``replacements.csv``, ``privacy_per_user.csv`` and ``privacy_summary.json``. Every file is
written to a temporary name and renamed into place.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import scipy.sparse as sp

from recprivacy.data.interactions import Interactions
from recprivacy.data.loaders.recbole import write_recbole
from recprivacy.defenses.upcsdg.preferences import PrivacyPreferences
from recprivacy.io import write_text_atomic


@dataclass(frozen=True)
class SyntheticRelease:
    """A synthetic dataset with the record of what was replaced (see module docstring)."""

    data: Interactions
    replacements: pd.DataFrame
    per_user: pd.DataFrame
    summary: dict[str, Any]

    def pairs_matrix(self, column: str) -> sp.csr_matrix:
        """User x item matrix of the replaced pairs: ``column`` is ``"original_item"`` (what
        was removed, the recovery attack's target) or ``"replacement_item"`` (what was added)."""
        shape = (self.data.n_users, self.data.n_items)
        users = self.replacements["user"].to_numpy(np.int64)
        return sp.csr_matrix((np.ones(len(users)), (users, self.replacements[column].to_numpy(np.int64))), shape=shape)


def build_release(
    original: Interactions,
    users: np.ndarray,
    originals: np.ndarray,
    replacements: np.ndarray,
    order: np.ndarray,
    preferences: PrivacyPreferences,
    f_sim: np.ndarray,
    cosine: np.ndarray,
    method: dict[str, Any],
) -> SyntheticRelease:
    """Assemble the release from the selected pairs ``(users, originals)`` and their
    ``replacements`` (aligned arrays) on top of ``original``'s interactions; a replacement that
    repeats a kept item or another replacement (possible only with the authors' masking)
    collapses into one interaction."""
    csr = original.to_csr()
    csr.sort_indices()
    all_users = np.repeat(np.arange(original.n_users), np.diff(csr.indptr))
    keys = all_users * original.n_items + csr.indices
    kept = ~np.isin(keys, users * original.n_items + originals)
    released = np.unique(np.concatenate([keys[kept], users * original.n_items + replacements]))
    data = Interactions(
        users=released // original.n_items, items=released % original.n_items,
        n_users=original.n_users, n_items=original.n_items,
        user_ids=original.user_ids, item_ids=original.item_ids, item_features=original.item_features,
        name=f"{original.name}-upcsdg", provenance=original.provenance,
    ).with_step("upcsdg", **method)
    gamma = preferences.gamma[users]
    table = pd.DataFrame({
        "user": users, "user_id": original.user_ids[users],
        "original_item": originals, "original_item_id": original.item_ids[originals],
        "replacement_item": replacements, "replacement_item_id": original.item_ids[replacements],
        "order": order, "gamma": gamma, "f_sim": f_sim, "cosine": cosine, "within_gamma": f_sim <= gamma,
    })
    per_user = _per_user(original, csr, table, preferences)
    return SyntheticRelease(data, table, per_user, _summary(original, data, table, per_user, preferences, method))


def _per_user(original: Interactions, csr: Any, table: pd.DataFrame, prefs: PrivacyPreferences) -> pd.DataFrame:
    n = original.n_users
    sizes = np.diff(csr.indptr)
    replaced = np.bincount(table["user"], minlength=n)
    sim_sum = np.bincount(table["user"], weights=table["f_sim"], minlength=n)
    sim_max = np.full(n, np.nan)
    np.fmax.at(sim_max, table["user"].to_numpy(), table["f_sim"].to_numpy())
    above = np.bincount(table["user"], weights=(~table["within_gamma"]).astype(float), minlength=n).astype(np.int64)
    with np.errstate(invalid="ignore", divide="ignore"):
        return pd.DataFrame({
            "user_id": original.user_ids, "n_items": sizes, "n_replaced": replaced, "k": prefs.k,
            "realised_ratio": np.where(sizes > 0, replaced / np.maximum(sizes, 1), np.nan),
            "gamma": prefs.gamma, "mean_f_sim": np.where(replaced > 0, sim_sum / np.maximum(replaced, 1), np.nan),
            "max_f_sim": sim_max, "n_above_gamma": above, "default_preferences": ~prefs.explicit,
        })


def _summary(original: Interactions, data: Interactions, table: pd.DataFrame, per_user: pd.DataFrame,
             prefs: PrivacyPreferences, method: dict[str, Any]) -> dict[str, Any]:
    ratio = per_user["realised_ratio"].dropna()
    pairs = len(table)

    def mean(column: str) -> float:
        return float(table[column].mean()) if pairs else float("nan")

    return {
        "dataset": original.name,
        "users": int((per_user["n_items"] > 0).sum()),
        "items": original.n_items,
        "original_interactions": int(per_user["n_items"].sum()),
        "synthetic_interactions": len(data),
        "replaced_interactions": pairs,
        "realised_ratio_mean": float(ratio.mean()),
        "realised_ratio_min": float(ratio.min()),
        "realised_ratio_max": float(ratio.max()),
        "mean_f_sim": mean("f_sim"),
        "max_f_sim": float(table["f_sim"].max()) if pairs else float("nan"),
        "mean_cosine": mean("cosine"),
        "share_within_gamma": float(table["within_gamma"].mean()) if pairs else float("nan"),
        "users_with_default_preferences": prefs.n_default,
        "preferences": prefs.describe(),
        "method": method,
    }


def lightgcn_text(data: Interactions) -> str:
    """LightGCN's ``train.txt``: one line ``uid i1 i2 …`` per user with an interaction
    (0-based internal ids, items ascending)."""
    csr = data.to_csr()
    csr.sort_indices()
    lines = [" ".join(map(str, [u, *csr.indices[csr.indptr[u] : csr.indptr[u + 1]]]))
             for u in np.flatnonzero(np.diff(csr.indptr))]
    return "\n".join(lines) + "\n"


def id_list_text(original_ids: np.ndarray) -> str:
    """LightGCN's ``user_list.txt`` / ``item_list.txt``: ``org_id remap_id`` lines."""
    return "org_id remap_id\n" + "".join(f"{org} {i}\n" for i, org in enumerate(original_ids))


def write_release(release: SyntheticRelease, folder: str | Path, name: str | None = None) -> dict[str, Path]:
    """Write the release's files into ``folder`` (created if needed); returns their paths."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    name = name or release.data.name
    written = {kind: Path(p) for kind, p in write_recbole(release.data, folder, name).items()}
    texts = {
        "train.txt": lightgcn_text(release.data),
        "user_list.txt": id_list_text(release.data.user_ids),
        "item_list.txt": id_list_text(release.data.item_ids),
        "replacements.csv": release.replacements.to_csv(index=False),
        "privacy_per_user.csv": release.per_user.to_csv(index=False),
        "privacy_summary.json": json.dumps(release.summary, indent=2, default=_json_default) + "\n",
    }
    for file_name, text in texts.items():
        write_text_atomic(folder / file_name, text)
        written[file_name] = folder / file_name
    return written


def _json_default(value: Any) -> Any:
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    raise TypeError(f"not JSON serialisable: {type(value).__name__}")
