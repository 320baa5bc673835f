"""The ``upcsdg`` study and the ``synthetic_release`` audit section (paper 003), and
``recprivacy synthesize``.

* :mod:`.options`: ``study_options`` of the study and the settings it measures;
* :mod:`.release`: generating a release (study, audit, matrix) and ``synthesize``;
* :mod:`.lab`: what one seed computes once (features, releases, models, the membership target);
* :mod:`.cells`: the study-kit cells (releases, utility, recovery, membership), one group per seed;
* :mod:`.measurements`: the per-seed rows and their means over seeds;
* :mod:`.tables`, :mod:`.figures`, :mod:`.render`: the report in the paper's layout;
* :mod:`.paper`: the numbers the paper reports;
* :mod:`.study`: the study itself and ``merge_runs``; :mod:`.audit`: the audit section;
* :mod:`.diagnostics`: what the learned selection removes and what the authors' candidate mask does
  (``run_diagnostics``, ``benchmarks/upcsdg_diagnostics.py``).
"""

from recprivacy.experiments.runner import register_study
from recprivacy.experiments.upcsdg import audit  # noqa: F401  (registers the audit section)
from recprivacy.experiments.upcsdg.diagnostics import run_diagnostics
from recprivacy.experiments.upcsdg.options import ATTACKS, VARIANTS, UPCSDGOptions
from recprivacy.experiments.upcsdg.release import synthesize
from recprivacy.experiments.upcsdg.study import merge_runs, run_upcsdg

register_study("upcsdg", run_upcsdg, UPCSDGOptions, "UPC-SDG synthetic data: Tables 2-3, k x γ grid, recovery attack",
               resumable=True)

__all__ = ["ATTACKS", "VARIANTS", "UPCSDGOptions", "merge_runs", "run_diagnostics", "run_upcsdg", "synthesize"]
