"""The ``federated`` study (paper 004: attribute inference on federated recommenders and APM)
and the ``attribute`` audit section.

* :mod:`.options`: ``study_options`` of the study, method and engine names;
* :mod:`.methods`: training one method's federation (``train_method``, public);
* :mod:`.cells`: the study-kit cells: per (d, method) group, its training and the attack round's
  cells (attribute x ζ x attacker x component);
* :mod:`.render`: tables and figures in the paper's layout; :mod:`.paper`: the paper's numbers;
* :mod:`.study`: the study itself;
* :mod:`.classes`: judging a class-guessing attack against blind guesses (audit and matrix);
* :mod:`.audit`: the audit section (black-box attribute inference from recommendation lists).
"""

from recprivacy.experiments.federated import audit  # noqa: F401  (registers the audit section)
from recprivacy.experiments.federated.methods import TrainedMethod, train_method
from recprivacy.experiments.federated.options import METHOD_LABELS, FederatedOptions
from recprivacy.experiments.federated.paper import paper_by_attacker, paper_f1, paper_hit20
from recprivacy.experiments.federated.study import run_federated
from recprivacy.experiments.runner import register_study

register_study("federated", run_federated, FederatedOptions,
               "federated GCN recommenders: attribute inference from uploads and APM (paper 004)", resumable=True,
               builds_model=False)  # its federated systems are its own models

__all__ = ["METHOD_LABELS", "FederatedOptions", "TrainedMethod", "paper_by_attacker", "paper_f1", "paper_hit20",
           "run_federated", "train_method"]
