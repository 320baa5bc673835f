"""The ``exposure`` study and the ``exposure`` audit section (paper 000).

* :mod:`.options`: ``study_options`` of the study;
* :mod:`.pairs`: the (recent clicks, exposed slate) pairs, simulated or from a log;
* :mod:`.cells`: one attacker trained and scored (Tables 3-6, the slate sweep of Figs. 6-7) and
  the blind baselines;
* :mod:`.protection`: the attack on perturbed slates (Figs. 8-13) and its paired judgement;
* :mod:`.grid`: every attacker and protection row as a study-kit cell (resumable, in-process or Ray);
* :mod:`.checks`: the outcome against the paper's claims;
* :mod:`.render`: tables in the paper's layout (the paper's number beside ours) and figures;
* :mod:`.study`: the study itself; :mod:`.audit`: the audit section;
* :mod:`.runs`: the cells as flat records of a runs file and the study's report from them;
* :mod:`.cost`: what one attacker costs (seconds per stage, pairs per CPU second).

``benchmarks/exposure.py`` is a command line over the names exported here: the pairs
(``build_exposure``, ``ExposureData.parts``), the cells and their grid (``study_cells``,
``ExposureGrid``, ``wanted``), their records and report (``record_key``, ``record_result``,
``cell_key``, ``runs_report``), the baselines (``blind_baselines``) and the attacker's cost
(``attacker_cost``, ``attacker_rates``); ``benchmarks/results.py`` finds the paper's numbers with
``paper_place``.
"""

from recprivacy.experiments.exposure import audit  # noqa: F401  (registers the audit section)
from recprivacy.experiments.exposure.cells import blind_baselines
from recprivacy.experiments.exposure.cost import attacker_cost, attacker_rates
from recprivacy.experiments.exposure.grid import ExposureGrid, study_cells
from recprivacy.experiments.exposure.options import ExposureOptions
from recprivacy.experiments.exposure.pairs import ExposureData, build_exposure
from recprivacy.experiments.exposure.render import paper_place
from recprivacy.experiments.exposure.runs import EXPERIMENT, cell_key, record_key, record_result, runs_report, wanted
from recprivacy.experiments.exposure.study import run_exposure
from recprivacy.experiments.runner import register_study

register_study("exposure", run_exposure, ExposureOptions, "exposure leakage attack and exposure perturbation (paper 000)",
               resumable=True)

__all__ = ["EXPERIMENT", "ExposureData", "ExposureGrid", "ExposureOptions", "attacker_cost", "attacker_rates", "blind_baselines",
           "build_exposure", "cell_key", "paper_place", "record_key", "record_result", "run_exposure", "runs_report",
           "study_cells", "wanted"]  # fmt: skip
