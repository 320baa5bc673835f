"""DP-SGD's book-keeping chunks on ml-100k: fixed chunks of 25 against ``padded_partition`` (issue 33).

``defenses/dpsgd.py`` clips each step's Poisson sample in padded graph batches ("chunks") of
samples sorted by input length. Two modes, both on ml-100k under the protocol of
``configs/dipsgnn/ml-100k.yaml`` as ``tests/realdata/test_dipsgnn_real.py`` prepares it:

* default: the test's DPSGD fit (2 epochs, seed 0, seeded simulation noise) with each chunk rule
  (``--rules``: ``fixed25`` is ``DPSGD.chunk_size = 25``, the rule before; ``partition`` is the
  default ``padded_partition``), runs alternating ``--repeats`` times. Per run: the fit's CPU
  seconds (``time.process_time``; training runs on one thread) and wall seconds, and the test
  Recall@20 / NDCG@20 (same Poisson samples and noise draws under both rules, so they may differ
  only by float rounding). Per rule: the medians, and the chunks per step and padded rows per
  real row over ``--sim-steps`` Poisson samples of the training prefixes (``q = 100 / N``).
  Then a paired measurement with less noise: ``clipped_sum`` (the step's clipping, where the
  rule acts) of each of ``--replay-steps`` such Poisson samples under every rule, in a random
  order per step, on the network of a short fit; its mean CPU ms per step per rule.
  Writes ``benchmarks/results/dpsgd_chunks.json``.
* ``--calibrate``: the CPU seconds of one chunk (its graphs and ``_bookkeeping_step``, what
  ``clipped_sum`` does per chunk) for every (size, width) of a grid, chunks of training prefixes
  of exactly that input length, cells in random order ``--repeats`` times; the per-cell medians
  are fitted by least squares on relative error to ``b + a_0 s + a_1 P + a_2 P²`` (``P = s W``
  padded rows; ``a_0 s`` is the same for every cut of a sample, so it stays out of the rule),
  giving the rule's constants ``K = b / a_1`` and ``V = a_1 / a_2``, and, for comparison, to
  the same with an ``s W²`` (Gram) term and to the linear ``b + a_0 s + a_1 P``. With the
  closest of these standing in for the measured cost, it predicts the CPU per step of fixed
  chunks and of ``padded_partition`` at the fitted constants and at half and double each, over
  ``--sim-steps`` Poisson samples. Writes ``benchmarks/results/dpsgd_chunk_costs.json``.

Usage::

    PYTHONPATH=src:benchmarks python benchmarks/dpsgd_chunks.py --data-dir ../shared/datasets [--repeats 3]
    PYTHONPATH=src:benchmarks python benchmarks/dpsgd_chunks.py --data-dir ../shared/datasets --calibrate --repeats 15
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")  # as tests/conftest.py: no spinning OpenMP threads

import argparse
import statistics
import time
import warnings
from collections.abc import Callable
from pathlib import Path

import numpy as np
import torch

from record import write_record
from recprivacy.config import load_config, validate_options
from recprivacy.defenses import dpsgd
from recprivacy.experiments.dipsgnn import DIPSGNNOptions
from recprivacy.experiments.dipsgnn.evaluate import evaluate_samples
from recprivacy.experiments.dipsgnn.methods import backbone_params, build_method
from recprivacy.experiments.dipsgnn.sequences import SequenceData, prepare_sequences
from recprivacy.experiments.runner import new_results
from recprivacy.models.srgnn import SRGNN, SequenceSamples

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"
RULES = {"fixed25": 25, "partition": None}
WIDTHS = (1, 2, 4, 8, 12, 16, 24, 32, 40, 48, 56, 64, 72, 79)  # ml-100k's inputs are 1..79 items long
SIZES = (1, 2, 4, 8, 12, 16, 24, 32, 48, 64, 100)


def prepare(data_dir: str) -> tuple[SequenceData, DIPSGNNOptions, dict]:
    """ml-100k, the options and the 2-epoch backbone, as the real-data test's fixture builds them."""
    config = load_config(ROOT / "configs" / "dipsgnn" / "ml-100k.yaml",
                         updates={"dataset.data_dir": str(Path(data_dir) / "ml-100k")})  # fmt: skip
    options = validate_options(DIPSGNNOptions, config.study_options)
    return prepare_sequences(config, options, new_results(config)), options, {**backbone_params(config), "n_epochs": 2}


