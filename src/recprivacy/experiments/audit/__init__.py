"""The ``audit`` study: train a target recommender (or take the user's own system), run every
registered audit section, and open the report with a risk summary.

An audit *section* is a function ``fn(ctx: AuditContext, out: SectionWriter) -> None``. It reads
the prepared data, the fitted target and its own validated options from ``ctx``, and writes Markdown
text, tables, figures, metrics and risk rows through ``out`` (names are prefixed with the section
key, so sections never collide). A module adds one at import time::

    class MembershipAuditOptions(StudyOptions):
        n_shadow: int = 2

    def membership_section(ctx: AuditContext, out: SectionWriter) -> None:
        ...
        out.judge("user-level membership inference", "ROC AUC", auc, 0.5, "a blind guess (0.5)", margin,
                  chance=0.5, sample=Sample(n_members, n_non_members))

    register_audit_section("membership", membership_section, "Membership inference",
                           MembershipAuditOptions, order=10, fit=fit_membership_options)

The risk summary table has one row per risk a section reports (columns: attack, metric, value
with its interval, the baseline with its name, the margin with its interval, verdict, sample);
sections add rows through ``SectionWriter.judge`` (an attack's primary metric), ``.secondary``,
``.defence`` and ``.reference``, each by the one judgement of ``metrics.verdict``.

* :mod:`.registry`: the section registry, ``AuditContext`` and the inputs a section may need;
* :mod:`.writer`: ``SectionWriter`` and the risk rows it collects;
* :mod:`.plan`: ``study_options`` (which sections, their options) and fitting them to the data;
* :mod:`.study`: the ``audit`` study and ``audit_prepared``, the one code path of every audit;
* :mod:`.summary`: the risk summary that opens the report;
* :mod:`.utility`: the built-in ``utility`` section;
* :mod:`.own`: ``Audit``, auditing the user's own model, training function or logged lists from
  Python; :mod:`.audit_inputs`: ``AuditInputs``, the audit's data read once (from files, with
  the readers of :mod:`.files`, or given from Python); :mod:`.inputs` turns them into internal ids.
"""

from recprivacy.experiments.audit.audit_inputs import AuditInputs
from recprivacy.experiments.audit.own import Audit
from recprivacy.experiments.audit.plan import (
    AuditOptions,
    catalogue_fit,
    fit_list_length,
    holdout_fraction,
    plan_sections,
    resolve_audit_options,
)
from recprivacy.experiments.audit.registry import (
    AuditContext,
    audit_sections,
    member_users,
    register_audit_section,
)
from recprivacy.experiments.audit.study import audit_prepared, run_audit
from recprivacy.experiments.audit.utility import popularity_curves, random_ranking_expectation, utility_change
from recprivacy.experiments.audit.writer import UNDEFENDED, Risk, SectionWriter
from recprivacy.experiments.runner import register_study

register_study("audit", run_audit, AuditOptions, "train a target recommender and run every audit section",
               resolve=resolve_audit_options)

__all__ = [
    "UNDEFENDED", "Audit", "AuditContext", "AuditInputs", "AuditOptions", "Risk", "SectionWriter", "audit_prepared", "audit_sections",
    "catalogue_fit", "fit_list_length", "holdout_fraction", "member_users", "plan_sections",
    "popularity_curves", "random_ranking_expectation", "register_audit_section", "run_audit", "utility_change",
]  # fmt: skip
