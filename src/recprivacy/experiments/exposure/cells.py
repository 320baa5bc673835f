"""One attacker of the ``exposure`` study trained and scored (a cell of :mod:`.grid`).

* Attack grid (Tables 3-6): every encoder x decoder x seed, scored by Recall/NDCG/MRR at
  ``ks`` over two candidate sets: the whole catalogue (the textbook protocol) and the user's
  logged items (what the authors' code ranked, so the one comparable with the paper's tables).
* Slate sweep (Figs. 6-7): Recall@10 of ``sweep_encoder`` with every decoder for each slate
  size N (simulated slates are truncated top-N lists; logs are rebuilt per N), first seed.

``blind_baselines`` scores the popularity and exposed-item guesses the attack is judged against
on the same test pairs and candidate sets.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from recprivacy.attacks.exposure import DECODERS, ENCODERS, ExposureAttack, Vocabulary, evaluate_baselines
from recprivacy.data.exposure_pairs import ExposurePairs
from recprivacy.errors import ConfigError
from recprivacy.experiments.exposure.options import ExposureOptions
from recprivacy.metrics.summary import mean_sd

CANDIDATES = ("all", "user_log")


def attacker_parts(name: str, field: str) -> tuple[str, str]:
    """``(encoder, decoder)`` of an ``encoder+decoder`` name given in config field ``field``."""
    encoder, _, decoder = name.partition("+")
    if encoder not in ENCODERS or decoder not in DECODERS:
        raise ConfigError(f"{field}: expected 'encoder+decoder', got {name!r}")
    return encoder, decoder


def make_attack(options: ExposureOptions, encoder: str, decoder: str, seed: int) -> ExposureAttack:
    """An unfitted attacker with the study's ``attacker`` hyperparameters."""
    return ExposureAttack(encoder, decoder, seed=seed, **options.attacker.model_dump())


def blind_baselines(options: ExposureOptions, parts: dict[str, ExposurePairs]) -> dict[str, dict]:
    """The popularity and exposed-item baselines (Tables 3-6) under both candidate sets, on the
    attacker's vocabulary of the training pairs: ``candidates -> baseline -> metric -> value``."""
    vocab = Vocabulary.from_pairs(parts["train"], options.attacker.vocab)
    return {c: evaluate_baselines(vocab, parts["train"], parts["test"], options.ks, c) for c in CANDIDATES}


def train_and_score(attack: ExposureAttack, parts: dict[str, ExposurePairs], ks: Sequence[int]) -> dict[str, Any]:
    """Fit on train (early stopping on valid) and evaluate test under both candidate modes,
    with timings and throughput (pairs per second)."""
    start, cpu = time.perf_counter(), time.process_time()
    attack.fit(parts["train"], parts["valid"])
    fit_s, fit_cpu = time.perf_counter() - start, time.process_time() - cpu
    start = time.perf_counter()
    scores = {c: attack.evaluate(parts["test"], ks, candidates=c) for c in CANDIDATES}
    eval_s = time.perf_counter() - start
    epochs = len(attack.history_.losses)
    return {
        **scores,
        "fit_seconds": fit_s,
        "fit_cpu_seconds": fit_cpu,
        "epochs": epochs,
        "best_epoch": attack.history_.best_epoch + 1,
        "train_pairs_per_second": len(parts["train"]) * epochs / fit_s,
        "train_pairs_per_cpu_second": len(parts["train"]) * epochs / max(fit_cpu, 1e-9),
        "eval_pairs_per_second": 2 * scores["all"]["n_pairs"] / eval_s,
    }


def mean_std(runs: dict[tuple, dict], key: tuple[str, str], mode: str, metric: str) -> tuple[float, float]:
    """Mean and sample sd over seeds (``metrics.summary``) of one encoder + decoder."""
    summary = mean_sd(r[mode][metric] for (e, d, _), r in runs.items() if (e, d) == key)
    return summary.mean, summary.sd
