"""The ``dipsgnn`` audit section: when the audit's target is a sequential built-in recommender,
DIPSGNN (paper 002) is trained on the same split as its private alternative, and its utility
(Recall@k against the target's on the same test users, a reference row of the risk summary, not
an attack) and its privacy statements are shown beside the target's.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field, PositiveInt

from recprivacy.config import StudyOptions
from recprivacy.data.interactions import Interactions
from recprivacy.defenses.dipsgnn import DIPSGNN
from recprivacy.experiments.audit import AuditContext, SectionWriter, register_audit_section, utility_change
from recprivacy.experiments.dipsgnn.options import FeatureSpec, ml1m_features, feature_params
from recprivacy.experiments.train import metrics_rows, test_metrics
from recprivacy.metrics.verdict import judge_cost, users_sample
from recprivacy.privacy.accounting import PrivacyStatement


class DIPSGNNAuditOptions(StudyOptions):
    """DIPSGNN trained beside a sequential target: budgets, row norm and training length."""

    eps1: float = Field(20.0, gt=0)
    eps2: float = Field(5.0, gt=0)
    delta: float = Field(2.5e-7, gt=0, lt=1)
    C: float = Field(0.2, gt=0)
    n_epochs: PositiveInt = 5
    features: FeatureSpec | None = Field(default_factory=ml1m_features)


def _audit_features(options: DIPSGNNAuditOptions, train: Interactions) -> dict[str, Any]:
    """The configured user features when the training data have every column, else user ids."""
    f = options.features
    table = train.user_features
    if f is not None and (table is None or any(c not in table.columns for c in f.numeric + f.categorical)):
        f = None
    return feature_params(f)


def utility_cost_row(out: SectionWriter, name: str, model: Any, ctx: AuditContext, k: int) -> None:
    """Reference risk row: Recall@k of the private ``model`` against the target's on the same
    test users, ``change = model - target`` with a paired bootstrap over users, read by
    ``metrics.verdict.judge_cost`` (costs / gains / no measurable cost); not an attack."""
    value, base, change = utility_change(model, ctx.model, ctx.data, k)
    verdict = judge_cost(change, f"the target's Recall@{k}")
    out.reference(f"{name} utility (reference, not an attack)", f"Recall@{k}", value, base, "the undefended target", change,
                  verdict, sample=users_sample(value.n))  # fmt: skip


def dipsgnn_section(ctx: AuditContext, out: SectionWriter) -> None:
    """Offer DIPSGNN as the private alternative of a sequential target (utility + statements)."""
    if not ctx.model.sequential:
        out.write(f"The target `{type(ctx.model).__name__}` does not use the order of interactions, so DIPSGNN "
                  "(a private sequential recommender) is not offered as its alternative.")
        return
    o = ctx.options
    model = DIPSGNN.from_params(eps1=o.eps1, eps2=o.eps2, delta=o.delta, C=o.C, n_epochs=o.n_epochs, seed=ctx.config.seed,
                                noise=ctx.config.noise, **_audit_features(o, ctx.data.train))
    model.fit(ctx.data.train, ctx.data.valid)
    ks = ctx.config.eval.ks
    target, private = test_metrics(ctx.model, ctx.data, ks), test_metrics(model, ctx.data, ks)
    columns, target_rows = metrics_rows(target, ks)
    _, private_rows = metrics_rows(private, ks)
    rows = [[name, *t[1:], *p[1:]] for name, t, p in zip((r[0] for r in target_rows), target_rows, private_rows)]
    out.add_table("utility", ["metric"] + [f"target {c}" for c in columns[1:]] + [f"DIPSGNN {c}" for c in columns[1:]], rows,
                  "Full-ranking test metrics of the target and of DIPSGNN on the same split")
    for name, value in private.items():
        out.add_metric(name, value)
    utility_cost_row(out, "DIPSGNN", model, ctx, ks[0])
    statements = {"target": PrivacyStatement.no_guarantee("interactions and user features", "training and serving",
                                                          f"{type(ctx.model).__name__} is trained without privacy noise")}
    statements.update({f"DIPSGNN: {k}": v for k, v in model.privacy_statement().parts})
    out.add_table("privacy", ["model: guarantee", "epsilon", "delta", "setting", "scope", "notes", "noise"],
                  [[k, s.epsilon if s.formal else None, s.delta, s.setting, s.scope, "; ".join(s.notes), s.noise]
                   for k, s in statements.items()], "Privacy statements (epsilon n/a: no formal guarantee)")
    out.write(f"The target is sequential, so DIPSGNN (paper 002) is trained on the same training split as a private "
              f"alternative: user features under {o.eps1:g}-LDP and edges under ({o.eps2:g}, {o.delta:g})-DP per forward "
              f"pass (C = {o.C:g}, sigma = {model.sigma_:.4g}). The whole-run figure composes every release of one "
              "transition during training; it is the honest one to compare with the target's absence of a guarantee.")


register_audit_section("dipsgnn", dipsgnn_section, "A private alternative: DIPSGNN", DIPSGNNAuditOptions, order=60,
                       needs=("builtin",))
