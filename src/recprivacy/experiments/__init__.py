"""Studies: a config in, ``Results`` out, written as a run folder.

Importing this package registers every built-in study (``runner.register_study``) and audit
section (``audit.register_audit_section``); a new study module is added to the import below.
"""

from recprivacy.experiments import audit, dipsgnn, exposure, federated, matrix, membership, train, upcsdg  # noqa: F401  (registers the studies)
from recprivacy.experiments.audit import interaction_membership  # noqa: F401  (registers the audit section)
from recprivacy.experiments.interaction import INTERACTION_FPRS, interaction_scored, judge_interactions
from recprivacy.experiments.reference import paper_file
from recprivacy.experiments.results import Results, load_results, write_run
from recprivacy.experiments.runner import get_study, new_results, register_study, run_config, run_study, studies

__all__ = ["INTERACTION_FPRS", "Results", "get_study", "interaction_scored", "judge_interactions", "load_results", "new_results", "paper_file",
           "register_study", "run_config",
           "run_study", "studies", "write_run"]
