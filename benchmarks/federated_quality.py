"""Paper 004's quality tables (II, IV) over seeds: every (config, method, seed), resumable.

Runs the ``federated`` study (``recprivacy.experiments.federated``) one method and one seed at a
time and appends each finished run to a JSON-lines file, so the long benchmark survives
interruptions (``--resume`` skips what is done). A seed changes the initialisation, the client
sampling, the noise and the attack round (the leave-one-out split itself is fixed). The summary
prints, per config, the Table II layout (DNN weighted F1 per ζ, Hit@20), the Tables IV / V
layout (by attacker and ζ), all with the paper's numbers beside ours, and the acceptance checks
of issue 7 / the paper's reproduction targets (the rules of ``papers/004/checks.yaml``, judged
by the study kit on the runs' measurements), and writes ``benchmarks/out/federated_quality.json``.

Usage::

    OMP_NUM_THREADS=1 python benchmarks/federated_quality.py --data-dir ../shared/datasets \\
        --configs configs/federated/ml-100k-table2.yaml [--methods none,apm] [--seeds 0,1,2,3,4] \\
        [--set study_options.rounds=3] [--runs benchmarks/results/federated_quality_runs.jsonl] [--resume]
    python benchmarks/federated_quality.py --summary-only [--runs A.jsonl,B.jsonl] [--pool CONFIG_A,CONFIG_B]

By default every config also runs the DT / SVC / KNN attackers (``study_options.attackers``),
so one training per (method, seed) gives both Table II and Table IV. Two processes with
disjoint ``--methods`` may append to the same ``--runs`` file (one ``write`` per line).
The DNN attacker dominates the cost (BENCHMARKS.md): ``--set study_options.attack_seeds=1``
fits one ζ-split per trained model instead of five. ``--pool`` summarises records of several
configs of one protocol together (e.g. ``--pool ml-1m-table2,ml-1m-table3`` pairs Table III's
FixRec budgets with Table II's APM and uniform LDP, seed by seed).
"""

from __future__ import annotations

import argparse
import json
import platform
import time
from datetime import datetime, timezone
from functools import cache
from pathlib import Path

import numpy as np
from record import append_record, load_records
import torch
from scipy import stats

from recprivacy.config import load_config
from recprivacy.experiments import paper_file, run_study
from recprivacy.experiments.federated import METHOD_LABELS, paper_by_attacker, paper_f1, paper_hit20
from recprivacy.experiments.kit import Measurement, Rule, aggregate, apply_rules, measurements, read_rules, tally
from recprivacy.io import write_text_atomic
from recprivacy.metrics.summary import format_mean_sd, mean_sd

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "benchmarks" / "out"
DEFAULT_CONFIGS = ["configs/federated/ml-100k-table2.yaml", "configs/federated/ml-1m-table2.yaml",
                   "configs/federated/coat-table2.yaml"]
ATTACKERS = ["dnn", "tree", "svc", "knn"]
COMPONENTS = ["all", "user", "item", "mlp", "mlp1", "mlp2"]
ORDER = ["none", "fedmf", "fdpmf", "fgerai", "fgerai_nl", "gaussian", "ldp", "fixrec_max", "fixrec_min", "apm"]


def run_one(config_path: str, method: str, seed: int, data_dir: str | None, overrides: list[str]) -> dict:
    """One study run of ``method`` with ``seed``: its metrics and CPU / wall seconds."""
    updates = {"seed": seed, "study_options.methods": [method], "study_options.attackers": ATTACKERS}
    if data_dir:
        updates["dataset.data_dir"] = data_dir
    config = load_config(config_path, overrides=overrides, updates=updates)
    cpu, wall = time.process_time(), time.perf_counter()
    results = run_study(config)
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    options = config.study_options
    prefix = f"{method}/"
    return {
        "config": config.name, "dataset": config.dataset.name, "model": options.get("model", "fedrec"),
        "method": method, "seed": seed, "rounds": options.get("rounds", 100), "overrides": overrides,
        "metrics": {k[len(prefix):]: v for k, v in results.metrics.items() if k.startswith(prefix)},
        "timings": {k: v for k, v in results.timings.items()},
        "cpu_seconds": cpu, "wall_seconds": wall,
        "date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
    }  # fmt: skip


def _stat(values: list[float]) -> dict | None:
    if not values:
        return None
    summary = mean_sd(values)
    return {"mean": summary.mean, "std": summary.sd_or_none, "n": summary.n}


