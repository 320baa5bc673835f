"""The study's data: steps 1-2 of the protocol (package docstring; the reference code's order)
and the test samples.

Ratings >= 4 are kept (``dataset.preprocessing.implicit_threshold``), then the 10-core
(``kcore``), then each user's ``max_len`` most recent interactions (``keep_recent``); per user
the first 80% is training and the rest test (``temporal_split``), and test items never seen in
training are dropped. The star ratings of the kept interactions stay with them (DPMF_exp reads
them).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from recprivacy.config import Config
from recprivacy.data.interactions import Interactions
from recprivacy.data.preprocess import keep_recent, preprocess
from recprivacy.data.registry import load_dataset
from recprivacy.data.split import temporal_split
from recprivacy.experiments.dipsgnn.options import DIPSGNNOptions
from recprivacy.experiments.results import Results
from recprivacy.models.srgnn import SequenceSamples


@dataclass(frozen=True)
class SequenceData:
    """The study's split: training interactions, test interactions and the test samples."""

    full: Interactions
    train: Interactions
    test: Interactions
    test_samples: SequenceSamples


def with_star_ratings(data: Interactions, raw: Interactions) -> Interactions:
    """``data`` with the original ratings of its (user, item) pairs looked up in ``raw``."""
    if raw.ratings is None:
        return data
    frame = raw.to_frame().drop_duplicates(["user_id", "item_id"], keep="last").set_index(["user_id", "item_id"])
    keys = list(zip(data.user_ids[data.users], data.item_ids[data.items]))
    return data.with_changes(ratings=frame["rating"].reindex(keys).to_numpy(dtype=np.float64))


def held_out_samples(train: Interactions, test: Interactions, context: str) -> SequenceSamples:
    """Prefix samples whose targets are the test items (package docstring, step 4)."""
    train_seqs, test_seqs = train.sequences(), test.sequences()
    n_train = np.array([len(s) for s in train_seqs], dtype=np.int64)
    joined = [np.concatenate([a, b]) for a, b in zip(train_seqs, test_seqs)]
    if context == "test_segment":
        return SequenceSamples.prefixes(joined, first_target=n_train + 1, context_start=n_train)
    return SequenceSamples.prefixes(joined, first_target=np.maximum(n_train, 1))


def prepare_sequences(config: Config, options: DIPSGNNOptions, results: Results) -> SequenceData:
    """Steps 1-2 of the protocol and the test samples; records the dataset fingerprint."""
    ds = config.dataset
    with results.timed("load_data"):
        raw = load_dataset(ds.name, ds.data_dir, **ds.options)
    with results.timed("preprocess"):
        p = ds.preprocessing
        data = preprocess(raw, implicit_threshold=p.implicit_threshold, kcore=p.kcore, min_user=p.min_user, dedup=p.dedup)
        data = keep_recent(data, options.max_len)
        if p.implicit_threshold is not None:
            data = with_star_ratings(data, raw)
    with results.timed("split"):
        train, test = temporal_split(data, ratios=(1 - options.test_ratio, options.test_ratio))
        test = test.select(train.item_counts()[test.items] > 0, "drop_unseen_test_items")
    results.dataset = data.fingerprint()
    return SequenceData(data, train, test, held_out_samples(train, test, options.test_context))
