"""make_private on ml-100k (issue 49): Opacus against the project's torch.func clipping, and BPR-MF
and LightGCN under user-level DP-SGD at ε = 1, 4, 8 against the non-private models.

* ``clipping``: BPR-MF's per-triple loss as an ``nn.Module`` of two ``nn.Embedding`` tables (the
  shape Opacus's hooks see). Correctness: Opacus 1.6's per-sample gradients (``GradSampleModule``,
  hooks mode) against ``torch.func`` (``vmap`` of ``grad``) on 64 triples, max absolute difference.
  Cost: one clipped sum of ``--batch`` triples, example-level (a triple per unit) and user-level
  (the triples of ``--batch // 85`` users, Opacus's per-sample gradients summed per user with
  ``index_add`` before the norms), each in a fresh child process: median CPU ms per step over
  ``--steps`` steps and the child's peak RSS above the loaded data. ``rowlocal-*``: the engine's
  row-local path on the same triples (``clipped_sum(..., lookups=...)``, one backward pass on
  per-(unit, row) pair tables; what ``make_private`` uses for BPR-MF), with its max absolute
  difference from the ``func-*`` sum. ``--methods`` runs some of the methods; the others keep
  their earlier rows.
* ``utility`` (``--models bpr,lightgcn``, ``--rows nonprivate,eps=1,eps=4,eps=8``): per-user random 8:1:1 split, seed 0 (one seed); each
  model non-private (its defaults, early stopping on validation) and
  ``make_private(Model(n_factors=16), ε, δ = 1e-6)`` at the engine settings of
  ``configs/matrix/ml-100k.yaml`` (simulation noise; LightGCN with its 3 layers and no personal
  rows: its user table is noised too); test Recall@20 and NDCG@20 (train and validation items
  masked), fit CPU seconds, epochs trained and CPU seconds per epoch (the non-private fits'
  include their validation passes), the child's peak RSS, σ and the statement's ε, each row in a
  fresh child. The rows of the models not run, and the parts not run, are kept from the existing
  record; each utility row carries its own date and load.

The clipping part needs Opacus, which is not a dependency (docs/decisions.md, "make_private")::

    .venv/bin/pip install opacus==1.6.0
    PYTHONPATH=src:benchmarks .venv/bin/python benchmarks/dp_engine.py --data-dir ../shared/datasets
    PYTHONPATH=src:benchmarks .venv/bin/python benchmarks/dp_engine.py --parts utility --models lightgcn

Writes ``benchmarks/results/dp_engine.json``.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import resource
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from record import run_child, write_record

EPSILONS = (1.0, 4.0, 8.0)
#: the engine settings of the matrix's DP-SGD rows (configs/matrix/ml-100k.yaml)
ENGINE = {"batch_users": 512, "n_epochs": 40, "lr": 0.01}
FACTORS = 16
METHODS = ("opacus-example", "func-example", "opacus-user", "func-user", "rowlocal-example", "rowlocal-user")
#: the table each BPR triple column indexes (``bpr_net``), for the row-local path
LOOKUPS = ("user.weight", "item.weight", "item.weight")
MODELS = ("bpr", "lightgcn")
#: the utility part's rows of each model; rows not run keep their earlier measurement
ROWS = ("nonprivate", *(f"eps={e:g}" for e in EPSILONS))


def _split(data_dir: str):
    from recprivacy.data.registry import load_dataset
    from recprivacy.data.split import random_split

    return random_split(load_dataset("ml-100k", data_dir), ratios=(0.8, 0.1, 0.1), seed=0)


def bpr_net(n_users: int, n_items: int, d: int):
    """BPR's per-triple loss ``−ln σ(p_uᵀ(q_i − q_j))`` over two ``nn.Embedding`` tables."""
    import torch
    import torch.nn.functional as F
    from torch import nn

    class BPRNet(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.user = nn.Embedding(n_users, d)
            self.item = nn.Embedding(n_items, d)

        def forward(self, users: torch.Tensor, pos: torch.Tensor, neg: torch.Tensor) -> torch.Tensor:
            q = self.item(torch.stack([pos, neg], 1))
            return -F.logsigmoid((self.user(users) * (q[:, 0] - q[:, 1])).sum(-1))

    torch.manual_seed(0)
    return BPRNet()


def triples(train, n: int, per_user: bool):
    """``n`` training triples with uniform negatives: of the first users whose triples fill ``n``
    (``per_user``), else a uniform sample; and each triple's owner position."""
    import numpy as np
    import torch

    rng = np.random.default_rng(0)
    csr = train.to_csr()
    users, items = np.repeat(np.arange(csr.shape[0]), np.diff(csr.indptr)), csr.indices
    pick = np.arange(n) if per_user else rng.choice(len(users), n, replace=False)
    owners = np.unique(users[pick], return_inverse=True)[1] if per_user else np.arange(n)
    tensors = [torch.from_numpy(a.astype(np.int64)) for a in (users[pick], items[pick], rng.integers(0, csr.shape[1], n))]
    return owners, tensors


def opacus_clipped_sum(gsm, net, owners, tensors, max_norm: float):
    """Opacus per-sample gradients (hooks), summed per owner, clipped and summed."""
    import torch

    from recprivacy.defenses.dp_engine import clip_factors

    gsm.zero_grad(set_to_none=True)
    gsm(*tensors).sum().backward()
    n_units = int(owners.max()) + 1
    index = torch.from_numpy(owners)
    grads = [torch.zeros(n_units, *p.shape).index_add_(0, index, p.grad_sample) for p in net.parameters()]
    factor = clip_factors(torch.sqrt(sum(g.flatten(1).pow(2).sum(1) for g in grads)), max_norm)
    return [torch.einsum("b,b...->...", factor, g) for g in grads]


def run_clipping(method: str, data_dir: str, batch: int, steps: int) -> dict[str, Any]:
    """CPU ms per clipped sum and peak RSS of one method (module docstring), in this process."""
    import torch

    from recprivacy.defenses.dp_engine import clipped_sum

    torch.set_num_threads(1)
    train, _, _ = _split(data_dir)
    base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    library, unit = method.split("-")
    owners, tensors = triples(train, batch, unit == "user")
    net = bpr_net(train.n_users, train.n_items, 64)
    if library == "opacus":
        from opacus import GradSampleModule

        gsm = GradSampleModule(net, loss_reduction="sum")
        run = lambda: opacus_clipped_sum(gsm, net, owners, tensors, 1.0)  # noqa: E731
    else:
        lookups = LOOKUPS if library == "rowlocal" else ()
        run = lambda: clipped_sum(net, owners, tuple(tensors), int(owners.max()) + 1, 1.0, lookups=lookups)  # noqa: E731
    times = []
    for _ in range(steps + 1):
        start = time.process_time()
        run()
        times.append(time.process_time() - start)
    out = {"method": method, "units": int(owners.max()) + 1, "triples": batch,
           "cpu_ms_per_step": 1000 * statistics.median(times[1:]),
           "peak_rss_above_data_mb": (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - base) / 1024}  # fmt: skip
    if library == "rowlocal":
        general, fast = clipped_sum(net, owners, tuple(tensors), out["units"], 1.0)[0], run()[0]
        out["max_abs_difference_from_func"] = max(float((general[k] - fast[k]).abs().max()) for k in general)
    return out


def correctness(data_dir: str) -> dict[str, float]:
    """Max |Opacus − torch.func| over the per-sample gradients of 64 triples, and the largest
    per-sample gradient entry for scale."""
    from opacus import GradSampleModule
    from torch.func import functional_call, grad, vmap

    train, _, _ = _split(data_dir)
    _, tensors = triples(train, 64, per_user=False)
    net = bpr_net(train.n_users, train.n_items, 64)
    params = {k: v.detach() for k, v in net.named_parameters()}
    one = lambda p, u, i, j: functional_call(net, p, (u[None], i[None], j[None])).sum()  # noqa: E731
    reference = vmap(grad(one), in_dims=(None, 0, 0, 0))(params, *tensors)
    gsm = GradSampleModule(net, loss_reduction="sum")
    gsm(*tensors).sum().backward()
    diff = max(float((p.grad_sample - reference[k]).abs().max()) for k, p in net.named_parameters())
    return {"max_abs_difference": diff, "max_abs_gradient": max(float(g.abs().max()) for g in reference.values())}


def _model(name: str, **params: Any):
    from recprivacy.models.bpr import BPRMF
    from recprivacy.models.lightgcn import LightGCN

    return {"bpr": BPRMF, "lightgcn": LightGCN}[name](seed=0, **params)


def run_utility(child: str, data_dir: str) -> dict[str, Any]:
    """Fit and evaluate one row of the utility part: ``<model>:nonprivate`` or ``<model>:eps=<ε>``."""
    import torch

    from recprivacy.defenses.dp_engine import make_private
    from recprivacy.metrics.ranking import evaluate

    logging.getLogger("absl").setLevel(logging.ERROR)
    torch.set_num_threads(1)
    load = os.getloadavg()
    model_name, name = child.split(":")
    train, valid, test = _split(data_dir)
    start = time.process_time()
    if name == "nonprivate":
        model, extra = _model(model_name).fit(train, valid), {}
    else:
        eps = float(name.split("=")[1])
        model = make_private(_model(model_name, n_factors=FACTORS), epsilon=eps, delta=1e-6, noise="simulation",
                             **ENGINE).fit(train)  # fmt: skip
        extra = {"epsilon_target": eps, "epsilon_statement": model.privacy_statement().epsilon,
                 "noise_multiplier": model.noise_multiplier_, "sample_rate": model.sample_rate_, "steps": model.steps_}  # fmt: skip
    cpu = time.process_time() - start
    epochs = len(model.history_.losses)
    metrics = evaluate(model, test, ks=(20,), exclude=valid)
    return {"model": model_name, "row": name, "fit_cpu_s": cpu, "epochs": epochs, "cpu_s_per_epoch": cpu / epochs,
            "recall@20": float(metrics["recall@20"]), "ndcg@20": float(metrics["ndcg@20"]),
            "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
            "date": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "loadavg_at_start": list(load), **extra}  # fmt: skip


def _existing(path: str) -> dict[str, Any]:
    """The record at ``path`` without its provenance (empty when there is none); each of its utility
    and clipping rows carries the date it was measured (kept rows keep it)."""
    if not Path(path).exists():
        return {}
    record = json.loads(Path(path).read_text())
    date = record.get("date")
    for row in record.get("utility", []):
        row.setdefault("date", date)
    for row in record.get("clipping", []):
        row.setdefault("date", record.get("clipping_date", date))
    record.pop("clipping_date", None)
    return {k: v for k, v in record.items() if k not in ("date", "machine", "command")}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data-dir", default=os.environ.get("RECPRIVACY_DATA", "../shared/datasets"))
    p.add_argument("--batch", type=int, default=2048)
    p.add_argument("--steps", type=int, default=5)
    p.add_argument("--parts", default="clipping,utility")
    p.add_argument("--methods", default=",".join(METHODS), help="clipping part: comma-separated of " + ", ".join(METHODS))
    p.add_argument("--models", default=",".join(MODELS), help="utility part: comma-separated of " + ", ".join(MODELS))
    p.add_argument("--rows", default=",".join(ROWS), help="utility part: comma-separated of " + ", ".join(ROWS))
    p.add_argument("--out", default=str(Path(__file__).parent / "results" / "dp_engine.json"))
    p.add_argument("--child", help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.child:
        result = run_clipping(args.child, args.data_dir, args.batch, args.steps) if args.child in METHODS \
            else run_utility(args.child, args.data_dir)  # fmt: skip
        print(json.dumps(result))
        return
    models = [m for m in args.models.split(",") if m]
    if unknown := sorted(set(models) - set(MODELS)):
        p.error(f"--models: unknown {unknown}; expected some of {', '.join(MODELS)}")
    names = [r for r in args.rows.split(",") if r]
    if unknown := sorted(set(names) - set(ROWS)):
        p.error(f"--rows: unknown {unknown}; expected some of {', '.join(ROWS)}")
    record: dict[str, Any] = {**_existing(args.out), "benchmark": "dp_engine", "dataset": "ml-100k", "threads": 1}
    child_args = ["--data-dir", args.data_dir, "--batch", str(args.batch), "--steps", str(args.steps)]
    methods = [m for m in args.methods.split(",") if m]
    if unknown := sorted(set(methods) - set(METHODS)):
        p.error(f"--methods: unknown {unknown}; expected some of {', '.join(METHODS)}")
    if "clipping" in args.parts:
        if any(m.startswith("opacus") for m in methods):
            record["correctness"] = correctness(args.data_dir)
            print(f"Opacus vs torch.func per-sample gradients: max |diff| {record['correctness']['max_abs_difference']:.2e}")
        kept = [r for r in record.get("clipping", []) if r["method"] not in methods]
        now = time.strftime("%Y-%m-%dT%H:%M:%S%z")
        record["clipping"] = kept + [{**run_child(__file__, m, child_args), "date": now} for m in methods]
        for r in record["clipping"]:
            print(f"{r['method']:15s} {r['units']:5d} units {r['cpu_ms_per_step']:8.1f} CPU ms/step "
                  f"peak RSS +{r['peak_rss_above_data_mb']:.0f} MB", flush=True)
    if "utility" in args.parts:
        record["utility_protocol"] = ("per-user random 8:1:1, seed 0 (one seed), full ranking, train+valid masked; "
                                      f"DP-SGD: <model>(n_factors={FACTORS}), delta 1e-6, {ENGINE}, simulation noise; "
                                      "non-private: the model's defaults with early stopping on validation")
        kept = [r for r in record.get("utility", []) if not (r.get("model", "bpr") in models and r["row"] in names)]
        rows = []
        for model in models:
            for name in names:
                r = run_child(__file__, f"{model}:{name}", child_args)
                rows.append(r)
                print(f"{model:8s} {r['row']:11s} Recall@20 {r['recall@20']:.4f} NDCG@20 {r['ndcg@20']:.4f} "
                      f"fit {r['fit_cpu_s']:.1f} CPU s ({r['cpu_s_per_epoch']:.2f}/epoch x {r['epochs']}) "
                      f"peak RSS {r['peak_rss_mb']:.0f} MB", flush=True)
                write_record({**record, "utility": kept + rows}, args.out)  # a row at a time: a long run keeps its rows
        record["utility"] = kept + rows
    write_record(record, args.out)


if __name__ == "__main__":
    sys.exit(main())