def summarise(records: list[dict]) -> dict:
    """Means and stds over seeds per (config, method) (the last record of a (config, method,
    seed) wins), with the paper's numbers and the acceptance checks."""
    latest = {(r["config"], r["method"], r["seed"]): r for r in records}
    out: dict = {}
    for config in dict.fromkeys(k[0] for k in latest):
        runs = [r for (c, _, _), r in latest.items() if c == config]
        dataset, model = runs[0]["dataset"], runs[0].get("model", "fedrec")  # records before 2026-11-25 are all FedRec
        methods = sorted({r["method"] for r in runs}, key=lambda m: ORDER.index(m) if m in ORDER else len(ORDER))
        cells: dict = {}
        for m in methods:
            rs = [r for r in runs if r["method"] == m]
            keys = sorted({k for r in rs for k in r["metrics"]})
            cells[m] = {
                "seeds": sorted(r["seed"] for r in rs),
                "metrics": {k: _stat([r["metrics"][k] for r in rs if k in r["metrics"]]) for k in keys},
                "cpu_seconds_per_run": float(np.median([r["cpu_seconds"] for r in rs])),
                "rounds": rs[0]["rounds"],
            }
        dims = sorted({int(k.split("/")[0][2:]) for c in cells.values() for k in c["metrics"] if k.startswith("d=")})
        out[config] = {"dataset": dataset, "model": model, "dims": dims, "methods": cells,
                       "checks": checks(runs), "paired": paired(runs)}
    return out


PAIRS = (("apm", "ldp"), ("apm", "gaussian"), ("apm", "none"), ("apm", "fixrec_min"), ("apm", "fixrec_max"),
         ("fixrec_max", "fixrec_min"))


def _paired_metrics(zeta: float) -> list[tuple[str, str, str]]:
    """(attribute, attacker, record key) of every paired metric: Hit@20, then per attribute the
    weighted F1 of the DNN and the tree and the zero-column rule's accuracy, all at d = 64."""
    out = [("-", "hit@20", "d=64/hit@20")]
    for attribute in ("gender", "age"):
        out += [(attribute, a, f"d=64/{attribute}/zeta={zeta}/{a}/all/weighted_f1_mean") for a in ("dnn", "tree")]
        out.append((attribute, "zero-column", f"d=64/{attribute}/zeta={zeta}/zero-column/user/accuracy_mean"))
    return out


def _paired_p(x: list[float], y: list[float]) -> float:
    """Two-sided paired t-test p of ``x`` against ``y``; NaN when every difference is zero."""
    return float(stats.ttest_rel(x, y).pvalue) if np.any(np.subtract(x, y)) else float("nan")


def paired(runs: list[dict], zeta: float = 0.1) -> list[dict]:
    """The first method of each of ``PAIRS`` minus the second (APM minus each baseline; FixRec-max
    minus FixRec-min for Table III) over the seeds both ran, per metric of ``_paired_metrics``:
    mean difference, paired t-test p, seeds where the first is lower."""
    by = {(r["method"], r["seed"]): r["metrics"] for r in runs}
    out = []
    for a, b in PAIRS:
        seeds = sorted(s for (m, s) in by if m == a and (b, s) in by)
        for attribute, attacker, key in _paired_metrics(zeta):
            x = [by[(a, s)].get(key) for s in seeds]
            y = [by[(b, s)].get(key) for s in seeds]
            if len(seeds) < 2 or None in x or None in y:
                continue
            d = np.subtract(x, y)
            out.append({"pair": f"{a}-{b}", "attribute": attribute, "attacker": attacker, "seeds": seeds,
                        "mean_difference": float(d.mean()), "p_value": _paired_p(x, y), "seeds_lower": int((d < 0).sum())})
    return out


def pool(records: list[dict], configs: list[str]) -> list[dict]:
    """The records of ``configs`` as one config named ``A+B``, so the summary compares methods
    that ran under different configs of one protocol (ml-1m Table III's FixRec budgets beside
    Table II's APM and uniform LDP). Where two configs ran a method with the same seed, the
    config listed first wins; the configs must share dataset, model and rounds."""
    name, chosen = "+".join(configs), {}
    for config in reversed(configs):
        runs = [r for r in records if r["config"] == config]
        if not runs:
            raise SystemExit(f"--pool: no records of config {config!r} in the runs files")
        chosen.update({(r["method"], r["seed"]): {**r, "config": name} for r in runs})
    protocols = {(r["dataset"], r.get("model", "fedrec"), r["rounds"]) for r in chosen.values()}
    if len(protocols) > 1:
        raise SystemExit(f"--pool {','.join(configs)}: the configs differ in (dataset, model, rounds): {sorted(protocols)}")
    return list(chosen.values())