def timed_fit(rule: str, data: SequenceData, options: DIPSGNNOptions, backbone: dict) -> dict:
    """``run_method("DPSGD", 0, ...)`` with the chunk rule set: the fit's CPU and wall seconds
    and the test metrics."""
    model = build_method("DPSGD", options, backbone, seed=0)
    model.chunk_size = RULES[rule]
    cpu, wall = time.process_time(), time.perf_counter()
    model.fit(data.train)
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    metrics, _ = evaluate_samples(model, data.test_samples, data.train.to_csr(), data.full.n_items, options.max_len)
    return {"rule": rule, "fit_cpu_seconds": round(cpu, 2), "fit_wall_seconds": round(wall, 2),
            "recall@20": metrics["recall@20"], "ndcg@20": metrics["ndcg@20"], "steps": model.steps_}  # fmt: skip


def chunking(rule: str, samples: SequenceSamples, max_len: int, steps: int) -> dict:
    """Chunks per step and padded rows per real row of ``rule`` over ``steps`` Poisson samples
    (``q = 100 / N``, seed 0) of ``samples``."""
    rng = np.random.default_rng(0)
    widths = np.maximum(samples.input_lengths(max_len), 1)
    n_chunks, padded, real = 0, 0, 0
    for _ in range(steps):
        idx = np.flatnonzero(rng.random(len(samples)) < 100 / len(samples))
        chunks = dpsgd._chunks(samples, idx, max_len, RULES[rule])
        n_chunks += len(chunks)
        padded += sum(len(c) * int(widths[c].max()) for c in chunks)
        real += int(widths[idx].sum())
    return {"chunks_per_step": round(n_chunks / steps, 2), "padded_per_real_row": round(padded / real, 3)}


def compare(args: argparse.Namespace, data: SequenceData, options: DIPSGNNOptions, backbone: dict) -> None:
    """The default mode (module docstring)."""
    rules = args.rules.split(",")
    runs = []
    for repeat in range(args.repeats):
        for rule in rules if repeat % 2 == 0 else rules[::-1]:
            runs.append({"repeat": repeat, "load_before": os.getloadavg()[0], **timed_fit(rule, data, options, backbone)})
            r = runs[-1]
            print(f"{rule:10s} repeat {repeat}: {r['fit_cpu_seconds']:.1f} CPU s, {r['fit_wall_seconds']:.1f} s wall, "
                  f"Recall@20 {r['recall@20']:.4f} (load {r['load_before']:.2f})", flush=True)  # fmt: skip
    samples = SequenceSamples.prefixes(data.train.sequences())
    replay = clipping_ms(rules, short_fit(data, options, backbone), samples, args.replay_steps)
    print(f"clipped_sum CPU ms per step: {replay}")
    summary = {}
    for rule in rules:
        mine = [r for r in runs if r["rule"] == rule]
        summary[rule] = {"median_fit_cpu_seconds": statistics.median(r["fit_cpu_seconds"] for r in mine),
                         "median_fit_wall_seconds": statistics.median(r["fit_wall_seconds"] for r in mine),
                         "recall@20": sorted({r["recall@20"] for r in mine}),
                         **chunking(rule, samples, options.max_len, args.sim_steps)}  # fmt: skip
        print(f"{rule:10s} median {summary[rule]['median_fit_cpu_seconds']:.1f} CPU s, {summary[rule]}")
    write_record({"dataset": "ml-100k", "method": "DPSGD", "seed": 0, "epochs": backbone["n_epochs"],
                  "constants": {"BK_OVERHEAD_ROWS": dpsgd.BK_OVERHEAD_ROWS, "BK_DOUBLING_ROWS": dpsgd.BK_DOUBLING_ROWS},
                  "rules": summary, "runs": runs, "replay_steps": args.replay_steps,
                  "clipped_sum_cpu_ms_per_step": replay}, args.out or RESULTS / "dpsgd_chunks.json")  # fmt: skip


