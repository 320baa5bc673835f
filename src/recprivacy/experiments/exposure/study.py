"""The ``exposure`` study: the exposure leakage attack and two-stage exposure perturbation
(paper 000), reproducing the paper's tables and figures.

Steps (``study_options`` validated by :class:`~.options.ExposureOptions`):

1. **Pairs** (:mod:`.pairs`): (the user's M most recent clicks, the next exposed slate)
   pairs, simulated by replaying a target recommender or built from a logged exposure,
   split 8:1:1.
2. **Attack** (Tables 3-6, :mod:`.cells`): every encoder x decoder, for every seed;
   Recall/NDCG/MRR at ``ks`` over the whole catalogue and over the user's logged items,
   beside the popularity and exposed-item baselines (and, for MIND/Zhihu, the paper's own
   numbers).
3. **Slate sweep** (Figs. 6-7, :mod:`.cells`): Recall@10 of ``sweep_encoder`` with every
   decoder for each slate size.
4. **Protection** (Figs. 8-13, :mod:`.protection`): every selection x replacement x ratio;
   the frozen attacker (the paper) and, for the ``adaptive`` strategies, an attacker
   retrained on perturbed exposure; Rec*, NDCG*, MRR* at 10, Acc* (Eq. 18) and, for simulated
   exposure, the slates' Recall@N on the users' real next items, beside the no-information
   floor. Privacy-utility curves plot Rec* against utility.

Trend checks (:mod:`.checks`) compare the outcome with the paper's claims and say plainly
which hold; :mod:`.render` lays out the tables and figures.
"""

from __future__ import annotations

from recprivacy.config import Config
from recprivacy.experiments.exposure.cells import blind_baselines
from recprivacy.experiments.exposure.checks import attack_checks, protection_checks
from recprivacy.experiments.exposure.grid import ExposureGrid, gather, study_cells
from recprivacy.experiments.exposure.options import ExposureOptions
from recprivacy.experiments.exposure.pairs import build_exposure
from recprivacy.experiments.exposure.render import (
    attack_metrics,
    attack_tables,
    checks_table,
    data_table,
    data_text,
    protection_outputs,
    sweep_outputs,
)
from recprivacy.experiments.kit import Bench
from recprivacy.experiments.results import Results
from recprivacy.experiments.runner import new_results


def run_exposure(config: Config, options: ExposureOptions, bench: Bench | None = None) -> Results:
    """The ``exposure`` study (module docstring); its cells run on ``bench`` (default: in this
    process, records in memory; ``recprivacy run`` passes the run folder's store)."""
    results = new_results(config)
    sizes = [options.slate_size] + (options.slate_sizes if "slate_sweep" in options.experiments else [])
    data = build_exposure(config, options, results, max(sizes))
    parts = data.parts(options.slate_size, options)
    results.seeds.update(split=config.seed, attack=options.seeds[0])
    cells = study_cells(options)
    found = (bench or Bench()).run(ExposureGrid(results.name, options, data, config.noise), cells)
    got = gather(cells, [found[c.key] for c in cells])
    for stage, seconds in got.timings.items():
        results.timings[stage] = results.timings.get(stage, 0.0) + seconds
    tables, figures, checks = [data_table(results, data, parts)], [], []
    text = [data_text(data, options, parts)]
    if "attack" in options.experiments:
        baselines = blind_baselines(options, parts)
        tables += attack_tables(results, options, got.runs, baselines, data.source)
        checks += attack_checks(got.runs, baselines)
        attack_metrics(results, got.runs, baselines)
    if "slate_sweep" in options.experiments:
        t, f = sweep_outputs(results, options, got.sweep)
        tables, figures = tables + t, figures + f
    if "protection" in options.experiments:
        t, f = protection_outputs(results, got.protection, data.source == "simulated")
        tables, figures = tables + t, figures + f
        checks += protection_checks(got.protection, data.source == "simulated")
    if checks:
        tables.append(checks_table(results, checks))
    results.add_section("Exposure leakage (paper 000)", "\n\n".join(text), tables, figures)
    return results
