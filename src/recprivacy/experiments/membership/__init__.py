"""The ``membership`` study and the ``membership`` audit section (paper 001).

* :mod:`.options`: ``study_options`` of the study;
* :mod:`.plan`: the attack settings of each of the paper's tables and figures;
* :mod:`.cells`: the settings as study-kit cells, one group per seed (``MembershipLab``);
* :mod:`.collect`: running the cells and gathering their results;
* :mod:`.render`: tables in the paper's layout (the paper's number beside ours) and figures;
* :mod:`.paper`: the numbers the paper reports;
* :mod:`.study`: the study itself; :mod:`.audit`: the audit section.
"""

from recprivacy.experiments.membership import audit  # noqa: F401  (registers the audit section)
from recprivacy.experiments.membership.audit import THOROUGH_REFERENCES, MembershipAuditOptions, target_trainer
from recprivacy.experiments.membership.compare import (Scored, family_level, judge, name_of, protocol_records, score_all,
                                                       secondary_rows, summarise_records)
from recprivacy.experiments.membership.lab import AttackSpec, LabOptions, MembershipLab
from recprivacy.experiments.membership.options import MembershipOptions
from recprivacy.experiments.membership.study import run_membership
from recprivacy.experiments.runner import register_study

register_study("membership", run_membership, MembershipOptions,
               "user-level membership inference against recommenders and popularity randomization (paper 001)",
               resumable=True, builds_model=False)  # fmt: skip

__all__ = ["THOROUGH_REFERENCES", "AttackSpec", "LabOptions", "MembershipAuditOptions", "MembershipLab",
           "MembershipOptions", "Scored", "family_level", "judge", "name_of", "protocol_records", "run_membership", "score_all", "secondary_rows",
           "summarise_records", "target_trainer"]  # fmt: skip
