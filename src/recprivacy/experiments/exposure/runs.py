"""The ``exposure`` study's cells as flat records of a runs file, and the study's tables and
checks read back from them (``benchmarks/exposure.py``; its records are committed in
``benchmarks/results/exposure_*.jsonl``).

A record is one finished cell: its key (``record_key``: ``mode``, ``workload``, ``model``,
``seed``, and ``N`` for the slate sweep or the protection row's ``selection``, ``replacement``,
``L`` and ``attacker``; the keys of the records written before the study kit), its cost and
``result`` (``record_result``: the dict of ``cells.train_and_score``, or ``{"row": ...}`` with a
protection row's per-pair arrays as lists). The blind baselines are one more record per
workload (``model: "baselines"``). ``cell_key`` identifies a record; the last record of a key
wins in ``runs_report``, which lays out the same tables and checks the study does.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable
from typing import Any

import numpy as np

from recprivacy.experiments.exposure.checks import attack_checks, protection_checks, sweep_checks
from recprivacy.experiments.exposure.grid import outcome
from recprivacy.experiments.exposure.options import ExposureOptions
from recprivacy.experiments.exposure.protection import FLOOR
from recprivacy.experiments.exposure.render import attack_tables, protection_outputs
from recprivacy.experiments.kit import Cell, CellResult
from recprivacy.experiments.results import Results
from recprivacy.report.tables import markdown_table

#: the study's experiment of each benchmark mode
EXPERIMENT = {"tables": "attack", "sweep": "slate_sweep", "protection": "protection"}
KEY_FIELDS = ("mode", "workload", "model", "seed", "N", "selection", "replacement", "L", "attacker")


def cell_key(record: dict) -> tuple:
    """What identifies a cell's record (the last record of a key wins in the report)."""
    return tuple(record.get(k) for k in KEY_FIELDS)


def record_key(mode: str, workload: str, options: ExposureOptions, setting: dict) -> dict:
    """The runs file's key of a study cell (module docstring)."""
    key = {"mode": mode, "workload": workload, "model": f"{setting.get('encoder')}+{setting.get('decoder')}", "seed": setting["seed"]}
    if mode == "sweep":
        return {**key, "N": setting["N"]}
    if mode == "protection":
        key["model"] = options.protection.attacker
        return {**key, "attacker": FLOOR} if setting["attacker"] == FLOOR else {**key, **{k: setting[k] for k in ("selection", "replacement", "L", "attacker")}}
    return key


def record_result(cell: Cell, result: CellResult) -> dict:
    """A cell's ``result`` field (module docstring), with an attacker's validation curve."""
    measured = outcome(cell, result)
    if cell.setting["kind"] == "protection":
        return {"row": {k: v.tolist() if isinstance(v, np.ndarray) else v for k, v in measured.items()}}
    return {**measured, "valid_curve": [[int(e), v] for e, v in result.arrays.get("valid_curve", np.zeros((0, 2))).tolist()]}


def wanted(mode: str, setting: dict, models: set[str] | None, seeds: set[int] | None) -> bool:
    """Whether a cell of ``mode`` is among ``models`` and ``seeds`` (None: all); they select
    attack and sweep cells, every protection row is kept."""
    model = f"{setting.get('encoder')}+{setting.get('decoder')}"
    return mode == "protection" or ((not models or model in models) and (seeds is None or setting["seed"] in seeds))


def runs_report(records: list[dict], options_of: Callable[[str], ExposureOptions]) -> list[str]:
    """The study's tables and checks (Markdown), one part per workload, from the cells'
    records; ``options_of(workload)`` gives the options of its attack grid."""
    latest = {cell_key(r): r for r in records}
    out = []
    for workload in dict.fromkeys(r["workload"] for r in latest.values()):
        mine = [r for r in latest.values() if r["workload"] == workload]
        results = Results(name=f"exposure-{workload}", study="exposure", config={})
        names = _attack_part(results, mine, workload, options_of) + _sweep_part(results, mine) + _protection_part(results, mine)
        out.append(f"## {workload}\n\n{builds_line(mine)}\n")
        out += [markdown_table(results.tables[n].model_dump()) + "\n" for n in names]
    return out


