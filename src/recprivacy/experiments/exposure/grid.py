"""The ``exposure`` study's grid on the study kit: one cell per attacker trained or row measured.

Cell kinds (``setting["kind"]``), each with its ``seed`` and slate size ``N``:

* ``attack`` (Tables 3-6): one ``encoder`` + ``decoder`` at one seed, scored by
  ``cells.train_and_score`` at ``ks``; measurements ``<candidates>/<metric>`` (``all`` and
  ``user_log``) and the run's length and speed;
* ``sweep`` (Figs. 6-7): the sweep encoder with one ``decoder`` at slate size ``N``, first seed,
  scored at k = 10;
* ``protection`` (Figs. 8-13): one row of ``protection.protection_settings`` (its
  ``selection``, ``replacement``, ``L`` and ``attacker``); measurements are the row's numbers,
  arrays its per-pair Rec*@10 and users (the paired judgement, ``protection.judge_rows``).

Every cell also stores its wall and CPU seconds (metrics ``seconds`` and ``cpu_seconds``, unit
``s``); an attack or sweep cell keeps its validation curve (``[epoch, Recall@10]`` rows) as an
array. ``outcome`` turns a cell's result back into what the study measured: the dict of
``cells.train_and_score`` or the protection row.

The pairs (and the target recommender that simulated them) are built once by the study, in the
driver, and travel with the grid: every cell reads the same pairs whichever executor runs it.
A resumed run builds them again from the same seeds (the same pairs on the same machine and
thread count; ``benchmarks/exposure.py`` records a hash of the pairs with every cell).
Attack and sweep cells share nothing else (each trains its own seeded attacker), so each is its
own group and Ray runs them side by side; the protection cells form one group whose first cell
fits the frozen attacker and the item embeddings (``protection.prepare_protection``), reused by
the rest. A group's state is a memo filled on first use.
"""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from recprivacy.experiments.exposure.cells import make_attack, train_and_score
from recprivacy.experiments.exposure.options import ExposureOptions
from recprivacy.experiments.exposure.pairs import ExposureData
from recprivacy.experiments.exposure.protection import prepare_protection, protection_row, protection_settings
from recprivacy.experiments.kit import Cell, CellResult, Measurement, measurements

SYSTEM = "exposure"
#: the measurements of a cell's wall and CPU seconds
SECONDS, CPU_SECONDS = "seconds", "cpu_seconds"
#: per-pair arrays of a protection row (stored as arrays, not measurements)
ROW_ARRAYS = ("pair_recall", "users")
#: the setting keys of a protection row
ROW_KEYS = ("selection", "replacement", "L", "attacker")


def unit_of(metric: str) -> str:
    """The unit of an attack or sweep measurement: ``s`` for durations, ``pairs/s`` for rates."""
    if metric.endswith("seconds"):
        return "s"
    return "pairs/s" if "per_second" in metric or "per_cpu_second" in metric else ""


def study_cells(options: ExposureOptions) -> list[Cell]:
    """Every cell of the configured experiments, in the order the study reports them."""
    cells = []
    if "attack" in options.experiments:
        for decoder in options.decoders:
            for encoder in options.encoders:
                cells += [Cell.alone({"kind": "attack", "encoder": encoder, "decoder": decoder, "seed": seed, "N": options.slate_size})
                          for seed in options.seeds]  # fmt: skip
    if "slate_sweep" in options.experiments:
        cells += [Cell.alone({"kind": "sweep", "encoder": options.sweep_encoder, "decoder": decoder, "seed": options.seeds[0], "N": n})
                  for n in options.slate_sizes for decoder in options.decoders]  # fmt: skip
    if "protection" in options.experiments:
        base = {"kind": "protection", "seed": options.seeds[0], "N": options.slate_size}
        cells += [Cell({**base, **row}, "protection") for row in protection_settings(options)]
    return cells