def short_fit(data: SequenceData, options: DIPSGNNOptions, backbone: dict) -> dpsgd.DPSGD:
    """A DPSGD engine fitted for one epoch on the first 40 users: a trained network of the full
    data's shapes (they do not depend on which users train)."""
    engine = build_method("DPSGD", options, {**backbone, "n_epochs": 1}, seed=0)
    return engine.fit(data.train.subset_users(np.arange(40)))


def clipping_ms(rules: list[str], engine: dpsgd.DPSGD, samples: SequenceSamples, steps: int) -> dict[str, float]:
    """Mean CPU ms of ``engine.clipped_sum`` per Poisson sample (``q = 100 / N``, seed 0) of
    ``samples`` under each rule, the rules in a random order at every step."""
    rng = np.random.default_rng(0)
    total = dict.fromkeys(rules, 0.0)
    torch.set_num_threads(1)  # as training
    for _ in range(steps):
        idx = np.flatnonzero(rng.random(len(samples)) < 100 / len(samples))
        for k in rng.permutation(len(rules)):
            engine.chunk_size = RULES[rules[k]]
            start = time.process_time()
            engine.clipped_sum(engine.model_, samples, idx)
            total[rules[k]] += time.process_time() - start
    return {rule: round(1e3 * t / steps, 2) for rule, t in total.items()}


def chunk_seconds(model: SRGNN, samples: SequenceSamples, chunk: np.ndarray) -> float:
    """CPU seconds of ``clipped_sum``'s work on one chunk: its graphs and ``_bookkeeping_step``."""
    summed = {k: torch.zeros_like(v) for k, v in model.net_.named_parameters()}
    start = time.process_time()
    dpsgd._bookkeeping_step(model.net_, model.graphs(samples, chunk), torch.from_numpy(samples.users[chunk]),
                            torch.from_numpy(samples.subset(chunk).targets()), 1.0, summed)  # fmt: skip
    return time.process_time() - start


def fit_costs(cells: dict[tuple[int, int], float], terms: dict[str, Callable[[np.ndarray, np.ndarray], np.ndarray]]) -> dict:
    """Least squares on relative error of the per-cell seconds against ``terms`` of (s, W):
    coefficients and the relative errors of the fit."""
    keys = sorted(cells)
    s, w = (np.array([k[i] for k in keys], dtype=float) for i in (0, 1))
    t = np.array([cells[k] for k in keys])
    x = np.stack([term(s, w) for term in terms.values()], 1)
    coef, *_ = np.linalg.lstsq(x / t[:, None], np.ones_like(t), rcond=None)
    err = np.abs(x @ coef / t - 1)
    return {"coefficients": dict(zip(terms, coef.tolist())),
            "relative_error": {"median": round(float(np.median(err)), 4), "p90": round(float(np.quantile(err, 0.9)), 4),
                               "max": round(float(err.max()), 4)}}  # fmt: skip