def _zetas(*cells: dict) -> list[float]:
    """The ζ values the DNN attack ran at (d = 64) in any of ``cells``."""
    return sorted({float(k.split("zeta=")[1].split("/")[0]) for c in cells for k in c["metrics"]
                   if k.startswith("d=64/") and "/dnn/all/" in k})


def parse_metric(key: str) -> tuple[dict, str]:
    """A record's metric key as (setting, metric): ``d=64/hit@20`` -> ({d: 64}, hit@20);
    ``d=64/gender/zeta=0.1/dnn/all/weighted_f1_mean`` -> ({d, attribute, zeta, attacker, part},
    weighted_f1_mean)."""
    d, *rest = key.split("/")
    if len(rest) == 5:
        attribute, zeta, attacker, part, metric = rest
        return {"d": int(d[2:]), "attribute": attribute, "zeta": float(zeta[5:]), "attacker": attacker, "part": part}, metric
    return {"d": int(d[2:])}, "/".join(rest)


#: the metrics whose per-seed rise along a curve the growth rules judge (papers/004/checks.yaml)
RISING = ("weighted_f1_mean", "accuracy_mean", "hit@20")
MIN_RISE_SEEDS = 3  # the rise's interval is judged only where this many seeds ran both ends


def federated_measurements(runs: list[dict]) -> list[Measurement]:
    """Each run's metrics as kit measurements, setting ``{source: ours, dataset, model, method}``
    with the key's coordinates (``parse_metric``), and the paper's DNN F1 beside them
    (``source: paper``), as ``papers/004/checks.yaml`` describes."""
    found = []
    for r in runs:
        base = {"source": "ours", "dataset": r["dataset"], "model": r.get("model", "fedrec"), "method": r["method"]}
        for key, value in r["metrics"].items():
            setting, metric = parse_metric(key)
            found += measurements("004", "federated", {**base, **setting}, r["seed"], {metric: value})
    cells = {(m.setting["dataset"], m.setting["model"], m.setting["method"], m.setting["attribute"], m.setting["zeta"])
             for m in found if m.metric == "weighted_f1_mean" and m.setting.get("attacker") == "dnn"}  # fmt: skip
    for dataset, model, method, attribute, zeta in sorted(cells):
        paper = paper_f1(dataset, model, method, attribute, zeta)
        if paper is not None:
            setting = {"source": "paper", "dataset": dataset, "model": model, "method": method, "d": 64, "attribute": attribute,
                       "zeta": zeta, "attacker": "dnn", "part": "all"}  # fmt: skip
            found += measurements("004", "federated", setting, 0, {"weighted_f1_mean": paper})
    return found + rises(found)


def rises(found: list[Measurement]) -> list[Measurement]:
    """``<metric> rise``: per seed, the value at the last point of each curve over ζ and over d
    minus that at the first, setting the curve's with ``over`` and ``points`` (how many the curve
    has); only where ``MIN_RISE_SEEDS``
    seeds or more ran both ends (below that the old paired t-test was not applied either)."""
    out = []
    for key in ("zeta", "d"):
        curves: dict[tuple, dict[int, dict]] = {}
        for m in found:
            if m.metric in RISING and m.setting["source"] == "ours" and key in m.setting:
                rest = tuple(sorted((k, v) for k, v in m.setting.items() if k != key))
                curves.setdefault((m.metric, rest), {}).setdefault(m.seed, {})[m.setting[key]] = m.value
        for (metric, rest), by_seed in curves.items():
            points = sorted({x for values in by_seed.values() for x in values})
            ends = {s: v for s, v in by_seed.items() if points[0] in v and points[-1] in v}
            if len(points) > 1 and len(ends) >= MIN_RISE_SEEDS:
                for seed, v in ends.items():
                    setting = {**dict(rest), "over": key, "points": len(points)}
                    out += measurements("004", "federated", setting, seed, {f"{metric} rise": v[points[-1]] - v[points[0]]})
    return out


@cache
def paper_rules() -> dict[str, list[Rule]]:
    """The rules of ``papers/004/checks.yaml`` (``quality``, ``growth``), read once."""
    return read_rules(paper_file("004", "checks.yaml", "checks"))


