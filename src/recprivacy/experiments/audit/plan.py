"""Which sections an audit runs, with which options, fitted to the data.

Users pick sections and set their options under ``study_options`` (:class:`AuditOptions`)::

    study: audit
    study_options:
      sections: [utility, membership]     # default: every registered section but the opt-in ones
      membership: {n_shadow: 4}
      executor: ray                       # where the audit's reference recommenders train (default: inprocess)

``executor`` (``inprocess`` or ``ray``) and ``ray_address`` name the study kit's executor as
``recprivacy run --executor/--ray-address`` do (``kit.make_executor``): the membership section trains
LiRA's and RMIA's reference recommenders on it, one kit cell each, so on Ray they train side by
side (:func:`audit_executor`). The numbers are the same on either.

A section's optional ``fit(options, data) -> (options, notes)`` runs after the data are prepared
and before the target is trained: it fits defaults that depend on the data (a list length ``k``
the user did not set becomes the largest that fits the catalogue, see :func:`fit_list_length`),
refuses an explicitly set value that does not fit with a one-line ``ConfigError``, and returns
notes stating each fitted default, which open the section's text in the report.
"""

from __future__ import annotations

import importlib.util
from typing import Any, Literal

from pydantic import ConfigDict, Field

from recprivacy.config import StudyOptions, validate_options
from recprivacy.errors import ConfigError
from recprivacy.experiments.audit.registry import AuditSection, OptionsFit, audit_sections
from recprivacy.experiments.kit.executor import EXECUTORS, Executor, InProcess, make_executor
from recprivacy.experiments.train import PreparedData

#: share of users held out of the target's training when a section needs non-members
DEFAULT_HOLDOUT = 0.3


class AuditOptions(StudyOptions):
    """``sections``: which sections to run (default: every section registered with ``default=True``); ``holdout_users``: share of users kept
    out of the target's training (``None``: ``DEFAULT_HOLDOUT`` when a selected section needs
    held-out users, such as membership inference's non-members, else 0); ``executor`` and
    ``ray_address``: where the sections' independent trainings run (module docstring); every other
    key is a section name holding that section's options."""

    model_config = ConfigDict(extra="allow")

    sections: list[str] | None = Field(None, min_length=1)
    holdout_users: float | None = Field(None, ge=0.0, lt=1.0)
    executor: Literal[EXECUTORS] = "inprocess"  # type: ignore[valid-type]
    ray_address: str | None = None


def audit_executor(options: AuditOptions) -> Executor | None:
    """The kit executor of ``options`` (``kit.make_executor``, the one way an executor is made), checked
    before anything trains: Ray installed when it is asked for. None for ``inprocess``: the lab's
    plain loop trains the references one after another, as ``InProcess`` would, without a progress
    line per reference (docs/decisions.md, issue 47)."""
    executor = make_executor(options.executor, options.ray_address)
    if isinstance(executor, InProcess):
        return None
    if importlib.util.find_spec("ray") is None:
        raise ConfigError("--executor ray: Ray is not installed; install the extra: pip install 'recprivacy[ray]'")
    return executor


def holdout_fraction(options: AuditOptions, plan: list[tuple[AuditSection, Any]]) -> float:
    """``options.holdout_users``, or its default for the planned sections."""
    if options.holdout_users is not None:
        return options.holdout_users
    return DEFAULT_HOLDOUT if any(section.heldout_users for section, _ in plan) else 0.0


def plan_sections(options: AuditOptions) -> list[tuple[AuditSection, Any]]:
    """The sections to run with their validated options (ConfigError on unknown names, and on
    bad options of any section named, run or not)."""
    known = {s.name: s for s in audit_sections()}
    registered = ", ".join(known)
    for name in (options.sections or []) + list(options.model_extra or {}):
        if name not in known:
            where = "study_options.sections" if name in (options.sections or []) else f"study_options.{name}"
            raise ConfigError(f"{where}: unknown audit section {name!r}; registered sections: {registered}")
    extra = options.model_extra or {}
    chosen = [s for s in known.values() if s.name in options.sections] if options.sections else \
        [s for s in known.values() if s.default]  # fmt: skip
    validated = {name: validate_options(known[name].options, extra.get(name) or {}, ("study_options", name))
                 for name in known if any(s.name == name for s in chosen) or name in extra}  # fmt: skip
    return [(s, validated[s.name]) for s in chosen]


def resolve_audit_options(options: AuditOptions) -> dict[str, Any]:
    """Every setting of an audit, as a run saves it: ``sections``, ``holdout_users`` and each
    planned section's options with their defaults (``plan_sections``); the options of a
    section not planned are left out, as it does not run."""
    return {"sections": options.sections, "holdout_users": options.holdout_users, "executor": options.executor,
            "ray_address": options.ray_address,
            **{section.name: section_options.model_dump(mode="json") for section, section_options in plan_sections(options)}}


def fit_list_length(section: str, options: Any, key: str, limit: int, limit_reason: str) -> tuple[Any, list[str]]:
    """Fit the list length ``options.<key>`` to ``limit`` (the longest list the data allow).

    A default above ``limit`` becomes ``limit`` and a note says so; a value the user set
    (``study_options.<section>.<key>``) above ``limit``, or a ``limit`` below 1, is a one-line
    ``ConfigError`` naming the key, the value and ``limit_reason`` (why the limit is what it is).
    """
    value = getattr(options, key)
    if value <= limit:
        return options, []
    where = f"study_options.{section}.{key}"
    if key in options.model_fields_set or limit < 1:
        raise ConfigError(f"{where}={value} does not fit the data: {limit_reason}; expected {key} <= {limit}")
    note = f"`{key}` = {limit}, fitted to the data (the default {value} does not fit: {limit_reason})."
    return options.model_copy(update={key: limit}), [note]


def catalogue_fit(section: str, key: str) -> OptionsFit:
    """An options fit that keeps the list length ``<key>`` within the catalogue."""

    def fit(options: Any, data: PreparedData) -> tuple[Any, list[str]]:
        n = data.full.n_items
        return fit_list_length(section, options, key, n, f"the catalogue has {n} items")

    return fit


def fit_plan(plan: list[tuple[AuditSection, Any]], data: PreparedData) -> list[tuple[AuditSection, Any, list[str]]]:
    """Each planned section with its options fitted to ``data`` and the notes that say how."""
    fitted = []
    for section, options in plan:
        options, notes = section.fit(options, data) if section.fit else (options, [])
        fitted.append((section, options, notes))
    return fitted
