"""The ``exposure`` study and the ``exposure`` audit section (paper 000).

* :mod:`.options`: ``study_options`` of the study;
* :mod:`.pairs`: the (recent clicks, exposed slate) pairs, simulated or from a log;
* :mod:`.cells`: one attacker trained and scored (Tables 3-6, the slate sweep of Figs. 6-7);
* :mod:`.protection`: the attack on perturbed slates (Figs. 8-13) and its paired judgement;
* :mod:`.grid`: every attacker and protection row as a study-kit cell (resumable, in-process or Ray);
* :mod:`.checks`: the outcome against the paper's claims;
* :mod:`.render`: tables in the paper's layout (the paper's number beside ours) and figures;
* :mod:`.study`: the study itself; :mod:`.audit`: the audit section.

Scripts that run the study's cells themselves (``benchmarks/exposure.py`` keeps its own runs
files) use the names exported here: the pairs (``build_exposure``), the cells and their grid
(``study_cells``, ``ExposureGrid``, ``outcome``), the study's attacker (``make_attack``), and
the tables and checks of the outcome.
"""

from recprivacy.experiments.exposure import audit  # noqa: F401  (registers the audit section)
from recprivacy.experiments.exposure.cells import make_attack
from recprivacy.experiments.exposure.checks import attack_checks, protection_checks, sweep_checks
from recprivacy.experiments.exposure.grid import ExposureGrid, outcome, study_cells
from recprivacy.experiments.exposure.options import ExposureOptions
from recprivacy.experiments.exposure.pairs import build_exposure
from recprivacy.experiments.exposure.protection import FLOOR
from recprivacy.experiments.exposure.render import attack_tables, protection_outputs
from recprivacy.experiments.exposure.study import run_exposure
from recprivacy.experiments.runner import register_study

register_study("exposure", run_exposure, ExposureOptions, "exposure leakage attack and exposure perturbation (paper 000)",
               resumable=True)

__all__ = ["FLOOR", "ExposureGrid", "ExposureOptions", "attack_checks", "attack_tables", "build_exposure", "make_attack", "outcome",
           "protection_checks", "protection_outputs", "run_exposure", "study_cells", "sweep_checks"]  # fmt: skip
