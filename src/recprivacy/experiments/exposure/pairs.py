"""Step 1 of the ``exposure`` study: the (recent clicks, next exposed slate) pairs.

``source: simulated`` loads ``dataset``, splits its users 8:1:1 (user-disjoint, seeded), trains
the target recommender ``model`` and replays it along every user's history
(``data.exposure_pairs.simulate_exposure``). A sequential target (SASRec, the default in the
configs) is trained on the training users only and serves any history; a non-sequential one can
only score users it was trained on, so it is trained on every user's interactions, as a
deployed system would be. Either way each target user's last interaction is its validation item
for early stopping. ``source: mind | zhihu`` builds the pairs from the logged slates with the
authors' rules; ``impressions`` applies the one-pair-per-impression rule to an exposure log
(the synthetic generator's for ``dataset: synthetic``). The users of the pairs are then split
8:1:1 (``split: users``), or the pairs in contiguous blocks (``split: contiguous``, the
authors' code).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from recprivacy.config import Config
from recprivacy.data.exposure_pairs import (
    ExposurePairs,
    contiguous_split,
    impression_pairs,
    mind_pairs,
    simulate_exposure,
    split_pairs,
    user_groups,
    zhihu_pairs,
)
from recprivacy.data.interactions import Interactions
from recprivacy.data.preprocess import preprocess
from recprivacy.data.registry import load_dataset, load_exposure
from recprivacy.data.split import temporal_split
from recprivacy.data.synthetic import make_synthetic_exposure
from recprivacy.errors import ConfigError
from recprivacy.experiments.exposure.options import ExposureOptions
from recprivacy.experiments.results import Results
from recprivacy.models import make_model
from recprivacy.models.base import Recommender


@dataclass
class ExposureData:
    """The pairs at the largest slate size needed, their user groups and the target (if any)."""

    pairs: ExposurePairs
    groups: dict[str, np.ndarray]
    source: str
    target: Recommender | None = None
    log: Any = None
    notes: list[str] = field(default_factory=list)

    def parts(self, slate_size: int, options: ExposureOptions) -> dict[str, ExposurePairs]:
        """Train / valid / test pairs for slates of ``slate_size`` items."""
        if slate_size == self.pairs.slate_size:
            pairs = self.pairs
        elif self.source == "simulated":
            pairs = self.pairs.truncate_slates(slate_size)
        else:
            pairs = log_pairs(self.source, self.log, options.history_len, slate_size)
        return split_pairs(pairs, self.groups) if options.split == "users" else contiguous_split(pairs)


def log_pairs(source: str, log: Any, history_len: int, slate_size: int) -> ExposurePairs:
    """Pairs of an exposure log by the source's rule."""
    rule = {"mind": mind_pairs, "zhihu": zhihu_pairs, "impressions": impression_pairs}[source]
    return rule(log, history_len, slate_size)


def fit_target(config: Config, data: Interactions, train_users: np.ndarray) -> Recommender:
    """The target recommender (module docstring), early-stopped on each target user's last
    interaction."""
    model = make_model(config.model.name, **{"seed": config.seed, **config.model.params})
    users = train_users if model.sequential else np.unique(data.users)
    train, valid = temporal_split(data.subset_users(users), leave_last=1, n_parts=2)
    return model.fit(train, valid)


def load_interactions(config: Config) -> Interactions:
    """The config's dataset, loaded and preprocessed."""
    ds = config.dataset
    p = ds.preprocessing
    data = load_dataset(ds.name, ds.data_dir, **ds.options)
    return preprocess(data, implicit_threshold=p.implicit_threshold, kcore=p.kcore, min_user=p.min_user, dedup=p.dedup)


def build_exposure(config: Config, options: ExposureOptions, results: Results, max_slate: int) -> ExposureData:
    """Pairs (module docstring) with user groups seeded by the config seed; simulated slates
    hold ``max_slate`` items (smaller slates are their prefixes)."""
    m = options.history_len
    if options.source == "simulated":
        with results.timed("load_data"):
            data = load_interactions(config)
        results.dataset = data.fingerprint()
        groups = user_groups(np.flatnonzero(data.user_counts() > m), data.n_users, config.seed)
        with results.timed("fit_target"):
            target = fit_target(config, data, groups["train"])
        with results.timed("simulate_exposure"):
            pairs = simulate_exposure(target, data, m, max_slate, max_pairs_per_user=options.max_pairs_per_user)
        return ExposureData(pairs, groups, "simulated", target=target)
    with results.timed("load_data"):
        log = exposure_log(config, options)
        pairs = log_pairs(options.source, log, m, options.slate_size)
    results.dataset = {**log.describe(), "provenance": [dict(p) for p in log.provenance]}
    groups = user_groups(np.unique(pairs.users), pairs.n_users, config.seed)
    return ExposureData(pairs, groups, options.source, log=log)


def exposure_log(config: Config, options: ExposureOptions) -> Any:
    """The logged exposure of a non-simulated source: the synthetic generator's impressions
    for ``dataset: synthetic``, else the dataset's own log (which must match ``source``)."""
    ds = config.dataset
    if options.source == "impressions" and ds.name == "synthetic":
        steps = options.max_pairs_per_user or 20
        return make_synthetic_exposure(load_interactions(config), options.slate_size, options.history_len, steps, config.seed)
    if options.source in ("mind", "zhihu") and ds.name != options.source:
        raise ConfigError(f"study_options.source: {options.source!r} reads the {options.source!r} dataset, but dataset.name is {ds.name!r}")
    return load_exposure(ds.name, ds.data_dir, **ds.options)
