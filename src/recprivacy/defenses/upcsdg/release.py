"""The synthetic dataset, its privacy record, and the two folders it is written to.

A ``SyntheticRelease`` holds

* ``data``: the synthetic interactions ``{V_u}`` as an ``Interactions`` with the original id
  spaces, one row per (user, item), binary. Decision: ratings, timestamps and user features are
  *not* released (a kept timestamp or a demographic row would tie the synthetic user back to
  other sources); public item features are kept.
* ``replacements``: one row per written replacement — the user, the original item, its
  replacement, the order of choice (0 = lowest attention), the user's γ, ``f_sim`` of the pair
  (the trained ``sim_mode``) and plain cosine (the paper's Figure 4 does not say which it
  plots). Every row has
  ``f_sim ≤ γ``: a pair is written only when a replacement was found within the cap *and* its
  recomputed ``f_sim`` is within it (a guard against float rounding between the masked pick and
  this record).
* ``dropped``: the selected interactions with no candidate within γ (``model.py``, decision of
  issue 29): removed from the release, with nothing in their place.
* ``per_user``: for every user, how many items they have, how many were selected
  (``round(k_u |I_u|)``), replaced and dropped, the realised share of their items that is not
  released as it was (replaced or dropped) against their ``k``, the mean and largest ``f_sim``
  against their ``γ``, and whether their preferences came from the file or the default.
* ``summary``: the same aggregated (mean ``f_sim``, mean cosine, share within ``γ``).

``write_release`` writes two folders (issue 29: whoever holds the replacement map can undo the
protection, so it must never sit beside the released data):

* ``public/``, what may be released: ``NAME.inter`` (+ ``NAME.item``) RecBole atomic files and
  LightGCN's ``train.txt`` with its ``user_list.txt`` / ``item_list.txt``. Decision: these are
  written from ``public_data``, which keeps only the users and items that occur in the
  synthetic interactions and numbers them in order of original id, so the id maps say nothing
  the ``.inter`` file does not (not which users or items the original data held, nor the order
  a loader met them in). Rows are sorted by user and item, so their order does not mark the
  synthetic ones.
* ``private/`` (mode 0700), what undoes the protection and must be kept: ``replacements.csv``,
  ``dropped.csv``, ``privacy_per_user.csv``, ``privacy_summary.json`` and ``config.yaml``.

Both are built in a staging folder inside the output (``.release.partial-<host>-<pid>-<random>``,
``recprivacy.io.staging_folder``, mode 0700) and renamed into place, ``private/`` first, so a
failed write never leaves a partial ``public/`` and nothing beside ``public/`` looks like a
release. A writer killed before the renames (SIGKILL) leaves its staging folder, which holds
the replacement map: the next ``write_release`` into the same folder deletes it once its writer
is dead (``io.remove_stale_staging``).

``PAUSE_VAR``, for tests only: when it names a FIFO, ``write_release`` opens it for reading once
the staging folder is complete, before the renames, and waits there for a writer (a kill test
stops the process at that point).
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import scipy.sparse as sp
import yaml

from recprivacy.data.interactions import Interactions
from recprivacy.data.loaders.recbole import write_recbole
from recprivacy.defenses.upcsdg.generation import NO_CANDIDATE
from recprivacy.defenses.upcsdg.preferences import PrivacyPreferences
from recprivacy.io import check_output_folder, remove_stale_staging, staging_folder, write_text_atomic

RELEASE_FOLDERS = ("public", "private")
"""The folders ``write_release`` creates under its output folder."""

PAUSE_VAR = "RECPRIVACY_TEST_PAUSE_RELEASE"
"""Tests only: a FIFO ``write_release`` waits on before its renames (module docstring)."""


@dataclass(frozen=True)
class SyntheticRelease:
    """A synthetic dataset with the record of what was replaced (see module docstring)."""

    data: Interactions
    replacements: pd.DataFrame
    dropped: pd.DataFrame
    per_user: pd.DataFrame
    summary: dict[str, Any]

    def pairs_matrix(self, column: str) -> sp.csr_matrix:
        """User x item matrix of the selected pairs: ``column`` is ``"original_item"`` (what
        was removed, replaced or dropped: the recovery attack's target) or
        ``"replacement_item"`` (what was added)."""
        tables = [self.replacements] if column == "replacement_item" else [self.replacements, self.dropped]
        users = np.concatenate([t["user"].to_numpy(np.int64) for t in tables])
        items = np.concatenate([t[column].to_numpy(np.int64) for t in tables])
        shape = (self.data.n_users, self.data.n_items)
        return sp.csr_matrix((np.ones(len(users)), (users, items)), shape=shape)


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
    ``replacements`` (aligned arrays; ``NO_CANDIDATE`` and ``f_sim`` NaN where none was found)
    on top of ``original``'s interactions. Every selected original is removed; a replacement is
    added only when ``f_sim ≤ γ_u``. A replacement that repeats a kept item or another
    replacement (possible only with the authors' masking) collapses into one interaction."""
    csr = original.to_csr()
    csr.sort_indices()
    all_users = np.repeat(np.arange(original.n_users), np.diff(csr.indptr))
    keys = all_users * original.n_items + csr.indices
    kept = ~np.isin(keys, users * original.n_items + originals)
    gamma = preferences.gamma[users]
    written = (replacements != NO_CANDIDATE) & (f_sim <= gamma)
    added = users[written] * original.n_items + replacements[written]
    released = np.unique(np.concatenate([keys[kept], added]))
    data = Interactions(
        users=released // original.n_items, items=released % original.n_items,
        n_users=original.n_users, n_items=original.n_items,
        user_ids=original.user_ids, item_ids=original.item_ids, item_features=original.item_features,
        name=f"{original.name}-upcsdg", provenance=original.provenance,
    ).with_step("upcsdg", **method)
    selected = pd.DataFrame({
        "user": users, "user_id": original.user_ids[users],
        "original_item": originals, "original_item_id": original.item_ids[originals], "order": order, "gamma": gamma,
    })
    table = selected[written].assign(
        replacement_item=replacements[written], replacement_item_id=original.item_ids[replacements[written]],
        f_sim=f_sim[written], cosine=cosine[written],
    ).reset_index(drop=True)
    dropped = selected[~written].reset_index(drop=True)
    per_user = _per_user(original, csr, table, dropped, preferences)
    summary = _summary(original, data, table, dropped, per_user, preferences, method)
    return SyntheticRelease(data, table, dropped, per_user, summary)


def _per_user(original: Interactions, csr: Any, table: pd.DataFrame, dropped: pd.DataFrame,
              prefs: PrivacyPreferences) -> pd.DataFrame:
    n = original.n_users
    sizes = np.diff(csr.indptr)
    replaced = np.bincount(table["user"], minlength=n)
    lost = np.bincount(dropped["user"], minlength=n)
    sim_sum = np.bincount(table["user"], weights=table["f_sim"], minlength=n)
    sim_max = np.full(n, np.nan)
    np.fmax.at(sim_max, table["user"].to_numpy(), table["f_sim"].to_numpy())
    with np.errstate(invalid="ignore", divide="ignore"):
        return pd.DataFrame({
            "user_id": original.user_ids, "n_items": sizes, "n_selected": replaced + lost, "n_replaced": replaced,
            "n_dropped": lost, "k": prefs.k,
            "realised_ratio": np.where(sizes > 0, (replaced + lost) / np.maximum(sizes, 1), np.nan),
            "gamma": prefs.gamma, "mean_f_sim": np.where(replaced > 0, sim_sum / np.maximum(replaced, 1), np.nan),
            "max_f_sim": sim_max, "default_preferences": ~prefs.explicit,
        })


def _summary(original: Interactions, data: Interactions, table: pd.DataFrame, dropped: pd.DataFrame,
             per_user: pd.DataFrame, prefs: PrivacyPreferences, method: dict[str, Any]) -> dict[str, Any]:
    ratio = per_user["realised_ratio"].dropna()
    pairs, selected = len(table), len(table) + len(dropped)

    def mean(column: str) -> float:
        return float(table[column].mean()) if pairs else float("nan")

    return {
        "dataset": original.name,
        "users": int((per_user["n_items"] > 0).sum()),
        "items": original.n_items,
        "original_interactions": int(per_user["n_items"].sum()),
        "synthetic_interactions": len(data),
        "selected_interactions": selected,
        "replaced_interactions": pairs,
        "dropped_interactions": len(dropped),
        "share_dropped": len(dropped) / selected if selected else float("nan"),
        "users_with_drops": int((per_user["n_dropped"] > 0).sum()),
        "realised_ratio_mean": float(ratio.mean()),
        "realised_ratio_min": float(ratio.min()),
        "realised_ratio_max": float(ratio.max()),
        "mean_f_sim": mean("f_sim"),
        "max_f_sim": float(table["f_sim"].max()) if pairs else float("nan"),
        "mean_cosine": mean("cosine"),
        "users_with_default_preferences": prefs.n_default,
        "preferences": prefs.describe(),
        "method": method,
    }


def public_data(data: Interactions) -> Interactions:
    """``data`` as it is released: only the users and items that occur in it, numbered in
    order of original id, rows sorted by (user, item) (see module docstring)."""
    present = data.reindex()
    user_order = np.argsort(present.user_ids, kind="stable")
    item_order = np.argsort(present.item_ids, kind="stable")
    features = present.item_features
    renumbered = present.with_changes(
        users=np.argsort(user_order)[present.users], items=np.argsort(item_order)[present.items],
        user_ids=present.user_ids[user_order], item_ids=present.item_ids[item_order],
        item_features=None if features is None else features.iloc[item_order].reset_index(drop=True),
    )
    return renumbered.select(np.argsort(renumbered.users * renumbered.n_items + renumbered.items, kind="stable"))


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


def write_release(release: SyntheticRelease, folder: str | Path, name: str | None = None,
                  config: Mapping[str, Any] | None = None) -> dict[str, Path]:
    """Write ``folder/public/`` and ``folder/private/`` (see module docstring); ``config`` (the
    run's settings) goes to ``private/config.yaml``. Refuses a ``folder`` that already holds
    either, and first deletes the staging folders of dead writers in it. Returns
    ``{"public": path, "private": path}``."""
    out = check_output_folder(folder, writes=RELEASE_FOLDERS)
    out.mkdir(parents=True, exist_ok=True)
    remove_stale_staging(out)
    staging = staging_folder(out, "release")
    staging.mkdir(mode=0o700)
    try:
        _write_public(release, staging / "public", name or release.data.name)
        _write_private(release, staging / "private", config)
        _pause_for_tests()
        for part in ("private", "public"):
            os.rename(staging / part, out / part)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return {part: out / part for part in RELEASE_FOLDERS}


def _pause_for_tests() -> None:
    """Wait for a writer on the FIFO ``PAUSE_VAR`` names, if it names one (module docstring)."""
    fifo = os.environ.get(PAUSE_VAR)
    if fifo:
        with open(fifo, "rb") as pause:
            pause.read()


def _write_public(release: SyntheticRelease, folder: Path, name: str) -> None:
    """The synthetic interactions only, in RecBole and LightGCN formats."""
    folder.mkdir()
    data = public_data(release.data)
    write_recbole(data, folder, name)
    texts = {"train.txt": lightgcn_text(data), "user_list.txt": id_list_text(data.user_ids),
             "item_list.txt": id_list_text(data.item_ids)}
    for file_name, text in texts.items():
        write_text_atomic(folder / file_name, text)


def _write_private(release: SyntheticRelease, folder: Path, config: Mapping[str, Any] | None) -> None:
    """Everything that links the release back to the original data, readable by the owner only."""
    folder.mkdir(mode=0o700)
    texts = {
        "replacements.csv": release.replacements.to_csv(index=False),
        "dropped.csv": release.dropped.to_csv(index=False),
        "privacy_per_user.csv": release.per_user.to_csv(index=False),
        "privacy_summary.json": json.dumps(release.summary, indent=2, default=_json_default) + "\n",
    }
    if config is not None:
        texts["config.yaml"] = yaml.safe_dump(dict(config), sort_keys=False)
    for file_name, text in texts.items():
        write_text_atomic(folder / file_name, text)


def _json_default(value: Any) -> Any:
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    raise TypeError(f"not JSON serialisable: {type(value).__name__}")