def _attack_part(results: Results, records: list[dict], workload: str, options_of: Callable[[str], ExposureOptions]) -> list[str]:
    """Tables 3-6 with the baselines, the attack checks and the cost per model."""
    tables = [r for r in records if r["mode"] == "tables"]
    runs = {(*r["model"].split("+"), r["seed"]): r["result"] for r in tables if r["model"] != "baselines"}
    baselines = next((r["result"] for r in tables if r["model"] == "baselines"), None)
    if not (runs and baselines):
        return []
    options = options_of(workload)
    seeds = sorted({s for _, _, s in runs})
    names = attack_tables(results, options.model_copy(update={"seeds": seeds}), runs, baselines, options.source)
    names.append(results.add_table("exposure-checks-attack", ["claim", "holds", "evidence"], attack_checks(runs, baselines),
                                   "Acceptance checks of the attack grid"))  # fmt: skip
    per_model: dict[str, list[dict]] = {}
    for (e, d, _), r in runs.items():
        per_model.setdefault(f"{e}+{d}", []).append(r)
    names.append(results.add_table("exposure-cost", ["model", "seeds", "epochs (mean)", "fit CPU s (mean)",
                                                     "train pairs/CPU s", "eval pairs/s"],
                                   [[m, len(rs), _mean(rs, "epochs"), _mean(rs, "fit_cpu_seconds"), _mean(rs, "train_pairs_per_cpu_second"),
                                     _mean(rs, "eval_pairs_per_second")] for m, rs in per_model.items()],
                                   "Cost per cell (CPU seconds of the training loop)"))  # fmt: skip
    return names


def _sweep_part(results: Results, records: list[dict]) -> list[str]:
    """The slate-size sweep's table and its checks against the paper's trends (Figs. 6-7)."""
    sweep = sorted((r for r in records if r["mode"] == "sweep"), key=lambda r: (r["N"], r["model"]))
    if not sweep:
        return []
    names = [results.add_table("exposure-slate-sweep", ["N", "model", "recall@10 (all)", "recall@10 (user log)", "epochs"],
                               [[r["N"], r["model"], r["result"]["all"]["recall@10"], r["result"]["user_log"]["recall@10"],
                                 r["result"]["epochs"]] for r in sweep], "Slate size sweep (Figs. 6-7)")]  # fmt: skip
    curves: dict[str, dict[int, float]] = {}
    for r in sweep:
        curves.setdefault(r["model"].split("+")[1], {})[r["N"]] = r["result"]["all"]["recall@10"]
    names.append(results.add_table("exposure-checks-sweep", ["claim", "holds", "evidence"], sweep_checks(curves),
                                   "Slate size sweep against the paper's trends"))  # fmt: skip
    return names


def _protection_part(results: Results, records: list[dict]) -> list[str]:
    """The protection table, its curves' tables and checks (frozen attacker), Figs. 8-13."""
    rows: list[dict[str, Any]] = [{k: np.asarray(v) if k in ("pair_recall", "users") else v for k, v in r["result"]["row"].items()}
                                  for r in records if r["mode"] == "protection"]  # fmt: skip
    if not rows:
        return []
    rows.sort(key=lambda r: (r["attacker"] != FLOOR, r["selection"], r["replacement"], r["L"], r["attacker"] != "frozen"))
    simulated = not math.isnan(rows[0]["next-item recall@N"])  # NaN for logged slates
    names, _ = protection_outputs(results, rows, simulated)
    names.append(results.add_table("exposure-checks-protection", ["claim", "holds", "evidence"],
                                   protection_checks(rows, simulated), "Protection checks (frozen attacker)"))  # fmt: skip
    return names


def builds_line(records: list[dict]) -> str:
    """Which builds of the pairs the cells were computed on (``pairs_digest``)."""
    counts = Counter(r.get("pairs_digest", "not recorded") for r in records)
    return "Cells per build of the pairs: " + ", ".join(f"{d} {n}" for d, n in counts.items())


def _mean(records: list[dict], key: str) -> float:
    values = [r[key] for r in records if r.get(key) is not None]
    return sum(values) / len(values) if values else float("nan")