@dataclass
class ExposureGrid:
    """The kit ``Grid`` of the exposure study (module docstring)."""

    study: str
    options: ExposureOptions
    data: ExposureData
    noise: str = "secure"

    def prepare(self, group: str) -> dict[Any, Any]:
        """An empty memo: the group's splits and protection state, made by its first cell."""
        return {}

    def measure(self, cell: Cell, memo: dict[Any, Any]) -> CellResult:
        setting, start, cpu = dict(cell.setting), time.perf_counter(), time.process_time()
        values, arrays = getattr(self, f"_{setting['kind']}")(setting, memo)
        found = measurements(SYSTEM, self.study, setting, setting["seed"], values, {m: unit_of(m) for m in values})
        found += [Measurement(SYSTEM, self.study, setting, SECONDS, time.perf_counter() - start, setting["seed"], "s"),
                  Measurement(SYSTEM, self.study, setting, CPU_SECONDS, time.process_time() - cpu, setting["seed"], "s")]  # fmt: skip
        return CellResult(found, arrays)

    def _parts(self, memo: dict[Any, Any], n: int) -> dict[str, Any]:
        if ("parts", n) not in memo:
            memo["parts", n] = self.data.parts(n, self.options)
        return memo["parts", n]

    def _attack(self, setting: dict[str, Any], memo: dict[Any, Any], ks: Sequence[int] | None = None) -> tuple[dict, dict]:
        attack = make_attack(self.options, setting["encoder"], setting["decoder"], setting["seed"])
        scores = train_and_score(attack, self._parts(memo, setting["N"]), ks or self.options.ks)
        flat = {f"{mode}/{m}": v for mode in ("all", "user_log") for m, v in scores.pop(mode).items()}
        return {**flat, **scores}, {"valid_curve": np.asarray(attack.history_.valid, dtype=np.float64).reshape(-1, 2)}

    def _sweep(self, setting: dict[str, Any], memo: dict[Any, Any]) -> tuple[dict, dict]:
        return self._attack(setting, memo, (10,))

    def _protection(self, setting: dict[str, Any], memo: dict[Any, Any]) -> tuple[dict, dict]:
        parts = self._parts(memo, setting["N"])
        if "shared" not in memo:
            memo["shared"] = prepare_protection(self.options, self.data, parts)
        row = protection_row(self.options, self.data, parts, memo["shared"], setting, self.noise)
        return {k: v for k, v in row.items() if k not in ROW_ARRAYS + ROW_KEYS}, {k: row[k] for k in ROW_ARRAYS}


@dataclass
class Gathered:
    """What the renderer reads, from the cells' results."""

    runs: dict[tuple, dict] = field(default_factory=dict)
    sweep: list[list] = field(default_factory=list)
    protection: list[dict] = field(default_factory=list)
    timings: dict[str, float] = field(default_factory=lambda: defaultdict(float))


def gather(cells: Sequence[Cell], found: Sequence[CellResult]) -> Gathered:
    """Attack runs ``(encoder, decoder, seed) -> train_and_score`` output, sweep rows ``[N,
    decoder, Recall@10 (all), Recall@10 (user log), test pairs]``, protection rows, and the
    cells' seconds summed per attacker, sweep point and protection stage."""
    out = Gathered()
    for cell, result in zip(cells, found):
        s, measured = dict(cell.setting), outcome(cell, result)
        seconds = sum(m.value for m in result.measurements if m.metric == SECONDS)
        if s["kind"] == "protection":
            out.protection.append(measured)
            out.timings[f"protection:{'frozen' if s['L'] == 0 else s['attacker']}"] += seconds
        elif s["kind"] == "attack":
            out.runs[s["encoder"], s["decoder"], s["seed"]] = measured
            out.timings[f"attack:{s['encoder']}+{s['decoder']}"] += seconds
        else:
            out.sweep.append([s["N"], s["decoder"], measured["all"]["recall@10"], measured["user_log"]["recall@10"],
                              int(measured["all"]["n_pairs"])])  # fmt: skip
            out.timings[f"sweep:N={s['N']}:{s['decoder']}"] += seconds
    return out


def outcome(cell: Cell, result: CellResult) -> dict[str, Any]:
    """What a cell measured, as the study uses it: a protection cell's row (its setting's
    ``ROW_KEYS``, numbers and per-pair arrays), else ``train_and_score``'s dict with
    ``<candidates>/<metric>`` back under ``all`` and ``user_log`` and the epochs as integers."""
    values = {m.metric: m.value for m in result.measurements if m.metric not in (SECONDS, CPU_SECONDS)}
    if cell.setting["kind"] == "protection":
        return {**{k: cell.setting[k] for k in ROW_KEYS}, **values, **{k: np.asarray(result.arrays[k]) for k in ROW_ARRAYS}}
    run: dict[str, Any] = {"all": {}, "user_log": {}}
    for metric, value in values.items():
        mode, _, name = metric.partition("/")
        if mode in run and name:
            run[mode][name] = value
        else:
            run[metric] = int(value) if metric in ("epochs", "best_epoch") else value
    return run
