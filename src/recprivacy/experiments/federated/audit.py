"""The ``attribute`` audit section: the black-box variant of paper 004's attack. The same
attackers infer gender, age or occupation from the top-k list the audited (centralised)
recommender gives each user, trained on a random ζ share of users with known attributes and
tested on the rest, predictions pooled over seeded splits and judged by balanced accuracy against a
blind guess's ``1 / C`` on the same users, accuracy and weighted F1 shown beside it
(:mod:`.classes`)."""

from __future__ import annotations

from typing import Literal

import numpy as np
from pydantic import Field, PositiveInt

from recprivacy.attacks.attribute import recommendation_matrix
from recprivacy.config import StudyOptions
from recprivacy.experiments.audit import AuditContext, SectionWriter, catalogue_fit, register_audit_section
from recprivacy.experiments.federated.classes import (CLASS_BASELINES, PRIMARY, class_metric, judge_classes,
                                                      pooled_predictions)
from recprivacy.experiments.sampling import sample_users
from recprivacy.federated.features import attribute_labels


#: the class metrics of the section's table: each judged metric beside its blind guess
TABLE_METRICS = tuple(m for metric, (blind, _, _) in CLASS_BASELINES.items() for m in (metric, blind))


class AttributeAuditOptions(StudyOptions):
    """Black-box attribute inference from recommendation lists; ``max_users``: attack a seeded
    random sample of at most this many users (None: all; ``experiments.sampling``)."""

    attributes: list[Literal["gender", "age", "occupation"]] = Field(default_factory=lambda: ["gender", "age"], min_length=1)
    k: int = Field(20, ge=1)
    zeta: float = Field(0.2, gt=0, lt=1)
    attackers: list[Literal["dnn", "tree", "svc", "knn"]] = Field(default_factory=lambda: ["dnn", "knn"], min_length=1)
    seeds: int = Field(3, ge=1)
    max_users: PositiveInt | None = 5000


def attribute_section(ctx: AuditContext, out: SectionWriter) -> None:
    """Infer attributes from each user's top-k list of the audited recommender; the attacker
    with the best balanced accuracy is judged on it against a blind guess's ``1 / C``, its
    accuracy (against always guessing the majority class) and weighted F1 (against the better of
    that and a uniform guess) shown beside it as secondary rows, all on the same users."""
    opts = ctx.options
    data = ctx.data.full
    have = [a for a in opts.attributes if data.user_features is not None and a in data.user_features.columns]
    if not have:
        out.write(f"Dataset `{data.name}` has none of the attributes {opts.attributes}; no attribute inference was run.")
        return
    users, lists = served_to_all(ctx, opts.k, opts.max_users)
    x = recommendation_matrix(lists, data.n_items)
    if opts.max_users is not None and len(users) == opts.max_users:
        out.write(f"Attacked a seeded random sample of {len(users)} users (`max_users`).")
    rows = []
    for attribute in have:
        y, names = attribute_labels(data, attribute)
        y = y[users]
        runs = {kind: pooled_predictions(x, y, len(names), opts.zeta, opts.seeds, kind) for kind in opts.attackers}
        best = max(runs, key=lambda kind: class_metric(PRIMARY, *runs[kind], len(names))(None))
        for kind, (rows_, truth, pred) in runs.items():
            rows.append([attribute, kind] + [class_metric(m, rows_, truth, pred, len(names))(None) for m in TABLE_METRICS])
            out.add_metric(f"{attribute}/{kind}/balanced_accuracy", rows[-1][2])
            out.add_metric(f"{attribute}/{kind}/weighted_f1", rows[-1][6])
        judge_classes(out, f"attribute inference from top-{opts.k} lists ({attribute})", *runs[best], len(names), best,
                      opts.seeds)  # fmt: skip
    out.add_table("lists", ["attribute", "attacker", "balanced accuracy", "blind guess (1/C)", "accuracy",
                            "majority-class guess", "weighted F1", "blind weighted F1"], rows,
                  f"Attackers trained on a random {opts.zeta:.0%} of users with known attributes, tested on the rest; "
                  f"predictions pooled over {opts.seeds} splits")  # fmt: skip
    out.write(
        f"Black-box variant of paper 004's attack: the attacker sees only the top-{opts.k} list each user is recommended "
        "(as multi-hot item vectors) and the attributes of a share of users, and predicts the others' attributes. "
        "The verdict is on balanced accuracy (the mean per-class recall), set against 1/C for C classes among the "
        "attacked users: what always guessing the majority class scores, and any guess that ignores the lists on average. "
        "Accuracy (against always guessing the majority class) and weighted F1 (against the better of that and guessing "
        "uniformly at random) are shown beside it without a verdict of their own; all on the attacked users, intervals a "
        "bootstrap over users. The attacker judged in the risk summary is the one with the best balanced accuracy (chosen on "
        "the same users, so its margin is slightly optimistic)."
    )


def served_to_all(ctx: AuditContext, k: int, max_users: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Users and the top-``k`` lists the target serves them: members from their training
    interactions, then (when the target serves users it was not trained on) held-out users
    from their whole history; at most ``max_users`` of them, a seeded sample
    (``sample_users``) drawn before any list is served."""
    everyone = np.concatenate([ctx.members, ctx.data.heldout_users if ctx.target.serves_unseen else ctx.members[:0]])
    chosen = sample_users(everyone, max_users, ctx.config.seed)
    is_member = np.isin(chosen, ctx.members)
    members, outsiders = chosen[is_member], chosen[~is_member]
    lists = [ctx.target.serve(members, k, ctx.data.train, trained=True)]
    if len(outsiders):
        lists.append(ctx.target.serve(outsiders, k, ctx.data.full, trained=False))
    return np.concatenate([members, outsiders]), np.concatenate(lists)


register_audit_section("attribute", attribute_section, "Attribute inference from recommendation lists", AttributeAuditOptions,
                       order=40, fit=catalogue_fit("attribute", "k"), needs=("user_features",))  # fmt: skip
