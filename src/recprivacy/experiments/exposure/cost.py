"""What one attacker of the ``exposure`` study costs (``benchmarks/exposure.py``'s ``speed`` and
``rates`` modes; the benchmark adds the machine, threads and memory and writes the records).

* ``attacker_cost``: one attacker as the study trains it (early stopping on validation), then
  the test evaluation under both candidate sets: wall and CPU seconds per stage, epochs,
  training pairs per CPU second (``train pairs x epochs / fit CPU s``), evaluation pairs per
  CPU second (both candidate sets), Recall@10 beside the blind baselines' at k = 10.
* ``attacker_rates``: every model's throughput on the same pairs: one epoch of training minus
  its validation pass, one validation pass at k = 10, and the test evaluation at ``ks`` under
  both candidate sets.

Every attacker is the study's own (``cells.make_attack``, first seed), so the timings are of
the attacker whose numbers the study reports.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from recprivacy.attacks.exposure import evaluate_baselines
from recprivacy.data.exposure_pairs import ExposurePairs
from recprivacy.experiments.exposure.cells import CANDIDATES, attacker_parts, make_attack
from recprivacy.experiments.exposure.options import ExposureOptions
from recprivacy.timing import clocked

Parts = dict[str, ExposurePairs]


def attacker_cost(options: ExposureOptions, parts: Parts, model: str) -> dict[str, Any]:
    """One ``encoder+decoder`` attacker trained and evaluated (module docstring)."""
    encoder, decoder = attacker_parts(model, "--model")
    attack, fit = clocked(lambda: make_attack(options, encoder, decoder, options.seeds[0]).fit(parts["train"], parts["valid"]))
    scores, evaluate = clocked(lambda: {c: attack.evaluate(parts["test"], candidates=c) for c in CANDIDATES})
    base = evaluate_baselines(attack.vocab_, parts["train"], parts["test"])
    epochs = len(attack.history_.losses)
    return {
        "pairs": {name: len(p) for name, p in parts.items()}, "vocabulary_items": attack.vocab_.n_items,
        "test_pairs_dropped_oov": scores["all"]["n_dropped"], "epochs": epochs, "best_epoch": attack.history_.best_epoch + 1,
        "stages": {"fit_attack": fit, "evaluate": evaluate},
        "train_pairs_per_cpu_s": len(parts["train"]) * epochs / fit["cpu_s"],
        "eval_pairs_per_cpu_s": 2 * scores["all"]["n_pairs"] / evaluate["cpu_s"],
        "recall@10_all": scores["all"]["recall@10"], "recall@10_user_log": scores["user_log"]["recall@10"],
        "baselines_recall@10_all": {k: v["recall@10"] for k, v in base.items()},
    }  # fmt: skip


def attacker_rates(options: ExposureOptions, parts: Parts, models: Sequence[str] | None = None) -> Iterator[dict[str, Any]]:
    """Pairs per CPU second of each ``encoder+decoder`` model (default: every encoder with every
    decoder of ``options``), one row per model as it finishes (module docstring)."""
    one_epoch = options.model_copy(update={"attacker": options.attacker.model_copy(update={"n_epochs": 1})})
    for model in models or [f"{e}+{d}" for d in options.decoders for e in options.encoders]:
        encoder, decoder = attacker_parts(model, "--models")
        attack, fit = clocked(lambda: make_attack(one_epoch, encoder, decoder, options.seeds[0]).fit(parts["train"], parts["valid"]))
        _, valid = clocked(lambda: attack.evaluate(parts["valid"], (10,)))
        _, test = clocked(lambda: [attack.evaluate(parts["test"], options.ks, c) for c in CANDIDATES])
        yield {"model": model, "train_pairs_per_cpu_s": len(parts["train"]) / (fit["cpu_s"] - valid["cpu_s"]),
               "valid_pairs_per_cpu_s": len(parts["valid"]) / valid["cpu_s"],
               "test_eval_pairs_per_cpu_s": 2 * len(parts["test"]) / test["cpu_s"], "cpu_s_per_epoch": fit["cpu_s"]}  # fmt: skip
