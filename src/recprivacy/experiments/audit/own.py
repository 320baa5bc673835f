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

Sections whose inputs are missing (``registry.INPUTS``) are skipped and listed in the risk summary.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from recprivacy.config import load_config, validate_options
from recprivacy.data.exposure import ExposureLog
from recprivacy.data.exposure_table import read_exposure_table
from recprivacy.data.served_lists import shown
from recprivacy.errors import ConfigError, DataError, RecPrivacyError
from recprivacy.experiments.audit.inputs import (Table, as_interactions, check_list_ids, deduplicated, features_by_internal_id,
                                                 held_rows, internal_users, source_of)
from recprivacy.experiments.audit.plan import AuditOptions, plan_sections, resolve_audit_options
from recprivacy.experiments.audit.study import audit_prepared
from recprivacy.experiments.results import Results
from recprivacy.experiments.runner import new_results
from recprivacy.experiments.target import Target
from recprivacy.experiments.train import PreparedData, check_cutoffs, check_not_degenerate, describe_target


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
    """

    def __init__(self, target: Target, interactions: Table, members: Sequence[Any], non_members: Sequence[Any] = (),
                 *, test: Table | None = None, valid: Table | None = None, user_features: pd.DataFrame | None = None,
                 exposures: ExposureLog | pd.DataFrame | str | Path | None = None, sections: Sequence[str] | None = None, options: dict[str, dict] | None = None, seed: int = 0,
                 noise: str = "secure", ks: Sequence[int] = (10, 20), name: str = "audit", dedup: bool = True) -> None:  # fmt: skip
        self.target = target
        self.interactions = interactions
        self.members = members
        self.non_members = non_members
        self.test = test
        self.valid = valid
        self.user_features = user_features
        self.exposures = exposures
        self.sections = sections
        self.options = options
        self.seed = seed
        self.noise = noise
        self.ks = ks
        self.name = name
        self.dedup = dedup

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
        study_options = {"sections": None if self.sections is None else list(self.sections), **(self.options or {})}
        options = validate_options(AuditOptions, study_options)
        plan = plan_sections(options)
        data = self._prepare()
        check_cutoffs(self.ks, data)
        model = {"name": self.target.algorithm, "params": self.target.params} if self.target.algorithm else {}
        config = load_config(base={"name": self.name, "study": "audit", "seed": self.seed, "noise": self.noise,
                                   "dataset": {"name": data.full.name, "preprocessing": {"dedup": self.dedup}},
                                   "model": model, "eval": {"ks": list(self.ks)}, "study_options": study_options})  # fmt: skip
        results = new_results(config)
        results.config["study_options"] = resolve_audit_options(options)
        results.config["target"] = {"kind": self.target.kind, "description": self.target.description}
        if not self.target.algorithm:
            del results.config["model"]
        results.dataset = data.full.fingerprint()
        results.seeds["seed"] = self.seed

        def describe(target: Target) -> None:
            if target.recommender is not None:
                describe_target(config, data, target.recommender, results)
            else:
                describe_own_target(target, data, results)

        return audit_prepared(config, data, plan, lambda: fit_target(self.target, data, results), results, describe)

    # ------------------------------------------------------------------ data
    def _prepare(self) -> PreparedData:
        full = deduplicated(as_interactions(self.interactions, "interactions"), self.interactions, self.dedup)
        if self.user_features is not None:
            full = replace(full, user_features=features_by_internal_id(self.user_features, full))
        if self.target.lists is not None:
            check_list_ids(self.target.lists, full)
        check_not_degenerate(full)
        members = internal_users(self.members, full, "members")
        outsiders = internal_users(self.non_members, full, "non_members")
        both = np.intersect1d(members, outsiders)
        if len(both):
            raise DataError(f"user id {shown(full.user_ids[both[0]])!r} is both a member and a non-member; expected disjoint sets",
                            "non_members")  # fmt: skip
        held = {}
        for part, table in (("test", self.test), ("valid", self.valid)):
            held[part], record = held_rows(table, full, members, part)
            full = full.with_step("hold_out", **record) if record else full
        member_rows = np.isin(full.users, members)
        train = full.select(member_rows & ~(held["test"] | held["valid"]))
        if len(members) and not len(train):  # only held-out rows: test (or valid) holds them all
            raise DataError(f"holds every interaction of the {len(members)} members, so the target's training data would "
                            "be empty; expected rows of the interactions held out of the members' training, not all",
                            source_of(self.test if self.test is not None else self.valid, "test"))  # fmt: skip
        exposures = self.exposures
        if exposures is not None and not isinstance(exposures, ExposureLog):
            exposures = read_exposure_table(exposures)
        return PreparedData(full, train, full.select(member_rows & held["valid"]), full.select(member_rows & held["test"]),
                            outsiders, exposures)  # fmt: skip


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
