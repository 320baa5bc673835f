"""The registry of audit sections and what a section is given.

A section is a function ``fn(ctx: AuditContext, out: SectionWriter) -> None`` registered with
:func:`register_audit_section` at import time. It declares the inputs it ``needs`` (keys of
:data:`INPUTS`); an audit without one of them skips the section and names the missing input in
the risk summary (:func:`available_inputs` says which inputs an audit has).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from recprivacy.config import Config, StudyOptions
from recprivacy.experiments.audit.writer import SectionWriter
from recprivacy.experiments.kit.executor import Executor
from recprivacy.experiments.target import Target
from recprivacy.experiments.train import PreparedData
from recprivacy.models.base import Recommender


@dataclass(frozen=True)
class AuditContext:
    """What a section may use: the config, the prepared data, the audited target and the
    section's own validated options. ``model`` is the target's built-in recommender (None for
    the user's own system; sections that need it declare the input ``builtin``). ``executor``: the
    study kit's executor a section's independent trainings may fan out on (``study_options.executor``,
    ``plan.audit_executor``; None: one after another in this process)."""

    config: Config
    data: PreparedData
    target: Target
    options: Any
    executor: Executor | None = None

    @property
    def model(self) -> Recommender | None:
        """The built-in recommender behind the target, if any."""
        return self.target.recommender

    @property
    def members(self) -> np.ndarray:
        """Internal ids of the users the target was trained on (every user not held out)."""
        return member_users(self.data)


def member_users(data: PreparedData) -> np.ndarray:
    """Internal ids of the users with interactions in any split who are not held out."""
    active = (data.train.user_counts() + data.valid.user_counts() + data.test.user_counts()) > 0
    active[data.heldout_users] = False
    return np.flatnonzero(active)


SectionFn = Callable[[AuditContext, SectionWriter], None]
OptionsFit = Callable[[Any, PreparedData], tuple[Any, list[str]]]
Supplies = Callable[[Any], set[str]]

#: inputs a section may need, and what provides each (the reason a section is skipped)
INPUTS = {
    "test": "test interactions of members (the `test` argument)",
    "user_features": "user features (the `user_features` argument)",
    "non_members": "users who were not in training (the `non_members` argument), served by the target from their "
                   "history (an endpoint needs a history request, `--history-request`)",
    "shadow": "a training function (`Target.from_training`) or a built-in model to train shadows of the same algorithm, "
              "or the adversary's own algorithm (`study_options.membership.shadow_algorithm`, `--shadow-model`)",
    "builtin": "a built-in recommender of recprivacy.models as the target (`recprivacy audit --model`)",
    "exposures": "logged exposures (the `exposures` argument, `--exposures FILE`) or a built-in recommender to replay "
                 "(`recprivacy audit --model`)",
}


def available_inputs(data: PreparedData, target: Target) -> set[str]:
    """The inputs of ``INPUTS`` this audit has."""
    have = {
        "test": len(data.test) > 0,
        "user_features": data.full.user_features is not None,
        "non_members": len(data.heldout_users) > 0 and target.serves_unseen,
        "shadow": target.can_retrain,
        "builtin": target.algorithm is not None,
        "exposures": data.exposures is not None or target.algorithm is not None,
    }
    return {name for name, ok in have.items() if ok}


@dataclass(frozen=True)
class AuditSection:
    """A registered audit section."""

    name: str
    run: SectionFn
    title: str
    options: type[StudyOptions]
    order: int
    heldout_users: bool = False
    fit: OptionsFit | None = None
    needs: tuple[str, ...] = ()
    supplies: Supplies | None = None
    default: bool = True

    def missing(self, have: set[str], options: Any = None) -> list[str]:
        """What this section needs and neither the audit nor the section's own ``options``
        (``supplies``) provide (descriptions from ``INPUTS``)."""
        have = have | (self.supplies(options) if self.supplies else set())
        return [INPUTS[name] for name in self.needs if name not in have]


_SECTIONS: dict[str, AuditSection] = {}


def register_audit_section(
    name: str,
    run: SectionFn,
    title: str,
    options: type[StudyOptions] = StudyOptions,
    order: int = 100,
    heldout_users: bool = False,
    fit: OptionsFit | None = None,
    needs: tuple[str, ...] = (),
    supplies: Supplies | None = None,
    default: bool = True,
) -> AuditSection:
    """Add a section to every audit (sections run and appear by ``order``, then name).
    ``heldout_users``: the section needs users the target never saw (``AuditOptions.holdout_users``);
    ``fit``: fits the section's options to the prepared data before training (package docstring);
    ``needs``: inputs of ``INPUTS`` without which the section is skipped, with the reason;
    ``supplies(options)``: the needed inputs the section's own options stand in for;
    ``default``: whether an audit that names no ``sections`` runs it (False: opt-in, for its cost)."""
    if name == "sections" or not name.isidentifier():
        raise ValueError(f"audit section name {name!r} must be an identifier other than 'sections'")
    unknown = [n for n in needs if n not in INPUTS]
    if unknown:
        raise ValueError(f"audit section {name!r} needs unknown inputs {unknown}; known: {', '.join(INPUTS)}")
    if name in _SECTIONS and _SECTIONS[name].run is not run:
        raise ValueError(f"audit section {name!r} is already registered by {_SECTIONS[name].run.__module__}")
    section = AuditSection(name, run, title, options, order, heldout_users, fit, tuple(needs), supplies, default)
    _SECTIONS[name] = section
    return section


def audit_sections() -> list[AuditSection]:
    """Registered sections in report order."""
    return sorted(_SECTIONS.values(), key=lambda s: (s.order, s.name))