def calibrate(args: argparse.Namespace, data: SequenceData, options: DIPSGNNOptions, backbone: dict) -> None:
    """The ``--calibrate`` mode (module docstring)."""
    model = short_fit(data, options, backbone).model_
    samples = SequenceSamples.prefixes(data.train.sequences())
    lengths = samples.input_lengths(model.max_len)
    rng = np.random.default_rng(0)
    grid = [(s, w) for w in WIDTHS for s in SIZES]
    seconds: dict[tuple[int, int], list[float]] = {cell: [] for cell in grid}
    torch.set_num_threads(1)  # as training
    for _ in range(args.repeats):
        for k in rng.permutation(len(grid)):
            s, w = grid[k]
            pool = np.flatnonzero(lengths == w)
            seconds[grid[k]].append(chunk_seconds(model, samples, rng.choice(pool, size=s, replace=len(pool) < s)))
    cells = {cell: statistics.median(v) for cell, v in seconds.items()}
    base = {"b": lambda s, w: np.ones_like(s), "a0 s": lambda s, w: s, "a1 P": lambda s, w: s * w}
    fits = {"rule: b + a0 s + a1 P + a2 P^2": fit_costs(cells, {**base, "a2 P^2": lambda s, w: (s * w) ** 2}),
            "with a Gram term: + a3 s W^2": fit_costs(cells, {**base, "a2 P^2": lambda s, w: (s * w) ** 2,
                                                              "a3 s W^2": lambda s, w: s * w * w}),
            "linear: b + a0 s + a1 P": fit_costs(cells, base)}  # fmt: skip
    c = fits["rule: b + a0 s + a1 P + a2 P^2"]["coefficients"]
    k, v = c["b"] / c["a1 P"], c["a1 P"] / c["a2 P^2"]
    for name, fit in fits.items():
        print(f"{name}: {fit}")
    predicted = predicted_step_ms(fits["with a Gram term: + a3 s W^2"]["coefficients"], samples, model.max_len, k, v, args.sim_steps)
    print(f"K = {k:.1f}, V = {v:.0f}; predicted ms per step: {predicted}")
    write_record({"dataset": "ml-100k", "threads": 1, "repeats": args.repeats, "sizes": SIZES, "widths": WIDTHS,
                  "median_chunk_ms": {f"{s}x{w}": round(1e3 * v, 3) for (s, w), v in cells.items()}, "fits": fits,
                  "constants": {"K (BK_OVERHEAD_ROWS) = b / a1": k, "V (BK_DOUBLING_ROWS) = a1 / a2": v},
                  "predicted_ms_per_step": predicted}, args.out or RESULTS / "dpsgd_chunk_costs.json")  # fmt: skip


def predicted_step_ms(c: dict[str, float], samples: SequenceSamples, max_len: int, k: float, v: float, steps: int) -> dict:
    """Mean CPU ms per step that the fit with the Gram term (the closest, standing in for the
    measured cost) predicts over ``steps`` Poisson samples (``q = 100 / N``, seed 0), for fixed
    chunks and for ``padded_partition`` at the fitted ``(K, V)`` and at half and double each."""
    rng = np.random.default_rng(0)
    widths = np.maximum(samples.input_lengths(max_len), 1)
    draws = [np.sort(widths[rng.random(len(widths)) < 100 / len(widths)]) for _ in range(steps)]
    rules = {f"fixed {size}": (lambda w, size=size: dpsgd.fixed_partition(len(w), size)) for size in (10, 16, 25, 50)}
    for kk, vv in [(k, v), (k / 2, v), (2 * k, v), (k, v / 2), (k, 2 * v)]:
        rules[f"partition K={kk:.0f} V={vv:.0f}"] = lambda w, kk=kk, vv=vv: dpsgd.padded_partition(w, kk, vv)

    def cost(w: np.ndarray, ends: np.ndarray) -> float:
        s, width = np.diff(ends, prepend=0), w[ends - 1]
        return float(np.sum(c["b"] + c["a0 s"] * s + c["a1 P"] * s * width + c["a2 P^2"] * (s * width) ** 2
                            + c["a3 s W^2"] * s * width**2))  # fmt: skip

    return {name: round(1e3 * statistics.mean(cost(w, rule(w)) for w in draws), 2) for name, rule in rules.items()}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data-dir", default=os.environ.get("RECPRIVACY_DATA", "../shared/datasets"))
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--rules", default=",".join(RULES), help="comma-separated, of " + ", ".join(RULES))
    p.add_argument("--sim-steps", type=int, default=500)
    p.add_argument("--replay-steps", type=int, default=300)
    p.add_argument("--calibrate", action="store_true")
    p.add_argument("--out", default=None)
    args = p.parse_args()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        data, options, backbone = prepare(args.data_dir)
    (calibrate if args.calibrate else compare)(args, data, options, backbone)


if __name__ == "__main__":
    main()