def checks(runs: list[dict]) -> dict:
    """Issue 7's acceptance and the reproduction targets on one config's runs: the rules of
    ``papers/004/checks.yaml`` applied by the study kit; ``unjudged`` counts the rules the
    methods present give nothing to judge (a method missing)."""
    summaries = aggregate(federated_measurements(runs))
    verdicts = [v for rules in paper_rules().values() for v in apply_rules(rules, summaries)]
    rows = [{"check": says, "status": "PASS" if holds else "FAIL", "evidence": evidence} for says, holds, evidence in tally(verdicts)]
    return {"rows": rows, "unjudged": sum(v.passed is None for v in verdicts)}


def _fmt(stat: dict | None) -> str:
    return "-" if stat is None else format_mean_sd(stat["mean"], stat["std"])


def _paper(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def print_summary(summary: dict) -> None:
    for config, s in summary.items():
        dataset, model, cells = s["dataset"], s["model"], s["methods"]
        print(f"\n== {config} ({dataset}, {model}) ==")
        zetas = _zetas(*cells.values())
        print("Table II layout: DNN (AIA) weighted F1, ours (mean±std over seeds) / paper; Hit@20")
        head = f"{'method':<18}{'attr':<8}" + "".join(f"{'ζ=' + str(z):>22}" for z in zetas) + f"{'zero-col acc':>14}{'Hit@20':>16}{'paper':>7}{'seeds':>7}{'CPU s/run':>11}"
        print(head)
        for m, c in cells.items():
            for attribute in ("gender", "age"):
                row = f"{METHOD_LABELS.get(m, m):<18}{attribute:<8}"
                for z in zetas:
                    row += f"{_fmt(c['metrics'].get(f'd=64/{attribute}/zeta={z}/dnn/all/weighted_f1_mean')):>14} / {_paper(paper_f1(dataset, model, m, attribute, z)):>5}"
                zero = c["metrics"].get(f"d=64/{attribute}/zeta={zetas[0]}/zero-column/user/accuracy_mean") if zetas else None
                row += f"{'-' if zero is None else format(zero['mean'], '.3f'):>14}{_fmt(c['metrics'].get('d=64/hit@20')):>16}"
                row += f"{_paper(paper_hit20(dataset, model, m)):>7}{len(c['seeds']):>7}{c['cpu_seconds_per_run']:>11.0f}"
                print(row)
        if zetas:
            print("Tables IV / V layout: weighted F1 by attacker and ζ, ours / paper")
            print(f"{'method':<18}{'attr':<8}{'ζ':>5}" + "".join(f"{a:>21}" for a in ATTACKERS))
            for m, c in cells.items():
                for attribute in ("gender", "age"):
                    for z in zetas:
                        paper = paper_by_attacker(dataset, model, m, attribute, z)
                        row = "".join(f"{_fmt(c['metrics'].get(f'd=64/{attribute}/zeta={z}/{a}/all/weighted_f1_mean')):>13} / {_paper(paper.get(a)):>5}"
                                      for a in ATTACKERS)
                        print(f"{METHOD_LABELS.get(m, m):<18}{attribute:<8}{z:>5}{row}")
            print_components(cells, zetas[0])
        if s["dims"] != [64]:
            print_dims(cells, s["dims"])
        for q in s["paired"]:
            metric = {"hit@20": "Hit@20", "zero-column": "zero-column accuracy"}.get(q["attacker"], f"{q['attacker']} weighted F1")
            print(f"Paired {q['pair']} ({q['attribute']}, {metric}, seeds {q['seeds']}): "
                  f"{q['mean_difference']:+.3f}, p = {q['p_value']:.2f}, lower in {q['seeds_lower']} of {len(q['seeds'])}")
        print(f"Checks (papers/004/checks.yaml: issue 7 acceptance, reproduction targets; {s['checks']['unjudged']} more need "
              "methods, seeds or points this config did not run):")  # fmt: skip
        for ch in s["checks"]["rows"]:
            print(f"  [{ch['status']}] {ch['check']}: {ch['evidence']}")


def print_components(cells: dict, zeta: float) -> None:
    """Figure 4 layout, when the runs attacked parts of the update (``study_options.components``):
    DNN weighted F1 per component at ``zeta``, mean±std over seeds."""
    parts = [c for c in COMPONENTS if any(f"/dnn/{c}/weighted_f1_mean" in k for cell in cells.values() for k in cell["metrics"])]
    if parts == ["all"]:
        return
    print(f"Figure 4 layout: DNN weighted F1 by component of the update at ζ={zeta}")
    print(f"{'method':<18}{'attr':<8}" + "".join(f"{c:>14}" for c in parts))
    for m, c in cells.items():
        for attribute in ("gender", "age"):
            row = "".join(f"{_fmt(c['metrics'].get(f'd=64/{attribute}/zeta={zeta}/dnn/{part}/weighted_f1_mean')):>14}" for part in parts)
            print(f"{METHOD_LABELS.get(m, m):<18}{attribute:<8}{row}")


def print_dims(cells: dict, dims: list[int]) -> None:
    """Figure 7 layout: Hit@20 and DNN weighted F1 at ζ = 0.1 per embedding size d."""
    print("Figure 7 layout: embedding size d, Hit@20 and DNN weighted F1 (ζ=0.1), mean±std over seeds")
    print(f"{'method':<18}{'d':>5}{'Hit@20':>16}{'gender':>16}{'age':>16}")
    for m, c in cells.items():
        for d in dims:
            f1 = [_fmt(c["metrics"].get(f"d={d}/{a}/zeta=0.1/dnn/all/weighted_f1_mean")) for a in ("gender", "age")]
            print(f"{METHOD_LABELS.get(m, m):<18}{d:>5}{_fmt(c['metrics'].get(f'd={d}/hit@20')):>16}{f1[0]:>16}{f1[1]:>16}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--configs", default=",".join(DEFAULT_CONFIGS), help="comma-separated config paths")
    parser.add_argument("--data-dir", default=None)
    parser.add_argument("--methods", default=None, help="comma-separated (default: each config's)")
    parser.add_argument("--seeds", default="0,1,2,3,4")
    parser.add_argument("--set", action="append", default=[], help="config override KEY=VALUE (repeatable)")
    parser.add_argument("--runs", default=str(ROOT / "benchmarks" / "results" / "federated_quality_runs.jsonl"),
                        help="JSON-lines file of finished runs (with --summary-only: comma-separated files)")
    parser.add_argument("--pool", action="append", default=[], metavar="CONFIG,CONFIG",
                        help="also summarise these configs' records as one config (repeatable)")
    parser.add_argument("--resume", action="store_true", help="skip (config, method, seed) already in --runs")
    parser.add_argument("--summary-only", action="store_true")
    parser.add_argument("--out", default=str(OUT / "federated_quality.json"))
    args = parser.parse_args()
    runs_paths = [Path(p) for p in args.runs.split(",")]
    missing = [str(p) for p in runs_paths if not p.exists()]
    if args.summary_only and missing:
        parser.error(f"--runs: no such file {', '.join(missing)}")
    if not args.summary_only:
        if len(runs_paths) > 1:
            parser.error("--runs takes one file unless --summary-only")
        runs_path = runs_paths[0]
        runs_path.parent.mkdir(parents=True, exist_ok=True)
        done = {(r["config"], r["method"], r["seed"]) for r in load_records(runs_path)} if args.resume else set()
        seeds = [int(s) for s in args.seeds.split(",")]
        for path in args.configs.split(","):
            base = load_config(ROOT / path if not Path(path).is_absolute() else path, overrides=args.set)
            methods = args.methods.split(",") if args.methods else base.study_options.get("methods", ["none", "apm"])
            for method in methods:
                for seed in seeds:
                    if (base.name, method, seed) in done:
                        continue
                    record = run_one(str(ROOT / path if not Path(path).is_absolute() else path), method, seed, args.data_dir, args.set)
                    append_record(runs_path, record)
                    m = record["metrics"]
                    print(f"{base.name} {method} seed {seed}: Hit@20 {m.get('d=64/hit@20', float('nan')):.3f} "
                          f"F1 gender {m.get('d=64/gender/zeta=0.1/dnn/all/weighted_f1_mean', float('nan')):.3f} "
                          f"age {m.get('d=64/age/zeta=0.1/dnn/all/weighted_f1_mean', float('nan')):.3f} "
                          f"({record['cpu_seconds']:.0f} CPU s, {record['wall_seconds']:.0f} s)", flush=True)
    records = [r for path in runs_paths for r in load_records(path)]
    summary = summarise(records + [r for configs in args.pool for r in pool(records, configs.split(","))])
    print_summary(summary)
    payload = {"configs": summary, "date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
               "machine": {"platform": platform.platform(), "processor": platform.processor() or "unknown",
                           "torch_threads": torch.get_num_threads(), "python": platform.python_version()}}
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    write_text_atomic(out, json.dumps(payload, indent=2, default=str))
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
