"""The ``audit`` study: train the configured built-in recommender as the target and run every
planned section on it; and :func:`audit_prepared`, the one code path every audit takes, for a
built-in target and for the user's own system (:mod:`.own`) alike.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from recprivacy.config import Config, validate_options
from recprivacy.experiments.audit.plan import AuditOptions, audit_executor, fit_plan, holdout_fraction, plan_sections
from recprivacy.experiments.audit.registry import AuditContext, AuditSection, available_inputs
from recprivacy.experiments.audit.summary import add_risk_summary
from recprivacy.experiments.audit.writer import SectionWriter
from recprivacy.experiments.results import Results
from recprivacy.experiments.runner import new_results
from recprivacy.experiments.target import Target
from recprivacy.experiments.train import PreparedData, check_cutoffs, describe_target, fit_model, hold_out_users, prepare_data
from recprivacy.progress import plan as plan_progress


def run_audit(config: Config, options: AuditOptions) -> Results:
    """The ``audit`` study (package docstring): the configured built-in model, trained on
    the prepared data, audited by :func:`audit_prepared` like any other target."""
    plan = plan_sections(options)
    results = new_results(config)
    data = prepare_audit_data(config, options, plan, results)

    def describe(target: Target) -> None:
        describe_target(config, data, target.recommender, results)

    return audit_prepared(config, data, plan, lambda: Target.from_recommender(fit_model(config, data, results)),
                          results, describe)  # fmt: skip


def prepare_audit_data(config: Config, options: AuditOptions, plan: list[tuple[AuditSection, Any]],
                       results: Results) -> PreparedData:  # fmt: skip
    """The configured dataset prepared and split, cut-offs checked, and the users the planned
    sections need held out of the target's training (seeded by the config's seed)."""
    data = prepare_data(config, results)
    check_cutoffs(config.eval.ks, data)
    fraction = holdout_fraction(options, plan)
    return hold_out_users(data, fraction, config.seed) if fraction > 0 else data


def data_sentence(data: PreparedData) -> str:
    """The answer's one sentence on the data: the dataset, its size, who trained the target and who
    was held out of it."""
    full, trained = data.full, data.train
    return (f"{full.name}, {full.n_users:,} users x {full.n_items:,} items, {len(full):,} interactions; the target trained "
            f"on {len(np.unique(trained.users)):,} users, {len(data.heldout_users):,} users were held out of it (the "
            "non-members).")  # fmt: skip


def audit_prepared(
    config: Config,
    data: PreparedData,
    plan: list[tuple[AuditSection, Any]],
    make_target: Callable[[], Target],
    results: Results,
    describe: Callable[[Target], None],
) -> Results:
    """The one audit code path: fit the sections' options to ``data``, make the target, run
    every planned section whose inputs are present, then the risk summary, the target's
    description (``describe``) and the sections' own text.

    Parameters
    ----------
    config:
        Seed, ``eval.ks``, ``study_options`` (its ``executor``: ``plan.audit_executor``) and (for a
        built-in target) the model's name and parameters.
    data:
        Prepared data: members' train / validation / test splits and held-out users.
    plan:
        Sections with their validated options (:func:`.plan.plan_sections`).
    make_target:
        Builds (trains, for a training target) the target, after the options are fitted.
    results:
        Where tables, figures, metrics and sections go.
    describe:
        Adds the section describing the data and the target.

    Returns
    -------
    Results
    """
    plan_progress(["fit", *(f"section:{section.name}" for section, _ in plan)])  # the run's stages, for its ETA
    executor = audit_executor(validate_options(AuditOptions, config.study_options))  # before anything trains
    fitted = fit_plan(plan, data)
    results.config["study_options"].update({s.name: options.model_dump(mode="json") for s, options, _ in fitted})
    target = make_target()
    have = available_inputs(data, target)
    writers, skipped = [], []
    for section, section_options, notes in fitted:
        missing = section.missing(have, section_options)
        if missing:
            skipped.append((section.name, missing))
            continue
        out = SectionWriter(section.name, results)
        for note in notes:
            out.write(note)
        with results.timed(f"section:{section.name}", words=section.title):
            section.run(AuditContext(config, data, target, section_options, executor), out)
        writers.append((section, out))
    add_risk_summary(results, [out for _, out in writers], [s.name for s, _ in plan], skipped, data_sentence(data))
    describe(target)
    for section, out in writers:
        results.add_section(section.title, out.text, out.tables, out.figures)
    return results
