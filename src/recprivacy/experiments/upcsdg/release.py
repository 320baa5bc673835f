"""Generating UPC-SDG releases for the study, the audit section and the matrix, and
``recprivacy synthesize``, which writes one (``synthesize``).

Every release of the study and the audit is generated with one privacy setting for all users
(``fit_generator``); ``synthesize`` reads per-user settings from a preferences file. The
recovery attack on a release is judged against the popularity guess with a paired interval
over the users with a replaced item (``judged_recovery``).
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import scipy.sparse as sp

from recprivacy.attacks.recovery import PopularityGuess, recovery_metrics
from recprivacy.config import Config, validate_options
from recprivacy.data.interactions import Interactions
from recprivacy.data.registry import find_data_dir
from recprivacy.defenses.upcsdg import (
    RELEASE_FOLDERS,
    UPCSDG,
    FrozenEmbeddings,
    PrivacyPreferences,
    SyntheticRelease,
    load_preferences,
    require_preferences_file,
    write_release,
)
from recprivacy.defenses.upcsdg.preferences import check_unit_interval
from recprivacy.errors import ConfigError
from recprivacy.experiments.runner import new_results
from recprivacy.experiments.sampling import sample_users
from recprivacy.experiments.train import fit_model, prepare_data
from recprivacy.experiments.upcsdg.options import UPCSDGOptions
from recprivacy.io import check_output_folder
from recprivacy.metrics.intervals import Estimate, paired_difference_interval, weighted_mean


def fit_generator(train: Interactions, features: FrozenEmbeddings, k: float, gamma: float, params: dict[str, Any],
                  seed: int, noise: str) -> UPCSDG:  # fmt: skip
    """UPC-SDG with ``params`` trained on ``train`` for every user at the same ``k`` and ``gamma``
    (``.generate()`` gives the release)."""
    model = UPCSDG(**{**params, "seed": seed, "noise": noise})
    return model.fit(train, features, PrivacyPreferences.uniform(train.n_users, k, gamma))


def judged_recovery(attack: Any, release: SyntheticRelease, k: int, max_users: int | None = None,
                    seed: int = 0) -> tuple[Estimate, float, Estimate]:  # fmt: skip
    """Recall@k of a fitted recovery ``attack`` on the replaced originals of ``release``, the
    popularity guess's Recall@k on the same users, and the margin, paired over the users with a
    replaced item (``intervals.paired_difference_interval``), or over a seeded sample of at most
    ``max_users`` of them (``experiments.sampling``; the blind attacker's cost per user is its
    released items x the catalogue, so the audit attacks a sample: issue 33)."""
    truth, key = recovery_truth(release, max_users, seed), f"recall@{k}"
    found = recovery_metrics(attack, truth, ks=(k,), per_user=True)[key]
    guess = recovery_metrics(PopularityGuess().fit(release.data), truth, ks=(k,), per_user=True)[key]
    return paired_difference_interval(weighted_mean(found), weighted_mean(guess), np.arange(len(found)))


def recovery_truth(release: SyntheticRelease, max_users: int | None, seed: int) -> sp.csr_matrix:
    """The replaced originals of ``release`` (user x item), rows kept for a seeded sample of at
    most ``max_users`` of the users with one (every such user when None)."""
    truth = release.pairs_matrix("original_item")
    users = np.flatnonzero(np.diff(truth.indptr) > 0)
    chosen = sample_users(users, max_users, seed)
    if len(chosen) == len(users):
        return truth
    keep = np.zeros(truth.shape[0])
    keep[chosen] = 1.0
    return sp.csr_matrix(sp.diags(keep) @ truth)


def synthesize(config: Config, out: str | Path, privacy: str | Path | None, k: float, gamma: float) -> SyntheticRelease:
    """Release a synthetic version of the whole (preprocessed) dataset into ``out/public/``,
    with what undoes it in ``out/private/`` (``release.write_release``).

    Before any work: the settings, the output folder (not an input, not holding ``public/`` or
    ``private/``, not a file) and the preferences file are checked. Features: the configured
    model fitted on the configured training split (early stopping on its validation split).
    Generator: trained on, and applied to, every interaction; whether its randomness changed the
    release is checked (``checked_randomness``). ``privacy`` names a CSV/JSON preferences file;
    ``k`` and ``gamma`` are the defaults for users it omits.
    """
    options = validate_options(UPCSDGOptions, config.study_options)
    k, gamma = check_unit_interval(k, "k"), check_unit_interval(gamma, "gamma")
    check_output_folder(out, inputs=dataset_inputs(config), writes=RELEASE_FOLDERS)
    if privacy is not None:
        require_preferences_file(privacy)
    results = new_results(config)
    data = prepare_data(config, results)
    prefs = (load_preferences(privacy, data.full, k, gamma) if privacy is not None
             else PrivacyPreferences.uniform(data.full.n_users, k, gamma))
    features = FrozenEmbeddings.from_model(fit_model(config, data, results))
    model = UPCSDG(**{**options.generator, "seed": config.seed, "noise": config.noise})
    release = checked_randomness(model.fit(data.full, features, prefs))
    write_release(release, out, f"{data.full.name}-upcsdg", config.to_dict())
    return release


def checked_randomness(model: UPCSDG) -> SyntheticRelease:
    """``model``'s release, its ``method["noise"]`` saying whether the randomness changed it.

    An export that drew nothing says so itself (``defenses.upcsdg.model.NO_DRAW``). Secure
    draws may still change nothing (sampled pool items that never win, a Gumbel draw that never
    overturns an argmax), which cannot be known without trying: a second export from the same
    model with fresh draws (one more export's time) is compared with the release, and the
    statement says how many released interactions differ, or that none did. Simulation draws
    are seeded and say so already.
    """
    release = model.generate()
    if model.noise != "secure" or not model.drew_:
        return release
    changed = np.setdiff1d(_keys(release.data), _keys(model.generate().data)).size
    note = (f"; a second export with fresh draws changed {changed:,} of the {len(release.data):,} released interactions"
            if changed else "; but a second export with fresh draws gave the same release: the draws may not change it")
    method = {**release.summary["method"], "noise": release.summary["method"]["noise"] + note}
    return replace(release, summary={**release.summary, "method": method})


def _keys(data: Interactions) -> np.ndarray:
    """Each interaction of ``data`` as one number, ``user * n_items + item``."""
    return data.users.astype(np.int64) * data.n_items + data.items


def dataset_inputs(config: Config) -> list[Path]:
    """The file or folder the configured dataset is read from (none for ``synthetic``): a path
    given as the dataset, or the folder a named dataset is found in."""
    name = config.dataset.name
    if name == "synthetic":
        return []
    if Path(name).exists():
        return [Path(name)]
    try:
        folder = find_data_dir(name, config.dataset.data_dir)
    except ConfigError:  # neither a dataset name nor an existing path: the loader reports it
        return []
    return [] if folder is None else [folder]
