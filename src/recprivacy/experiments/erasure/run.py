"""``Erasure``: verify a deletion from Python, and the report it writes.

    from recprivacy import Audit, Target

    results = Audit.erasure(before=Target.from_recommender(old), after=Target.from_recommender(new),
                            interactions=frame, members=trained_ids, forgotten=deleted_ids,
                            non_members=never_ids).run()
    results.write("runs")

``members`` are the users ``before`` trained on (``forgotten`` among them), ``non_members`` users
neither model trained on; a training target is fitted on the members' training rows (``before``)
and on those of the retained members (``after``), as :class:`~recprivacy.experiments.audit.own.Audit`
fits one. The report opens with the answer and the risk summary of an audit: the erasure row (its
verdict by ``metrics.verdict.judge_erasure``), the positive control's row, the attack on ``before``
for context and the TPR rows, each with its interval and sample; then the attack table of the three
comparisons (:mod:`.verify` says who is served how).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from recprivacy.config import load_config, validate_options
from recprivacy.data.served_lists import shown
from recprivacy.errors import DataError
from recprivacy.experiments.audit import SectionWriter, audit_sections
from recprivacy.experiments.audit.inputs import Table, internal_users
from recprivacy.experiments.audit.own import Audit, describe_own_target, fit_target
from recprivacy.experiments.audit.summary import add_risk_summary
from recprivacy.experiments.erasure.verify import COMPARISONS, ErasureOptions, SeedScores, fit_erasure_options, score_seed
from recprivacy.experiments.membership.audit import _attack_rows
from recprivacy.experiments.membership.compare import Judgement, judge, name_of, secondary_rows
from recprivacy.experiments.results import Results
from recprivacy.experiments.runner import new_results
from recprivacy.experiments.target import Target
from recprivacy.experiments.train import PreparedData
from recprivacy.metrics.verdict import ERASURE_RULE

TITLE = "Erasure verification"
#: each comparison's row in the risk summary: (attack named, who was served by which model)
ROWS = {"forgotten": "erasure: forgotten users vs never-members (after-model",
        "retained": "erasure control: retained members vs never-members (after-model",
        "before": "before the deletion: forgotten users vs never-members (before-model"}  # fmt: skip
#: who each comparison's positives and negatives are, as its sample names them
UNITS = {"forgotten": ("forgotten users", "never-members"), "retained": ("retained members", "never-members"),
         "before": ("forgotten users", "never-members")}  # fmt: skip


class Erasure(Audit):
    """Verification that ``forgotten`` users were erased from ``after`` (module docstring).

    Parameters
    ----------
    before, after:
        The target before and after the deletion (:class:`~recprivacy.experiments.target.Target`).
    interactions:
        Every interaction of members and non-members (``Interactions`` or frame).
    members:
        Original user ids ``before`` was trained on.
    forgotten:
        Original user ids among ``members`` whose data were deleted.
    non_members:
        Original user ids neither model was trained on.
    test, valid, seed, noise, name, dedup:
        As for :class:`~recprivacy.experiments.audit.own.Audit`.
    options:
        :class:`~recprivacy.experiments.erasure.verify.ErasureOptions` as a dict.
    """

    def __init__(self, before: Target, after: Target, interactions: Table, members: Sequence[Any],
                 forgotten: Sequence[Any], non_members: Sequence[Any], *, test: Table | None = None,
                 valid: Table | None = None, options: dict[str, Any] | None = None, seed: int = 0, noise: str = "secure",
                 name: str = "erasure", dedup: bool = True) -> None:  # fmt: skip
        super().__init__(before, interactions, members, non_members, test=test, valid=valid, seed=seed, noise=noise,
                         name=name, dedup=dedup)  # fmt: skip
        self.after, self.forgotten, self.erasure_options = after, forgotten, options

    def run(self) -> Results:
        """Prepare the data, fit training targets, attack the three groups and judge the erasure.

        Returns
        -------
        Results
            Write it with ``Results.write(folder)``.
        """
        options = validate_options(ErasureOptions, self.erasure_options or {}, ("options",))
        data = self._prepare()
        forgotten = self._forgotten(data)
        options, notes = fit_erasure_options(options, data)
        settings = self.config  # Audit's: name, seed, noise, dedup
        config = load_config(base={"name": settings.name, "study": "erasure", "seed": settings.seed, "noise": settings.noise,
                                   "dataset": {"name": data.full.name, "preprocessing": {"dedup": settings.dataset.preprocessing.dedup}},
                                   "study_options": options.model_dump(mode="json")})  # fmt: skip
        results = new_results(config)
        results.config["target"] = {"before": self.target.description, "after": self.after.description}
        results.dataset, results.seeds["seed"] = data.full.fingerprint(), settings.seed
        before = fit_target(self.target, data, results)
        after = fit_target(self.after, replace(data, train=data.train.select(~np.isin(data.train.users, forgotten))), results)
        with results.timed("erasure", words=TITLE):
            runs = [score_seed(config, data, before, after, forgotten, options, settings.seed + i) for i in range(options.seeds)]
        if runs[0] is None:
            raise DataError(f"fewer than 6 non-members have at least {options.min_interactions} interactions; expected more "
                            "never-members (or a lower options.min_interactions)", "non_members")  # fmt: skip
        out = SectionWriter("erasure", results)
        for note in notes:
            out.write(note)
        out.write(f"Before the deletion: {before.description}; after: {after.description}.")
        write_erasure(out, options, runs)
        add_risk_summary(results, [out], [s.name for s in audit_sections()], [])  # an erasure run selects no audit section
        describe_own_target(after, data, results)
        results.add_section(TITLE, out.text, out.tables, out.figures)
        return results

    def _forgotten(self, data: PreparedData) -> np.ndarray:
        """Internal ids of the forgotten users (a ``DataError`` for one who is not a member)."""
        forgotten = internal_users(self.forgotten, data.full, "forgotten")
        members = internal_users(self.inputs.members, data.full, "members")
        outside = np.setdiff1d(forgotten, members)
        if len(outside):
            raise DataError(f"user id {shown(data.full.user_ids[outside[0]])!r} is forgotten but not a member; expected "
                            "forgotten users among the members before the deletion", "forgotten")  # fmt: skip
        if len(forgotten) == len(members):
            raise DataError("every member is forgotten; expected retained members too (the positive control)", "forgotten")
        return forgotten


def write_erasure(out: SectionWriter, o: ErasureOptions, runs: list[SeedScores]) -> dict[str, Judgement]:
    """The erasure's risk rows, its attack table and text (module docstring); each comparison's judgement."""
    scored = {c: [r.scored[c] for r in runs] for c in COMPARISONS}
    judged = {c: judge(scored[c]) for c in COMPARISONS}
    control = judged["retained"]
    for c in COMPARISONS:
        j = judged[c]
        sample = replace(j.sample, units=UNITS[c])
        attack = f"{ROWS[c]}, best: {name_of(j.best_attack)})"
        args = (attack, "ROC AUC", j.attack, j.baseline.value, name_of(j.best_baseline), j.margin)
        if c == "forgotten":
            out.erasure(*args, control.verdict, j.note, sample=sample, per_seed=j.per_seed)
        else:
            out.judge(*args, j.note, chance=0.5, sample=sample, per_seed=j.per_seed)
        for metric, value, baseline, name, margin, seeds in secondary_rows(scored[c], j):
            out.secondary(attack, metric, "ROC AUC", value, baseline, name, margin, sample=sample, per_seed=seeds)
    rows = [row for c in COMPARISONS for row in _attack_rows(out, c, scored[c])]
    seeds_column = ["ROC AUC per seed"] if len(runs) > 1 else []
    out.add_table("attack", ["comparison", "kind", "attack or baseline", "ROC AUC [95%]", "TPR@1%FPR [95%]",
                             "TPR@0.1%FPR [95%]", *seeds_column], rows,
                  f"Each comparison's members against the never-members, top-{o.k} lists, item vectors l = {o.n_factors}, "
                  f"{len(runs)} seed(s); attacks read the served lists, baselines only the users' own histories")  # fmt: skip
    sizes = runs[0].sizes
    out.add_table("groups", ["group", "users"], [[name, n] for name, n in sizes.items()],
                  "Who plays which part (first seed); forgotten and retained users need at least "
                  f"{o.min_interactions} interactions")  # fmt: skip
    out.write(
        "Were the forgotten users erased? The strongest membership attack of the audit (the paper MLP, LiRA, RMIA and "
        "the output statistics, against the strongest baseline from the users' own histories) is run on lists served "
        "by the after-model: forgotten users (served from their history as new users, since the after-model no longer "
        "knows them), retained members (served by id) and never-members (served from their history). Forgotten users "
        "must be indistinguishable from never-members; against them the auditor also serves every user from a random half "
        "of their history and counts the other half in the list (history completion: a model that trained on them "
        "completes it). Retained members against never-members is the positive control "
        "that shows the attack has power on this target. The forgotten users are also attacked on the before-model "
        f"(served by id) to show what there was to erase.\n\n{ERASURE_RULE}"
    )
    return judged
