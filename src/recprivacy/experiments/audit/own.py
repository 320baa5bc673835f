"""``Audit``: audit any recommender, built-in or your own, from Python.

    from recprivacy import Audit, Target

    audit = Audit(Target.from_model(my_model), interactions, members, non_members, test=test)
    results = audit.run()
    results.write("runs")          # the same run folder and report as ``recprivacy audit``

The audit runs :func:`recprivacy.experiments.audit.study.audit_prepared`, the code path of
``recprivacy audit --model``, on data laid out the same way:

* ``interactions``: every interaction the auditor holds, of members and non-members
  (an ``Interactions`` or a frame with ``user_id, item_id`` and optional ``timestamp`` /
  ``rating`` columns);
* ``test`` / ``valid``: rows of ``interactions`` held out of the members' training (test: the
  utility section's ground truth; valid: masked like training items). The target's training
  data are the members' other rows, matched by (user, item) pair; rows that match no member's
  interaction are dropped and counted (an error when all are);
* repeated (user, item) rows of ``interactions`` are dropped, the latest kept, as
  ``dataset.preprocessing.dedup`` (``dedup``, default true) says, or refused when it is false;
* ``members`` / ``non_members``: original user ids of users the target was / was not trained on;
* ``exposures``: what the target logged it showed users and what they clicked, an ``ExposureLog``
  (e.g. ``data.registry.load_exposure("mind")``) or a table ``user_id, slate_id (or time),
  item_id, clicked`` (``data.exposure_table``); the exposure section attacks these slates.

The data become an :class:`~.audit_inputs.AuditInputs`, the settings one ``Config`` (built once;
``recprivacy audit --interactions`` gives its own, :meth:`Audit.from_inputs`). Sections whose
inputs are missing (``registry.INPUTS``) are skipped and listed in the risk summary.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import pandas as pd

from recprivacy.config import Config, ModelConfig, load_config, validate_options
from recprivacy.data.exposure import ExposureLog
from recprivacy.errors import ConfigError, RecPrivacyError
from recprivacy.experiments.audit.audit_inputs import AuditInputs
from recprivacy.experiments.audit.inputs import Table
from recprivacy.experiments.audit.plan import AuditOptions, plan_sections, resolve_audit_options
from recprivacy.experiments.audit.study import audit_prepared
from recprivacy.experiments.results import Results
from recprivacy.experiments.runner import new_results
from recprivacy.experiments.target import Target
from recprivacy.experiments.train import PreparedData, check_cutoffs, describe_target


class Audit:
    """An audit of ``target`` on the auditor's data (module docstring).

    Parameters
    ----------
    target:
        What is audited (:class:`~recprivacy.experiments.target.Target`).
    interactions:
        Every interaction of members and non-members (``Interactions`` or frame).
    members, non_members:
        Original user ids the target was / was not trained on.
    test, valid:
        Rows of ``interactions`` held out of the members' training (optional).
    user_features:
        Frame with a ``user_id`` column of original user ids (or an index named ``user_id``) and
        the features, e.g. ``gender``, ``age``; rows are matched to users by that id, never by position.
    exposures:
        Logged exposures: an ``ExposureLog``, or a file or frame ``user_id, slate_id, item_id, clicked``.
    sections:
        Section names to run (default every registered section).
    options:
        Options per section name, as under ``study_options`` of an audit config.
    seed:
        Seeds every random choice of the audit that protects nobody (splits, shadows, attackers).
    noise:
        ``"secure"`` (default: the defences the audit tries draw from operating-system entropy)
        or ``"simulation"`` (seeded by ``seed``, repeatable, for experiments only).
    ks:
        Cut-offs of the utility metrics.
    name:
        Name of the run (its folder is ``<time>-<name>``).
    dedup:
        ``dataset.preprocessing.dedup``: drop repeated (user, item) rows of ``interactions``,
        keeping the latest (default), or refuse them (False).
    executor:
        Where the membership section's reference recommenders train (``study_options.executor``):
        ``"inprocess"`` (default, one after another) or ``"ray"`` (one Ray task each, side by side;
        the ``ray`` extra). The numbers are the same on both. A training function given as the
        target goes to the Ray workers with each reference (cloudpickle), so the modules it uses
        must be importable there.
    ray_address:
        With ``executor="ray"``: the Ray cluster to join (``"host:port"`` or ``"auto"``); default a
        local Ray instance (or the one already initialised in this process).

    Attributes
    ----------
    inputs:
        The data (:class:`~.audit_inputs.AuditInputs`).
    config:
        The run's config: the settings, the data's name and the target's algorithm.
    """

    def __init__(self, target: Target, interactions: Table, members: Sequence[Any], non_members: Sequence[Any] = (),
                 *, test: Table | None = None, valid: Table | None = None, user_features: pd.DataFrame | None = None,
                 exposures: ExposureLog | pd.DataFrame | str | Path | None = None, sections: Sequence[str] | None = None, options: dict[str, dict] | None = None, seed: int = 0,
                 noise: str = "secure", ks: Sequence[int] = (10, 20), name: str = "audit", dedup: bool = True,
                 executor: str | None = None, ray_address: str | None = None) -> None:  # fmt: skip
        inputs = AuditInputs(interactions, members, non_members, test=test, valid=valid, user_features=user_features,
                             exposures=exposures)  # fmt: skip
        placement = {key: value for key, value in (("executor", executor), ("ray_address", ray_address)) if value}
        study_options = {"sections": None if sections is None else list(sections), **(options or {}), **placement}
        settings = load_config(base={"name": name, "study": "audit", "seed": seed, "noise": noise,
                                     "dataset": {"preprocessing": {"dedup": dedup}}, "eval": {"ks": list(ks)},
                                     "study_options": study_options})  # fmt: skip
        self._bind(target, inputs, settings)

    @classmethod
    def from_inputs(cls, target: Target, inputs: AuditInputs, settings: Config) -> "Audit":
        """An audit of ``target`` on ``inputs`` with the settings of an audit config (seed, noise,
        ``eval.ks``, ``dataset.preprocessing.dedup``, ``study_options``, name, ...), as
        ``recprivacy audit --interactions`` builds them from its options."""
        audit = cls.__new__(cls)
        audit._bind(target, inputs, settings)
        return audit

    def _bind(self, target: Target, inputs: AuditInputs, settings: Config) -> None:
        """Hold ``target``, ``inputs`` (with the target's logged lists) and the run's config:
        ``settings`` naming the data and the target's built-in algorithm (else the default model,
        left out of the recorded config)."""
        self.target = target
        self.inputs = inputs if target.lists is None else replace(inputs, lists=target.lists)
        model = ModelConfig(name=target.algorithm, params=target.params) if target.algorithm else ModelConfig()
        dataset = settings.dataset.model_copy(update={"name": inputs.name})
        self.config = settings.model_copy(update={"dataset": dataset, "model": model})

    @classmethod
    def erasure(cls, before: Target, after: Target, interactions: Table, members: Sequence[Any], forgotten: Sequence[Any],
                non_members: Sequence[Any], **options: Any) -> Any:  # fmt: skip
        """Verify that ``forgotten`` members were erased from ``after`` (``experiments.erasure.run.Erasure``;
        ``options``: its keyword arguments)."""
        from recprivacy.experiments.erasure.run import Erasure

        return Erasure(before, after, interactions, members, forgotten, non_members, **options)

    def run(self) -> Results:
        """Prepare the data, fit a training target, run every section whose inputs are present.

        Returns
        -------
        Results
            Write it with ``Results.write(folder)``.
        """
        config = self.config
        options = validate_options(AuditOptions, config.study_options)
        plan = plan_sections(options)
        data = self._prepare()
        check_cutoffs(config.eval.ks, data)
        results = new_results(config)
        results.config["study_options"] = resolve_audit_options(options)
        results.config["target"] = {"kind": self.target.kind, "description": self.target.description}
        if not self.target.algorithm:
            del results.config["model"]
        results.dataset = data.full.fingerprint()
        results.seeds["seed"] = config.seed

        def describe(target: Target) -> None:
            if target.recommender is not None:
                describe_target(config, data, target.recommender, results)
            else:
                describe_own_target(target, data, results)

        return audit_prepared(config, data, plan, lambda: fit_target(self.target, data, results), results, describe)

    def _prepare(self) -> PreparedData:
        """The prepared data (:meth:`~.audit_inputs.AuditInputs.prepare`, deduplicated as the config says)."""
        return self.inputs.prepare(self.config.dataset.preprocessing.dedup)


def fit_target(target: Target, data: PreparedData, results: Results) -> Target:
    """``target`` fitted on the members' training data (a training target), then checked to
    serve a user it was not trained on when the audit has such users.

    Parameters
    ----------
    target:
        The audited target.
    data:
        Prepared audit data.
    results:
        Where the fitting time is recorded.

    Returns
    -------
    Target
    """
    if target.fit_fn is not None:
        with results.timed("fit", f"{target.description} on {len(data.train)} training interactions"):
            target = target.fit(data.train)
    if target.lists is not None:  # every non-member needs a logged list (a DataError naming the lists file)
        target.serve(data.heldout_users, 1, data.full, trained=False)
    elif len(data.heldout_users) and target.serves_unseen:
        try:
            target.serve(data.heldout_users[:1], 1, data.full, trained=False)
        except Exception as err:  # the user's code: any failure means it cannot serve a new user
            detail = str(err) if isinstance(err, RecPrivacyError) else f"{type(err).__name__}: {err}"
            raise ConfigError(f"target {target.description} cannot serve a user it was not trained on ({detail}); "
                              "expected recommend(histories, k) to serve any history of item ids") from err  # fmt: skip
    return target


def describe_own_target(target: Target, data: PreparedData, results: Results) -> None:
    """Add to ``results`` the "Data and target" section for a ``target`` that is not a built-in
    model: users, items and interactions in each part of the prepared ``data``, and for an
    endpoint how it was queried."""
    parts = [("all", data.full), ("members' training", data.train), ("validation", data.valid), ("test", data.test),
             ("non-members", data.full.subset_users(data.heldout_users))]  # fmt: skip
    rows = [[name, int((p.user_counts() > 0).sum()), int((p.item_counts() > 0).sum()), len(p)] for name, p in parts]
    tables = [results.add_table("data_splits", ["part", "users", "items", "interactions"], rows,
                                f"{data.full.name}: {data.full.n_users} users x {data.full.n_items} items")]  # fmt: skip
    text = f"Target: {target.description} ({target.kind})."
    if target.endpoint is not None:
        rows, caption, note = target.endpoint.report()
        tables.append(results.add_table("endpoint", ["", "value"], rows, caption))
        text += " " + note
    results.add_section("Data and target", text, tables)
